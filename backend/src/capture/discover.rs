//! Finding Redis in a capture nobody named a port for: the side of a TCP connection that
//! answers RESP replies to RESP commands.
//!
//! A connection to a port not yet known is held back, its segments kept (a few, bounded),
//! until its first bytes decide. It is Redis's when the side that opened it (its SYN's
//! sender) spoke first, with a RESP command (an array of bulk strings, its first a command's
//! name), and the other side answered with a RESP reply. Begun before the capture (no SYN),
//! it is Redis's once one side has begun a segment with a command and the other one with a
//! reply that could be no command. Then its port is Redis's from there on: the
//! held segments are handed to the reassembly in their order, and later connections to that
//! port are followed as if it had been named. A connection whose other side speaks first
//! (SSH, SMTP), whose first bytes are no command (HTTP, TLS), or that says nothing decisive
//! within `HELD_SEGMENTS`, is not Redis's, and its server's port is not tried again.

use std::net::SocketAddr;

use rustc_hash::{FxHashMap, FxHashSet};

use super::Stamp;
use super::packet::Segment;

/// Segments kept of one undecided connection; beyond them it is taken as not Redis's.
const HELD_SEGMENTS: usize = 32;

/// Connections weighed at once at most: beyond them (a flood of silent connections) new
/// ones are skipped, so memory stays bounded.
const MAX_WEIGHING: usize = 4_096;

/// Connections given up on that are remembered (then forgotten all at once: one weighed
/// again costs a few segments kept).
const FORGET_AFTER: usize = 65_536;

/// A segment kept while its connection is undecided.
pub struct Held {
    pub at: Stamp,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub ack: Option<u32>,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub window: u16,
    pub window_scale: Option<u8>,
    pub mss: Option<u16>,
    pub payload: Vec<u8>,
}

impl Held {
    pub fn segment(&self) -> Segment<'_> {
        Segment {
            src: self.src,
            dst: self.dst,
            seq: self.seq,
            ack: self.ack,
            syn: self.syn,
            fin: self.fin,
            rst: self.rst,
            window: self.window,
            window_scale: self.window_scale,
            mss: self.mss,
            payload: &self.payload,
        }
    }
}

/// What a segment of an undecided connection decided.
pub enum Decision {
    /// Not yet: the segment is kept.
    Undecided,
    /// Redis listens on this port: hand these segments (this one last) to the reassembly.
    Redis(u16, Vec<Held>),
    /// Not Redis traffic: the segments kept (this many, this one included) are let go.
    NotRedis(u64),
}

/// One connection being weighed.
#[derive(Default)]
struct Weighing {
    held: Vec<Held>,
    /// The server, when a SYN or SYN-ACK named it.
    server: Option<SocketAddr>,
    /// With the SYN: whether the client has spoken (with a command).
    client_spoke: bool,
    /// Without the SYN: a side whose segment began with a command, and one whose segment
    /// began with a reply that is no command (`+OK`, `:1`, `$5`: an array could be either).
    commands_from: Option<SocketAddr>,
    replies_from: Option<SocketAddr>,
}

impl Weighing {
    /// What `payload`, from `src`, decides: Redis on this server, not Redis, or nothing yet.
    fn weigh(&mut self, src: SocketAddr, payload: &[u8]) -> Option<Result<SocketAddr, ()>> {
        if payload.is_empty() {
            return None;
        }
        match self.server {
            // The opener speaks first, with a command; the server answers with a reply.
            Some(server) if src != server => {
                if self.client_spoke {
                    return None;
                }
                self.client_spoke = true;
                (!is_command(payload)).then_some(Err(()))
            }
            Some(server) => Some(if self.client_spoke && is_reply(payload) {
                Ok(server)
            } else {
                Err(())
            }),
            // Begun mid-connection: segments may start anywhere in a command or a reply.
            None => {
                if is_command(payload) {
                    self.commands_from.get_or_insert(src);
                } else if is_reply(payload) {
                    self.replies_from = Some(src);
                }
                match (self.commands_from, self.replies_from) {
                    (Some(client), Some(server)) if client != server => Some(Ok(server)),
                    _ => None,
                }
            }
        }
    }
}

/// The connections being weighed and the ports decided either way.
#[derive(Default)]
pub struct Discovery {
    weighing: FxHashMap<(SocketAddr, SocketAddr), Weighing>,
    /// Servers found not to speak RESP: their connections are skipped at once.
    not_redis: FxHashSet<SocketAddr>,
    /// Connections given up on, so their later segments are skipped too.
    given_up: FxHashSet<(SocketAddr, SocketAddr)>,
}

