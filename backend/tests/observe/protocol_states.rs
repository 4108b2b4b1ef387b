//! The protocol states that change which message from Redis answers which command, through the
//! observing proxy against a real redis-server: a RESP2 subscription ended by UNSUBSCRIBE and
//! by RESET, CLIENT REPLY OFF and SKIP, and a BLPOP worker. Each client here is the test
//! itself, writing one command and reading its reply before the next unless it says otherwise,
//! so it knows its own commands, writes and waits; Redis's INFO commandstats says what ran.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use shared::observe::VerdictKind;

use crate::proxy::{Setup, cmd, replies, setup};
use crate::support;

/// Writes `args` as one command and reads its one reply.
fn ask(s: &mut TcpStream, args: &[&[u8]]) -> Vec<u8> {
    s.write_all(&cmd(args)).unwrap();
    replies(s, 1)
}

/// `n` SETs one at a time, each answered before the next is written.
fn sets_one_at_a_time(s: &mut TcpStream, n: usize) {
    for i in 0..n {
        assert_eq!(
            ask(s, &[b"SET", format!("k{i}").as_bytes(), b"v"]),
            b"+OK\r\n"
        );
    }
}

/// Calls of `command` (lower case) Redis has executed, by its INFO commandstats.
fn calls(setup: &Setup, command: &str) -> u64 {
    let target = pipescope::target::RedisTarget::parse(&setup.redis.url()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(support::command_calls(&target))
        .get(command)
        .copied()
        .unwrap_or(0)
}

#[test]
fn a_subscriber_that_unsubscribes_or_resets_gets_replies_again() {
    let setup = setup();
    let mut publisher = setup.direct();
    let mut s = setup.through_proxy();
    s.write_all(&cmd(&[b"SUBSCRIBE", b"a", b"b"])).unwrap();
    replies(&mut s, 2); // subscribe a (1), subscribe b (2)
    for _ in 0..3 {
        assert_eq!(ask(&mut publisher, &[b"PUBLISH", b"a", b"hi"]), b":1\r\n");
    }
    replies(&mut s, 3);
    s.write_all(&cmd(&[b"UNSUBSCRIBE"])).unwrap();
    let unsubscribed = replies(&mut s, 2);
    assert!(unsubscribed.ends_with(b":0\r\n"), "{unsubscribed:?}");
    sets_one_at_a_time(&mut s, 20);
    let c = setup.until(1, "the 20 SETs answered", |c| c.counts.replies >= 20);
    assert_eq!(
        (
            c.counts.commands,
            c.counts.replies,
            c.counts.pushes,
            c.counts.round_trips
        ),
        (22, 20, 7, 20),
        "2 (un)subscribes, 20 SETs; 2 + 3 + 2 pushes; {}",
        c.verdict.text
    );
    // Its SETs are round trips, not pushes: one at a time, or undetermined with it (the
    // wire on loopback cannot always confirm the waits), never a subscriber.
    assert!(
        c.verdict.allows(VerdictKind::OneAtATime),
        "{}",
        c.verdict.text
    );
    assert_eq!(calls(&setup, "set"), 20);

    // RESET ends it too: its +RESET is a reply, then the SETs are.
    let mut s = setup.through_proxy();
    s.write_all(&cmd(&[b"SUBSCRIBE", b"a"])).unwrap();
    replies(&mut s, 1);
    assert_eq!(ask(&mut s, &[b"RESET"]), b"+RESET\r\n");
    sets_one_at_a_time(&mut s, 20);
    let c = setup.until(2, "RESET and 20 SETs answered", |c| c.counts.replies >= 21);
    assert_eq!(
        (
            c.counts.commands,
            c.counts.replies,
            c.counts.pushes,
            c.counts.round_trips
        ),
        (22, 21, 1, 21),
        "{}",
        c.verdict.text
    );
    assert_eq!(calls(&setup, "set"), 40);
}

#[test]
fn client_reply_off_and_skip_are_followed() {
    let setup = setup();
    let mut s = setup.through_proxy();
    // OFF, then 50 SETs in one write with nothing to read back, then ON's +OK.
    s.write_all(&cmd(&[b"CLIENT", b"REPLY", b"OFF"])).unwrap();
    let quiet: Vec<u8> = (0..50)
        .flat_map(|i| cmd(&[b"SET", format!("q{i}").as_bytes(), b"v"]))
        .collect();
    s.write_all(&quiet).unwrap();
    assert_eq!(ask(&mut s, &[b"CLIENT", b"REPLY", b"ON"]), b"+OK\r\n");
    // SKIP: the next command (a SET) gets no reply; PING's is the next one read.
    s.write_all(&cmd(&[b"CLIENT", b"REPLY", b"SKIP"])).unwrap();
    s.write_all(&cmd(&[b"SET", b"skipped", b"v"])).unwrap();
    assert_eq!(ask(&mut s, &[b"PING"]), b"+PONG\r\n");
    sets_one_at_a_time(&mut s, 10);
    let c = setup.until(1, "ON, PING and 10 SETs answered", |c| {
        c.counts.replies >= 12
    });
    assert_eq!(
        (
            c.counts.commands,
            c.counts.replies,
            c.counts.round_trips,
            c.counts.max_depth
        ),
        (65, 12, 12, 1),
        "OFF, 50 SETs, ON, SKIP, a SET, PING, 10 SETs; {}",
        c.verdict.text
    );
    // Its SETs are round trips, not pushes: one at a time, or undetermined with it (the
    // wire on loopback cannot always confirm the waits), never a subscriber.
    assert!(
        c.verdict.allows(VerdictKind::OneAtATime),
        "{}",
        c.verdict.text
    );
    assert_eq!(calls(&setup, "set"), 61);
    // Nothing is left awaited: a connection with nothing in flight is not sent on as changed.
    let observer = setup.observer.connections();
    observer.take_changed();
    assert!(
        observer.take_changed().is_empty(),
        "an idle connection is not waiting on a reply"
    );
}

#[test]
fn a_blpop_worker_waits_once_per_command_and_its_time_runs_on_while_blocked() {
    let setup = setup();
    let mut pusher = setup.direct();
    let mut worker = setup.through_proxy();
    for i in 0..10 {
        worker.write_all(&cmd(&[b"BLPOP", b"q", b"5"])).unwrap();
        let pushed = ask(&mut pusher, &[b"LPUSH", b"q", format!("job{i}").as_bytes()]);
        assert_eq!(
            pushed, b":1\r\n",
            "the list was empty: the worker took every job"
        );
        replies(&mut worker, 1);
    }
    // The 11th BLPOP waits on an empty list: the page must see its blocked time grow.
    worker.write_all(&cmd(&[b"BLPOP", b"q", b"30"])).unwrap();
    let c = setup.until(1, "the 11th BLPOP arrived", |c| c.counts.blocking == 11);
    let observer = setup.observer.connections();
    observer.take_changed();
    std::thread::sleep(Duration::from_millis(200));
    let again = observer.take_changed();
    let blocked = again.iter().find(|o| o.id == 1).unwrap_or_else(|| {
        panic!("a connection blocked on BLPOP is sent on though nothing happened: {again:?}")
    });
    assert!(
        blocked.times.blocked_us >= c.times.blocked_us + 100_000.0,
        "blocked time runs on: {} then {} µs",
        c.times.blocked_us,
        blocked.times.blocked_us
    );
    assert_eq!(
        (blocked.counts.round_trips, blocked.counts.commands),
        (0, 11)
    );
    assert!(
        blocked
            .verdict
            .text
            .starts_with("one at a time: 11 commands over 11 blocking waits"),
        "{}",
        blocked.verdict.text
    );
    assert_eq!(calls(&setup, "lpush"), 10);
    // The blocked 11th may or may not be counted yet, by Redis's version.
    let blpops = calls(&setup, "blpop");
    assert!((10..=11).contains(&blpops), "{blpops} BLPOPs");
}
