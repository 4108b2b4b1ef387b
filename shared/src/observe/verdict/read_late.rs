//! A proxy late to read: its read takes whatever the client's socket holds, so several of the
//! client's writes arrive as one and its "writes" undercount them. The kernel's counts on that
//! socket (`TCP_INFO`) show when it took more sends than the proxy made reads. Where those
//! sends alone make a send per command, the client wrote each command on its own, and the
//! connection is read so (`read_apart`): more writes than sends only make it more so. Fewer,
//! and how many writes they were the counts cannot show (the kernel merges small writes into a
//! segment as it sends), so a verdict that would read otherwise with the sends read apart is
//! marked timing-dependent (`read_late`) instead of flipping with the proxy's scheduling.
//!
//! Worked out on the server: `ClientSocket` is never sent to the page.

use super::checks::{Mark, Reading};
use super::client_socket::ClientSocket;
use crate::digits::group;
use crate::observe::numbers::count;
use crate::observe::{ObservedCounts, VerdictKind};

/// Sends read merged below this are left unsaid: a retransmitted segment counts twice.
const MERGED_AT_LEAST: u64 = 2;

/// The counts with the client's sends read apart, where the proxy read them merged and the
/// kernel's count of them alone reaches a send per command (at most 1.5 commands a send, as a
/// write per command reads): each merged send a write of its own, sent while the commands
/// before it were awaited (the proxy had not even read those). `None` otherwise.
pub(super) fn read_apart(
    c: &ObservedCounts,
    socket: Option<&ClientSocket>,
) -> Option<ObservedCounts> {
    let socket = socket?;
    let merged = socket.merged();
    if c.writes_are_segments
        || merged < MERGED_AT_LEAST
        || socket.sends_at_least() * 3 < c.commands * 2
    {
        return None;
    }
    let mut apart = c.clone();
    apart.writes = (c.writes + merged).min(c.commands);
    apart.overlapping_writes += apart.writes - c.writes;
    Some(apart)
}

/// What `read_apart` read apart, in words.
pub(super) fn read_apart_words(socket: &ClientSocket) -> String {
    format!(
        "read as the client sent them: the proxy read late, taking the {} its socket received (at least {}) in {}",
        count(socket.segments, "segment"),
        count(socket.sends_at_least(), "send"),
        count(socket.reads, "read"),
    )
}

