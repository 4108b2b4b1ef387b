//! On loopback, through the proxy and from a tcpdump capture on lo, where the wire cannot
//! always tell: the check is right or undetermined, never wrong. Then the same beside two busy
//! processes: a non-blocking reader must not read as having waited.

use super::{Client, Must, N, Via, check, each, observed, pattern, the_patterns};
use crate::support;

use std::process::Command;

use shared::observe::WaitReading;
use support::clients::{node, redis_py};
use support::hogs::Hogs;

/// A client script run as PORT NAME MODE N (`redis_py`, `node`).
fn library(
    label: &str,
    name: &'static str,
    mode: &'static str,
    n: u64,
    program: fn() -> Option<Command>,
) -> Client {
    Client {
        label: label.into(),
        name: Some(name),
        sets: n,
        make: Box::new(move |port| {
            let mut c = program()?;
            c.args([&port.to_string(), name, mode, &n.to_string()]);
            Some(c)
        }),
    }
}

#[test]
fn each_pattern_through_the_proxy_is_right_or_undetermined() {
    each(Via::Proxy, &the_patterns(N), Must::RightOrUndetermined);
}

#[test]
fn each_pattern_from_a_capture_is_right_or_undetermined() {
    each(Via::Capture, &the_patterns(N), Must::RightOrUndetermined);
}

fn the_libraries() -> Option<Vec<Client>> {
    let (Some(_), Some(_), Some(_)) = (
        redis_py(),
        node("ioredis", "ioredis.js"),
        node("redis", "node_redis.js"),
    ) else {
        return None;
    };
    Some(vec![
        library("redis-py loop", "py-loop", "loop", N, redis_py),
        library("redis-py pipeline", "py-pipe", "pipeline", 1_000, redis_py),
        library("ioredis pipeline()", "io-pipe", "pipeline", 1_000, || {
            node("ioredis", "ioredis.js")
        }),
        library("node-redis one tick", "nr-tick", "tick", 1_000, || {
            node("redis", "node_redis.js")
        }),
    ])
}

#[test]
fn real_libraries_through_the_proxy_are_right_or_undetermined() {
    if let Some(clients) = the_libraries() {
        each(Via::Proxy, &clients, Must::RightOrUndetermined);
    }
}

#[test]
fn real_libraries_from_a_capture_are_right_or_undetermined() {
    if let Some(clients) = the_libraries() {
        each(Via::Capture, &clients, Must::RightOrUndetermined);
    }
}

/// Beside a busy process on each core, the scheduler couples a slow client's writes to
/// Redis's replies: a non-blocking reader (and a sending thread beside a reading one) must
/// still not read as having waited, from either vantage.
#[test]
fn beside_cpu_hogs_a_client_that_does_not_wait_does_not_read_waited() {
    let clients = [pattern("nonblocking", 1_000), pattern("threads", 1_000)];
    let _hogs = Hogs::start();
    for via in [Via::Proxy, Via::Capture] {
        eprintln!("\nbeside two busy processes:");
        for client in &clients {
            let Some((c, seen)) = observed(via, client) else {
                return;
            };
            check(client, via, &c, seen, Must::RightOrUndetermined);
            let reading = c.counts.wait_evidence.as_ref().map(|e| e.reading);
            assert_ne!(
                reading,
                Some(WaitReading::Waited),
                "{} via {via:?}: {:?}: {}",
                client.label,
                c.counts.wait_evidence,
                c.verdict.text
            );
        }
    }
}