impl Discovery {
    /// Weighs one segment of a connection to no known Redis port.
    pub fn offer(&mut self, at: Stamp, seg: &Segment) -> Decision {
        if self.not_redis.contains(&seg.src) || self.not_redis.contains(&seg.dst) {
            return Decision::NotRedis(1);
        }
        let key = if seg.src <= seg.dst {
            (seg.src, seg.dst)
        } else {
            (seg.dst, seg.src)
        };
        if self.given_up.contains(&key) {
            return Decision::NotRedis(1);
        }
        if self.weighing.len() >= MAX_WEIGHING && !self.weighing.contains_key(&key) {
            return Decision::NotRedis(1);
        }
        let w = self.weighing.entry(key).or_default();
        w.held.push(Held {
            at,
            src: seg.src,
            dst: seg.dst,
            seq: seg.seq,
            ack: seg.ack,
            syn: seg.syn,
            fin: seg.fin,
            rst: seg.rst,
            window: seg.window,
            window_scale: seg.window_scale,
            mss: seg.mss,
            payload: seg.payload.to_vec(),
        });
        if seg.syn {
            w.server = Some(if seg.ack.is_some() { seg.src } else { seg.dst });
        }
        let verdict = w
            .weigh(seg.src, seg.payload)
            .or_else(|| (w.held.len() >= HELD_SEGMENTS || seg.fin || seg.rst).then_some(Err(())));
        match verdict {
            None => Decision::Undecided,
            Some(Ok(server)) => {
                let w = self.weighing.remove(&key).expect("weighed");
                Decision::Redis(server.port(), w.held)
            }
            Some(Err(())) => {
                let w = self.weighing.remove(&key).expect("weighed");
                if self.given_up.len() >= FORGET_AFTER {
                    self.given_up.clear();
                }
                // Without the SYN, which side is the server is not known: only this
                // connection is given up on.
                match w.server {
                    Some(server) => self.not_redis.insert(server),
                    None => self.given_up.insert(key),
                };
                Decision::NotRedis(w.held.len() as u64)
            }
        }
    }
}

/// A RESP command: an array of bulk strings, the first a command's name
/// (`*3\r\n$3\r\nSET\r\n…`). Inline commands are not taken: plain text is too common.
fn is_command(b: &[u8]) -> bool {
    let Some(rest) = b.strip_prefix(b"*") else {
        return false;
    };
    let Some((n, rest)) = number_line(rest) else {
        return false;
    };
    if n < 1 {
        return false;
    }
    let Some(rest) = rest.strip_prefix(b"$") else {
        return false;
    };
    let Some((len, name)) = number_line(rest) else {
        return false;
    };
    // A command's name: letters, and module commands' dots and the like (JSON.SET).
    (1..=64).contains(&len)
        && name.len() >= len as usize
        && name[0].is_ascii_alphabetic()
        && name[..len as usize]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b".|-_".contains(c))
}

/// A RESP2 or RESP3 reply's first line: a type byte, then a line ended by CRLF.
fn is_reply(b: &[u8]) -> bool {
    let Some((&kind, rest)) = b.split_first() else {
        return false;
    };
    let line_ends = rest
        .iter()
        .take(1024)
        .position(|&c| c == b'\r')
        .is_some_and(|i| rest.get(i + 1).is_none_or(|&c| c == b'\n'));
    let printable = |rest: &[u8]| {
        rest.iter()
            .take_while(|&&c| c != b'\r')
            .all(|c| (0x20..0x7f).contains(c))
    };
    match kind {
        b'+' | b'-' => line_ends && printable(rest),
        b':' | b'$' | b'*' | b'%' | b'~' | b'>' | b'|' | b'=' | b'!' | b'(' => {
            number_line(rest).is_some()
        }
        b'_' => rest.starts_with(b"\r\n"),
        b'#' => rest.starts_with(b"t\r\n") || rest.starts_with(b"f\r\n"),
        b',' => line_ends && printable(rest),
        _ => false,
    }
}

