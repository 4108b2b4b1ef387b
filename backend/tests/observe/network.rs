//! `pipescope observe` on traffic across a real network the test makes: two network
//! namespaces joined by a veth pair, a real redis-server in one behind a relay that holds each
//! chunk for a dialled delay (tests/clients/relay.py, not pipescope's delay line: the kernel
//! here has no netem), redis-py in the other, and tcpdump capturing on the client's side.
//!
//! What pipescope reports is checked against oracles that are not pipescope: Redis's own INFO
//! commandstats for the counts, the dialled delay for the round trips, the client's code for
//! how it batched; and the proxy's report against a capture of the same traffic.
//!
//! Where this cannot run (not root, `ip netns` refused, a tool missing) each test fails under
//! `CI=true` saying why, and prints a visible SKIPPED otherwise.

use crate::support;

use std::time::Duration;

use shared::observe::{ObservedConnection, VerdictKind};
use support::clients::{node, redis_cli, run};
use support::observe::{calls, named};
use support::wire::{BASE_PORT, D_US, DELAY_PORT, Wire};

/// redis-py's loop, and its SETs in pipelines of 100 (tests/clients/redis_py.py "batches").
const LOOP_N: u64 = 200;
const BATCHED_N: u64 = 1_000;
const BATCHES: u64 = 10;
/// How long pipescope may take to report.
const REPORT_LIMIT: Duration = Duration::from_secs(60);
/// The relays: one holding nothing (the path's own round trip), one holding D each way.
const RELAYS: &[(u16, u64)] = &[(BASE_PORT, 0), (DELAY_PORT, D_US)];

/// A connection's mean round trip, µs.
fn mean_trip(c: &ObservedConnection) -> f64 {
    c.times.waiting_us / c.counts.round_trips.max(1) as f64
}

fn show(what: &str, c: &ObservedConnection) {
    eprintln!(
        "{what}: {} commands {:?}, {} writes, {} round trips (mean {:.0} µs), {:?}: {}",
        c.counts.commands,
        c.top_commands,
        c.counts.writes,
        c.counts.round_trips,
        mean_trip(c),
        c.verdict.kind,
        c.verdict.text
    );
}

