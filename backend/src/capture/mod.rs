//! Passive observation: a capture file (tcpdump, tshark, Wireshark) read back into each Redis
//! connection's two byte streams, with nothing between the application and Redis.
//!
//! ```text
//! file ──packets──▶ packet ──TCP segments──▶ reassembly ──byte streams──▶ resync ──▶ Event
//!  (pcap, pcapng)   (link, IP, TCP headers)  (per connection, direction)  (RESP boundary)
//! ```
//!
//! - `file`: the capture file, streamed block by block (`pcap-parser`): each packet with its
//!   interface's link type and the capture host's timestamp.
//! - `packet`: a packet to a TCP segment (`etherparse` for IP and TCP; the link headers,
//!   Ethernet, Linux cooked v1 and v2, BSD loopback, raw IP, stripped here).
//! - `reassembly`: per connection to a Redis port and per direction, the bytes in order as the
//!   receiver read them: out-of-order segments wait (bounded), retransmissions and overlaps are
//!   dropped, holes the capture never filled are given up as gaps, FIN and RST end it.
//! - `resync`: after a gap (or a start the capture missed), the streams are picked up again
//!   at a command boundary, and the connection says so.
//!
//! What comes out is a stream of `Event`s in capture order: a connection opened, a direction's
//! bytes (one segment as captured, or one that became readable when a hole filled), a gap, a
//! resynchronisation, the end. Observe mode feeds them into the same per-connection record
//! the proxy fills (`observe::captured`).
//!
//! Memory does not grow with the file: it is read through a fixed buffer, each connection
//! holds at most `reassembly::MAX_PENDING` out-of-order bytes a direction, and ended
//! connections are forgotten (a few thousand of their addresses are kept, so a late
//! retransmission does not look like a new connection).
//!
//! A packet cut short by a snap length cannot be read as RESP: a capture with one on a Redis
//! port is refused, saying how to capture whole packets.

mod file;
mod packet;
mod reassembly;
mod resync;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub use file::Link;
pub use reassembly::MAX_PENDING;

use packet::Decoded;

/// Capture time: ns since the Unix epoch, by the capture host's clock.
pub type Stamp = u64;

/// A connection's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Client → Redis: commands.
    Client = 0,
    /// Redis → client: replies.
    Redis = 1,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Client => Side::Redis,
            Side::Redis => Side::Client,
        }
    }
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// This side sent the first FIN.
    Fin(Side),
    /// This side sent a RST.
    Reset(Side),
    /// A new connection (a SYN) came from the same address and port.
    PortReused,
    /// Still open when the capture ended.
    CaptureEnded,
}

impl std::fmt::Display for Closing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let who = |s: &Side| match s {
            Side::Client => "the client",
            Side::Redis => "Redis",
        };
        match self {
            Closing::Fin(s) => write!(f, "closed by {} (FIN, as captured)", who(s)),
            Closing::Reset(s) => write!(f, "reset by {} (RST, as captured)", who(s)),
            Closing::PortReused => {
                f.write_str("its address and port were reused by a new connection")
            }
            Closing::CaptureEnded => f.write_str("still open when the capture ended"),
        }
    }
}

/// What happened on the Redis connections in a capture, in capture order.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A connection, numbered from 1 in the order the capture first shows them.
    /// `start_seen`: its SYN was captured (otherwise a `Gap` with no size follows).
    Opened {
        conn: u64,
        client: SocketAddr,
        redis: SocketAddr,
        at: Stamp,
        start_seen: bool,
    },
    /// Bytes of one direction, in stream order: one segment as captured (its new bytes), or
    /// one that waited behind a hole, stamped when the hole filled.
    Data {
        conn: u64,
        side: Side,
        at: Stamp,
        bytes: &'a [u8],
    },
    /// Bytes the capture does not hold: `missing` of them, or an unknown number before the
    /// first captured one (the connection began before the capture).
    Gap {
        conn: u64,
        side: Side,
        at: Stamp,
        missing: Option<u64>,
    },
    /// Framing starts again at a command boundary after a gap; the bytes skipped to get there.
    Resynced {
        conn: u64,
        at: Stamp,
        skipped_client: u64,
        skipped_redis: u64,
    },
    Closed {
        conn: u64,
        at: Stamp,
        why: Closing,
    },
}

