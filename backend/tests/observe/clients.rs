//! Real clients through `pipescope observe`: redis-cli, redis-py, ioredis and node-redis each
//! talk to a real redis-server through the observing proxy (the CLI, as a user runs it), and
//! the report's verdict and counts must match what the client did. The Rust `redis` crate's
//! `pipe()` is in observe_cli.rs.
//!
//! The clients come from `scripts/setup test` (redis-cli from Debian's redis-tools, redis-py in
//! .tools/py, ioredis and node-redis in .tools/node); the scripts they run are in
//! tests/clients/. Each names its connection with CLIENT SETNAME so the test can find it.
//!
//! Counts are asserted as follows: SETs exactly as many as the client sent, and every command
//! answered. What a client adds on its own (its handshake: HELLO, CLIENT SETINFO, INFO; QUIT;
//! MULTI/EXEC) is bounded, not pinned. Writes are reads at the proxy, so TCP may merge or split
//! a client's writes: each assertion says what tolerance that needs and why.

use crate::support;

use std::process::Command;
use std::time::Duration;

use shared::observe::{ObservedConnection, VerdictKind};
use support::clients::{node, redis_cli, redis_py, run};
use support::observe::{Observe, calls, named};

/// How long pipescope may take to print its report after Ctrl-C.
const REPORT_LIMIT: Duration = Duration::from_secs(60);
/// The proxy reads at most this much at once (net::delay_line's CHUNK).
const PROXY_READ: u64 = 64 * 1024;
/// What a client sends besides our commands, at most: HELLO, CLIENT SETINFO ×2, CLIENT
/// SETNAME, INFO (ioredis's ready check), COMMAND DOCS (redis-cli's hints), QUIT, MULTI, EXEC.
const OWN_COMMANDS: u64 = 9;

/// A redis-server, `pipescope observe` in front of it, and the port clients connect to.
fn observed() -> (pipescope::local_redis::LocalRedis, Observe) {
    let (redis, _) = support::redis();
    let observe = Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
    (redis, observe)
}

/// Prints the connection as a row of the closing note's table.
fn show(client: &str, c: &ObservedConnection) {
    eprintln!(
        "| {client} | {} | {} | {} | {} (mean {:.1}) | {} |",
        c.counts.commands,
        c.counts.writes,
        c.counts.round_trips,
        c.counts.max_depth,
        c.times.mean_depth,
        c.verdict.text
    );
}

/// Exactly `n` SETs, every command answered, and no more of the client's own than it sends.
fn assert_sets(c: &ObservedConnection, n: u64) -> u64 {
    assert_eq!(calls(c, "SET"), n, "{:?}", c.top_commands);
    assert_eq!(c.counts.replies, c.counts.commands, "{:?}", c.counts);
    let own = c.counts.commands - n;
    assert!(
        own <= OWN_COMMANDS,
        "the client's own: {:?}",
        c.top_commands
    );
    own
}

/// Every command waited for the one before it: a write and a round trip each. Exact, because
/// a client waiting for each reply gives TCP nothing to merge, and a command of a few dozen
/// bytes is one segment on loopback, so it is not split.
fn assert_one_at_a_time(c: &ObservedConnection) {
    // One at a time; or, where its reaction to each reply was as long as the reply took
    // (the wire cannot then confirm the waits), undetermined with it among the kinds.
    assert!(
        c.verdict.allows(VerdictKind::OneAtATime),
        "{}",
        c.verdict.text
    );
    assert_eq!(c.counts.max_depth, 1, "{:?}", c.counts);
    assert_eq!(c.counts.round_trips, c.counts.commands, "{:?}", c.counts);
    assert_eq!(c.counts.writes, c.counts.commands, "{:?}", c.counts);
}

/// `n` SETs sent as one batch, in `sends` writes of the client's, after its own `own` commands.
fn assert_one_batch(c: &ObservedConnection, n: u64, own: u64, sends: u64) {
    // Pipelined; or, where its pieces raced Redis's replies (seen for redis-py's on a busy
    // machine), its few round trips could not be confirmed as waits, or the proxy read it
    // late, undetermined with pipelined among the kinds it names.
    assert!(
        c.verdict.allows(VerdictKind::Pipelined),
        "{}",
        c.verdict.text
    );
    // The batch is ~40 KB; the proxy reads at most 64 KiB at a time, TCP may merge the
    // client's writes or hand one over in pieces: at most 8 reads beyond its sends, and one
    // per own command.
    assert!(c.counts.writes <= own + sends + 8, "{:?}", c.counts);
    // At least the name's round trip and the batch's; the batch takes more than one only if
    // Redis answered all of one piece before the next arrived.
    assert!(
        (2..=own + sends + 8).contains(&c.counts.round_trips),
        "{:?}",
        c.counts
    );
    // The batch was in flight together: a tenth of it at once at least (how much depends on
    // how it was split and how fast Redis answered its start; one at a time would be 1).
    assert!(c.counts.max_depth >= n / 10, "{:?}", c.counts);
}

