//! The streaming framer: finds where each message ends in a byte stream that arrives in
//! arbitrary pieces, for the wire tap (counting a run's commands and replies) and for observe
//! mode (naming an application's commands, telling pushes from replies). Where a whole reply
//! is already in one buffer, `scan` finds its end in place instead.
//!
//! It streams: a bulk string's payload is skipped, not buffered, so a 1 MB value split over many
//! reads costs no copy and a read that ends anywhere (mid-length-prefix, mid-CRLF) simply
//! carries the partial line over. Memory is one header line (at most `MAX_LINE`) and the
//! nesting of the message in progress.
//!
//! Commands are RESP arrays of bulk strings, or inline commands (`SET k v\r\n`, as redis-cli
//! and telnet send them). Replies are any RESP2 or RESP3 value; a RESP3 attribute (`|`)
//! belongs to the value after it. A stream that is not RESP stops the framer (`broken`):
//! the proxy forwards it unchanged and Redis answers it with its own error.

use super::frame::{Type, parse_int};

mod whole;

/// Longest header or inline line accepted: Redis's own inline limit (64 KiB).
const MAX_LINE: usize = 64 * 1024;

/// Elements kept of a message: its first (a command's name), and for the few commands whose
/// arguments observe mode reads, as many as it reads (`kept_args`). Copying no more keeps
/// framing cheap for the common case of millions of SETs.
const KEPT_FIRST: usize = 1;

/// Elements kept of a command named `name` (upper or lower case).
fn kept_args(name: &[u8]) -> usize {
    let is = |s: &[u8]| name.eq_ignore_ascii_case(s);
    if is(b"CLIENT") {
        4 // CLIENT SETINFO LIB-NAME x
    } else if is(b"HELLO") {
        7 // HELLO 3 AUTH user pass SETNAME x
    } else if is(b"XREAD") || is(b"XREADGROUP") {
        8 // XREADGROUP GROUP g c COUNT n NOACK BLOCK
    } else {
        KEPT_FIRST
    }
}

/// Longest argument kept (longer ones are counted, not kept).
const KEPT_ARG_LEN: usize = 256;

/// Which way the stream flows, and so what a message at its top level may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Client → Redis: arrays of bulk strings, or inline commands.
    Commands,
    /// Redis → client: any value.
    Replies,
}

/// One complete message, lent to the caller as it completes (its buffers are reused).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    /// Its first byte: `*` for a command or array reply, `>` for a RESP3 push, `-` for an error,
    /// `i` for an inline command.
    pub kind: u8,
    /// Its first elements when they are short strings (a command's name, and the arguments
    /// `kept_args` names; an array reply's first element; a simple-string reply's text), end
    /// to end; `ends[i]` is where element i ends.
    data: Vec<u8>,
    ends: Vec<usize>,
    /// An array reply's last integer element: the count in a pub/sub (un)subscribe reply.
    last_int: Option<i64>,
    /// A top-level array's element count, and its third element's length when that is a
    /// bulk string (SET's value), which is counted, not kept.
    elements: i64,
    third_len: Option<u64>,
}

/// A command's name in upper case, on the stack (longer names are cut; no command is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name {
    bytes: [u8; 24],
    len: usize,
}

impl Name {
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or("?")
    }
}

impl Message {
    /// The command's name in upper case (empty if it has none).
    pub fn name(&self) -> Name {
        let mut name = Name {
            bytes: [0; 24],
            len: 0,
        };
        if let Some(first) = self.arg(0) {
            name.len = first.len().min(24);
            for (to, from) in name.bytes.iter_mut().zip(first) {
                *to = from.to_ascii_uppercase();
            }
        }
        name
    }

    /// Whether `name()` is `name`, without making it: a pipeline's commands are mostly named
    /// as the one before.
    pub fn is_named(&self, name: &Name) -> bool {
        let first = self.arg(0).unwrap_or_default();
        let first = &first[..first.len().min(24)];
        // Byte by byte: `eq_ignore_ascii_case` cost ~85 instructions on a 3-byte name.
        first.len() == name.len
            && first
                .iter()
                .zip(&name.bytes)
                .all(|(a, b)| a.to_ascii_uppercase() == *b)
    }

    /// Element `i` when it was kept.
    pub fn arg(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.data[start..end])
    }

    /// Elements kept.
    pub fn args(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.ends.len()).filter_map(|i| self.arg(i))
    }

    /// An array reply's last integer element, if it has one: `["unsubscribe", "ch", 0]` → 0.
    pub fn last_int(&self) -> Option<i64> {
        self.last_int
    }

    /// The third element's length, when it is a bulk string: SET's value.
    pub fn third_len(&self) -> Option<u64> {
        self.third_len
    }

    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
        self.last_int = None;
        self.elements = 0;
        self.third_len = None;
    }

    fn push(&mut self, arg: &[u8]) {
        self.data.extend_from_slice(arg);
        self.ends.push(self.data.len());
    }
}

