//! A connection that changes behaviour, across a real network: redis-py in the test's client
//! namespace, 200 single SETs and then one pipeline of 200 on one connection, to Redis behind
//! a relay holding each chunk `DELAY_US` each way (tests/clients/redis_py.py "phases"),
//! captured on the client's side of the veth and read with `observe --pcap`. Its headline
//! names the phase that cost the most with its share of the time, and what would help is
//! projected for that phase from its own figures. What the client did is read from its
//! syscalls under strace: a wait before each single SET, and the pipeline in a few sends
//! with one wait (on the wire, one round trip, or one a send when a send was held back).

use std::process::Command;

use shared::observe::{ObservedConnection, VerdictKind, advice};

use crate::support;
use crate::support::clients::output_within;
use crate::support::oracle::syscalls;
use crate::support::wire::{DELAY_PORT, Wire};

const N: u64 = 200;
/// The relay's hold each way, µs: a round trip of ~2 ms, many times redis-py's own time per
/// SET, so the one-at-a-time phase is most of the connection's time.
const DELAY_US: u64 = 1_000;

#[test]
fn redis_py_one_at_a_time_then_a_pipeline_is_named_by_its_costliest_phase_and_advised_for_it() {
    let Some(wire) = Wire::new(&[(DELAY_PORT, DELAY_US)]) else {
        return;
    };
    let Some(mut cmd) = support::clients::redis_py() else {
        return;
    };
    cmd.args([
        &DELAY_PORT.to_string(),
        "py-phases",
        "phases",
        &N.to_string(),
    ])
    .arg(&wire.pair.server_addr);
    let Some(mut capture) = wire.capture(DELAY_PORT) else {
        return;
    };
    let Some(seen) = syscalls(wire.pair.client.wrap(&cmd), DELAY_PORT) else {
        return;
    };
    let conns = capture.observe(DELAY_PORT);
    let conn: &ObservedConnection = conns
        .iter()
        .find(|c| c.name.as_deref() == Some("py-phases"))
        .unwrap_or_else(|| panic!("no connection named py-phases: {conns:?}"));
    let c = &conn.counts;
    let v = &conn.verdict;
    eprintln!(
        "{} commands, {} round trips, phases {:?}; strace {seen:?}; {} — {}",
        c.commands, c.round_trips, c.phases, v.headline, v.text
    );
    // Its handshake (CLIENT SETINFO, SETNAME: one at a time, as the single SETs) and the
    // 200 single SETs are one phase; the pipeline another.
    let handshake = c.commands - 2 * N;
    assert!(handshake <= 5, "{} commands", c.commands);
    let total: f64 = c.phases.iter().map(|p| p.us).sum();
    let [single, pipeline] = c.phases.as_slice() else {
        panic!("two phases: {:?}", c.phases);
    };
    assert_eq!(
        (single.kind, single.commands, single.round_trips),
        (VerdictKind::OneAtATime, N + handshake, N + handshake),
        "{single:?}"
    );
    // Against strace: a wait before each command of the first phase, one for the pipeline;
    // a send per command of the first, the pipeline in a few.
    assert_eq!(seen.waits, single.round_trips + 1, "strace: {seen:?}");
    assert!(
        seen.writes > single.commands && seen.writes <= single.commands + 4,
        "strace: {seen:?}"
    );
    // The pipeline, in those few writes (redis-py cuts its buffer at 6,000 bytes): one round
    // trip on the wire, or up to one a write when a busy machine held a write back until the
    // replies to the one before were in (the wire cannot show that the client did not read
    // them; strace shows the one wait).
    let pipeline_writes = seen.writes - single.commands;
    assert_eq!(
        (pipeline.kind, pipeline.commands),
        (VerdictKind::Pipelined, N),
        "{pipeline:?}"
    );
    assert!(
        (1..=pipeline_writes).contains(&pipeline.round_trips),
        "{pipeline:?}, {pipeline_writes} writes under strace"
    );
    // The first phase's round trips crossed the dialled delay both ways.
    let rtt = single.waiting_us / single.round_trips as f64;
    assert!(rtt >= 2.0 * DELAY_US as f64, "mean round trip {rtt:.0} µs");
    // The headline names it, with its share of the time.
    let share = single.us / total * 100.0;
    assert!(share > 50.0, "{share:.0} %");
    // Said as a whole percent, never 100 while the pipeline took some of the time.
    let share = shared::observe::percent(single.us, total);
    assert_ne!(share, "100");
    // Where the wire could not confirm the waits (a steady delay leaves the replies' lag
    // too even to weigh), the phase is a command at a time with up to its waits: strace
    // shows them waits, so either is right.
    let m = N + handshake;
    let expected = if c.unconfirmed_trips == 0 {
        format!("one at a time for {share} % of its time: {m} commands, {m} waits")
    } else {
        format!("a command at a time for {share} % of its time: {m} commands, up to {m} waits")
    };
    let then = match pipeline.round_trips {
        1 => format!("one pipeline of {N}"),
        k => format!("{k} pipelines of ~{}", N / k),
    };
    assert_eq!(v.headline, format!("{expected}; then {then}"), "{}", v.text);
    // What would help is for that phase, projected from its own time and round trips.
    let a = advice(conn).expect("a connection mostly one at a time is told what would help");
    assert_eq!(a.now_us, single.us);
    let own = single.us - single.waiting_us;
    let at_100 = a
        .projections
        .iter()
        .find(|p| p.batch == 100)
        .expect("projected at 100");
    let want = own + (N + handshake).div_ceil(100) as f64 * rtt;
    assert!((at_100.us - want).abs() < 1.0, "{} vs {want}", at_100.us);
    // Fewer round trips, the same own time: less, by how much depends on the client's own
    // pace, which a busy machine slows.
    assert!(at_100.us < single.us, "{a:?}");
    assert!(
        a.change.contains("r.pipeline(transaction=False)"),
        "{}",
        a.change
    );
    // The CLI's report says the same.
    let mut report = Command::new(env!("CARGO_BIN_EXE_pipescope"));
    report
        .args(["observe", "--pcap"])
        .arg(&capture.file)
        .args(["--redis-port", &DELAY_PORT.to_string()]);
    let out = output_within(report, "pipescope observe --pcap");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = a.projection_line().unwrap();
    let scope = if c.unconfirmed_trips == 0 {
        format!("the {m} commands one at a time, {share} % of its time: now ")
    } else {
        format!(
            "the {m} commands a command at a time, {share} % of its time, if each waited for its reply: now "
        )
    };
    eprintln!("what would help: {}; {line}", a.change);
    assert!(line.starts_with(&scope), "{line}");
    assert!(text.contains(&line), "{line} not in: {text}");
}
