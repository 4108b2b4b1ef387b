//! TCP reassembly: each connection to a Redis port, each direction, turned back into the byte
//! stream the receiving application read.
//!
//! A direction's bytes are placed by sequence number. A segment that continues the stream is
//! handed on at once (as it arrived: one segment, one piece); one that arrives ahead of a hole
//! waits, bounded (`MAX_PENDING`), and is handed on when the hole fills, stamped with the time
//! it became readable. Bytes already handed on (retransmissions, overlaps) are dropped: the
//! first copy wins, as in the receiver's kernel.
//!
//! A hole the capture will never fill is given up as a `Gap` when the receiver acknowledges
//! past it (it got bytes the capture missed: they will not be sent again), when more than
//! `MAX_PENDING` bytes wait behind it, or when the connection ends. A connection whose SYN was
//! not captured starts with a `Gap` of unknown size. FIN and RST end it.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

use rustc_hash::{FxHashMap, FxHashSet};

use super::packet::Segment;
use super::{Closing, Event, Side, Stamp};

/// Out-of-order bytes held per direction before the hole ahead of them is given up.
pub const MAX_PENDING: usize = 4 << 20;

/// Ended connections remembered, so a late retransmission does not open a new one.
const TOMBSTONES: usize = 4_096;

/// Counts of what the reassembly did, for the capture's facts.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Segments wholly repeated (retransmissions, duplicates).
    pub retransmitted: u64,
    /// Segments that arrived ahead of a hole.
    pub out_of_order: u64,
    /// Holes given up, and the bytes they held.
    pub gaps: u64,
    pub missing_bytes: u64,
}

/// What one direction hands on.
enum Piece<'a> {
    Data(&'a [u8]),
    Gap(u64),
}

/// One direction of a connection.
#[derive(Default)]
struct Stream {
    /// The sequence number of the next byte expected, once known.
    next_seq: Option<u32>,
    /// Bytes handed on so far: the stream offset of `next_seq`.
    delivered: u64,
    /// Bytes that arrived ahead of a hole, by stream offset; they never overlap.
    pending: BTreeMap<u64, Vec<u8>>,
    pending_bytes: usize,
    /// The FIN's stream offset, once seen.
    fin_at: Option<u64>,
}

impl Stream {
    /// Where sequence number `seq` falls, as a stream offset (negative: before the start).
    /// Sequence numbers wrap at 2³²; within ±2 GiB of the point reached, the signed distance
    /// tells which way.
    fn offset(&self, seq: u32) -> i64 {
        let next = self.next_seq.unwrap_or(seq);
        self.delivered as i64 + i64::from(seq.wrapping_sub(next) as i32)
    }

    fn advance(&mut self, n: u64) {
        self.delivered += n;
        self.next_seq = self.next_seq.map(|s| s.wrapping_add(n as u32));
    }

    fn finished(&self) -> bool {
        self.fin_at == Some(self.delivered)
    }

    /// A segment's payload at `seq`: hands on what is now in order.
    fn take(&mut self, seq: u32, payload: &[u8], counts: &mut Counts, out: &mut dyn FnMut(Piece)) {
        if payload.is_empty() {
            return;
        }
        let off = self.offset(seq);
        let end = off + payload.len() as i64;
        let delivered = self.delivered as i64;
        if end <= delivered {
            counts.retransmitted += 1;
            return;
        }
        // A partial retransmission: only its new bytes count.
        let (off, bytes) = if off < delivered {
            (self.delivered, &payload[(delivered - off) as usize..])
        } else {
            (off as u64, payload)
        };
        if off == self.delivered {
            out(Piece::Data(bytes));
            self.advance(bytes.len() as u64);
            self.drain(out);
            return;
        }
        counts.out_of_order += 1;
        self.insert(off, bytes);
        while self.pending_bytes > MAX_PENDING {
            self.skip_hole(counts, out);
        }
    }

    /// Keeps the bytes at `off` not already waiting (the first copy wins).
    fn insert(&mut self, off: u64, bytes: &[u8]) {
        let end = off + bytes.len() as u64;
        let mut start = off;
        if let Some((&k, v)) = self.pending.range(..=start).next_back() {
            start = start.max(k + v.len() as u64);
        }
        while start < end {
            let next = self
                .pending
                .range(start..end)
                .next()
                .map(|(&k, v)| (k, v.len() as u64));
            let piece_end = next.map_or(end, |(k, _)| k);
            if piece_end > start {
                let piece = bytes[(start - off) as usize..(piece_end - off) as usize].to_vec();
                self.pending_bytes += piece.len();
                self.pending.insert(start, piece);
            }
            match next {
                Some((k, len)) => start = k + len,
                None => break,
            }
        }
    }

