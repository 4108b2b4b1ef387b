//! The client's receive window in a capture, as evidence that it sent commands while replies
//! lay unread: then it did not wait for them.
//!
//! Each segment carries the receiver's window: its free space for more bytes, as far as it
//! chooses to show it. Linux never takes back a window it has offered, and grows the one it
//! offers slowly (the smaller of its free space and a threshold that rises as data arrives),
//! so replies read as they arrive leave the window where it was, and a few KB unread do not
//! move it either. What does move it is free space running short: replies piling up unread.
//! But the window also lags behind what was read: Linux offers freed space again only once
//! there is about a segment's worth of it (receiver-side silly window avoidance), so a client
//! that read every reply can still show its window a little down (seen: 5 bytes, one reply,
//! on every command of a client that read each reply before its next, with a small receive
//! buffer). So a window counts as down only by more than two of the client's segments (its
//! SYN's MSS) and two of the window's units (its rounding): then that much lay unread when it
//! sent, and it sent while replies lay unread. Without the handshake captured (no MSS, no
//! scale) it says nothing. A window that stays where it was shows nothing either way: it is
//! never read as proof that the client read. On loopback, whose segments are ~64 KB, it
//! rarely moves so far; across a network it does.
//!
//! Only the client's segments that carry commands are weighed: it sends them in its own
//! time, so their window is its free space when it sent. (Its bare ACKs are sent by the
//! kernel as replies arrive, before the client could read them.) The commands that begin in
//! segments sent with the window down are counted: each left before the replies lying unread
//! were read, and where they are more than a tenth of the connection's, the verdict rules out
//! one at a time (`shared::observe::verdict::judge`).

use shared::observe::WindowEvidence;

/// A window this many of its units, and this many of the client's segments, below the
/// largest offered counts as down.
const MOVED_UNITS: u64 = 2;
const MOVED_SEGMENTS: u64 = 2;

/// One connection's client windows, as its command segments showed them.
#[derive(Debug, Default)]
pub struct WindowWatch {
    /// The largest window offered so far, and the latest.
    largest: u64,
    /// Whether the handshake was captured (the scale known) on every window seen.
    scaled: bool,
    /// Command segments weighed, and of those, ones sent with the window moved.
    segments: u64,
    moved: u64,
    /// Commands that began in the segments sent with the window moved.
    moved_commands: u64,
    /// The segment just weighed was sent with the window moved: its commands count.
    pending: bool,
    /// The most the window was down, in bytes (scaled) or in the field's units.
    most_down: u64,
    /// Reply bytes that had reached the client when the segment was sent: a shrink with
    /// none is no reply unread.
    replies_seen: bool,
}

impl WindowWatch {
    /// A command segment's window, `bytes`, `unit` and `mss` as `capture::Event::Window` gives
    /// them.
    pub fn command_segment(&mut self, bytes: u64, unit: u64, mss: Option<u64>, scaled: bool) {
        if self.segments == 0 {
            self.scaled = scaled;
        }
        self.scaled &= scaled;
        self.segments += 1;
        self.largest = self.largest.max(bytes);
        let down = self.largest - bytes;
        let beyond_lag = mss.is_some_and(|mss| down > MOVED_SEGMENTS * mss);
        self.pending = down >= MOVED_UNITS * unit && beyond_lag && self.replies_seen;
        if self.pending {
            self.moved += 1;
            self.most_down = self.most_down.max(down);
        }
    }

    /// The segment whose window was weighed last began `n` commands.
    pub fn commands(&mut self, n: u64) {
        if std::mem::take(&mut self.pending) {
            self.moved_commands += n;
        }
    }

    /// Reply bytes reached the client.
    pub fn replies(&mut self) {
        self.replies_seen = true;
    }

    pub fn evidence(&self) -> Option<WindowEvidence> {
        (self.segments > 0).then_some(WindowEvidence {
            segments: self.segments,
            sent_with_replies_unread: self.moved,
            commands_sent_with_replies_unread: self.moved_commands,
            most_unread: self.most_down,
            scaled: self.scaled,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_window_shows_nothing_and_a_shrunk_one_shows_replies_unread() {
        let mut w = WindowWatch::default();
        w.command_segment(65_536, 128, Some(1_000), true);
        w.replies();
        for _ in 0..10 {
            w.command_segment(65_536, 128, Some(1_000), true);
        }
        assert_eq!(w.evidence().unwrap().sent_with_replies_unread, 0);
        w.command_segment(65_536 - 1_900, 128, Some(1_000), true);
        assert_eq!(
            w.evidence().unwrap().sent_with_replies_unread,
            0,
            "within rounding"
        );
        w.command_segment(40_000, 128, Some(1_000), true);
        w.commands(3);
        w.command_segment(12_000, 128, Some(1_000), true);
        w.commands(0);
        w.command_segment(65_536, 128, Some(1_000), true);
        w.commands(5);
        let e = w.evidence().unwrap();
        assert_eq!((e.segments, e.sent_with_replies_unread), (15, 2));
        assert_eq!(
            e.commands_sent_with_replies_unread, 3,
            "only the moved segments' commands"
        );
        assert_eq!(e.most_unread, 65_536 - 12_000);
        assert!(e.scaled);
    }

    #[test]
    fn before_any_reply_a_small_window_is_no_reply_unread() {
        let mut w = WindowWatch::default();
        w.command_segment(65_536, 128, Some(1_000), true);
        w.command_segment(8_192, 128, Some(1_000), true);
        assert_eq!(w.evidence().unwrap().sent_with_replies_unread, 0);
    }

    #[test]
    fn without_the_handshake_it_says_nothing() {
        let mut w = WindowWatch::default();
        w.replies();
        w.command_segment(512, 1, None, false);
        w.command_segment(5, 1, None, false);
        let e = w.evidence().unwrap();
        assert!(!e.scaled);
        assert_eq!(e.sent_with_replies_unread, 0, "no MSS, no claim");
    }
}
