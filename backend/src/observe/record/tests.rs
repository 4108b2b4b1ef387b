//! A record driven as the proxy's hooks drive it, chunk by chunk at chosen instants.

use std::time::Duration;

use shared::observe::VerdictKind;

use super::*;
use crate::resp::framer::Side;

/// Drives a record as the proxy's hooks would, at µs offsets from one instant.
struct Conn {
    rec: Record,
    t0: Instant,
    commands: Framer,
    replies: Framer,
}

impl Conn {
    fn new() -> Conn {
        Conn {
            rec: Record::new(1, "127.0.0.1:1".into()),
            t0: Instant::now(),
            commands: Framer::new(Side::Commands),
            replies: Framer::new(Side::Replies),
        }
    }
    fn at(&self, us: u64) -> Instant {
        self.t0 + Duration::from_micros(us)
    }
    /// The client writes `bytes`; the proxy hands them to Redis 1 µs later.
    fn send(&mut self, us: u64, bytes: &[u8]) {
        let (a, b) = (self.at(us), self.at(us + 1));
        self.rec.client_read(a, bytes, &mut self.commands);
        self.rec.handed_to_redis(b);
    }
    /// Redis's `bytes` reach the proxy; it hands them on 1 µs later.
    fn reply(&mut self, us: u64, bytes: &[u8]) {
        let (a, b) = (self.at(us), self.at(us + 1));
        self.rec.redis_read(a, bytes, &mut self.replies);
        self.rec.handed_to_client(b);
    }
    fn done(&mut self, us: u64) -> ObservedConnection {
        let at = self.at(us);
        self.rec.end(at, "closed by the client".into());
        self.rec.snapshot(at)
    }
}

const SET: &[u8] = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";

/// Read as one at a time: decided so, or undetermined with it first among the candidates
/// (these few round trips, a steady lag each, are too few to confirm as waits: the wire
/// alone cannot tell them from a client's own pauses).
fn as_one_at_a_time(s: &ObservedConnection) -> bool {
    s.verdict.kind == VerdictKind::OneAtATime
        || (s.verdict.kind == VerdictKind::Undetermined
            && s.verdict.candidates.first() == Some(&VerdictKind::OneAtATime))
}

#[test]
fn one_at_a_time_and_where_its_time_went() {
    let mut c = Conn::new();
    for k in 0..3 {
        c.send(k * 10, SET);
        c.reply(k * 10 + 5, b"+OK\r\n");
    }
    let s = c.done(100);
    assert_eq!(
        (
            s.counts.commands,
            s.counts.writes,
            s.counts.round_trips,
            s.counts.max_depth
        ),
        (3, 3, 3, 1)
    );
    assert!(as_one_at_a_time(&s), "{}", s.verdict.text);
    // Each trip: arrived 0, at Redis 1..5, handed back 6. Between trips: 6 → 10.
    assert_eq!(s.times.waiting_us, 18.0);
    assert_eq!(s.times.at_redis_us, 12.0);
    assert_eq!(s.times.client_us, 8.0);
    assert_eq!(
        s.times.wall_us, 26.0,
        "the idle time after the last reply is not counted"
    );
    let (timeline, writes) = c.rec.timeline();
    assert_eq!(timeline.first.len(), 3);
    assert_eq!(writes, vec![0.0, 10.0, 20.0]);
    let span = &timeline.first[1];
    assert_eq!(
        (
            span.issued_us,
            span.at_server_us,
            span.from_server_us,
            span.replied_us
        ),
        (10.0, Some(11.0), Some(15.0), 16.0)
    );
}

#[test]
fn batches_in_one_write_each_are_pipelined_and_overlap_is_auto_pipelined() {
    let mut c = Conn::new();
    let batch = SET.repeat(100);
    let replies = b"+OK\r\n".repeat(100);
    for k in 0..5 {
        c.send(k * 100, &batch);
        c.reply(k * 100 + 50, &replies);
    }
    let s = c.done(1000);
    assert_eq!(
        (s.counts.commands, s.counts.writes, s.counts.round_trips),
        (500, 5, 5)
    );
    assert_eq!(s.counts.max_depth, 100);
    assert_eq!(s.times.mean_depth, 100.0);
    // Batches each sent once every reply was back; too few to confirm those as waits, so
    // they could be batches sent without waiting: pipelined, or auto-pipelined.
    assert_eq!(
        (s.verdict.kind, s.verdict.candidates.as_slice()),
        (
            VerdictKind::Undetermined,
            [VerdictKind::Pipelined, VerdictKind::AutoPipelined].as_slice()
        ),
        "{}",
        s.verdict.text
    );

    // A client that writes again before its replies are back.
    let mut c = Conn::new();
    for k in 0..10 {
        c.send(k * 10, &batch);
    }
    for k in 0..10 {
        c.reply(200 + k * 10, &replies);
    }
    let s = c.done(1000);
    assert_eq!(
        (
            s.counts.writes,
            s.counts.overlapping_writes,
            s.counts.round_trips
        ),
        (10, 9, 1)
    );
    assert_eq!(s.counts.max_depth, 1000);
    assert_eq!(s.verdict.kind, VerdictKind::AutoPipelined);
}