    /// Hands on the waiting bytes that are now in order.
    fn drain(&mut self, out: &mut dyn FnMut(Piece)) {
        while let Some(entry) = self.pending.first_entry() {
            let k = *entry.key();
            if k > self.delivered {
                break;
            }
            let v = entry.remove();
            self.pending_bytes -= v.len();
            let seen = (self.delivered - k) as usize;
            if seen < v.len() {
                out(Piece::Data(&v[seen..]));
                self.advance((v.len() - seen) as u64);
            }
        }
    }

    /// Gives up the hole before the first waiting bytes, and hands them on.
    fn skip_hole(&mut self, counts: &mut Counts, out: &mut dyn FnMut(Piece)) {
        let Some(&k) = self.pending.keys().next() else {
            return;
        };
        self.gap(k - self.delivered, counts, out);
        self.drain(out);
    }

    fn gap(&mut self, missing: u64, counts: &mut Counts, out: &mut dyn FnMut(Piece)) {
        if missing == 0 {
            return;
        }
        counts.gaps += 1;
        counts.missing_bytes += missing;
        out(Piece::Gap(missing));
        self.advance(missing);
    }

    /// The receiver acknowledged everything before `ack`: bytes before it that the capture
    /// lacks will never come.
    fn acked(&mut self, ack: u32, counts: &mut Counts, out: &mut dyn FnMut(Piece)) {
        if self.next_seq.is_none() {
            return;
        }
        let ahead = self.offset(ack) - self.delivered as i64;
        if ahead <= 0 {
            return;
        }
        let mut target = self.delivered + ahead as u64;
        // The FIN takes a sequence number of its own, and carries no byte.
        if let Some(fin) = self.fin_at {
            target = target.min(fin);
        }
        while self.delivered < target {
            match self.pending.keys().next() {
                Some(&k) if k <= target => self.skip_hole(counts, out),
                _ => {
                    self.gap(target - self.delivered, counts, out);
                    break;
                }
            }
        }
    }

    /// Gives up every hole: the connection is over.
    fn flush(&mut self, counts: &mut Counts, out: &mut dyn FnMut(Piece)) {
        while !self.pending.is_empty() {
            self.skip_hole(counts, out);
        }
    }
}

struct Conn {
    id: u64,
    /// Client → Redis, then Redis → client (`Side as usize`).
    streams: [Stream; 2],
    client_isn: Option<u32>,
    first_fin: Option<Side>,
    /// The window scale each side's SYN offered (client's, then Redis's): in force only when
    /// both did (RFC 7323).
    scales: [Option<u8>; 2],
    /// Whether the handshake was captured, so the scale in force is known.
    handshake_seen: [bool; 2],
    /// The segment size the client's SYN offered: what it receives at most per segment.
    client_mss: Option<u16>,
}

/// Every connection to a Redis port in the capture, as it goes.
pub struct Tracker {
    ports: Vec<u16>,
    conns: FxHashMap<(SocketAddr, SocketAddr), Conn>,
    tombstones: VecDeque<(SocketAddr, SocketAddr)>,
    /// Ended connections' keys (`tombstones` in the order they ended, oldest forgotten first).
    ended: FxHashSet<(SocketAddr, SocketAddr)>,
    next_id: u64,
    pub counts: Counts,
}

impl Tracker {
    pub fn new(ports: &[u16]) -> Tracker {
        Tracker {
            ports: ports.to_vec(),
            conns: FxHashMap::default(),
            tombstones: VecDeque::new(),
            ended: Default::default(),
            next_id: 0,
            counts: Counts::default(),
        }
    }

    /// A port found to be Redis's (`discover`): its connections are followed from now on.
    pub fn add_port(&mut self, port: u16) {
        if !self.ports.contains(&port) {
            self.ports.push(port);
        }
    }

    /// The ports followed: those named, and those found.
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// Whether a segment between these ports is Redis traffic.
    pub fn is_redis(&self, a: u16, b: u16) -> bool {
        self.ports.contains(&a) || self.ports.contains(&b)
    }

