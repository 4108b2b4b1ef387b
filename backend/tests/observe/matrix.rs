//! Every pattern × vantage, each run checked against the client's own syscalls: the clients of
//! tests/clients/patterns.py, whose way of waiting is known by construction (one at a time;
//! a send per command and one read at the end; non-blocking reads between sends; a sending and
//! a reading thread; one at a time then one pipeline), with 200 µs of their own work per
//! command (longer than loopback's round trip, so every reply is back before the next command
//! whether or not the client waited for it), and the real libraries installed; each through
//! the proxy and from a tcpdump capture on lo, run under strace (`support::oracle`).
//!
//! On loopback the wire cannot always tell, so the check is right or undetermined, never
//! wrong: the verdict's kind is one the syscalls allow, or it is undetermined and names one;
//! the client's waits lie within the range the verdict gives; and where the headline states
//! its waits as one number, strace agrees. Then the same beside two busy processes: a
//! non-blocking reader must not read as having waited. Each test prints its rows of the
//! closing note's table (pattern, vantage, headline, waits and writes seen, strace's truth).

use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use shared::observe::{ObservedConnection, WaitReading};
use support::clients::{node, patterns, redis_py};
use support::observe::{Observe, calls, named};
use support::oracle::{
    Syscalls, allowed, assert_headline_waits, assert_right_or_undetermined, assert_waits_within,
    syscalls,
};
use support::tcpdump::Tcpdump;

const REPORT_LIMIT: Duration = Duration::from_secs(60);
/// SETs per pattern client, and its own work before each, µs.
const N: u64 = 200;
const WORK_US: &str = "200";
const MODES: [&str; 5] = ["waits", "send-all", "nonblocking", "threads", "phases"];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    Proxy,
    Capture,
}

/// A client: its label, how to find its connection (its CLIENT SETNAME, or its SETs), and its
/// command given the port to connect to.
struct Client {
    label: String,
    name: Option<&'static str>,
    sets: u64,
    make: Box<dyn Fn(u16) -> Option<Command>>,
}

fn pattern(mode: &'static str, n: u64) -> Client {
    Client {
        label: format!("patterns.py {mode}"),
        name: None,
        sets: n,
        make: Box::new(move |port| {
            let mut c = patterns()?;
            c.args([&port.to_string(), mode, &n.to_string(), WORK_US]);
            Some(c)
        }),
    }
}

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

/// Runs `client` against a fresh redis-server, observed `via`, under strace: its connection
/// as pipescope reported it, and its syscalls. `None`: a visible skip.
fn observed(via: Via, client: &Client) -> Option<(ObservedConnection, Syscalls)> {
    let (redis, _) = support::redis();
    let (conns, seen) = match via {
        Via::Proxy => {
            let mut observe = Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
            let seen = syscalls((client.make)(observe.port())?, observe.port())?;
            (observe.report(REPORT_LIMIT), seen)
        }
        Via::Capture => {
            let mut tcpdump = Tcpdump::start(redis.port())?;
            let seen = syscalls((client.make)(redis.port())?, redis.port())?;
            (tcpdump.observe(redis.port()), seen)
        }
    };
    let c = match client.name {
        Some(name) => named(&conns, name).clone(),
        None => conns
            .iter()
            .find(|c| calls(c, "SET") == client.sets)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no connection sent {} SETs: {conns:#?}",
                    client.label, client.sets
                )
            })
            .clone(),
    };
    Some((c, seen))
}

/// Right or undetermined, the waits within its range, its stated waits strace's; printed as a
/// row of the closing note's table.
fn check(client: &Client, via: Via, c: &ObservedConnection, seen: Syscalls) {
    let k = &c.counts;
    let what = format!("{} via {via:?}", client.label);
    eprintln!(
        "| {} | {via:?} | {} | {} round trips ({} unconfirmed), {} writes, evidence {:?} | strace: {} writes, {} waits |",
        client.label,
        c.verdict.headline,
        k.round_trips,
        k.unconfirmed_trips,
        k.writes,
        k.wait_evidence
            .as_ref()
            .map(|e| (e.reading, (e.follows * 100.0).round() / 100.0)),
        seen.writes,
        seen.waits,
    );
    assert_eq!(calls(c, "SET"), client.sets, "{what}: {:?}", c.top_commands);
    assert_eq!(k.replies, k.commands, "{what}: {k:?}");
    assert_right_or_undetermined(&what, c, allowed(seen, k.commands));
    assert_waits_within(&what, c, seen);
    assert_headline_waits(&what, c, seen);
    // A connection that changed behaviour is read as its phases, the costliest first: its
    // commands one by one took most of its time, then one pipeline.
    if client.label == "patterns.py phases" {
        assert!(
            c.verdict
                .headline
                .ends_with(&format!("; then one pipeline of {}", client.sets / 2)),
            "{what}: {}",
            c.verdict.headline
        );
    }
    assert!(
        c.verdict.headline.chars().count() <= 100,
        "{what}: a headline of one line: {}",
        c.verdict.headline
    );
}

fn each(via: Via, clients: &[Client]) {
    eprintln!(
        "\n| client | vantage | headline | pipescope | truth |\n| --- | --- | --- | --- | --- |"
    );
    for client in clients {
        let Some((c, seen)) = observed(via, client) else {
            return;
        };
        check(client, via, &c, seen);
    }
}

fn the_patterns() -> Vec<Client> {
    MODES.iter().map(|&m| pattern(m, N)).collect()
}

#[test]
fn each_pattern_through_the_proxy_is_right_or_undetermined() {
    each(Via::Proxy, &the_patterns());
}

#[test]
fn each_pattern_from_a_capture_is_right_or_undetermined() {
    each(Via::Capture, &the_patterns());
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
        each(Via::Proxy, &clients);
    }
}

#[test]
fn real_libraries_from_a_capture_are_right_or_undetermined() {
    if let Some(clients) = the_libraries() {
        each(Via::Capture, &clients);
    }
}

/// Two busy processes, one a core, for at most a minute; stopped when dropped.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start() -> Hogs {
        Hogs(
            (0..2)
                .map(|_| {
                    Command::new("timeout")
                        .args(["60", "sh", "-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("timeout and sh (coreutils, dash)")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for child in &mut self.0 {
            // SIGTERM, which timeout passes on to the busy loop it runs.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
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
            check(client, via, &c, seen);
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
