//! The verdict: whether and how a connection pipelined, in one word and in a sentence with
//! its numbers, worked out once for the CLI and the page.

use super::marks::{batch_in_pieces, merged_writes, unwaited_batches};
use super::*;

/// Works out the verdict from the counts and times (`verdict_at_proxy`, no socket told).
pub fn verdict(c: &ObservedCounts, t: &ObservedTimes) -> Verdict {
    verdict_at_proxy(c, t, None)
}

/// Works out the verdict from the counts and times, and what the kernel counted on the
/// proxy's socket from the client, if told (`read_late`).
///
/// Round trips the wire cannot confirm as waits (`ObservedCounts::unconfirmed_trips`) are
/// counted, as the wire shows them, and said to be unconfirmed; when leaving them out would
/// give another kind of verdict, the verdict says it is timing-dependent rather than pick one.
pub fn verdict_at_proxy(
    c: &ObservedCounts,
    t: &ObservedTimes,
    socket: Option<&ClientSocket>,
) -> Verdict {
    let (kind, text) = kind_and_text(c, t, c.round_trips);
    // Read late, the counts below undercount its writes: that is said before what they show.
    let late = || socket.and_then(|s| super::read_late::read_late(c, t, s, kind));
    let mut timing_dependent = merged_writes(c, kind).or_else(late);
    if timing_dependent.is_none() && c.unconfirmed_trips > 0 {
        let sure = c.round_trips.saturating_sub(c.unconfirmed_trips).max(1);
        let (without, _) = kind_and_text(c, t, sure);
        if without != kind {
            timing_dependent = Some(format!(
                "timing-dependent: {} of its {} could be the client's own pauses rather than waits; without them it reads as {}",
                group(c.unconfirmed_trips),
                count(c.round_trips, "round trip"),
                without.words(),
            ));
        }
    }
    if timing_dependent.is_none() {
        timing_dependent = unwaited_batches(c, kind);
    }
    if timing_dependent.is_none() {
        timing_dependent = batch_in_pieces(c, kind);
    }
    let text = match &timing_dependent {
        Some(why) => format!("{text} ({why})"),
        None => text,
    };
    Verdict {
        kind,
        text,
        timing_dependent,
    }
}

/// The verdict's kind and sentence, taking `trips` of the connection's round trips as waits.
fn kind_and_text(c: &ObservedCounts, t: &ObservedTimes, trips: u64) -> (VerdictKind, String) {
    let n = c.commands;
    if n == 0 {
        return (VerdictKind::Idle, "no commands yet".into());
    }
    // A blocking command's wait (BLPOP until a push arrives) is no round trip, but a worker
    // that only blocks still waited once per command: both are counted, each by its name.
    let waits = trips + c.blocking;
    let trips_said = trips_text(c, trips);
    let per_write = n as f64 / c.writes.max(1) as f64;
    // "…over 7 round trips, 1 MULTI/EXEC transaction; of 15.0 ms: …"
    let breakdown = match c.transactions {
        0 => breakdown(t),
        k => format!(", {}{}", count(k, "MULTI/EXEC transaction"), breakdown(t)),
    };
    if c.pushes > 0 && c.pushes >= c.replies {
        return (
            VerdictKind::Subscriber,
            format!(
                "subscriber: {} pushed to it after {} of its own",
                count(c.pushes, "message"),
                count(n, "command"),
            ),
        );
    }
    // "Every command waited": as many round trips as commands, or never two in flight (unless
    // the replies were shown not to be waited for, or some round trips are being left out).
    let never_two = c.max_depth <= 1 && trips == c.round_trips && c.cadence_gaps == 0;
    if never_two || waits * 10 >= n * 9 {
        return (
            VerdictKind::OneAtATime,
            format!(
                "one at a time: {} over {trips_said}{breakdown}",
                count(n, "command")
            ),
        );
    }
    let per_trip = n as f64 / waits.max(1) as f64;
    // A write for each command; or a few commands a write, most sent while replies were
    // awaited: small writes arrive merged (the proxy reads what has come; Linux merges small
    // segments as it sends), so a client writing each command reads as ~2–4 a write.
    let each = per_write <= 1.5;
    let few = per_write <= 4.0 && c.overlapping_writes * 2 > c.writes;
    if each || few {
        let merged = if each {
            String::new()
        } else {
            format!(" (~{per_write:.1} each: small writes arrive merged)")
        };
        return (
            VerdictKind::WritePerCommand,
            format!(
                "pipelined, but a write per command: {} in {}{merged} over {trips_said} (~{} per round trip){breakdown}",
                count(n, "command"),
                count(c.writes, writes_noun(c)),
                group(per_trip.round() as u64),
            ),
        );
    }
    // A capture's segments that left while replies were awaited may be one write the kernel
    // split as it sent, so from a capture that is said, not taken as auto-pipelining.
    if c.overlapping_writes * 2 > c.writes && !c.writes_are_segments {
        return (
            VerdictKind::AutoPipelined,
            format!(
                "auto-pipelined: {} of ~{} commands, sent while replies were awaited, over {trips_said}{breakdown}",
                count(c.writes, "write"),
                group(per_write.round() as u64),
            ),
        );
    }
    let split = if c.writes_are_segments && c.overlapping_writes * 2 > c.writes {
        format!(
            " ({} of them left while replies were awaited: one write the kernel split, or writes sent without waiting, which a capture cannot tell apart)",
            group(c.overlapping_writes)
        )
    } else {
        String::new()
    };
    (
        VerdictKind::Pipelined,
        format!(
            "pipelined: {} in {}{}{split} over {trips_said}{breakdown}",
            count(n, "command"),
            count(c.writes, writes_noun(c)),
            write_size(c, per_write),
        ),
    )
}

