//! The verdict: whether and how a connection pipelined, in one word and in a sentence with
//! its numbers, worked out once for the CLI and the page: the kind its counts read as
//! (`kind`), then the marks (`marks`, `read_late`) where another read of the same wire would
//! give another kind.

use super::kind::kind_and_text;
use super::marks::{self, Check, Reading};
use super::read_late::read_late;
use super::{ClientSocket, ObservedCounts, ObservedTimes, Verdict};

/// The checks a verdict's kind is put through, in order; the first that speaks marks it.
/// A proxy read late undercounts the writes, so that is said before what they show.
const CHECKS: [Check; 5] = [
    marks::merged_writes,
    read_late,
    marks::unconfirmed_trips,
    marks::unwaited_batches,
    marks::batch_in_pieces,
];

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
    let again = |other: &ObservedCounts| verdict(other, t);
    let reading = Reading {
        c,
        t,
        kind,
        socket,
        again: &again,
    };
    let mark = CHECKS.iter().find_map(|check| check(&reading));
    let timing_dependent = mark.map(|m| m.why);
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

#[cfg(test)]
mod tests;