    /// Connections opened so far.
    pub fn connections(&self) -> u64 {
        self.next_id
    }

    /// One captured segment, at `at`.
    pub fn segment(&mut self, at: Stamp, seg: &Segment, out: &mut dyn FnMut(Event)) {
        let (key, side) = self.key_and_side(seg);
        if !self.follow(key, side, at, seg, out) {
            return;
        }
        let conn = self.conns.get_mut(&key).expect("inserted");
        let counts = &mut self.counts;
        let (id, here, there) = (conn.id, side, side.other());
        // The acknowledgement first: it speaks of bytes received before this segment left.
        if let Some(ack) = seg.ack {
            let other = &mut conn.streams[there as usize];
            if seg.syn && other.next_seq.is_none() {
                // A SYN-ACK names the client's first sequence number.
                other.next_seq = Some(ack);
            }
            other.acked(ack, counts, &mut |p| deliver(out, id, there, at, p));
        }
        if seg.syn {
            conn.scales[here as usize] = seg.window_scale;
            if here == Side::Client {
                conn.client_mss = seg.mss;
            }
            conn.handshake_seen[here as usize] = true;
        } else if here == Side::Client && !seg.payload.is_empty() && seg.ack.is_some() {
            let scaled = conn.handshake_seen == [true, true];
            let shift = match conn.scales {
                [Some(c), Some(_)] if scaled => u32::from(c.min(14)),
                _ => 0,
            };
            out(Event::Window {
                conn: id,
                at,
                bytes: u64::from(seg.window) << shift,
                unit: 1 << shift,
                mss: conn.client_mss.map(u64::from),
                scaled,
            });
        }
        let stream = &mut conn.streams[here as usize];
        let mut seq = seg.seq;
        if seg.syn {
            // The SYN takes one sequence number; data (TCP Fast Open) follows it.
            if here == Side::Client {
                conn.client_isn = Some(seg.seq);
            }
            if stream.next_seq.is_none() {
                stream.next_seq = Some(seg.seq.wrapping_add(1));
            }
            seq = seg.seq.wrapping_add(1);
        } else if stream.next_seq.is_none() {
            // The first of this direction the capture holds: the stream starts here.
            stream.next_seq = Some(seg.seq);
        }
        stream.take(seq, seg.payload, counts, &mut |p| {
            deliver(out, id, here, at, p)
        });
        if seg.fin && stream.fin_at.is_none() {
            let end = stream.offset(seq) + seg.payload.len() as i64;
            stream.fin_at = Some(end.max(0) as u64);
            conn.first_fin.get_or_insert(here);
        }
        if seg.rst {
            self.end(key, at, Closing::Reset(here), out);
        } else if conn.streams.iter().all(Stream::finished) {
            let by = conn.first_fin.unwrap_or(here);
            self.end(key, at, Closing::Fin(by), out);
        }
    }

    /// The connection `seg` belongs to (client, Redis), and which side sent it.
    fn key_and_side(&self, seg: &Segment) -> ((SocketAddr, SocketAddr), Side) {
        let fwd = (seg.src, seg.dst);
        let rev = (seg.dst, seg.src);
        if self.conns.contains_key(&fwd) || self.ended.contains(&fwd) {
            (fwd, Side::Client)
        } else if self.conns.contains_key(&rev) || self.ended.contains(&rev) {
            (rev, Side::Redis)
        } else {
            let (dst_redis, src_redis) = (
                self.ports.contains(&seg.dst.port()),
                self.ports.contains(&seg.src.port()),
            );
            // Both ports Redis's: a SYN-ACK comes from the server.
            if dst_redis && !(src_redis && seg.syn && seg.ack.is_some()) {
                (fwd, Side::Client)
            } else {
                (rev, Side::Redis)
            }
        }
    }