/// What a write is called: a read at the proxy is the client's write (perhaps merged); a
/// capture sees the kernel's TCP segments.
pub(super) fn writes_noun(c: &ObservedCounts) -> &'static str {
    if c.writes_are_segments {
        "segment"
    } else {
        "write"
    }
}

/// "7 round trips", "5,000 blocking waits", or "100 round trips and 5,000 blocking waits";
/// with what the wire could not confirm of them, and the pauses that were no waits.
fn trips_text(c: &ObservedCounts, trips: u64) -> String {
    let mut s = match (trips, c.blocking) {
        (trips, 0) => count(trips.max(1), "round trip"),
        (0, blocking) => count(blocking, "blocking wait"),
        (trips, blocking) => format!(
            "{} and {}",
            count(trips, "round trip"),
            count(blocking, "blocking wait")
        ),
    };
    if trips == c.round_trips && c.unconfirmed_trips > 0 {
        s += &format!(
            " ({} unconfirmed: every reply was back before the next command, but the wire cannot show whether the client waited for it)",
            if c.unconfirmed_trips == c.round_trips {
                "all".to_string()
            } else {
                group(c.unconfirmed_trips)
            }
        );
    }
    if c.cadence_gaps > 0 {
        s += &format!(
            " (and {} when every reply happened to be back before the next command, not waits: its commands kept their own cadence whatever the replies did)",
            count(c.cadence_gaps, "time")
        );
    }
    s
}

/// A pipeline's writes: " of ~1,000" commands each; or, when they were far from alike (a
/// pipeline of 1,000 after a handful of set-up commands, whose mean of ~144 per write
/// describes no write), the deepest it got: " (up to 1,000 in flight at once)".
fn write_size(c: &ObservedCounts, per_write: f64) -> String {
    if c.max_depth as f64 > 2.0 * per_write {
        format!(" (up to {} in flight at once)", group(c.max_depth))
    } else {
        format!(" of ~{}", group(per_write.round() as u64))
    }
}

/// "; of 12.3 ms: 60 % waiting on round trips (5 % at Redis), …" (`parts::sentence`).
fn breakdown(t: &ObservedTimes) -> String {
    super::parts::sentence(t)
}

/// "1 command", "100,000 commands".
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", group(n))
    }
}

