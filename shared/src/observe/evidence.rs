//! Evidence of whether a client waited for its replies that does not come from the wire's
//! timing: the observing proxy's probe (replies held back on purpose, to see whether the
//! client sends while one is held), the client process's own syscalls on this host, and in a
//! capture, the client's receive window shrinking as replies lie unread.
//! Either can decide what the wire's timing alone cannot: on loopback every reply is back
//! before a slow client's next command, whether or not it waited for it.
//!
//! The backend fills these (`observe --probe`, `observe --pid`, any capture); the verdict
//! reads them.

use serde::{Deserialize, Serialize};

/// What the probe saw: replies the proxy held back, and what the client did meanwhile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeEvidence {
    /// Replies held back.
    pub held: u64,
    /// Holds during which the client sent more commands: it did not wait for that reply.
    pub sent_while_held: u64,
    /// Holds during which the client sent nothing until the reply was released, then sent
    /// within its usual reaction time: it waited for that reply.
    pub waited_for_release: u64,
    /// The time replies were held, in all (µs): what the probe added to the connection's wall.
    pub held_us: f64,
    /// Of `held_us`, the time holds outlasted their plan: the proxy's thread woke late (a busy
    /// machine keeps a woken thread waiting for a core). The budget plans for some of it; this
    /// is what was held all the same.
    #[serde(default)]
    pub late_us: f64,
}

impl ProbeEvidence {
    /// Holds that decided nothing: the client sent nothing until well after the release
    /// (it had finished, or paused longer than its usual reaction).
    pub fn undecided(&self) -> u64 {
        self.held
            .saturating_sub(self.sent_while_held + self.waited_for_release)
    }

    /// The held time as a share (0 to 1) of a connection's `wall_us`.
    pub fn share_of(&self, wall_us: f64) -> f64 {
        if wall_us > 0.0 {
            self.held_us / wall_us
        } else {
            0.0
        }
    }

    /// One line, for a connection whose time was `wall_us`: what was held and for how long,
    /// and what the client did meanwhile.
    pub fn line(&self, wall_us: f64) -> String {
        if self.held == 0 {
            return "probe: no reply held (too few commands to learn its rhythm first, a client slower than a hold may last, or never every reply back before its next command)".into();
        }
        let late = if self.late_us > 0.0 {
            format!(
                ", {} of it past plan: the proxy woke late",
                super::duration(self.late_us)
            )
        } else {
            String::new()
        };
        format!(
            "probe (measured): held {} {}, {} in all ({:.2} % of its time{late}); it sent while {} {} held, waited for the release of {}, {} undecided",
            crate::digits::group(self.held),
            if self.held == 1 { "reply" } else { "replies" },
            super::duration(self.held_us),
            100.0 * self.share_of(wall_us),
            crate::digits::group(self.sent_while_held),
            if self.sent_while_held == 1 {
                "was"
            } else {
                "were"
            },
            crate::digits::group(self.waited_for_release),
            crate::digits::group(self.undecided()),
        )
    }
}

/// What the client process's own syscalls showed of its socket to Redis.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyscallEvidence {
    /// The process traced.
    pub pid: u32,
    /// Its sends on the socket (send, sendto, sendmsg, write, writev …) and their bytes.
    pub sends: u64,
    pub sent_bytes: u64,
    /// Its receives on the socket that returned data, and of those the non-blocking ones
    /// (`MSG_DONTWAIT`, or a non-blocking socket read without a wait before it).
    pub receives: u64,
    pub nonblocking_receives: u64,
    /// Times a sending thread blocked until a reply was read before it sent again (or, after
    /// its last send, before it ended: a final read of all replies is one): a blocking
    /// receive, a poll/select/epoll wait on the socket, or a wake-up by the thread that read
    /// the reply.
    pub waits: u64,
    /// Threads seen using the socket.
    pub threads: u64,
    /// The bytes its receives returned.
    #[serde(default)]
    pub received_bytes: u64,
    /// Receives that found nothing to read (EAGAIN): neither a receive nor a wait.
    #[serde(default)]
    pub empty_receives: u64,
    /// Of `waits`, those where another thread read the reply and then woke the sender.
    #[serde(default)]
    pub woken_waits: u64,
    /// Time in its send and receive syscalls, and blocked in the waits counted (µs).
    #[serde(default)]
    pub send_us: f64,
    #[serde(default)]
    pub receive_us: f64,
    #[serde(default)]
    pub wait_us: f64,
    /// Gaps between a thread's sends (or after its last) with no wait counted in which it
    /// read a reply that a poll with a zero timeout found ready (as an event loop with other
    /// work queued polls): a wait if it would otherwise have blocked for that reply, which
    /// its syscalls do not show. Waits lie between `waits` and `waits + undecided_waits`.
    #[serde(default)]
    pub undecided_waits: u64,
    /// Records the trace lost (its ring buffers were full): when not 0, every count here may
    /// be short.
    #[serde(default)]
    pub lost: u64,
}

/// What the client's advertised receive window showed in a capture, on the segments that
/// carried its commands. A window down from the largest it offered shows replies lying
/// unread when it sent; a window that stayed shows nothing either way (Linux does not move
/// it for a few KB unread).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowEvidence {
    /// The client's segments carrying commands, each with its window.
    pub segments: u64,
    /// Of those, ones sent with the window down (replies had reached it before): it sent
    /// while replies lay unread, so it did not wait for them.
    pub sent_with_replies_unread: u64,
    /// Commands that began in those segments: each was sent before the replies lying
    /// unread then were read, so it did not wait for them.
    #[serde(default)]
    pub commands_sent_with_replies_unread: u64,
    /// The most the window was down when it sent: bytes lying unread, at least (in the
    /// field's own units where `scaled` is false).
    pub most_unread: u64,
    /// The window scale is known (the handshake was captured): otherwise the sizes are the
    /// field as sent, comparable only with each other.
    pub scaled: bool,
}

impl WindowEvidence {
    /// What the window showed, said with how it was obtained; `None` where it stayed (that
    /// shows nothing either way, and is not said as if it did).
    pub fn line(&self) -> Option<String> {
        if self.sent_with_replies_unread == 0 {
            return None;
        }
        let unread = if self.scaled {
            format!("{} bytes", crate::digits::group(self.most_unread))
        } else {
            format!(
                "{} of the window field's units (its scale unknown: the handshake was not captured)",
                crate::digits::group(self.most_unread)
            )
        };
        Some(format!(
            "window (measured by the capture): {} of its {} command segments ({}) left with its receive window down, by up to {unread}: replies lay unread then, so it did not wait for them",
            crate::digits::group(self.sent_with_replies_unread),
            crate::digits::group(self.segments),
            super::count(self.commands_sent_with_replies_unread, "command"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::ProbeEvidence;

    #[test]
    fn the_line_says_what_was_held_its_share_and_what_the_client_did() {
        let e = ProbeEvidence {
            held: 7,
            sent_while_held: 0,
            waited_for_release: 6,
            held_us: 4_200.0,
            late_us: 0.0,
        };
        assert_eq!(e.undecided(), 1);
        assert_eq!(
            e.line(1_000_000.0),
            "probe (measured): held 7 replies, 4.2 ms in all (0.42 % of its time); it sent while 0 were held, waited for the release of 6, 1 undecided"
        );
        assert!(
            ProbeEvidence::default()
                .line(1.0)
                .starts_with("probe: no reply held")
        );
    }
}
