//! Picking a connection's RESP up again after bytes the capture does not hold: its start (the
//! capture began mid-connection) or a hole given up (`Gap`).
//!
//! After a gap neither direction can be framed where it stands: the client's bytes may start
//! inside a command (a value, say), and Redis's may hold replies to commands the capture never
//! showed. So the client's bytes are skipped up to the first command boundary, a RESP array
//! header of a command (`*<n>\r\n$<len>\r\n` then a letter) at the start of a segment or right
//! after a CRLF; the connection is `Resynced` there. Redis's bytes are skipped until, after
//! that, a segment starts with a RESP type byte: the reply to the first command after the gap
//! (or a later one) starts there. A client that pipelines across the gap can have a reply to
//! an earlier command at the start of that segment: the wire cannot tell, and the connection
//! says it was resynchronised. Inline commands (`PING\r\n`) are not looked for.

use rustc_hash::FxHashMap;

use super::{Event, Side, Stamp};

/// Longest command header looked for across the end of a segment.
const HEADER: usize = 24;

/// Where a command header starts in `bytes`, if it does.
enum Found {
    At(usize),
    /// A header could start here but the bytes end first.
    Partial(usize),
    None,
}

/// The first command boundary in `bytes` (at 0, or right after a `\n`).
fn command_boundary(bytes: &[u8]) -> Found {
    let mut from = 0;
    loop {
        let at = match bytes[from..].iter().position(|&b| b == b'*') {
            Some(i) => from + i,
            None => return Found::None,
        };
        if at == 0 || bytes[at - 1] == b'\n' {
            match header_at(&bytes[at..]) {
                Some(true) => return Found::At(at),
                None => return Found::Partial(at),
                Some(false) => {}
            }
        }
        from = at + 1;
    }
}

/// Whether `b` starts `*<1–7 digits>\r\n$<1–9 digits>\r\n<letter>`; `None` if it ends first.
fn header_at(b: &[u8]) -> Option<bool> {
    let mut i = 1;
    for (most, then) in [(7, &b"\r\n$"[..]), (9, &b"\r\n"[..])] {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i - start > most {
            return Some(false);
        }
        if i == b.len() {
            return None;
        }
        if i == start {
            return Some(false);
        }
        for &c in then {
            match b.get(i) {
                None => return None,
                Some(&x) if x != c => return Some(false),
                _ => i += 1,
            }
        }
    }
    b.get(i).map(|c| c.is_ascii_alphabetic())
}

/// The first byte of a RESP2 or RESP3 value.
fn reply_start(b: u8) -> bool {
    b"+-:$*%_,#!=(|~>".contains(&b)
}

#[derive(Default)]
struct Hunt {
    /// The client's bytes are framed from a command boundary on.
    client: bool,
    /// Redis's too.
    redis: bool,
    /// The end of the client's last segment, when a header could start in it.
    carry: Vec<u8>,
    skipped: [u64; 2],
}

/// Every connection's alignment; it passes events on, holding back bytes that cannot be framed.
#[derive(Default)]
pub struct Aligner {
    hunts: FxHashMap<u64, Hunt>,
}

impl Aligner {
    pub fn event(&mut self, e: Event, out: &mut dyn FnMut(Event)) {
        match e {
            Event::Gap { conn, .. } => {
                let h = self.hunts.entry(conn).or_default();
                h.client = false;
                h.redis = false;
                h.carry.clear();
                out(e);
            }
            Event::Data {
                conn,
                side,
                at,
                bytes,
            } => {
                let Some(h) = self.hunts.get_mut(&conn) else {
                    return out(e);
                };
                match side {
                    Side::Client if !h.client => hunt_command(h, conn, at, bytes, out),
                    Side::Redis if !h.redis => {
                        if h.client && bytes.first().copied().is_some_and(reply_start) {
                            h.redis = true;
                            out(e);
                        } else {
                            h.skipped[Side::Redis as usize] += bytes.len() as u64;
                        }
                    }
                    _ => out(e),
                }
                if h.client && h.redis {
                    self.hunts.remove(&conn);
                }
            }
            Event::Closed { conn, .. } => {
                self.hunts.remove(&conn);
                out(e);
            }
            _ => out(e),
        }
    }
}

/// The client's `bytes` while looking for a command boundary.
fn hunt_command(h: &mut Hunt, conn: u64, at: Stamp, bytes: &[u8], out: &mut dyn FnMut(Event)) {
    let joined;
    let (buf, carried) = if h.carry.is_empty() {
        (bytes, 0)
    } else {
        let carried = h.carry.len();
        joined = [std::mem::take(&mut h.carry).as_slice(), bytes].concat();
        (joined.as_slice(), carried)
    };
    // Skipped bytes count once: those carried over were counted already.
    match command_boundary(buf) {
        Found::At(p) => {
            h.skipped[Side::Client as usize] += (p.saturating_sub(carried)) as u64;
            h.client = true;
            out(Event::Resynced {
                conn,
                at,
                skipped_client: h.skipped[Side::Client as usize],
                skipped_redis: h.skipped[Side::Redis as usize],
            });
            out(Event::Data {
                conn,
                side: Side::Client,
                at,
                bytes: &buf[p..],
            });
        }
        Found::Partial(p) if buf.len() - p <= HEADER => {
            h.skipped[Side::Client as usize] += (buf.len() - carried) as u64;
            h.carry = buf[p..].to_vec();
        }
        _ => h.skipped[Side::Client as usize] += (buf.len() - carried) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_boundaries_are_found_at_a_line_start_only() {
        let at = |b: &[u8]| match command_boundary(b) {
            Found::At(p) => Some(p),
            _ => None,
        };
        assert_eq!(at(b"*3\r\n$3\r\nSET\r\n"), Some(0));
        assert_eq!(at(b"lue\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), Some(5));
        assert_eq!(at(b"x*2\r\n$3\r\nGET\r\n"), None, "not after a CRLF");
        assert_eq!(
            at(b"*2\r\n$3\r\n123\r\n"),
            None,
            "a name starts with a letter"
        );
        assert!(matches!(
            command_boundary(b"ab\r\n*2\r\n$"),
            Found::Partial(4)
        ));
        assert!(matches!(command_boundary(b"*12"), Found::Partial(0)));
    }
}