/// How many writes redis-py makes of a pipeline: it packs the commands into pieces of about
/// 6,000 bytes (redis.connection's buffer cutoff) and `sendall`s each, so the proxy may see a
/// round trip per piece when Redis answers one before the next arrives (seen here: 7 pieces
/// for 1,000 SETs, as 1 or as 7 round trips).
fn redis_py_sends(c: &ObservedConnection) -> u64 {
    c.counts.bytes_from_client.div_ceil(6_000)
}

#[test]
fn redis_cli_one_command_per_invocation() {
    let Some(_) = redis_cli() else { return };
    let (_redis, mut observe) = observed();
    const INVOCATIONS: u64 = 5;
    for _ in 0..INVOCATIONS {
        let mut cli = redis_cli().unwrap();
        cli.args(["-h", "127.0.0.1", "-p", &observe.port().to_string()])
            .args(["INCR", "cli:invocations"]);
        run(cli, None, "redis-cli INCR");
    }
    let conns = observe.report(REPORT_LIMIT);
    // Each invocation is a connection of its own that sends its one command and nothing else
    // (redis-cli 7 sends no handshake when given a command), so it cannot be named.
    let incr: Vec<_> = conns
        .iter()
        .filter(|c| c.top_commands == [("INCR".to_string(), 1)])
        .collect();
    assert_eq!(incr.len() as u64, INVOCATIONS, "{conns:#?}");
    show("redis-cli INCR (each of 5 invocations)", incr[0]);
    for c in incr {
        assert_eq!(
            (c.counts.commands, c.counts.writes, c.counts.round_trips),
            (1, 1, 1)
        );
        assert_one_at_a_time(c);
    }
}

#[test]
fn redis_cli_reading_commands_line_by_line_is_one_at_a_time() {
    let Some(mut cli) = redis_cli() else { return };
    let (_redis, mut observe) = observed();
    const N: u64 = 100;
    // What `redis-cli < commands.txt` does: one connection, each line sent once the previous
    // line's reply is in.
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("commands.txt");
    let mut text = String::from("CLIENT SETNAME cli-lines\n");
    for i in 0..N {
        text += &format!("SET cli:line:{i} {i}\n");
    }
    std::fs::write(&lines, text).unwrap();
    cli.args(["-h", "127.0.0.1", "-p", &observe.port().to_string()]);
    run(cli, Some(&lines), "redis-cli < commands.txt");
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "cli-lines");
    show("redis-cli < file", c);
    assert_sets(c, N);
    assert_one_at_a_time(c);
}

#[test]
fn redis_cli_pipe_streams_its_input() {
    let Some(mut cli) = redis_cli() else { return };
    let (_redis, mut observe) = observed();
    const N: u64 = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("protocol.resp");
    let mut resp = crate::capture::write::cmd(&["CLIENT", "SETNAME", "cli-pipe"]);
    for i in 0..N {
        resp.extend(crate::capture::write::cmd(&[
            "SET",
            &format!("cli:pipe:{i}"),
            "x",
        ]));
    }
    std::fs::write(&input, &resp).unwrap();
    cli.args([
        "-h",
        "127.0.0.1",
        "-p",
        &observe.port().to_string(),
        "--pipe",
    ]);
    run(cli, Some(&input), "redis-cli --pipe");
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "cli-pipe");
    show("redis-cli --pipe", c);
    // A CRLF (ending an unfinished inline command), then *2 $4 ECHO $20 <20 bytes>, each
    // line with its CRLF.
    const ECHO_20_BYTES: u64 = 2 + 4 + 4 + 6 + 5 + 22;
    // --pipe sends ours, then ECHO of 20 random bytes to tell when the last reply is in.
    assert_eq!(assert_sets(c, N), 2, "{:?}", c.top_commands);
    assert_eq!(calls(c, "ECHO"), 1);
    assert_eq!(
        c.counts.bytes_from_client,
        resp.len() as u64 + ECHO_20_BYTES
    );
    // It writes the input as it reads it (16 KiB at a time) without waiting for replies: the
    // proxy reads at most 64 KiB at once, so at least this many reads, and far fewer than a
    // read per command.
    assert!(
        c.counts.writes >= c.counts.bytes_from_client.div_ceil(PROXY_READ),
        "{:?}",
        c.counts
    );
    assert!(c.counts.writes * 10 < c.counts.commands, "{:?}", c.counts);
    // Whether the next piece arrives while replies to the last are still awaited (auto-
    // pipelined) or just after they are all back (pipelined) is a race between redis-cli
    // and Redis. Mostly the former here; where the latter is not shown to be a wait, the
    // verdict says it is timing-dependent rather than flip to "pipelined".
    assert!(
        c.verdict.allows(VerdictKind::AutoPipelined)
            || (c.verdict.kind == VerdictKind::Pipelined && c.counts.unconfirmed_trips == 0),
        "{}",
        c.verdict.text
    );
}

