//! The framer's fast path: messages that lie whole in the piece being fed, at the top level,
//! framed in one pass each, with no state carried between them. A pipeline's commands and its
//! `+OK`s are nearly all like that: a command is its array header, then per element a length
//! header and a skip (the kept elements copied, the rest never touched), a reply one line.
//!
//! Each function here builds exactly the `Message` the byte-by-byte path would, and takes
//! nothing unless the message is whole and plain (bulk strings only, plain counts, kept
//! elements ending in CRLF); anything else is left, untouched, to that path, which also says
//! what is broken. What it may leave in `message` on giving up is cleared by the `start` that
//! the other path begins every message with.

use super::{Framer, KEPT_ARG_LEN, Message, Side, counted_header, kept_args, memchr};
use crate::resp::frame::Type;

impl Framer {
    /// Frames the whole commands at the start of `bytes`, calling `done` for each; returns
    /// the bytes they took (0: the first is not whole, or not plain).
    pub(super) fn whole_commands(
        &mut self,
        bytes: &[u8],
        done: &mut impl FnMut(&Message),
    ) -> usize {
        debug_assert!(self.side == Side::Commands && self.at_top());
        let mut at = 0;
        while let Some(took) = self.whole_command(&bytes[at..]) {
            at += took;
            done(&self.message);
            self.message.clear();
        }
        at
    }

    /// One whole command array of bulk strings at the start of `bytes`, into `message`: the
    /// bytes it takes.
    fn whole_command(&mut self, bytes: &[u8]) -> Option<usize> {
        let (b'*', n, mut at) = counted_header(bytes)? else {
            return None;
        };
        if n <= 0 {
            return None;
        }
        self.start(b'*');
        self.message.elements = n;
        for e in 0..n {
            let (b'$', len, header) = counted_header(bytes.get(at..)?)? else {
                return None;
            };
            at += header;
            // The payload and its CRLF, whole here (compared as u64: a length may not fit).
            if len as u64 + 2 > (bytes.len() - at) as u64 {
                return None;
            }
            let end = at + len as usize + 2;
            if e == 2 {
                self.message.third_len = Some(len as u64);
            }
            let m = &mut self.message;
            if m.ends.len() < self.keep && len as usize <= KEPT_ARG_LEN {
                if &bytes[end - 2..end] != b"\r\n" {
                    return None;
                }
                m.push(&bytes[at..end - 2]);
                if m.ends.len() == 1 {
                    self.keep = kept_args(&m.data);
                }
            }
            at = end;
        }
        Some(at)
    }

    /// Frames the whole one-line replies (`+OK`, `:1`, `-ERR …`) at the start of `bytes`,
    /// calling `done` for each; returns the bytes they took.
    pub(super) fn whole_lines(&mut self, bytes: &[u8], done: &mut impl FnMut(&Message)) -> usize {
        debug_assert!(self.side == Side::Replies && self.at_top());
        let mut at = 0;
        // The line `message` holds: a pipeline's replies repeat (`+OK`), and the same line
        // makes the same message.
        let mut held: &[u8] = &[];
        while let Some(&kind) = bytes.get(at)
            && Type::of(kind) == Some(Type::Line)
            && let Some(nl) = memchr(b'\n', &bytes[at..])
        {
            let line = &bytes[at..at + nl + 1];
            if line != held {
                let body = &line[1..nl];
                let body = body.strip_suffix(b"\r").unwrap_or(body);
                self.start(kind);
                // A whole reply's simple string is kept (`+RESET` ends a subscription).
                if kind == b'+' {
                    self.message.push(body);
                }
                held = line;
            }
            done(&self.message);
            at += nl + 1;
        }
        self.message.clear();
        at
    }

    /// No message is in progress: the next byte starts one.
    pub(super) fn at_top(&self) -> bool {
        self.line.is_empty() && self.skip == 0 && self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Framer, Message, Side};

    /// Every message framed from `bytes` fed in two pieces split at `cut`, as the whole-message
    /// path and the byte-by-byte path share them, and whether the framer broke.
    fn framed(side: Side, bytes: &[u8], cuts: &[usize], slow: bool) -> (Vec<Message>, bool) {
        let mut f = Framer::new(side);
        f.slow_only = slow;
        let mut out = Vec::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([&bytes.len()]) {
            f.feed(&bytes[from..cut], |m| out.push(m.clone()));
            from = cut;
        }
        (out, f.broken())
    }

    /// The same messages, in the same state, however the bytes are split and whichever path
    /// frames them.
    fn agree(side: Side, bytes: &[u8]) {
        let whole = framed(side, bytes, &[], true);
        for cut in 0..=bytes.len() {
            assert_eq!(framed(side, bytes, &[cut], false), whole, "cut at {cut}");
            assert_eq!(
                framed(side, bytes, &[cut], true),
                whole,
                "slow, cut at {cut}"
            );
        }
        for piece in 1..8 {
            let cuts: Vec<usize> = (piece..bytes.len()).step_by(piece).collect();
            assert_eq!(
                framed(side, bytes, &cuts, false),
                whole,
                "pieces of {piece}"
            );
        }
    }

    #[test]
    fn whole_commands_frame_as_the_byte_by_byte_path_does_split_anywhere() {
        let long = "x".repeat(300);
        let streams: Vec<Vec<u8>> = vec![
            b"*3\r\n$3\r\nSET\r\n$30\r\nredis-benchmark:kk000000012345\r\n$6\r\nv00000\r\n\
              *3\r\n$3\r\nset\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n"
                .to_vec(),
            b"*5\r\n$6\r\nCLIENT\r\n$7\r\nSETINFO\r\n$8\r\nLIB-NAME\r\n$2\r\npy\r\n$1\r\nz\r\n\
              *2\r\n$3\r\nGET\r\n$2\r\nk1\r\n"
                .to_vec(),
            // A name too long to keep: the next element is kept first, and names the command.
            format!(
                "*3\r\n${}\r\n{long}\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n",
                long.len()
            )
            .into_bytes(),
            // Not plain: a zero count, a negative length, a nested array, an inline command,
            // leading zeros.
            b"*0\r\n*2\r\n$3\r\nGET\r\n$-1\r\n*2\r\n$4\r\nECHO\r\n*1\r\n:1\r\nPING\r\n\
              *02\r\n$003\r\nGET\r\n$1\r\nk\r\n"
                .to_vec(),
            // A kept element without its CRLF breaks the stream; a skipped one is not checked.
            b"*3\r\n$3\r\nSET\r\n$1\r\nkXY$1\r\nv\r\n*1\r\n$4\r\nPINGxx".to_vec(),
            b"*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPINGxx".to_vec(),
        ];
        for bytes in &streams {
            agree(Side::Commands, bytes);
        }
    }

    #[test]
    fn whole_lines_frame_as_the_byte_by_byte_path_does_split_anywhere() {
        let bytes = b"+OK\r\n+OK\n:12\r\n-ERR no\r\n+\r\n_\r\n$2\r\nok\r\n+RESET\r\n,1.5\r\n\
            *2\r\n+a\r\n:3\r\n#t\r\n(1\r\n+OK\r\n";
        agree(Side::Replies, bytes);
        agree(Side::Replies, b"+OK\r\n?bad\r\n+OK\r\n");
    }
}