#[test]
fn a_reply_split_over_chunks_is_counted_when_it_is_whole() {
    let mut c = Conn::new();
    c.send(0, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    c.reply(5, b"$10\r\n01234");
    let s = c.rec.snapshot(c.at(6));
    assert_eq!((s.counts.replies, s.counts.round_trips), (0, 1));
    c.reply(9, b"56789\r\n");
    let s = c.done(20);
    assert_eq!(s.counts.replies, 1);
    assert_eq!(s.times.waiting_us, 10.0);
}

#[test]
fn pushes_blocking_commands_and_names() {
    let mut c = Conn::new();
    c.send(
        0,
        b"*4\r\n$5\r\nHELLO\r\n$1\r\n3\r\n$7\r\nSETNAME\r\n$3\r\napp\r\n",
    );
    c.reply(5, b"%1\r\n+server\r\n+redis\r\n");
    // A RESP3 push in between is no reply to anything.
    c.reply(8, b">2\r\n+invalidate\r\n*1\r\n+k\r\n");
    c.send(10, b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
    c.reply(1_010, b"*2\r\n+q\r\n+x\r\n");
    let s = c.done(1_100);
    assert_eq!(s.name.as_deref(), Some("app"));
    assert_eq!(
        (s.counts.commands, s.counts.replies, s.counts.pushes),
        (2, 2, 1)
    );
    assert_eq!((s.counts.blocking, s.counts.round_trips), (1, 1));
    assert!(
        (s.times.blocked_us - 1_001.0).abs() < 1e-6,
        "BLPOP's wait is blocked time, not a trip: {}",
        s.times.blocked_us
    );

    // RESP2 pub/sub: after SUBSCRIBE, everything Redis sends is pushed.
    let mut c = Conn::new();
    c.send(0, b"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$3\r\nsub\r\n");
    c.reply(5, b"+OK\r\n");
    c.send(10, b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n");
    c.reply(15, b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
    for k in 0..5 {
        c.reply(100 + k, b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
    }
    let s = c.done(200);
    assert_eq!(s.name.as_deref(), Some("sub"));
    assert_eq!((s.counts.replies, s.counts.pushes), (1, 6));
    assert_eq!(s.verdict.kind, VerdictKind::Subscriber);
}

/// `cmd(&["SET", "k", "v"])` as RESP.
fn cmd(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

/// Ten SETs one at a time, from `us` on: each answered before the next is sent.
fn ten_sets(c: &mut Conn, us: u64) {
    for k in 0..10 {
        c.send(us + k * 10, SET);
        c.reply(us + k * 10 + 5, b"+OK\r\n");
    }
}

#[test]
fn a_resp2_subscription_ends_when_redis_counts_down_to_zero_or_says_reset() {
    // SUBSCRIBE two channels, a message, UNSUBSCRIBE both (counts 1, then 0): commands after
    // it get replies again, so ten SETs are ten round trips, not ten more pushes.
    let mut c = Conn::new();
    c.send(0, &cmd(&["SUBSCRIBE", "a", "b"]));
    c.reply(
        5,
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
    );
    c.reply(8, b"*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n");
    c.send(10, &cmd(&["UNSUBSCRIBE"]));
    c.reply(15, b"*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n");
    c.reply(16, b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:0\r\n");
    ten_sets(&mut c, 100);
    let s = c.done(300);
    assert_eq!(
        (
            s.counts.commands,
            s.counts.replies,
            s.counts.pushes,
            s.counts.round_trips
        ),
        (12, 10, 5, 10)
    );
    assert!(as_one_at_a_time(&s), "{}", s.verdict.text);

    // The same after MONITOR, ended by RESET: its +RESET is a reply, and the SETs after it.
    let mut c = Conn::new();
    c.send(0, &cmd(&["MONITOR"]));
    c.reply(5, b"+OK\r\n");
    c.reply(
        8,
        b"+1733000000.000000 [0 127.0.0.1:5] \"SET\" \"k\" \"v\"\r\n",
    );
    c.send(10, &cmd(&["RESET"]));
    c.reply(
        15,
        b"+1733000000.000001 [0 127.0.0.1:5] \"GET\" \"k\"\r\n+RESET\r\n",
    );
    ten_sets(&mut c, 100);
    let s = c.done(300);
    assert_eq!(
        (
            s.counts.commands,
            s.counts.replies,
            s.counts.pushes,
            s.counts.round_trips
        ),
        (12, 11, 3, 11)
    );
}

#[test]
fn client_reply_off_and_skip_leave_nothing_awaited() {
    // OFF: the SETs get no replies, so none is awaited; ON's +OK is the next reply.
    let mut c = Conn::new();
    c.send(0, &cmd(&["CLIENT", "REPLY", "OFF"]));
    for k in 0..100 {
        c.send(10 + k, SET);
    }
    c.send(200, &cmd(&["CLIENT", "REPLY", "ON"]));
    c.reply(205, b"+OK\r\n");
    assert!(
        !c.rec.awaits_reply(),
        "nothing is awaited once ON is answered"
    );
    ten_sets(&mut c, 300);
    let s = c.done(500);
    assert_eq!(
        (
            s.counts.commands,
            s.counts.replies,
            s.counts.round_trips,
            s.counts.max_depth
        ),
        (112, 11, 11, 1)
    );
    assert!(as_one_at_a_time(&s), "{}", s.verdict.text);

    // SKIP: the next command alone gets none.
    let mut c = Conn::new();
    c.send(0, &cmd(&["CLIENT", "REPLY", "SKIP"]));
    c.send(5, SET);
    ten_sets(&mut c, 100);
    let s = c.done(300);
    assert_eq!((s.counts.replies, s.counts.round_trips), (10, 10));
    assert!(!c.rec.awaits_reply());
}

#[test]
fn a_blpop_worker_is_blocking_waits_and_its_time_runs_on_while_blocked() {
    let mut c = Conn::new();
    let blpop = cmd(&["BLPOP", "q", "0"]);
    for k in 0..50 {
        c.send(k * 1_000, &blpop);
        c.reply(k * 1_000 + 900, b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    }
    c.send(50_000, &blpop);
    assert!(
        c.rec.awaits_reply(),
        "blocked on BLPOP: its times must go on being sent"
    );
    let blocked = |c: &Conn, us| c.rec.snapshot(c.at(us)).times.blocked_us;
    assert!(blocked(&c, 60_000) > blocked(&c, 51_000));
    let s = c.rec.snapshot(c.at(60_000));
    assert_eq!((s.counts.blocking, s.counts.round_trips), (51, 0));
    assert_eq!(s.verdict.kind, VerdictKind::OneAtATime);
    assert!(
        s.verdict
            .text
            .starts_with("one at a time: 51 commands over 51 blocking waits"),
        "{}",
        s.verdict.text
    );
}

#[test]
fn redis_protocol_error_after_garbage_is_no_push() {
    let mut c = Conn::new();
    c.send(0, b"PING\r\n*x\r\n");
    c.reply(
        5,
        b"+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n",
    );
    let s = c.done(10);
    assert_eq!(
        (s.counts.commands, s.counts.replies, s.counts.pushes),
        (1, 1, 0)
    );
    assert!(as_one_at_a_time(&s), "not a subscriber: {}", s.verdict.text);
}

#[test]
fn memory_is_bounded_whatever_the_length() {
    let mut c = Conn::new();
    for k in 0..100_000u64 {
        c.send(k * 10, SET);
        c.reply(k * 10 + 5, b"+OK\r\n");
    }
    let s = c.done(1_000_000_000);
    assert_eq!(
        (s.counts.commands, s.counts.round_trips),
        (100_000, 100_000)
    );
    let (timeline, writes) = c.rec.timeline();
    assert_eq!(timeline.first.len(), FULL_SPANS as usize);
    assert!(
        timeline.sampled.len() <= SAMPLED,
        "{}",
        timeline.sampled.len()
    );
    assert!(
        timeline.sampled.len() >= SAMPLED / 2,
        "{}",
        timeline.sampled.len()
    );
    assert!(timeline.sampled.iter().all(|s| s.i % timeline.stride == 0));
    // Every kept request has all four stamps, in order.
    for s in timeline.first.iter().chain(&timeline.sampled) {
        let (at, from) = (s.at_server_us.unwrap(), s.from_server_us.unwrap());
        assert!(
            s.issued_us <= at && at <= from && from <= s.replied_us,
            "{s:?}"
        );
    }
    assert_eq!(writes.len(), FULL_SPANS as usize);
}