/// Runs a client script (`client` from `redis_py`/`node`) with PORT NAME MODE N.
fn drive(mut client: Command, observe: &Observe, name: &str, mode: &str, n: u64) {
    client.args([&observe.port().to_string(), name, mode, &n.to_string()]);
    run(client, None, &format!("{name} ({mode})"));
}

#[test]
fn redis_py_loop_is_one_at_a_time() {
    let Some(py) = redis_py() else { return };
    let (_redis, mut observe) = observed();
    drive(py, &observe, "py-loop", "loop", 200);
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "py-loop");
    show("redis-py, r.set in a loop", c);
    assert_sets(c, 200);
    assert_one_at_a_time(c);
}

#[test]
fn redis_py_pipeline_is_one_batch() {
    let Some(py) = redis_py() else { return };
    let (_redis, mut observe) = observed();
    drive(py, &observe, "py-pipe", "pipeline", 1000);
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "py-pipe");
    show("redis-py, pipeline(transaction=False)", c);
    let own = assert_sets(c, 1000);
    assert_one_batch(c, 1000, own, redis_py_sends(c));
    assert_eq!(c.counts.transactions, 0);
}

#[test]
fn redis_py_transaction_is_one_batch_in_multi_exec() {
    let Some(py) = redis_py() else { return };
    let (_redis, mut observe) = observed();
    drive(py, &observe, "py-multi", "multi", 1000);
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "py-multi");
    show("redis-py, pipeline() (MULTI/EXEC)", c);
    let own = assert_sets(c, 1000);
    assert_eq!((calls(c, "MULTI"), calls(c, "EXEC")), (1, 1));
    assert_eq!(c.counts.transactions, 1);
    assert_one_batch(c, 1000, own, redis_py_sends(c));
}

#[test]
fn ioredis_pipeline_is_one_batch() {
    let Some(js) = node("ioredis", "ioredis.js") else {
        return;
    };
    let (_redis, mut observe) = observed();
    drive(js, &observe, "io-pipe", "pipeline", 1000);
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "io-pipe");
    show("ioredis, pipeline()", c);
    let own = assert_sets(c, 1000);
    assert_one_batch(c, 1000, own, 1);
}

#[test]
fn ioredis_auto_pipelining_batches_what_is_concurrent() {
    let Some(js) = node("ioredis", "ioredis.js") else {
        return;
    };
    let (_redis, mut observe) = observed();
    // ioredis.js: 10 tasks, each awaiting its own SETs one by one.
    const N: u64 = 1000;
    const TASKS: u64 = 10;
    drive(js, &observe, "io-auto", "auto", N);
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "io-auto");
    show("ioredis, enableAutoPipelining, 10 tasks", c);
    assert_sets(c, N);
    // Each task waits for its SET, so at most one per task is in flight, and a write carries
    // at most that many: at least N / TASKS writes and round trips.
    assert!(c.counts.max_depth <= TASKS, "{:?}", c.counts);
    assert!(c.counts.writes >= N / TASKS, "{:?}", c.counts);
    assert!(c.counts.round_trips >= N / TASKS, "{:?}", c.counts);
    // Found here: the tasks move in lockstep. One write's replies come back in one read, so
    // all ten resume in the same tick and their next SETs leave together once the last reply
    // is in: batches of ~10, each its own round trip, none sent while replies were awaited.
    // Auto-pipelining batches what is concurrent; it cannot overlap awaited calls.
    assert!(
        c.verdict.allows(VerdictKind::Pipelined),
        "{}",
        c.verdict.text
    );
    assert!(c.counts.max_depth >= 2, "{:?}", c.counts);
}

#[test]
fn node_redis_multi_exec_as_pipeline_is_one_batch() {
    let Some(js) = node("redis", "node_redis.js") else {
        return;
    };
    let (_redis, mut observe) = observed();
    drive(js, &observe, "nr-multi", "multi", 1000);
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "nr-multi");
    show("node-redis, multi().execAsPipeline()", c);
    let own = assert_sets(c, 1000);
    // execAsPipeline sends the queued commands without MULTI/EXEC.
    assert_eq!(c.counts.transactions, 0, "{:?}", c.top_commands);
    assert_one_batch(c, 1000, own, 1);
}

#[test]
fn node_redis_batches_what_is_issued_in_one_tick() {
    let Some(js) = node("redis", "node_redis.js") else {
        return;
    };
    let (_redis, mut observe) = observed();
    drive(js, &observe, "nr-tick", "tick", 1000);
    let conns = observe.report(REPORT_LIMIT);
    let c = named(&conns, "nr-tick");
    show("node-redis, 1,000 SETs in one tick", c);
    let own = assert_sets(c, 1000);
    assert_one_batch(c, 1000, own, 1);
}
