//! A connection's kind and sentence read from its counts alone, taking a given number of its
//! round trips as waits (the verdict reads it once as the wire shows it, and the marks again
//! with the unconfirmed ones left out).

use crate::digits::group;
use crate::observe::numbers::count;
use crate::observe::{ObservedCounts, ObservedTimes, VerdictKind};

/// The verdict's kind and sentence, taking `trips` of the connection's round trips as waits.
pub(super) fn kind_and_text(
    c: &ObservedCounts,
    t: &ObservedTimes,
    trips: u64,
) -> (VerdictKind, String) {
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
    crate::observe::parts::sentence(t)
}
