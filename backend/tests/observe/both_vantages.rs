//! The same traffic seen two ways: real clients talk to Redis through `pipescope observe`
//! while tcpdump captures the proxy's connections to Redis, and `observe --pcap` reads the
//! capture. Both must count the same commands and replies, and give the same kind of verdict,
//! with round trips that agree; Redis's INFO commandstats is the oracle for the counts.
//!
//! The capture sees the proxy's side of each connection: commands as the proxy forwarded them
//! and replies as Redis sent them, so the proxy's reads and the capture's segments may cut the
//! stream differently, but not the messages in it.

use crate::support;

use std::process::Command;
use std::time::Duration;

use shared::observe::{ObservedConnection, VerdictKind};
use support::clients::{node, redis_py, run};
use support::observe::{Observe, calls, named};
use support::tcpdump::Tcpdump;

const REPORT_LIMIT: Duration = Duration::from_secs(60);

/// A client script (`redis_py`/`node`) run as PORT NAME MODE N, through the proxy while the
/// proxy's leg to Redis is captured; returns the proxy's and the capture's reports of the
/// connection named `name`, and Redis's SET calls.
fn both(
    client: impl Fn() -> Option<Command>,
    name: &str,
    mode: &str,
    n: u64,
) -> Option<(ObservedConnection, ObservedConnection, u64)> {
    let mut cmd = client()?;
    let (redis, target) = support::redis();
    let mut tcpdump = Tcpdump::start(redis.port())?;
    let mut observe = Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
    cmd.args([&observe.port().to_string(), name, mode, &n.to_string()]);
    run(cmd, None, &format!("{name} ({mode})"));
    let proxied = observe.report(REPORT_LIMIT);
    let captured = tcpdump.observe(redis.port());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let sets = rt
        .block_on(support::command_calls(&target))
        .get("set")
        .copied()
        .unwrap_or(0);
    Some((
        named(&proxied, name).clone(),
        named(&captured, name).clone(),
        sets,
    ))
}

/// What both must agree on, and what Redis counted.
fn assert_agree(what: &str, p: &ObservedConnection, c: &ObservedConnection, sets: u64, n: u64) {
    eprintln!(
        "| {what} | proxy: {} | capture: {} |",
        p.verdict.text, c.verdict.text
    );
    assert_eq!(sets, n, "Redis's commandstats: SET calls");
    assert_eq!(calls(p, "SET"), n, "{:?}", p.top_commands);
    assert_eq!(calls(c, "SET"), n, "{:?}", c.top_commands);
    assert_eq!(p.counts.commands, c.counts.commands, "{what}: commands");
    assert_eq!(p.counts.replies, c.counts.replies, "{what}: replies");
    assert_eq!(p.counts.bytes_from_client, c.counts.bytes_from_client);
    assert_eq!(p.counts.bytes_from_redis, c.counts.bytes_from_redis);
    assert_eq!(p.top_commands, c.top_commands, "{what}");
    assert_eq!(p.library, c.library, "{what}: the library it named");
    // Where either cannot tell which, it is undetermined: then the other's kind is among
    // the kinds it names.
    let (pv, cv) = (&p.verdict, &c.verdict);
    match (pv.kind, cv.kind) {
        (VerdictKind::Undetermined, VerdictKind::Undetermined) => {}
        (VerdictKind::Undetermined, k) => assert!(pv.allows(k), "{what}: {pv:?} / {cv:?}"),
        (k, VerdictKind::Undetermined) => assert!(cv.allows(k), "{what}: {pv:?} / {cv:?}"),
        (a, b) => assert_eq!(a, b, "{what}"),
    }
}

#[test]
fn redis_py_loop_reads_the_same_through_the_proxy_and_from_a_capture() {
    let Some((p, c, sets)) = both(redis_py, "py-loop", "loop", 200) else {
        return;
    };
    assert_agree("redis-py loop", &p, &c, sets, 200);
    assert!(
        p.verdict.allows(VerdictKind::OneAtATime),
        "{}",
        p.verdict.text
    );
    // One at a time: one round trip per command, both ways of looking.
    assert_eq!(p.counts.round_trips, p.counts.commands);
    assert_eq!(c.counts.round_trips, c.counts.commands);
    assert_eq!(p.library.as_deref(), Some("redis-py"));
}

#[test]
fn redis_py_pipeline_reads_the_same_through_the_proxy_and_from_a_capture() {
    let Some((p, c, sets)) = both(redis_py, "py-pipe", "pipeline", 1000) else {
        return;
    };
    assert_agree("redis-py pipeline", &p, &c, sets, 1000);
    assert!(
        p.verdict.allows(VerdictKind::Pipelined),
        "{}",
        p.verdict.text
    );
    // Its handshake's round trips, then the batch's: redis-py sendall()s the batch in ~6 KB
    // pieces, and either view may see Redis answer one piece before the next arrives.
    let pieces = p.counts.bytes_from_client.div_ceil(6_000);
    for (view, x) in [("proxy", &p), ("capture", &c)] {
        assert!(x.counts.round_trips <= 8 + pieces, "{view}: {:?}", x.counts);
    }
}

#[test]
fn ioredis_and_node_redis_pipelines_read_the_same_through_the_proxy_and_from_a_capture() {
    for (module, file, name, mode) in [
        ("ioredis", "ioredis.js", "io-pipe", "pipeline"),
        ("redis", "node_redis.js", "nr-multi", "multi"),
    ] {
        let Some((p, c, sets)) = both(|| node(module, file), name, mode, 1000) else {
            return;
        };
        assert_agree(name, &p, &c, sets, 1000);
        assert!(
            p.verdict.allows(VerdictKind::Pipelined),
            "{}",
            p.verdict.text
        );
        assert!(c.counts.max_depth >= 100, "{name}: {:?}", c.counts);
    }
}