#[derive(Debug)]
pub struct Framer {
    side: Side,
    /// A header line in progress.
    line: Vec<u8>,
    /// Payload bytes (and the closing CRLF) still to pass of the bulk string in progress.
    skip: u64,
    /// Values still to come in each open aggregate, outermost first.
    open: Vec<i64>,
    /// The message in progress.
    message: Message,
    /// The bulk string in progress is kept (short, and among the first elements).
    keeping: bool,
    /// Elements of the message in progress to keep.
    keep: usize,
    /// Set once the stream is not RESP; nothing more is framed.
    broken: bool,
    /// The stream began with a TLS record: it is encrypted, not broken RESP.
    encrypted: bool,
    /// Any byte has been fed yet.
    started: bool,
    /// Tests: frame byte by byte only, to compare the two paths (`whole`).
    #[cfg(test)]
    slow_only: bool,
}

/// The first byte of a TLS handshake record (a ClientHello or ServerHello), which no RESP
/// message starts with.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

impl Framer {
    pub fn new(side: Side) -> Framer {
        Framer {
            side,
            line: Vec::new(),
            skip: 0,
            open: Vec::new(),
            message: Message::default(),
            keeping: false,
            keep: KEPT_FIRST,
            broken: false,
            encrypted: false,
            started: false,
            #[cfg(test)]
            slow_only: false,
        }
    }

    /// True once the stream turned out not to be RESP.
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// True when the stream began as TLS: nothing in it can be read, so nothing is framed.
    pub fn encrypted(&self) -> bool {
        self.encrypted
    }

    /// True while a message has begun and not ended: the next byte continues it.
    pub fn mid_message(&self) -> bool {
        !self.line.is_empty() || self.skip > 0 || !self.open.is_empty()
    }

    /// Feeds the next piece; returns how many messages it completed.
    pub fn count(&mut self, bytes: &[u8]) -> usize {
        let mut n = 0;
        self.feed(bytes, |_| n += 1);
        n
    }

    /// Feeds the next piece, calling `done` for each message it completes.
    pub fn feed(&mut self, bytes: &[u8], mut done: impl FnMut(&Message)) {
        if !self.started && !bytes.is_empty() {
            self.started = true;
            if bytes[0] == TLS_HANDSHAKE_RECORD {
                self.encrypted = true;
                self.broken = true;
            }
        }
        let mut at = 0;
        while at < bytes.len() && !self.broken {
            if self.skip > 0 {
                let take = (self.skip.min((bytes.len() - at) as u64)) as usize;
                if self.keeping {
                    self.message.data.extend_from_slice(&bytes[at..at + take]);
                }
                self.skip -= take as u64;
                at += take;
                if self.skip == 0 {
                    if self.keeping {
                        let m = &mut self.message;
                        if !m.data.ends_with(b"\r\n") {
                            self.broken = true;
                            return;
                        }
                        m.data.truncate(m.data.len() - 2);
                        m.ends.push(m.data.len());
                        self.keeping = false;
                        if m.ends.len() == 1 && self.side == Side::Commands {
                            self.keep = kept_args(&m.data);
                        }
                    }
                    self.value_done(&mut done);
                }
                continue;
            }
            if self.fast() && self.at_top() {
                // Whole messages, the usual case in a pipeline, in one pass each (`whole`).
                let took = match self.side {
                    Side::Commands => self.whole_commands(&bytes[at..], &mut done),
                    Side::Replies => self.whole_lines(&bytes[at..], &mut done),
                };
                if took > 0 {
                    at += took;
                    continue;
                }
            }
            if self.line.is_empty()
                && let Some((kind, n, len)) = counted_header(&bytes[at..])
                && (kind == b'*'
                    || (kind == b'$' && !(self.open.is_empty() && self.side == Side::Commands)))
            {
                // The usual header, `*<n>` or `$<len>`, whole in this read: one pass, no copy. (A
                // `$` line that starts a command is an inline command: `header` reads those.)
                at += len;
                if self.open.is_empty() {
                    self.start(kind);
                }
                self.sized(kind, n, &mut done);
                continue;
            }
            match memchr(b'\n', &bytes[at..]) {
                None => {
                    self.line.extend_from_slice(&bytes[at..]);
                    if self.line.len() > MAX_LINE {
                        self.broken = true;
                    }
                    return;
                }
                Some(nl) if self.line.is_empty() => {
                    // The whole line is in this read: no copy.
                    let line = &bytes[at..at + nl + 1];
                    at += nl + 1;
                    self.header(line, &mut done);
                }
                Some(nl) => {
                    self.line.extend_from_slice(&bytes[at..at + nl + 1]);
                    at += nl + 1;
                    let line = std::mem::take(&mut self.line);
                    self.header(&line, &mut done);
                    self.line = line;
                    self.line.clear();
                }
            }
        }
    }

