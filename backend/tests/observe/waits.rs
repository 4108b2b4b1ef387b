//! Whether a client waited for its replies, as `pipescope observe` reports it through the
//! proxy and from a tcpdump capture, checked against an oracle that is not pipescope: the
//! client's own syscalls under strace (how many writes it made, how many times it stopped
//! sending to read replies).
//!
//! The wire shows replies back before the next command, not whether the client waited for
//! them, so pipescope reports round trips with those it cannot confirm marked. The check is
//! that the truth lies within what it says: confirmed round trips ≤ the client's waits ≤ round
//! trips. The clients: raw_writer.py writing each SET in its own send and reading only at
//! the end (Lettuce's default, the seed's question), the same on a clock slower than a round
//! trip, and redis-py's loop and pipeline.

use crate::support;

use std::process::Command;
use std::time::Duration;

use shared::observe::{ObservedConnection, VerdictKind};
use support::clients::{raw_writer, redis_py};
use support::observe::{Observe, calls, named};
use support::oracle::{Syscalls, assert_waits_within, syscalls};
use support::tcpdump::Tcpdump;

const REPORT_LIMIT: Duration = Duration::from_secs(60);
const N: u64 = 1000;
/// What raw_writer.py does by its code: a send per SET, then one read loop at the end.
const ONE_WAIT: Syscalls = Syscalls {
    writes: N,
    waits: 1,
    pieces_at_most: N,
    read_before_last_write: 0,
};
/// The clock writer's cadence: slower than a loopback round trip (30–200 µs here).
const EVERY_US: &str = "1000";

/// How the client's connection was observed.
#[derive(Clone, Copy, Debug)]
enum Via {
    Proxy,
    Capture,
}

/// Runs `client(port)` against a real redis-server, observed `via`, under strace; returns
/// the connections pipescope reported and the client's syscalls. `None`: a visible skip.
fn observe(
    via: Via,
    client: impl Fn(u16) -> Option<Command>,
) -> Option<(Vec<ObservedConnection>, Syscalls)> {
    let (redis, _) = support::redis();
    match via {
        Via::Proxy => {
            let mut observe = Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
            let seen = syscalls(client(observe.port())?, observe.port())?;
            Some((observe.report(REPORT_LIMIT), seen))
        }
        Via::Capture => {
            let mut tcpdump = Tcpdump::start(redis.port())?;
            let seen = syscalls(client(redis.port())?, redis.port())?;
            let summary = tcpdump.stop();
            let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
                .args(["observe", "--pcap"])
                .arg(&tcpdump.file)
                .args(["--redis-port", &redis.port().to_string(), "--json"])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "tcpdump: {summary}; pipescope: {stderr}"
            );
            let conns = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("not the JSON report ({e}): {stderr}"));
            Some((conns, seen))
        }
    }
}

/// The connection that sent `n` SETs.
fn with_sets(conns: &[ObservedConnection], n: u64) -> &ObservedConnection {
    conns
        .iter()
        .find(|c| calls(c, "SET") == n)
        .unwrap_or_else(|| panic!("no connection sent {n} SETs: {conns:#?}"))
}

/// The client's waits lie within what pipescope reported, and its writes are no more than
/// the client made (a write seen is a read or segment that starts a command: merged, never
/// split). Prints the row for the closing note.
fn assert_truth_within(what: &str, via: Via, c: &ObservedConnection, seen: Syscalls) {
    let k = &c.counts;
    eprintln!(
        "| {what} | {via:?} | strace: {} writes, {} waits | pipescope: {} writes, {} round trips ({} unconfirmed, {} cadence gaps), evidence {:?} | {} |",
        seen.writes,
        seen.waits,
        k.writes,
        k.round_trips,
        k.unconfirmed_trips,
        k.cadence_gaps,
        k.wait_evidence
            .as_ref()
            .map(|e| (e.reading, e.follows, e.moments)),
        c.verdict.text
    );
    assert_waits_within(&format!("{what} via {via:?}"), c, seen);
    assert!(k.writes <= seen.writes, "{what}: {k:?} vs {seen:?}");
    assert_eq!(k.replies, k.commands, "{k:?}");
}

fn raw(mode: &'static str) -> impl Fn(u16) -> Option<Command> {
    move |port| {
        let mut c = raw_writer()?;
        c.args([&port.to_string(), mode, &N.to_string(), EVERY_US]);
        Some(c)
    }
}