/// What the capture held, said beside the report.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// "pcap" or "pcapng".
    pub format: &'static str,
    /// Each interface's link type and snap length (0: none).
    pub interfaces: Vec<(Link, u32)>,
    pub packets: u64,
    /// Bytes captured (as stored, link headers included).
    pub bytes: u64,
    /// TCP segments to or from a Redis port.
    pub redis_segments: u64,
    pub connections: u64,
    /// Segments wholly repeated, and ones that arrived ahead of a hole.
    pub retransmitted: u64,
    pub out_of_order: u64,
    /// Holes the capture never filled, and the bytes they held.
    pub gaps: u64,
    pub missing_bytes: u64,
    /// IP fragments (not reassembled) and packets of other protocols or link types.
    pub fragments: u64,
    pub other: u64,
    /// The file ended inside a packet (the capture was stopped while writing).
    pub cut_short: bool,
    /// First and last packet's stamps.
    pub first: Option<Stamp>,
    pub last: Option<Stamp>,
}

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot read the capture {path}: {cause}")]
    Open {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{path} is not a pcap or pcapng capture (write one with tcpdump -w FILE, tshark -w FILE or Wireshark's Save As)"
    )]
    NotACapture { path: PathBuf },
    #[error("{path}: packet {packet} cannot be read: {why}")]
    Malformed {
        path: PathBuf,
        packet: u64,
        why: String,
    },
    #[error(
        "{path}: packet {packet} (TCP port {port}) holds only {captured} of its {original} bytes: the capture was taken with a snap length of {snaplen} bytes, which cuts off the commands and replies pipescope reads. Capture whole packets instead: tcpdump -s 0 -w FILE 'tcp port {port}' (-s 0: no snap length)"
    )]
    Truncated {
        path: PathBuf,
        packet: u64,
        port: u16,
        captured: usize,
        original: u32,
        snaplen: u32,
    },
}

/// Reads the capture at `path`, handing `on_event` every event of the TCP connections to one
/// of `redis_ports`, in capture order.
pub fn read(
    path: &Path,
    redis_ports: &[u16],
    mut on_event: impl FnMut(Event),
) -> Result<Facts, CaptureError> {
    let mut tracker = reassembly::Tracker::new(redis_ports);
    let mut aligner = resync::Aligner::default();
    let mut facts = Facts::default();
    let mut emit = |e: Event| aligner.event(e, &mut on_event);
    let file_facts = file::read(path, |p| {
        facts.packets += 1;
        facts.bytes += p.data.len() as u64;
        facts.first.get_or_insert(p.at_ns);
        facts.last = Some(p.at_ns);
        if p.data.len() < p.original_len as usize {
            // Cut short: refused when it is Redis's, or when too little is left to tell.
            let port = match packet::truncated_ports(p.link, p.data) {
                Some((a, b)) if !tracker.is_redis(a, b) => {
                    facts.other += 1;
                    return Ok(());
                }
                Some((a, b)) => {
                    if redis_ports.contains(&a) {
                        a
                    } else {
                        b
                    }
                }
                None => redis_ports.first().copied().unwrap_or(6379),
            };
            return Err(CaptureError::Truncated {
                path: path.to_path_buf(),
                packet: p.number,
                port,
                captured: p.data.len(),
                original: p.original_len,
                snaplen: p.snaplen,
            });
        }
        match packet::decode(p.link, p.data) {
            Decoded::Tcp(seg) if tracker.is_redis(seg.src.port(), seg.dst.port()) => {
                facts.redis_segments += 1;
                tracker.segment(p.at_ns, &seg, &mut emit);
            }
            Decoded::Tcp(_) | Decoded::Other => facts.other += 1,
            Decoded::Fragment => facts.fragments += 1,
        }
        Ok(())
    })?;
    tracker.finish(facts.last.unwrap_or(0), &mut emit);
    let c = &tracker.counts;
    Ok(Facts {
        format: file_facts.format,
        interfaces: file_facts.interfaces,
        cut_short: file_facts.cut_short,
        connections: tracker.connections(),
        retransmitted: c.retransmitted,
        out_of_order: c.out_of_order,
        gaps: c.gaps,
        missing_bytes: c.missing_bytes,
        ..facts
    })
}