    /// Whether whole messages take the fast path (always, but in tests comparing the paths).
    fn fast(&self) -> bool {
        #[cfg(test)]
        return !self.slow_only;
        #[cfg(not(test))]
        true
    }

    /// One complete line: a value's header, or an inline command.
    fn header(&mut self, line: &[u8], done: &mut impl FnMut(&Message)) {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        let top = self.open.is_empty();
        if top && self.side == Side::Commands && body.first() != Some(&b'*') {
            // An inline command; Redis ignores a blank line.
            self.start(b'i');
            let mut args = body
                .split(|b| b.is_ascii_whitespace())
                .filter(|a| !a.is_empty());
            if let Some(name) = args.next() {
                self.message.push(name);
                for arg in args.take(kept_args(name) - 1) {
                    self.message.push(arg);
                }
            }
            if !self.message.ends.is_empty() {
                done(&self.message);
            }
            return;
        }
        let Some((&kind, rest)) = body.split_first() else {
            self.broken = true;
            return;
        };
        if top {
            self.start(kind);
        }
        match Type::of(kind) {
            Some(Type::Blob | Type::Aggregate { .. }) => match parse_int(rest) {
                Some(n) => self.sized(kind, n, done),
                None => self.broken = true,
            },
            Some(Type::Line) => {
                // A simple string is kept as an array's first element, or as a whole reply
                // (`+RESET` ends a subscription); an array's integers leave their value.
                let kept_here = self.open.len() == 1 || (top && self.side == Side::Replies);
                if kept_here && self.message.ends.len() < self.keep && kind == b'+' {
                    self.message.push(rest);
                } else if kind == b':' && self.open.len() == 1 {
                    self.message.last_int = parse_int(rest);
                }
                self.value_done(done)
            }
            None => self.broken = true,
        }
    }

    /// A message starts with a value of this kind.
    fn start(&mut self, kind: u8) {
        self.message.clear();
        self.message.kind = kind;
        self.keep = KEPT_FIRST;
    }

    /// A header with a count (an aggregate's elements, a blob's length) was read.
    fn sized(&mut self, kind: u8, n: i64, done: &mut impl FnMut(&Message)) {
        let pairs = match Type::of(kind) {
            Some(Type::Blob) => {
                if n < 0 {
                    self.value_done(done);
                    return;
                }
                self.skip = n as u64 + 2;
                if let [left] = self.open[..]
                    && self.message.elements - left == 2
                {
                    self.message.third_len = Some(n as u64);
                }
                self.keeping = self.open.len() == 1
                    && self.message.ends.len() < self.keep
                    && (n as usize) <= KEPT_ARG_LEN;
                return;
            }
            Some(Type::Aggregate { pairs }) => pairs,
            // Only `header` and `counted_header` call this, with a counted type.
            Some(Type::Line) | None => false,
        };
        let n = Type::items(pairs, n);
        if self.open.is_empty() {
            self.message.elements = n;
        }
        if n <= 0 {
            self.value_done(done);
        } else {
            self.open.push(n);
        }
    }

    /// A value ended: close the aggregates it completes, and the message if it was the last.
    fn value_done(&mut self, done: &mut impl FnMut(&Message)) {
        while let Some(left) = self.open.last_mut() {
            *left -= 1;
            if *left > 0 {
                return;
            }
            self.open.pop();
        }
        if self.message.kind != b'|' {
            // (An attribute is not a message: the value it annotates follows as one.)
            done(&self.message);
        }
        self.message.clear();
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// `*<n>\r\n` or `$<n>\r\n` (any kind, a plain count of up to 18 digits) at the start of
/// `bytes`: its kind, count and length. None for anything else, or a line not whole here, which
/// `Framer::header` then handles.
#[inline(always)]
fn counted_header(bytes: &[u8]) -> Option<(u8, i64, usize)> {
    // One or two digits, most counts and lengths, read in place: it runs a few times per
    // command, and the loop below cost ~30 instructions a call.
    if let [kind, d1, c, d, e, ..] = *bytes {
        let d1 = d1.wrapping_sub(b'0');
        if d1 < 10 {
            if (c, d) == (b'\r', b'\n') {
                return Some((kind, i64::from(d1), 4));
            }
            let d2 = c.wrapping_sub(b'0');
            if d2 < 10 && (d, e) == (b'\r', b'\n') {
                return Some((kind, i64::from(d1 * 10 + d2), 5));
            }
        }
    }
    let (&kind, rest) = bytes.split_first()?;
    let mut n = 0i64;
    let mut i = 0;
    while i < 19 {
        let b = *rest.get(i)?;
        let digit = b.wrapping_sub(b'0');
        if digit < 10 {
            n = n * 10 + i64::from(digit);
            i += 1;
        } else if b == b'\r' && i > 0 && rest.get(i + 1) == Some(&b'\n') {
            return Some((kind, n, i + 3));
        } else {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests;
