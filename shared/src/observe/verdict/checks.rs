//! The marks a verdict read from the counts alone carries where another read of the same
//! wire would give another kind: said instead of picked. Each is a check over what the
//! verdict read (`Reading`), returning a mark or nothing; the verdict runs the list of them
//! (`wire::CHECKS`) and takes the first that speaks. A check that needs the verdict on
//! other counts asks `Reading::again`, so no check reaches back into `wire`.

use super::client_socket::ClientSocket;
use super::kind::{kind_and_text, writes_noun};
use crate::digits::group;
use crate::observe::numbers::count;
use crate::observe::{ObservedCounts, ObservedTimes, Verdict, VerdictKind};

/// What a check reads: the counts and times, the kind they read as, and what the kernel
/// counted on the proxy's socket when told.
pub(super) struct Reading<'a> {
    pub c: &'a ObservedCounts,
    pub t: &'a ObservedTimes,
    pub kind: VerdictKind,
    pub socket: Option<&'a ClientSocket>,
    /// The verdict on other counts (no socket told, no other evidence).
    pub again: &'a dyn Fn(&ObservedCounts) -> Verdict,
}

/// Why the kind read is not sure, and the other kinds the connection could be.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Mark {
    /// In a few words, for the undetermined verdict's sentence.
    pub reason: &'static str,
    /// In full, with the numbers (`Verdict::timing_dependent`).
    pub why: String,
    pub could_be: Vec<VerdictKind>,
}

pub(super) type Check = fn(&Reading) -> Option<Mark>;

/// Round trips the wire cannot confirm as waits that decide the kind: without them it would
/// read as another.
pub(super) fn unconfirmed_trips(r: &Reading) -> Option<Mark> {
    let c = r.c;
    if c.unconfirmed_trips == 0 {
        return None;
    }
    let sure = c.round_trips.saturating_sub(c.unconfirmed_trips).max(1);
    let (without, _) = kind_and_text(c, r.t, sure);
    (without != r.kind).then(|| Mark {
        reason: "each reply was back before the next command, and the wire cannot show whether the client waited for it",
        why: format!(
            "timing-dependent: {} of its {} could be the client's own pauses rather than waits; without them it reads as {}",
            group(c.unconfirmed_trips),
            count(c.round_trips, "round trip"),
            without.words(),
        ),
        could_be: vec![without],
    })
}

/// The other batched kind: pipelined for auto-pipelined and back.
fn other_batched(kind: VerdictKind) -> VerdictKind {
    if kind == VerdictKind::Pipelined {
        VerdictKind::AutoPipelined
    } else {
        VerdictKind::Pipelined
    }
}

/// Batches sent while replies were awaited make a client auto-pipelined; batches sent once
/// every reply was back, pipelined. When some of the latter came after replies the wire cannot
/// show the client waited for (a stream such as `redis-cli --pipe`, which Redis sometimes
/// answers before its next write), which of the two it reads as is a race between the client
/// and Redis: said instead of picked.
pub(super) fn unwaited_batches(r: &Reading) -> Option<Mark> {
    let (c, kind) = (r.c, r.kind);
    if !matches!(kind, VerdictKind::Pipelined | VerdictKind::AutoPipelined)
        || c.unconfirmed_trips == 0
        || c.writes_are_segments
    {
        return None;
    }
    let awaited = c.overlapping_writes;
    let unwaited = (awaited + c.batch_trips.min(c.unconfirmed_trips)).min(c.writes);
    let auto = |n: u64| n * 2 > c.writes;
    (auto(awaited) != auto(unwaited)).then(|| Mark {
        reason: "its batches raced Redis's replies",
        why: format!(
            "timing-dependent: {} of its {} sent while replies were awaited, and {} more after replies the wire cannot show it waited for; it reads as pipelined or auto-pipelined by turns",
            group(awaited),
            count(c.writes, "write"),
            group(unwaited - awaited),
        ),
        could_be: vec![other_batched(kind)],
    })
}

/// Big writes, some sent while replies were awaited and some only once every reply was back
/// (round trips the wire cannot confirm were waits): one batch written in pieces (redis-py
/// sends a pipeline ~6,000 bytes a `sendall`) reads so when Redis answers a piece before the
/// next arrives, and as auto-pipelined when the pieces come faster; which depends on timing,
/// so it is said instead of picked.
pub(super) fn batch_in_pieces(r: &Reading) -> Option<Mark> {
    let c = r.c;
    let per_write = c.commands as f64 / c.writes.max(1) as f64;
    (r.kind == VerdictKind::AutoPipelined
        && !c.writes_are_segments
        && per_write > 16.0
        && c.unconfirmed_trips > 0)
        .then(|| Mark {
            reason: "one batch written in pieces raced Redis's replies",
            why: format!(
                "timing-dependent: {} of its {} of ~{per_write:.0} commands sent while replies were awaited, and {} round trips that may be no waits: one batch written in pieces reads as pipelined or auto-pipelined by turns",
                group(c.overlapping_writes.min(c.writes)),
                count(c.writes, "write"),
                group(c.unconfirmed_trips),
            ),
            could_be: vec![VerdictKind::Pipelined],
        })
}

/// A few commands a write, many of them sent while replies were awaited: a client writing
/// each command (Lettuce's default) and one batching what came in a tick (ioredis's
/// auto-pipelining) look alike once small writes arrive merged, so the verdict says it cannot
/// tell them apart instead of naming one.
pub(super) fn merged_writes(r: &Reading) -> Option<Mark> {
    let c = r.c;
    let per_write = c.commands as f64 / c.writes.max(1) as f64;
    let batched = matches!(r.kind, VerdictKind::Pipelined | VerdictKind::AutoPipelined);
    // A capture's segments are the kernel's: it merged 1,000 one-command writes into 13 here.
    let (most, what) = if c.writes_are_segments {
        (
            128.0,
            "segments are the kernel's, which merges small writes as it sends",
        )
    } else {
        (16.0, "small writes arrive merged")
    };
    // Writes not shown to follow a wait: sent while replies were awaited, after replies that
    // the wire cannot confirm were waited for, or after replies shown not to be (the client's
    // own cadence, or the probe's finding).
    let unwaited = c.overlapping_writes + c.unconfirmed_trips + c.cadence_gaps;
    (batched && per_write <= most && unwaited * 4 >= c.writes).then(|| Mark {
        reason: "small writes are merged on their way, so a write per command and small batches look alike",
        why: format!(
            "timing-dependent: ~{per_write:.1} commands a {}, {} of its {} not shown to follow a wait; {what}, so this may be a write per command: the wire cannot tell",
            writes_noun(c),
            group(unwaited.min(c.writes)),
            count(c.writes, writes_noun(c)),
        ),
        could_be: vec![VerdictKind::WritePerCommand],
    })
}