/// redis-py's loop with no hold (the base), its loop and its batches behind the dialled
/// delay, captured on the client's side of the veth: the counts are Redis's, the loop's mean
/// round trip is at least the dialled one and fits in its connection's time (how close it
/// comes to the dialled plus the base is printed), and the verdicts are how the client's code
/// talks.
#[test]
fn a_capture_across_a_real_network_agrees_with_redis_and_the_dialled_delay() {
    let Some(wire) = Wire::new(RELAYS) else {
        return;
    };
    let server = wire.pair.server_addr.clone();
    let before = wire.counted();
    let Some(mut base_capture) = wire.capture(BASE_PORT) else {
        return;
    };
    let Some(mut capture) = wire.capture(DELAY_PORT) else {
        return;
    };
    wire.py(&server, BASE_PORT, "py-base", "loop", LOOP_N);
    wire.py(&server, DELAY_PORT, "py-loop", "loop", LOOP_N);
    wire.py(&server, DELAY_PORT, "py-batches", "batches", BATCHED_N);
    let mut conns = base_capture.observe(BASE_PORT);
    conns.extend(capture.observe(DELAY_PORT));
    let after = wire.counted();

    // 1. The counts are Redis's: SETs per command, and every command on every connection.
    let sets: u64 = conns.iter().map(|c| calls(c, "SET")).sum();
    let seen: u64 = conns.iter().map(|c| c.counts.commands).sum();
    let (redis_sets, received) = (after.since(&before, "set"), after.received_since(&before));
    eprintln!(
        "counts: {} connections; SET {sets} captured, {redis_sets} by commandstats; all commands {seen} captured, {received} received by Redis",
        conns.len()
    );
    assert_eq!(conns.len(), 3, "a connection per client run: {conns:#?}");
    assert_eq!(
        (sets, redis_sets),
        (2 * LOOP_N + BATCHED_N, sets),
        "SETs the clients sent, and Redis ran"
    );
    assert_eq!(seen, received, "{conns:#?}");

    let (base, looped) = (named(&conns, "py-base"), named(&conns, "py-loop"));
    let batched = named(&conns, "py-batches");
    for (c, n) in [(base, LOOP_N), (looped, LOOP_N), (batched, BATCHED_N)] {
        assert_eq!(calls(c, "SET"), n, "{:?}", c.top_commands);
        assert_eq!(c.counts.replies, c.counts.commands, "{:?}", c.counts);
    }
    show("base (relay holding nothing)", base);
    show("loop (relay holding D each way)", looped);
    show("batches (relay holding D each way)", batched);

    // 2. A round trip per command, each the dialled one plus the path's own.
    for c in [base, looped] {
        assert!(
            (LOOP_N..=c.counts.commands).contains(&c.counts.round_trips),
            "a round trip per SET (and per handshake command at most): {:?}",
            c.counts
        );
    }
    // Over the dialled delay a command sent before the last reply would show; one at a time.
    // The base path's round trip (~40 µs) is shorter than the client's own time per command,
    // so there the wire may not decide: one at a time, or undetermined naming it, never
    // another kind.
    assert_eq!(
        looped.verdict.kind,
        VerdictKind::OneAtATime,
        "{}",
        looped.verdict.text
    );
    assert!(
        base.verdict.allows(VerdictKind::OneAtATime),
        "{:?}: {}",
        base.verdict.kind,
        base.verdict.text
    );
    // The relay's own account of the loop's connection: how late its timer let each chunk
    // out (on a busy machine a Python timer wakes late, and the path is that much longer).
    let port = |c: &ObservedConnection| {
        c.client
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("a client port in {}", c.client))
    };
    let held = wire.held(DELAY_PORT, port(looped));
    let late = held.late_per_trip_us() - wire.held(BASE_PORT, port(base)).late_per_trip_us();
    let dialled = 2.0 * D_US as f64;
    let expected = dialled + late + mean_trip(base);
    let measured = mean_trip(looped);
    eprintln!(
        "round trip: dialled {dialled:.0} µs + held late {late:.0} µs ({held:?}) + base {:.0} µs = {expected:.0} µs; measured mean {measured:.0} µs ({:+.1} %)",
        mean_trip(base),
        (measured - expected) / expected * 100.0
    );
    // What must hold whatever the machine's load: each round trip crossed the dialled delay
    // both ways, held as late as the relay's timer let it out; and the round trips fit in the
    // connection's time. How close the mean comes to `expected` is timing (a busy machine
    // reads a relay's chunks late, which nothing here accounts for): printed, not asserted.
    assert!(
        measured >= dialled,
        "the loop's mean round trip {measured:.0} µs is shorter than the dialled {dialled:.0} µs"
    );
    assert!(
        looped.times.waiting_us <= looped.times.wall_us,
        "its round trips ({:.0} µs) outlast its connection ({:.0} µs)",
        looped.times.waiting_us,
        looped.times.wall_us
    );

    // 3. The batches: pipelined, a round trip each (and the handshake's).
    let own = batched.counts.commands - BATCHED_N;
    assert!(
        (BATCHES..=BATCHES + own).contains(&batched.counts.round_trips),
        "{BATCHES} batches and {own} handshake commands: {:?}",
        batched.counts
    );
    // Each batch waits for the one before: over a 10 ms round trip none is sent while
    // replies are awaited. Pipelined; or, from a capture, undetermined with it (~67 commands a
    // segment could be a command a send merged by the kernel), never another kind.
    assert!(
        batched.verdict.allows(VerdictKind::Pipelined),
        "{}",
        batched.verdict.text
    );
}

/// redis-py's loop and batches through `pipescope observe` (in the client namespace, on its
/// veth address) to the relay, while tcpdump captures the proxy's leg to the relay: the proxy's
/// report and the capture's give the same commands, verdicts and round trips (within the
/// handshake's few).
#[test]
fn the_proxy_and_a_capture_of_its_traffic_agree_across_a_real_network() {
    let Some(wire) = Wire::new(RELAYS) else {
        return;
    };
    let Some(mut capture) = wire.capture(DELAY_PORT) else {
        return;
    };
    let mut observe = wire.observe(DELAY_PORT);
    let client = wire.pair.client_addr.clone();
    wire.py(&client, observe.port(), "py-loop", "loop", LOOP_N);
    wire.py(&client, observe.port(), "py-batches", "batches", BATCHED_N);
    let proxied = observe.report(REPORT_LIMIT);
    let captured = capture.observe(DELAY_PORT);

    for (name, n) in [("py-loop", LOOP_N), ("py-batches", BATCHED_N)] {
        let (p, c) = (named(&proxied, name), named(&captured, name));
        show(&format!("{name} through the proxy"), p);
        show(&format!("{name} captured"), c);
        let sorted = |c: &ObservedConnection| {
            let mut top = c.top_commands.clone();
            top.sort();
            top
        };
        assert_eq!(sorted(p), sorted(c), "{name}: the same commands");
        assert_eq!(calls(p, "SET"), n, "{name}");
        assert_eq!(p.counts.commands, c.counts.commands, "{name}");
        // The same kind, or undetermined naming the other's: a capture's segments are the
        // kernel's, which may merge small writes, so it may not tell batches from a write
        // per command where the proxy's reads can.
        assert!(
            p.verdict.allows(c.verdict.kind) || c.verdict.allows(p.verdict.kind),
            "{name}: {:?} {} / {:?} {}",
            p.verdict.kind,
            p.verdict.text,
            c.verdict.kind,
            c.verdict.text
        );
        let own = p.counts.commands - n;
        assert!(
            p.counts.round_trips.abs_diff(c.counts.round_trips) <= own,
            "{name}: {} round trips through the proxy, {} captured, {own} handshake commands",
            p.counts.round_trips,
            c.counts.round_trips
        );
    }
}