/// A (possibly negative) decimal number ended by CRLF, and what follows it.
fn number_line(b: &[u8]) -> Option<(i64, &[u8])> {
    let end = b.iter().take(21).position(|&c| c == b'\r')?;
    if b.get(end + 1) != Some(&b'\n') || end == 0 {
        return None;
    }
    let n = std::str::from_utf8(&b[..end]).ok()?.parse().ok()?;
    Some((n, &b[end + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg<'a>(src: &str, dst: &str, syn: bool, ack: bool, payload: &'a [u8]) -> Segment<'a> {
        Segment {
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            seq: 1,
            ack: ack.then_some(1),
            syn,
            fin: false,
            rst: false,
            window: 0,
            window_scale: None,
            mss: None,
            payload,
        }
    }

    const C: &str = "127.0.0.1:50000";
    const S: &str = "127.0.0.1:7711";

    #[test]
    fn a_command_answered_by_a_reply_is_redis_on_the_answering_port() {
        let mut d = Discovery::default();
        assert!(matches!(
            d.offer(1, &seg(C, S, true, false, b"")),
            Decision::Undecided
        ));
        assert!(matches!(
            d.offer(2, &seg(S, C, true, true, b"")),
            Decision::Undecided
        ));
        let set = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
        assert!(matches!(
            d.offer(3, &seg(C, S, false, true, set)),
            Decision::Undecided
        ));
        match d.offer(4, &seg(S, C, false, true, b"+OK\r\n")) {
            Decision::Redis(port, held) => {
                assert_eq!(port, 7711);
                assert_eq!(held.len(), 4);
                assert!(held[0].syn && held[3].payload == b"+OK\r\n");
            }
            _ => panic!("not found"),
        }
    }

    #[test]
    fn without_the_syn_the_side_that_sent_the_command_is_the_client() {
        let mut d = Discovery::default();
        let get = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
        assert!(matches!(
            d.offer(1, &seg(S, C, false, true, b"")),
            Decision::Undecided
        ));
        assert!(matches!(
            d.offer(2, &seg(C, S, false, true, get)),
            Decision::Undecided
        ));
        assert!(matches!(
            d.offer(3, &seg(S, C, false, true, b"$-1\r\n")),
            Decision::Redis(7711, _)
        ));
    }

    #[test]
    fn http_tls_a_server_that_speaks_first_and_silence_are_not_redis() {
        let mut d = Discovery::default();
        let http = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        assert!(matches!(
            d.offer(1, &seg(C, "127.0.0.1:80", true, false, b"")),
            Decision::Undecided
        ));
        assert!(matches!(
            d.offer(2, &seg(C, "127.0.0.1:80", false, true, http)),
            Decision::NotRedis(_)
        ));
        // Without its SYN, HTTP decides nothing until the segments kept run out.
        let mut late = Discovery::default();
        let mut last = Decision::Undecided;
        for i in 0..HELD_SEGMENTS as u64 {
            assert!(matches!(last, Decision::Undecided));
            last = late.offer(
                i,
                &seg("127.0.0.1:50009", "127.0.0.1:8080", false, true, http),
            );
        }
        assert!(matches!(last, Decision::NotRedis(n) if n == HELD_SEGMENTS as u64));
        let tls = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
        assert!(matches!(
            d.offer(1, &seg(C, "127.0.0.1:443", true, false, b"")),
            Decision::Undecided
        ));
        assert!(matches!(
            d.offer(2, &seg(C, "127.0.0.1:443", false, true, tls)),
            Decision::NotRedis(_)
        ));
        // A later connection to the same server is skipped at once.
        assert!(matches!(
            d.offer(
                3,
                &seg("127.0.0.1:50001", "127.0.0.1:443", true, false, b"")
            ),
            Decision::NotRedis(_)
        ));
        assert!(matches!(
            d.offer(1, &seg(C, "127.0.0.1:22", true, false, b"")),
            Decision::Undecided
        ));
        assert!(matches!(
            d.offer(
                2,
                &seg("127.0.0.1:22", C, false, true, b"SSH-2.0-OpenSSH_9.2\r\n")
            ),
            Decision::NotRedis(_)
        ));
        let mut quiet = Discovery::default();
        let mut last = Decision::Undecided;
        for i in 0..HELD_SEGMENTS as u64 {
            last = quiet.offer(i, &seg(C, S, false, true, b""));
        }
        assert!(matches!(last, Decision::NotRedis(_)));
    }

    #[test]
    fn replies_that_look_like_commands_are_told_by_who_opened_the_connection() {
        // Redis's side named as the client's by a wrong guess would send "*2\r\n$3\r\nfoo…"
        // first; with the SYN captured, a server speaking first is not Redis.
        let mut d = Discovery::default();
        assert!(matches!(
            d.offer(1, &seg(C, S, true, false, b"")),
            Decision::Undecided
        ));
        let array = b"*1\r\n$3\r\nabc\r\n";
        assert!(matches!(
            d.offer(2, &seg(S, C, false, true, array)),
            Decision::NotRedis(_)
        ));
    }

    #[test]
    fn replies_of_every_type_are_replies() {
        for r in [
            &b"+OK\r\n"[..],
            b"-ERR x\r\n",
            b":1\r\n",
            b"$5\r\nhello\r\n",
            b"$-1\r\n",
            b"*2\r\n",
            b"_\r\n",
            b"%1\r\n",
            b"#t\r\n",
            b",1.5\r\n",
            b">3\r\n",
        ] {
            assert!(is_reply(r), "{:?}", String::from_utf8_lossy(r));
        }
        for r in [&b"HTTP/1.1 200 OK\r\n"[..], b"\x16\x03\x03", b"+OK", b""] {
            assert!(!is_reply(r), "{:?}", String::from_utf8_lossy(r));
        }
    }
}