/// Some of the client's sends were read merged: read apart, each would have been a write of
/// its own, sent while the commands before it were awaited (the proxy had not even read
/// those). If the connection would read as another kind so, or as one the wire cannot tell,
/// the verdict is timing-dependent: said, with what the kernel counted.
pub(super) fn read_late(r: &Reading) -> Option<Mark> {
    let (c, kind) = (r.c, r.kind);
    let socket = r.socket?;
    let merged = socket.merged();
    if !matches!(kind, VerdictKind::Pipelined | VerdictKind::AutoPipelined)
        || c.writes_are_segments
        || merged < MERGED_AT_LEAST
    {
        return None;
    }
    let mut apart = c.clone();
    apart.writes = (c.writes + merged).min(c.commands);
    apart.overlapping_writes += apart.writes - c.writes;
    let v = (r.again)(&apart);
    if v.kind == kind && v.timing_dependent.is_none() {
        return None;
    }
    // Read apart, a kind, or (undetermined) the kinds it could be.
    let mut could_be = if v.candidates.is_empty() {
        vec![v.kind]
    } else {
        v.candidates.clone()
    };
    let mut why = format!(
        "timing-dependent: the proxy read late, taking the {} the client's socket received (at least {} sends) in {}",
        count(socket.segments, "segment"),
        group(socket.sends_at_least()),
        count(socket.reads, "read"),
    );
    if could_be != [kind] {
        let words: Vec<&str> = could_be.iter().map(|k| k.words()).collect();
        why += &format!("; read as they came, it reads as {}", words.join(" or "));
    }
    if !could_be.contains(&VerdictKind::WritePerCommand) {
        why += "; each send may be several writes (the kernel merges small writes as it sends), down to a write per command";
        could_be.push(VerdictKind::WritePerCommand);
    }
    Some(Mark {
        reason: "the proxy read late, merging the client's sends",
        why: why + ": the proxy cannot tell",
        could_be,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{verdict, verdict_at_proxy};
    use super::*;
    use crate::observe::{ObservedCounts, ObservedTimes};

    /// raw_writer.py's 1,000 SETs, a send each, that the proxy (late to read, on a busy
    /// machine) took in 2 reads.
    fn raw_writer_read_in_two() -> ObservedCounts {
        ObservedCounts {
            commands: 1_000,
            replies: 1_000,
            writes: 2,
            overlapping_writes: 1,
            round_trips: 1,
            max_depth: 1_000,
            ..Default::default()
        }
    }

    #[test]
    fn a_write_per_command_read_late_is_read_as_it_was_sent_not_pipelined() {
        let c = raw_writer_read_in_two();
        let t = ObservedTimes::default();
        // What the proxy's reads alone say: pipelined, unmarked.
        let v = verdict(&c, &t);
        assert_eq!((v.kind, v.timing_dependent), (VerdictKind::Pipelined, None));
        // The kernel counted 1,000 segments from the client, a command's bytes each: the
        // reads merged its sends, at least 933 of them, a send per command.
        let socket = ClientSocket {
            reads: 2,
            segments: 1_000,
            bytes: 35_890,
            mss: 536,
        };
        let v = verdict_at_proxy(&c, &t, Some(&socket));
        assert_eq!(
            (v.kind, v.timing_dependent.as_deref()),
            (VerdictKind::WritePerCommand, None),
            "{}",
            v.text
        );
        assert!(
            v.text.ends_with(
                "(read as the client sent them: the proxy read late, taking the 1,000 segments its socket received (at least 933 sends) in 2 reads)"
            ),
            "{}",
            v.text
        );
        // Fewer segments (the kernel merged sends once the proxy's buffer was full), still
        // more sends than its reads: read apart, auto-pipelined, and maybe more writes still.
        let few = ClientSocket {
            segments: 36,
            mss: 32_768,
            ..socket
        };
        let v = verdict_at_proxy(&c, &t, Some(&few));
        assert_eq!(
            v.timing_dependent.as_deref(),
            Some(
                "timing-dependent: the proxy read late, taking the 36 segments the client's socket received (at least 34 sends) in 2 reads; read as they came, it reads as auto-pipelined; each send may be several writes (the kernel merges small writes as it sends), down to a write per command: the proxy cannot tell"
            )
        );
    }

    #[test]
    fn a_batch_whose_sends_were_read_as_they_came_is_left_alone() {
        // redis-py's pipeline: 7 sends, 7 reads; the kernel's segments are full ones.
        let c = ObservedCounts {
            commands: 1_005,
            replies: 1_005,
            writes: 12,
            overlapping_writes: 0,
            round_trips: 6,
            max_depth: 1_000,
            ..Default::default()
        };
        let socket = ClientSocket {
            reads: 12,
            segments: 40,
            bytes: 41_000,
            mss: 1_448,
        };
        let t = ObservedTimes::default();
        assert_eq!(verdict_at_proxy(&c, &t, Some(&socket)), verdict(&c, &t));
        // Nor is a write per command the proxy read merged: it already says so.
        let mut each = raw_writer_read_in_two();
        each.writes = 900;
        each.overlapping_writes = 899;
        let socket = ClientSocket {
            reads: 900,
            segments: 1_000,
            bytes: 35_890,
            mss: 536,
        };
        let v = verdict_at_proxy(&each, &t, Some(&socket));
        assert_eq!(
            (v.kind, v.timing_dependent),
            (VerdictKind::WritePerCommand, None)
        );
    }

    #[test]
    fn three_kinds_it_could_be_still_make_one_line() {
        // ioredis's pipeline, read late: pipelined or auto-pipelined as read apart, and each
        // send maybe several writes.
        let c = ObservedCounts {
            commands: 1_007,
            replies: 1_007,
            writes: 4,
            overlapping_writes: 1,
            round_trips: 4,
            unconfirmed_trips: 3,
            max_depth: 1_000,
            ..Default::default()
        };
        let socket = ClientSocket {
            reads: 4,
            segments: 9,
            bytes: 41_000,
            mss: 65_483,
        };
        let v = verdict_at_proxy(&c, &ObservedTimes::default(), Some(&socket));
        assert_eq!(
            v.headline,
            "pipelined, auto-pipelined, or a write per command: 1,007 commands, up to 4 waits"
        );
    }
}
