//! `pipescope observe` end to end: the binary listens, a real client (the `redis` crate) talks
//! to Redis through it one command at a time on one connection and pipelined on another, and
//! the report printed at the end (on time, or on Ctrl-C) says so with the right counts.

use crate::support;

use std::time::Duration;

use shared::observe::{ObservedConnection, VerdictKind};
use support::observe::{Observe, calls, named};

/// 200 SETs one at a time on one connection, then 5 pipelines of 1,000 on another.
fn drive(addr: &str) {
    let client = redis::Client::open(format!("redis://{addr}")).unwrap();
    let mut one = client.get_connection().unwrap();
    redis::cmd("CLIENT")
        .arg("SETNAME")
        .arg("one-by-one")
        .exec(&mut one)
        .unwrap();
    for i in 0..200 {
        redis::cmd("SET")
            .arg(format!("obs:k{i}"))
            .arg(i)
            .exec(&mut one)
            .unwrap();
    }
    drop(one);
    let mut piped = client.get_connection().unwrap();
    redis::cmd("CLIENT")
        .arg("SETNAME")
        .arg("piped")
        .exec(&mut piped)
        .unwrap();
    for b in 0..5 {
        let mut p = redis::pipe();
        for i in 0..1000 {
            p.set(format!("obs:p{b}:{i}"), i).ignore();
        }
        p.exec(&mut piped).unwrap();
    }
}

/// What the `redis` crate sends before our commands: CLIENT SETINFO (lib-name, lib-ver),
/// pipelined, on a connection's start (Redis 7.2+; older Redis answers with an error).
fn handshake(c: &ObservedConnection) -> u64 {
    c.top_commands
        .iter()
        .filter(|(name, _)| name != "SET")
        .map(|(_, n)| n)
        .sum::<u64>()
}

#[test]
fn the_report_says_one_at_a_time_and_pipelined_with_the_counts() {
    let (redis, _) = support::redis();
    let mut observe = Observe::start(&redis.url(), &["--duration", "4s", "--json"]);
    drive(&observe.addr);
    let out = observe.rest(Duration::from_secs(120));
    let conns: Vec<ObservedConnection> =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));

    let one = named(&conns, "one-by-one");
    eprintln!("one-by-one: {} ({:?})", one.verdict.text, one.counts);
    let sets = |c: &ObservedConnection| calls(c, "SET");
    assert_eq!(sets(one), 200);
    // One at a time; or undetermined with it, where the slope cannot confirm the waits.
    assert!(
        one.verdict.allows(VerdictKind::OneAtATime),
        "{}",
        one.verdict.text
    );
    // Each SET is its own write and round trip; so is CLIENT SETNAME, and the handshake's
    // commands are at most one write and one round trip each.
    let extra = handshake(one);
    assert!(extra <= 3, "handshake: {:?}", one.top_commands);
    assert_eq!(one.counts.commands, 200 + extra);
    assert!(
        (201..=200 + extra).contains(&one.counts.round_trips),
        "{:?}",
        one.counts
    );
    assert!(
        (201..=200 + extra).contains(&one.counts.writes),
        "{:?}",
        one.counts
    );
    assert!(!one.open && one.ended.is_some());

    let piped = named(&conns, "piped");
    eprintln!("piped: {} ({:?})", piped.verdict.text, piped.counts);
    assert_eq!(sets(piped), 5000);
    // Pipelined; or undetermined with it, its five batches too few to confirm as waits (then
    // they could be batches sent without waiting: auto-pipelined).
    assert!(
        piped.verdict.allows(VerdictKind::Pipelined),
        "{}",
        piped.verdict.text
    );
    // Five batches, each waited for; the handshake and CLIENT SETNAME add at most three more.
    assert!(
        (6..=8).contains(&piped.counts.round_trips),
        "{:?}",
        piped.counts
    );
    assert!(piped.counts.max_depth >= 1000, "{:?}", piped.counts);
    // A 1,000-command batch is ~40 KB: TCP may split it into a few reads, not hundreds.
    assert!(piped.counts.writes <= 5 * 8 + 3, "{:?}", piped.counts);

    // The pipelined equivalent was measured by the engine for both, on as many commands, with
    // values the size of the client's (the mean length of the numbers it SET), through a
    // relay like the observer's, compared with the time on round trips as the report had it.
    let mean_len = |n: u64| {
        (0..n)
            .map(|i| (i % 1000).to_string().len() as u64)
            .sum::<u64>()
            / n
    };
    for (c, sets) in [(one, 200), (piped, 5000)] {
        let e = c.equivalent.as_ref().expect("an equivalent was measured");
        assert_eq!(
            (e.command.as_str(), e.count, e.batch),
            ("SET", c.counts.commands, 1000)
        );
        assert!(e.wall_us > 0);
        assert_eq!(c.mean_set_value, Some(mean_len(sets) as u32), "{c:?}");
        assert_eq!(e.value_bytes, c.mean_set_value);
        assert!(e.through_relay);
        let on_trips = c.times.waiting_us + c.times.observer_us;
        assert!(
            (e.compared_us - on_trips).abs() < 1.0,
            "{e:?} vs {:?}",
            c.times
        );
        // The client named itself: the redis crate sends CLIENT SETINFO LIB-NAME redis-rs.
        assert_eq!(c.library.as_deref(), Some("redis-rs"));
    }
    let help = shared::observe::advice(one).expect("a loop is told what would help");
    if one.verdict.kind == VerdictKind::Undetermined {
        // Undetermined (the wire on loopback may not show that it waited): both cases, each
        // with the change for its library, and no projection for a kind not decided.
        assert!(
            help.change
                .starts_with("if it waits for each reply (one at a time): redis-rs: "),
            "{help:?}"
        );
        assert!(help.projections.is_empty(), "{help:?}");
    } else {
        assert!(help.change.starts_with("redis-rs: "), "{help:?}");
        assert_eq!(
            help.projections.len(),
            2,
            "batches of 10 and 100 of its 200: {help:?}"
        );
    }
    assert!(shared::observe::advice(piped).is_none());
}

#[test]
fn ctrl_c_prints_the_report_too() {
    let (redis, _) = support::redis();
    let mut observe = Observe::start(&redis.url(), &["--no-equivalent"]);
    let client = redis::Client::open(format!("redis://{}", observe.addr)).unwrap();
    let mut c = client.get_connection().unwrap();
    for i in 0..10 {
        redis::cmd("SET")
            .arg(format!("obs:c{i}"))
            .arg(i)
            .exec(&mut c)
            .unwrap();
    }
    // SIGINT while the connection is still open: the report says so, then pipescope closes it.
    let out = observe.interrupt(Duration::from_secs(60));
    assert!(out.contains("one at a time"), "{out}");
    assert!(out.contains("commands"), "the table's header: {out}");
    drop(c);
}