/// redis-cli --pipe's SETs.
const PIPE_N: u64 = 10_000;

/// ioredis's `pipeline()`, node-redis's one-tick batch and `redis-cli --pipe` behind the
/// dialled delay, captured on the client's side: each one's commands are what Redis ran, and
/// each is pipelined over as few round trips as its code waits for: one for the batch (and
/// its handshake's), and one for all of --pipe's writes, whose replies cannot be back within a
/// 10 ms round trip before its next write leaves.
#[test]
fn node_clients_and_redis_cli_pipe_across_a_real_network() {
    let Some(wire) = Wire::new(RELAYS) else {
        return;
    };
    let (Some(io), Some(nr)) = (
        node("ioredis", "ioredis.js"),
        node("redis", "node_redis.js"),
    ) else {
        return;
    };
    let server = wire.pair.server_addr.clone();
    let port = DELAY_PORT.to_string();
    let before = wire.counted();
    let Some(mut capture) = wire.capture(DELAY_PORT) else {
        return;
    };
    for (mut c, name, mode) in [(io, "io-pipe", "pipeline"), (nr, "nr-tick", "tick")] {
        c.args([&port, name, mode, &BATCHED_N.to_string(), &server]);
        run(wire.pair.client.wrap(&c), None, &format!("{name} ({mode})"));
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("sets.resp");
    let sets: Vec<u8> = (0..PIPE_N)
        .flat_map(|i| crate::capture::write::cmd(&["SET", &format!("pipe:{i}"), &i.to_string()]))
        .collect();
    std::fs::write(&input, sets).unwrap();
    let mut cli = redis_cli().expect("checked by Wire::new");
    cli.args(["-h", &server, "-p", &port, "--pipe"]);
    run(
        wire.pair.client.wrap(&cli),
        Some(&input),
        "redis-cli --pipe",
    );
    let conns = capture.observe(DELAY_PORT);
    let after = wire.counted();

    let sets: u64 = conns.iter().map(|c| calls(c, "SET")).sum();
    let seen: u64 = conns.iter().map(|c| c.counts.commands).sum();
    eprintln!(
        "counts: {} connections; SET {sets} captured, {} by commandstats; all commands {seen} captured, {} received by Redis",
        conns.len(),
        after.since(&before, "set"),
        after.received_since(&before)
    );
    assert_eq!(sets, 2 * BATCHED_N + PIPE_N, "{conns:#?}");
    assert_eq!(sets, after.since(&before, "set"));
    assert_eq!(seen, after.received_since(&before), "{conns:#?}");

    for name in ["io-pipe", "nr-tick"] {
        let c = named(&conns, name);
        show(name, c);
        assert_eq!(calls(c, "SET"), BATCHED_N);
        // Pipelined; or undetermined with it: a capture's segments are the kernel's, which
        // merges small writes, so ~100 commands a segment could be a write per command.
        assert!(
            c.verdict.allows(VerdictKind::Pipelined),
            "{}",
            c.verdict.text
        );
        // The batch's round trips, one per handshake command at most. node-redis was seen
        // to write 769 of its 1,000 and the rest once their replies were back (its own flow
        // control): two round trips for the batch, so two are allowed; a loop would be 1,000.
        let own = c.counts.commands - BATCHED_N;
        assert!(
            c.counts.round_trips <= own + 2,
            "{name}: the batch in one or two round trips: {:?}",
            c.counts
        );
        assert!(
            c.counts.max_depth >= BATCHED_N / 10,
            "{name}: batched, a tenth of it in flight at once at least: {:?}",
            c.counts
        );
    }
    let piped = conns
        .iter()
        .find(|c| calls(c, "SET") == PIPE_N)
        .expect("redis-cli --pipe's connection");
    show("redis-cli --pipe", piped);
    // One wait, at the end; its segments left while replies were awaited, which a capture
    // cannot tell from one write the kernel split, and says so.
    assert!(
        piped.verdict.allows(VerdictKind::Pipelined),
        "{}",
        piped.verdict.text
    );
    assert!(
        piped
            .verdict
            .text
            .contains("which a capture cannot tell apart"),
        "{}",
        piped.verdict.text
    );
    assert_eq!(piped.counts.round_trips, 1, "{:?}", piped.counts);
}