/// Each SET in its own send, then every reply read: one wait, whatever the wire merged.
fn write_per_command(via: Via) {
    let Some((conns, seen)) = observe(via, raw("each")) else {
        return;
    };
    assert_eq!(seen, ONE_WAIT, "what the client did");
    let c = with_sets(&conns, N);
    assert_truth_within("raw_writer each", via, c, seen);
    // Under strace each send costs a ptrace stop, so the client may write at a round trip's
    // pace and the wire look one at a time: then the verdict must say it cannot tell.
    assert!(
        c.verdict.allows(VerdictKind::WritePerCommand),
        "{}",
        c.verdict.text
    );
}

/// By capture, the client runs at its own pace: slowed by strace to a round trip's pace, its
/// writes and Redis's replies were coupled by the scheduler on two cores, and the wire read
/// as a client that waited (seen here: 1,000 round trips, the slope 0.9). Its syscalls are
/// counted in a traced run straight to Redis (its code fixes them: a send per SET, one read
/// loop at the end); the captured run is the same program untraced.
#[test]
fn a_write_per_command_pipeline_by_capture() {
    let (redis, _) = support::redis();
    let Some(client) = raw("each")(redis.port()) else {
        return;
    };
    let Some(seen) = syscalls(client, redis.port()) else {
        return;
    };
    assert_eq!(seen, ONE_WAIT, "what the client did");
    let Some(mut tcpdump) = Tcpdump::start(redis.port()) else {
        return;
    };
    support::clients::run(raw("each")(redis.port()).unwrap(), None, "raw_writer each");
    let summary = tcpdump.stop();
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--pcap"])
        .arg(&tcpdump.file)
        .args(["--redis-port", &redis.port().to_string(), "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "tcpdump: {summary}; pipescope: {stderr}"
    );
    let conns: Vec<ObservedConnection> = serde_json::from_slice(&out.stdout).unwrap();
    eprintln!("tcpdump: {summary}");
    let c = with_sets(&conns, N);
    assert_truth_within("raw_writer each, untraced", Via::Capture, c, seen);
    // Linux merged its 1,000 sends into 13–71 segments here: a capture cannot show a write
    // per command, and the verdict must say so if it does not name it.
    assert!(
        c.verdict.allows(VerdictKind::WritePerCommand),
        "{}",
        c.verdict.text
    );
}

#[test]
fn a_write_per_command_pipeline_through_the_proxy() {
    write_per_command(Via::Proxy);
}

/// A SET every millisecond by its own clock, replies read at the end: every reply was back
/// before the next command, yet the client never waited. Not "one at a time", unless marked
/// timing-dependent.
fn own_clock(via: Via) {
    let Some((conns, seen)) = observe(via, raw("clock")) else {
        return;
    };
    assert_eq!(seen, ONE_WAIT, "what the client did");
    let c = with_sets(&conns, N);
    assert_truth_within("raw_writer clock", via, c, seen);
    assert!(
        c.verdict.allows(VerdictKind::WritePerCommand),
        "{}",
        c.verdict.text
    );
}

#[test]
fn a_client_on_its_own_clock_by_capture() {
    own_clock(Via::Capture);
}

#[test]
fn a_client_on_its_own_clock_through_the_proxy() {
    own_clock(Via::Proxy);
}

fn py(name: &'static str, mode: &'static str, n: u64) -> impl Fn(u16) -> Option<Command> {
    move |port| {
        let mut c = redis_py()?;
        c.args([&port.to_string(), name, mode, &n.to_string()]);
        Some(c)
    }
}

/// redis-py's loop waits for every reply; its pipeline once for the batch (after its
/// handshake's own waits).
fn redis_py_waits(via: Via) {
    let Some((conns, seen)) = observe(via, py("py-loop", "loop", 200)) else {
        return;
    };
    let c = named(&conns, "py-loop");
    assert_truth_within("redis-py loop", via, c, seen);
    // On loopback its reaction to a reply may be as long as the reply took: then the wire
    // cannot confirm its waits, and it is undetermined with one at a time among the kinds.
    assert!(
        c.verdict.allows(VerdictKind::OneAtATime),
        "{}",
        c.verdict.text
    );
    let Some((conns, seen)) = observe(via, py("py-pipe", "pipeline", N)) else {
        return;
    };
    let c = named(&conns, "py-pipe");
    assert_truth_within("redis-py pipeline", via, c, seen);
    // It sends its ~6 KB pieces without reading, so whether a piece goes while replies to
    // the last are awaited is a race: batched either way.
    assert!(
        c.verdict.allows(VerdictKind::Pipelined) || c.verdict.allows(VerdictKind::AutoPipelined),
        "{}",
        c.verdict.text
    );
}

#[test]
fn redis_py_waits_by_capture() {
    redis_py_waits(Via::Capture);
}

#[test]
fn redis_py_waits_through_the_proxy() {
    redis_py_waits(Via::Proxy);
}
