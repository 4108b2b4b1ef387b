//! What the connection's protocol state says of each message, as far as matching replies to
//! commands needs it: whether a command gets a reply of its own, and whether a message from
//! Redis is a push.
//!
//! The states that change the answer: RESP2 pub/sub and MONITOR (everything Redis sends is a
//! push, until an unsubscribe reply counts down to 0 or RESET's `+RESET` comes back), CLIENT
//! REPLY OFF and SKIP (commands get no reply until CLIENT REPLY ON, or for one command), and
//! RESP3 (pushes say so themselves, `>`). Commands change the state as they arrive; the end of
//! a RESP2 subscription is taken from Redis's reply, since only Redis knows the count.

use crate::resp::framer::Message;

use super::CommandClass;

/// Whether commands get replies (CLIENT REPLY).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Replies {
    #[default]
    On,
    Off,
    /// The next command gets none, then On again.
    SkipNext,
}

#[derive(Debug, Default)]
pub struct Protocol {
    resp3: bool,
    /// RESP2 after SUBSCRIBE or MONITOR, until Redis ends it: what it sends are pushes.
    subscribed: bool,
    replies: Replies,
    /// RESETs sent while subscribed and not yet answered: their `+RESET` is a reply.
    resets: u64,
}

impl Protocol {
    /// A command arrived, named `name` (upper case) and of `class`: whether it gets a reply.
    /// (The name as bytes: no UTF-8 check per command.)
    pub fn command(&mut self, name: &[u8], m: &Message, class: CommandClass) -> bool {
        let arg_is = |i: usize, s: &[u8]| m.arg(i).is_some_and(|a| a.eq_ignore_ascii_case(s));
        match name {
            b"HELLO" if m.arg(1) == Some(b"3") => self.resp3 = true,
            b"HELLO" if m.arg(1) == Some(b"2") => self.resp3 = false,
            b"RESET" => {
                // Back to RESP2 with replies on; a subscription ends when `+RESET` comes back.
                self.resp3 = false;
                self.replies = Replies::On;
                if self.subscribed {
                    self.resets += 1;
                }
                return true;
            }
            b"CLIENT" if arg_is(1, b"REPLY") => {
                if arg_is(2, b"ON") {
                    self.replies = Replies::On;
                    return true;
                }
                if arg_is(2, b"OFF") {
                    self.replies = Replies::Off;
                    return false;
                }
                if arg_is(2, b"SKIP") {
                    if self.replies == Replies::On {
                        self.replies = Replies::SkipNext;
                    }
                    return false;
                }
            }
            _ => {}
        }
        let replied = match self.replies {
            Replies::On => true,
            Replies::Off => false,
            Replies::SkipNext => {
                self.replies = Replies::On;
                false
            }
        };
        if class == CommandClass::Subscribe {
            // Redis pushes instead; in RESP2 from now on everything it sends looks like one.
            self.subscribed |= !self.resp3;
            return false;
        }
        // RESP2 pub/sub: a command's reply cannot be told from a push.
        replied && !self.subscribed
    }

    /// A message from Redis: true if it is a push by the protocol's state. (A message that is
    /// not may still be a push if no reply was awaited: the caller knows that.)
    pub fn is_push(&mut self, m: &Message) -> bool {
        if m.kind == b'>' {
            return true;
        }
        if !self.subscribed {
            return false;
        }
        if self.resets > 0 && m.kind == b'+' && m.arg(0) == Some(b"RESET") {
            self.resets -= 1;
            self.subscribed = false;
            return false;
        }
        let name = m.name();
        if matches!(
            name.as_str(),
            "UNSUBSCRIBE" | "PUNSUBSCRIBE" | "SUNSUBSCRIBE"
        ) && m.last_int() == Some(0)
        {
            // No subscription left: Redis answers commands again after this push. (A client
            // with shard channels and plain ones both is taken out early: each kind counts
            // its own.)
            self.subscribed = false;
        }
        true
    }
}