    /// Whether `seg` belongs to a connection followed from here on: a SYN on a port still
    /// held ends the old connection there; a connection first seen now opens (with a gap
    /// if its start was missed); a late packet of an ended one, or a bare ACK, FIN or RST of
    /// an unseen one, is not followed.
    fn follow(
        &mut self,
        key: (SocketAddr, SocketAddr),
        side: Side,
        at: Stamp,
        seg: &Segment,
        out: &mut dyn FnMut(Event),
    ) -> bool {
        let opening = seg.syn && seg.ack.is_none() && side == Side::Client;
        if opening {
            let reused = self
                .conns
                .get(&key)
                .is_some_and(|c| c.client_isn != Some(seg.seq));
            if reused {
                let old = self.conns.remove(&key).expect("present");
                out(Event::Closed {
                    conn: old.id,
                    at,
                    why: Closing::PortReused,
                });
            }
            self.ended.remove(&key);
        } else if self.ended.contains(&key) {
            return false; // A late packet of an ended connection.
        }
        if self.conns.contains_key(&key) {
            return true;
        }
        if !seg.syn && (seg.payload.is_empty() || seg.rst) {
            return false; // Nothing to follow: a bare ACK, FIN or RST of an unseen connection.
        }
        self.next_id += 1;
        let start_seen = seg.syn;
        out(Event::Opened {
            conn: self.next_id,
            client: key.0,
            redis: key.1,
            at,
            start_seen,
        });
        if !start_seen {
            out(Event::Gap {
                conn: self.next_id,
                side: Side::Client,
                at,
                missing: None,
            });
        }
        self.conns.insert(
            key,
            Conn {
                id: self.next_id,
                streams: Default::default(),
                client_isn: None,
                first_fin: None,
                scales: [None; 2],
                handshake_seen: [false; 2],
                client_mss: None,
            },
        );
        true
    }

    /// Ends the connection at `key`: whatever waits behind a hole is handed on first.
    fn end(
        &mut self,
        key: (SocketAddr, SocketAddr),
        at: Stamp,
        why: Closing,
        out: &mut dyn FnMut(Event),
    ) {
        let Some(mut conn) = self.conns.remove(&key) else {
            return;
        };
        for side in [Side::Client, Side::Redis] {
            conn.streams[side as usize].flush(&mut self.counts, &mut |p| {
                deliver(out, conn.id, side, at, p)
            });
        }
        out(Event::Closed {
            conn: conn.id,
            at,
            why,
        });
        self.ended.insert(key);
        self.tombstones.push_back(key);
        if self.tombstones.len() > TOMBSTONES
            && let Some(old) = self.tombstones.pop_front()
        {
            self.ended.remove(&old);
        }
    }

    /// The capture is over at `at`: every connection still open ends there, by its FIN if one
    /// was seen, `still_open` otherwise.
    pub fn finish(&mut self, at: Stamp, still_open: Closing, out: &mut dyn FnMut(Event)) {
        let mut open: Vec<(u64, (SocketAddr, SocketAddr), Option<Side>)> = self
            .conns
            .iter()
            .map(|(k, c)| (c.id, *k, c.first_fin))
            .collect();
        open.sort_by_key(|(id, _, _)| *id);
        for (_, key, fin) in open {
            let why = fin.map_or(still_open, Closing::Fin);
            self.end(key, at, why, out);
        }
    }
}

fn deliver(out: &mut dyn FnMut(Event), conn: u64, side: Side, at: Stamp, p: Piece) {
    out(match p {
        Piece::Data(bytes) => Event::Data {
            conn,
            side,
            at,
            bytes,
        },
        Piece::Gap(n) => Event::Gap {
            conn,
            side,
            at,
            missing: Some(n),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_waiting_behind_a_hole_are_bounded_then_the_hole_is_given_up() {
        let mut s = Stream {
            next_seq: Some(u32::MAX - 50),
            ..Stream::default()
        };
        let mut counts = Counts::default();
        let (mut got, mut gaps) = (0usize, Vec::new());
        let chunk = vec![b'x'; 64 * 1024];
        // 100 bytes never captured, then 5 MiB after them, across the sequence numbers' wrap.
        for i in 0..80u32 {
            let seq = (u32::MAX - 50).wrapping_add(100 + i * chunk.len() as u32);
            s.take(seq, &chunk, &mut counts, &mut |p| match p {
                Piece::Data(b) => got += b.len(),
                Piece::Gap(n) => gaps.push(n),
            });
            assert!(s.pending_bytes <= MAX_PENDING, "{}", s.pending_bytes);
        }
        assert_eq!(gaps, [100]);
        assert_eq!(got, 80 * chunk.len(), "every byte after the hole, once");
        assert_eq!((counts.gaps, counts.missing_bytes), (1, 100));
    }
}