/// 100000 → "100,000".
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// µs → "850 µs", "12.3 ms", "4.56 s".
pub fn duration(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(commands: u64, writes: u64, round_trips: u64, max_depth: u64) -> ObservedCounts {
        ObservedCounts {
            commands,
            replies: commands,
            writes,
            round_trips,
            max_depth,
            ..Default::default()
        }
    }

    #[test]
    fn the_issue_s_three_examples() {
        let t = ObservedTimes::default();
        let v = verdict(&counts(100_000, 100_000, 100, 1000), &t);
        assert_eq!(v.kind, VerdictKind::WritePerCommand);
        assert_eq!(
            v.text,
            "pipelined, but a write per command: 100,000 commands in 100,000 writes over 100 round trips (~1,000 per round trip)"
        );
        let v = verdict(&counts(100_000, 100_000, 100_000, 1), &t);
        assert_eq!(v.kind, VerdictKind::OneAtATime);
        assert_eq!(
            v.text,
            "one at a time: 100,000 commands over 100,000 round trips"
        );
        let mut auto = counts(99_840, 312, 3, 2000);
        auto.overlapping_writes = 309;
        let v = verdict(&auto, &t);
        assert_eq!(v.kind, VerdictKind::AutoPipelined);
        assert!(
            v.text
                .starts_with("auto-pipelined: 312 writes of ~320 commands"),
            "{}",
            v.text
        );
    }

    #[test]
    fn a_batch_in_pieces_racing_its_replies_is_timing_dependent() {
        // redis-py's 1,005 commands in 13 pieces through the proxy on a busy machine: most
        // sent while replies were awaited, 5 of its 6 round trips unconfirmed.
        let mut c = counts(1_005, 13, 6, 700);
        c.overlapping_writes = 9;
        c.unconfirmed_trips = 5;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::AutoPipelined);
        let why = v.timing_dependent.expect("marked");
        assert!(why.contains("one batch written in pieces"), "{why}");
        // Every piece sent while replies were awaited, none after: auto-pipelined, unmarked.
        c.unconfirmed_trips = 0;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(
            (v.kind, v.timing_dependent),
            (VerdictKind::AutoPipelined, None)
        );
    }

    #[test]
    fn batches_that_wait_for_each_other_are_pipelined() {
        let v = verdict(&counts(10_000, 10, 10, 1000), &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::Pipelined);
        assert_eq!(
            v.text,
            "pipelined: 10,000 commands in 10 writes of ~1,000 over 10 round trips"
        );
    }

    #[test]
    fn a_pipeline_after_set_up_commands_is_told_by_its_depth_not_a_mean_write() {
        // redis-py's pipeline of 1,000 SETs after its handshake, as observed.
        let v = verdict(&counts(1_005, 7, 6, 1000), &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::Pipelined);
        assert_eq!(
            v.text,
            "pipelined: 1,005 commands in 7 writes (up to 1,000 in flight at once) over 6 round trips"
        );
    }

    #[test]
    fn a_stream_redis_answered_between_writes_is_timing_dependent_not_flipped() {
        // redis-cli --pipe: 8 writes of ~1,250 commands; 3 sent while replies were awaited,
        // 4 after every reply was back, unconfirmed as waits.
        let mut c = counts(10_002, 8, 5, 4000);
        c.overlapping_writes = 3;
        c.unconfirmed_trips = 4;
        c.batch_trips = 5;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::Pipelined);
        let why = v.timing_dependent.expect("a race, said");
        assert!(
            why.contains("pipelined or auto-pipelined by turns"),
            "{why}"
        );
        // Most of its writes sent while replies were awaited: auto-pipelined, and as the
        // others followed replies that may not have been waited for, said to be one stream in
        // pieces that reads either way.
        c.overlapping_writes = 7;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::AutoPipelined);
        let why = v.timing_dependent.expect("a race, said");
        assert!(why.contains("one batch written in pieces"), "{why}");
        // redis-py's pipeline: its handshake's single commands unconfirmed, one batch.
        let mut py = counts(1_005, 7, 6, 1000);
        py.overlapping_writes = 1;
        py.unconfirmed_trips = 5;
        py.batch_trips = 1;
        let v = verdict(&py, &ObservedTimes::default());
        assert_eq!((v.kind, v.timing_dependent), (VerdictKind::Pipelined, None));
    }

    #[test]
    fn a_capture_does_not_take_segments_sent_while_replies_were_awaited_for_auto_pipelining() {
        // ioredis's pipeline of 1,000 SETs across a 10 ms link, captured: its batch left in
        // segments, all before the first reply could come back; one round trip for it.
        let mut c = counts(1_007, 10, 4, 1000);
        c.overlapping_writes = 9;
        c.writes_are_segments = true;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::Pipelined, "{}", v.text);
        assert!(
            v.text.starts_with("pipelined: 1,007 commands in 10 segments (up to 1,000 in flight at once) (9 of them left while replies were awaited: one write the kernel split"),
            "{}",
            v.text
        );
        // Through the proxy, reads are the client's writes: sent while replies were awaited.
        c.writes_are_segments = false;
        assert_eq!(
            verdict(&c, &ObservedTimes::default()).kind,
            VerdictKind::AutoPipelined
        );
    }

    #[test]
    fn transactions_are_named() {
        let mut c = counts(1_007, 7, 7, 691);
        c.transactions = 1;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(
            v.text,
            "pipelined: 1,007 commands in 7 writes (up to 691 in flight at once) over 7 round trips, 1 MULTI/EXEC transaction"
        );
    }

    #[test]
    fn the_breakdown_adds_up_to_the_wall_time() {
        let t = ObservedTimes {
            wall_us: 47_000_000.0,
            waiting_us: 35_250_000.0,
            at_redis_us: 4_700_000.0,
            client_us: 11_750_000.0,
            ..Default::default()
        };
        let v = verdict(&counts(100_000, 100_000, 100_000, 1), &t);
        assert!(
            v.text.ends_with(
                "; of 47.00 s: 75 % waiting on round trips (10 % at Redis), 25 % the client's own time"
            ),
            "{}",
            v.text
        );
        assert_eq!(t.network_us(), 30_550_000.0);
    }

    #[test]
    fn idle_and_subscribers() {
        assert_eq!(
            verdict(&ObservedCounts::default(), &ObservedTimes::default()).kind,
            VerdictKind::Idle
        );
        let mut c = counts(2, 2, 2, 1);
        c.replies = 1;
        c.pushes = 40;
        assert_eq!(
            verdict(&c, &ObservedTimes::default()).kind,
            VerdictKind::Subscriber
        );
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(10_000_000), "10,000,000");
        assert_eq!(count(1, "write"), "1 write");
    }

    fn with_commands(top: &[(&str, u64)]) -> ObservedConnection {
        let commands = top.iter().map(|(_, n)| n).sum();
        let times = ObservedTimes::default();
        let counts = counts(commands, commands, commands, 1);
        ObservedConnection {
            id: 1,
            client: "127.0.0.1:1".into(),
            name: None,
            open: false,
            ended: None,
            top_commands: top.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
            verdict: verdict(&counts, &times),
            counts,
            times,
            equivalent: None,
            vantage: Default::default(),
            library: None,
            mean_set_value: None,
            words: None,
            probe: None,
            syscalls: None,
            window: None,
        }
    }

    #[test]
    fn the_engine_stands_in_only_for_its_own_commands() {
        assert_eq!(
            stand_in(&with_commands(&[("GET", 700), ("SET", 300)])),
            Ok((Command::Get, 1000))
        );
        // Half SET/GET/INCR is enough; the count stays the connection's.
        assert_eq!(
            stand_in(&with_commands(&[("HSET", 50), ("INCR", 30), ("SET", 20)])),
            Ok((Command::Incr, 100))
        );
        // redis-benchmark's first connection: two CONFIG GETs, no SETs.
        let why = stand_in(&with_commands(&[("CONFIG", 2)])).unwrap_err();
        assert_eq!(
            why.to_string(),
            "no pipelined equivalent: 0 of its 2 commands are SET, GET or INCR (most common: CONFIG), the only ones pipescope's engine runs"
        );
        assert_eq!(stand_in(&with_commands(&[])), Err(NoEquivalent::NoCommands));
    }

    #[test]
    fn unconfirmed_round_trips_that_decide_the_kind_make_it_timing_dependent() {
        // A client writing each command, slowed to a round trip's pace: the wire shows every
        // reply back before the next command, but 999 of those cannot be confirmed as waits.
        let mut c = counts(1_000, 1_000, 1_000, 2);
        c.unconfirmed_trips = 999;
        c.overlapping_writes = 10;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::OneAtATime);
        assert_eq!(
            v.timing_dependent.as_deref(),
            Some(
                "timing-dependent: 999 of its 1,000 round trips could be the client's own pauses rather than waits; without them it reads as pipelined, a write per command"
            )
        );
        assert!(
            v.text.contains("(999 unconfirmed: every reply was back"),
            "{}",
            v.text
        );
        // Unconfirmed ones that would not change the kind are said, not marked.
        let mut c = counts(10_000, 10, 10, 1000);
        c.unconfirmed_trips = 9;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!((v.kind, v.timing_dependent), (VerdictKind::Pipelined, None));
    }

    #[test]
    fn a_client_on_its_own_clock_is_no_one_at_a_time() {
        // Never two in flight, yet its commands kept their cadence whatever the replies did.
        let mut c = counts(1_000, 1_000, 1, 1);
        c.cadence_gaps = 999;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::WritePerCommand, "{}", v.text);
        assert!(
            v.text
                .contains("999 times when every reply happened to be back"),
            "{}",
            v.text
        );
    }

    #[test]
    fn small_writes_sent_while_replies_were_awaited_cannot_be_told_from_a_write_per_command() {
        // 1,000 commands written one by one, read by the proxy as 157 merged reads.
        let mut c = counts(1_000, 157, 95, 202);
        c.overlapping_writes = 60;
        let v = verdict(&c, &ObservedTimes::default());
        assert!(
            v.timing_dependent
                .as_deref()
                .is_some_and(|t| t.contains("~6.4 commands a write")),
            "{}",
            v.text
        );
        // redis-py's pipeline, 1,000 in 7 pieces, is plainly batched.
        let mut c = counts(1_005, 7, 6, 1000);
        c.overlapping_writes = 4;
        assert_eq!(
            verdict(&c, &ObservedTimes::default()).timing_dependent,
            None
        );
    }
}
