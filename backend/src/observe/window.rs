//! The client's receive window in a capture, as evidence that it sent commands while replies
//! lay unread: then it did not wait for them.
//!
//! Each segment carries the receiver's window: its free space for more bytes, as far as it
//! chooses to show it. Linux never takes back a window it has offered, and grows the one it
//! offers slowly (the smaller of its free space and a threshold that rises as data arrives),
//! so replies read as they arrive leave the window where it was, and a few KB unread do not
//! move it either. What does move it is free space running short: replies piling up unread.
//! So a window below the largest the client has offered shows that many bytes lying unread
//! (at least; Linux may also count its own overhead), and a command sent with the window down
//! was sent while replies lay unread. A window that stays where it was shows nothing either
//! way: it is never read as proof that the client read.
//!
//! Only the client's segments that carry commands are weighed: it sends them in its own
//! time, so their window is its free space when it sent. (Its bare ACKs are sent by the
//! kernel as replies arrive, before the client could read them.)

use shared::observe::WindowEvidence;

/// A window this many of its units below the largest offered counts as moved: Linux rounds
/// the window it offers down to its unit (2^scale bytes), so one unit is rounding.
const MOVED_UNITS: u64 = 2;

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
    /// The most the window was down, in bytes (scaled) or in the field's units.
    most_down: u64,
    /// Reply bytes that had reached the client when the segment was sent: a shrink with
    /// none is no reply unread.
    replies_seen: bool,
}

impl WindowWatch {
    /// A command segment's window, `bytes` and `unit` as `capture::Event::Window` gives them.
    pub fn command_segment(&mut self, bytes: u64, unit: u64, scaled: bool) {
        if self.segments == 0 {
            self.scaled = scaled;
        }
        self.scaled &= scaled;
        self.segments += 1;
        self.largest = self.largest.max(bytes);
        let down = self.largest - bytes;
        if down >= MOVED_UNITS * unit && self.replies_seen {
            self.moved += 1;
            self.most_down = self.most_down.max(down);
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
        w.command_segment(65_536, 128, true);
        w.replies();
        for _ in 0..10 {
            w.command_segment(65_536, 128, true);
        }
        assert_eq!(w.evidence().unwrap().sent_with_replies_unread, 0);
        w.command_segment(65_536 - 128, 128, true);
        assert_eq!(
            w.evidence().unwrap().sent_with_replies_unread,
            0,
            "within rounding"
        );
        w.command_segment(40_000, 128, true);
        w.command_segment(12_000, 128, true);
        let e = w.evidence().unwrap();
        assert_eq!((e.segments, e.sent_with_replies_unread), (14, 2));
        assert_eq!(e.most_unread, 65_536 - 12_000);
        assert!(e.scaled);
    }

    #[test]
    fn before_any_reply_a_small_window_is_no_reply_unread() {
        let mut w = WindowWatch::default();
        w.command_segment(65_536, 128, true);
        w.command_segment(8_192, 128, true);
        assert_eq!(w.evidence().unwrap().sent_with_replies_unread, 0);
    }

    #[test]
    fn without_the_handshake_the_scale_is_unknown_and_said() {
        let mut w = WindowWatch::default();
        w.replies();
        w.command_segment(512, 1, false);
        w.command_segment(500, 1, false);
        let e = w.evidence().unwrap();
        assert!(!e.scaled);
        assert_eq!((e.sent_with_replies_unread, e.most_unread), (1, 12));
    }
}
