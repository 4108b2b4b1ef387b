//! Passive observation: a capture file (tcpdump, tshark, Wireshark) or an interface captured
//! live, read back into each Redis connection's two byte streams, with nothing between the
//! application and Redis.
//!
//! ```text
//! file ─┐
//!       ├─packets─▶ packet ──TCP segments──▶ reassembly ──byte streams──▶ resync ──▶ Event
//! live ─┘           (link, IP, TCP headers)  (per connection, direction)  (RESP boundary)
//! ```
//!
//! - `unpack`: what a file handed over is before its packets are read: gzip or zstd, unpacked
//!   while read, or no capture at all, said in its own sentence.
//! - `source`: what a packet source hands the packet loop (`read`, here): each packet with its
//!   link type and the capture host's stamp, and what the source said about itself.
//! - `file`: the capture file, streamed block by block (`pcap-parser`): each packet with its
//!   interface's link type and the capture host's timestamp.
//! - `live`: an interface captured through libpcap (the `pcap` crate), whole packets to a
//!   Redis port, until stopped; without CAP_NET_RAW it says how to get it.
//! - `packet`: a packet to a TCP segment (`etherparse` for IP and TCP; the link headers,
//!   Ethernet, Linux cooked v1 and v2, BSD loopback, raw IP, stripped here).
//! - `reassembly`: per connection to a Redis port and per direction, the bytes in order as the
//!   receiver read them: out-of-order segments wait (bounded), retransmissions and overlaps are
//!   dropped, holes the capture never filled are given up as gaps, FIN and RST end it.
//! - `discover`: with no Redis port named, Redis found in the capture: the side of a
//!   connection that answers RESP replies to RESP commands.
//! - `resync`: after a gap (or a start the capture missed), the streams are picked up again
//!   at a command boundary, and the connection says so.
//!
//! Both sources feed the one packet loop, so a live capture is read exactly as a file is.
//! What comes out is a stream of `Event`s in capture order: a connection opened, a direction's
//! bytes (one segment as captured, or one that became readable when a hole filled), a gap, a
//! resynchronisation, the end. Observe mode feeds them into the same per-connection record
//! the proxy fills (`observe::captured`).
//!
//! Memory does not grow with the capture: a file is read through a fixed buffer, each
//! connection holds at most `reassembly::MAX_PENDING` out-of-order bytes a direction, and
//! ended connections are forgotten (a few thousand of their addresses are kept, so a late
//! retransmission does not look like a new connection).
//!
//! A packet cut short by a snap length cannot be read as RESP: a capture with one on a Redis
//! port is refused, saying how to capture whole packets (a live capture takes whole ones).

mod discover;
mod file;
mod live;
mod packet;
mod reassembly;
mod resync;
mod source;
mod unpack;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub(crate) use live::refused;
pub use live::{Live, Tally};
pub use reassembly::MAX_PENDING;
pub use source::Link;

use packet::Decoded;
use source::Packet;

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
    /// Still open when the capture file ended.
    CaptureEnded,
    /// Still open when a live capture was stopped.
    CaptureStopped,
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
            Closing::CaptureStopped => f.write_str("still open when the capture stopped"),
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
    /// The receive window the client advertised on a segment carrying its commands, sent
    /// just before that segment's bytes: its free space for replies then, as far as Linux
    /// lets it show (`observe::window`). `bytes` is scaled by the window scale its handshake
    /// agreed; `scaled` is false where the handshake was not captured (the scale is unknown:
    /// `bytes` is the field as sent, comparable only with the connection's other windows).
    Window {
        conn: u64,
        at: Stamp,
        bytes: u64,
        /// The window's unit: 2^scale bytes (1 where the scale is unknown).
        unit: u64,
        /// The segment size the client's SYN offered, when captured.
        mss: Option<u64>,
        scaled: bool,
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

/// Where the packets come from.
pub enum Source<'a> {
    /// A capture file (pcap, pcapng), read to its end.
    File(&'a Path),
    /// A capture file read to its end or until `stop` is raised (Ctrl-C): then what was read.
    FileUntil {
        path: &'a Path,
        stop: &'a std::sync::atomic::AtomicBool,
    },
    /// A capture file's bytes already in memory (a page sent them), named as `name`.
    Bytes { name: &'a Path, bytes: &'a [u8] },
    /// An interface captured live (`Live::open`), until its `stopper` is raised.
    Live(&'a mut Live),
}

/// Where a capture's packets came from, as the report and the errors name it.
#[derive(Debug, Clone)]
pub enum Origin {
    File(PathBuf),
    /// The interface's name.
    Live(String),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::Live(interface) => write!(f, "the live capture on {interface}"),
        }
    }
}

/// What the capture held, said beside the report.
#[derive(Debug, Clone)]
pub struct Facts {
    pub origin: Origin,
    /// "pcap" or "pcapng"; empty for a live capture.
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
    /// The file's reading was stopped before its end (Ctrl-C): the report is partial.
    pub stopped: bool,
    /// A live capture: packets libpcap dropped (its buffer was full), and ones the interface
    /// dropped.
    pub dropped: u64,
    pub if_dropped: u64,
    /// With no port named: the ports found to be Redis's, in the order found.
    pub found_ports: Vec<u16>,
    /// Times the clock went back by more than `JOINED_BACK_NS` (captures joined end to end,
    /// by mergecap -a or cat), and the packet where it first did: each later part's stamps are
    /// moved on to follow the part before it, keeping their distances.
    pub joins: u64,
    pub first_join: Option<u64>,
    /// First and last packet's stamps (the last as moved on past any joins).
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
    #[error(
        "{path} is empty ({size}): a capture holds at least its header. Was tcpdump stopped before it wrote anything (stop it with Ctrl-C, not kill -9), or did -w name another file?"
    )]
    Empty { path: PathBuf, size: &'static str },
    #[error("{path} is a directory: give the capture file in it (written by tcpdump -w FILE)")]
    Directory { path: PathBuf },
    #[error(
        "{path} is a pipescope recording, not a capture: show it with pipescope replay {path}, or open it on the page's runs view (/)"
    )]
    IsARecording { path: PathBuf },
    #[error("{path} looks {what}-compressed but cannot be unpacked: {cause}")]
    Unpack {
        path: PathBuf,
        what: &'static str,
        cause: String,
    },
    #[error("{path}: packet {packet} cannot be read: {why}")]
    Malformed {
        path: PathBuf,
        packet: u64,
        why: String,
    },
    #[error(
        "{from}: packet {packet} (TCP port {port}) holds only {captured} of its {original} bytes: the capture was taken with a snap length of {snaplen} bytes, which cuts off the commands and replies pipescope reads. Capture whole packets instead: tcpdump -s 0 -w FILE 'tcp port {port}' (-s 0: no snap length)"
    )]
    Truncated {
        from: Origin,
        packet: u64,
        port: u16,
        captured: usize,
        original: u32,
        snaplen: u32,
    },
    #[error(
        "live capture needs CAP_NET_RAW, which this process lacks (libpcap on {interface}: {cause}): run pipescope as root, or give it the capability once: sudo setcap cap_net_raw,cap_net_admin=eip {exe}; or capture with tcpdump (sudo tcpdump -i {interface} -s 0 -w redis.pcap '{filter}') and read that with --pcap redis.pcap"
    )]
    NoPermission {
        interface: String,
        filter: String,
        exe: String,
        cause: String,
    },
    #[error("there is no interface {interface:?} to capture on: {known} (name one with --capture)")]
    NoSuchInterface { interface: String, known: String },
    #[error("cannot capture on {interface}: {cause}")]
    Live { interface: String, cause: String },
}

/// Reads `source`, handing `on_event` every event of the TCP connections to one of
/// `redis_ports` (none: to the ports found to be Redis's, `discover`), in capture order. A file's connections still open at its end are "still
/// open when the capture ended"; a live capture's, "when the capture stopped".
pub fn read(
    source: Source,
    redis_ports: &[u16],
    mut on_event: impl FnMut(Event),
) -> Result<Facts, CaptureError> {
    let (origin, tally) = match &source {
        Source::File(path) | Source::FileUntil { path, .. } | Source::Bytes { name: path, .. } => {
            (Origin::File(path.to_path_buf()), None)
        }
        Source::Live(live) => (Origin::Live(live.interface().into()), Some(live.tally())),
    };
    let mut aligner = resync::Aligner::default();
    let mut emit = |e: Event| aligner.event(e, &mut on_event);
    let mut packets = Packets::new(origin, redis_ports, tally);
    let mut each = |p: Packet<'_>| packets.take(&p, &mut emit);
    let (described, still_open) = match source {
        Source::File(path) => (file::read(path, None, &mut each)?, Closing::CaptureEnded),
        Source::FileUntil { path, stop } => match file::read(path, Some(stop), &mut each)? {
            d if d.stopped => (d, Closing::CaptureStopped),
            d => (d, Closing::CaptureEnded),
        },
        Source::Bytes { name, bytes } => (
            file::read_from(name, bytes, None, &mut each)?,
            Closing::CaptureEnded,
        ),
        Source::Live(live) => (live.read(&mut each)?, Closing::CaptureStopped),
    };
    let Packets {
        mut tracker, facts, ..
    } = packets;
    tracker.finish(facts.last.unwrap_or(0), still_open, &mut emit);
    let c = &tracker.counts;
    Ok(Facts {
        format: described.format,
        interfaces: described.interfaces,
        cut_short: described.cut_short,
        stopped: described.stopped,
        dropped: described.dropped,
        if_dropped: described.if_dropped,
        connections: tracker.connections(),
        retransmitted: c.retransmitted,
        out_of_order: c.out_of_order,
        gaps: c.gaps,
        missing_bytes: c.missing_bytes,
        found_ports: tracker.ports().to_vec(),
        ..facts
    })
}

/// The packet loop, whichever the source: each packet counted, decoded, and its TCP segment
/// handed to the reassembly if it is Redis's.
struct Packets {
    tracker: reassembly::Tracker,
    facts: Facts,
    /// With no port named, the connections weighed to find Redis's.
    discovery: Option<discover::Discovery>,
    /// A live capture's progress, kept up to date.
    tally: Option<Arc<Tally>>,
    /// Added to every stamp after a join (`Facts::joins`).
    shift: u64,
}

/// A stamp this much earlier than the one before it starts another capture joined on (clocks
/// of different interfaces disagree by far less; such a stamp counts as the one before it).
const JOINED_BACK_NS: u64 = 1_000_000_000;

impl Packets {
    fn new(origin: Origin, redis_ports: &[u16], tally: Option<Arc<Tally>>) -> Packets {
        Packets {
            tracker: reassembly::Tracker::new(redis_ports),
            facts: Facts {
                origin,
                format: "",
                interfaces: Vec::new(),
                packets: 0,
                bytes: 0,
                redis_segments: 0,
                connections: 0,
                retransmitted: 0,
                out_of_order: 0,
                gaps: 0,
                missing_bytes: 0,
                fragments: 0,
                other: 0,
                cut_short: false,
                stopped: false,
                dropped: 0,
                if_dropped: 0,
                joins: 0,
                first_join: None,
                found_ports: Vec::new(),
                first: None,
                last: None,
            },
            discovery: redis_ports.is_empty().then(discover::Discovery::default),
            tally,
            shift: 0,
        }
    }

    /// The packet's stamp, moved on past any joins.
    fn stamp(&mut self, p: &Packet<'_>) -> Stamp {
        let at = p.at_ns.saturating_add(self.shift);
        match self.facts.last {
            Some(last) if at.saturating_add(JOINED_BACK_NS) < last => {
                self.shift += last - at;
                self.facts.joins += 1;
                self.facts.first_join.get_or_insert(p.number);
                last
            }
            _ => at,
        }
    }

    fn take(&mut self, p: &Packet<'_>, emit: &mut dyn FnMut(Event)) -> Result<(), CaptureError> {
        let at = self.stamp(p);
        let facts = &mut self.facts;
        facts.packets += 1;
        facts.bytes += p.data.len() as u64;
        facts.first.get_or_insert(at);
        facts.last = Some(at);
        if let Some(t) = &self.tally {
            t.packets.store(facts.packets, Ordering::Relaxed);
        }
        if p.data.len() < p.original_len as usize {
            return self.cut_short(p);
        }
        match packet::decode(p.link, p.data) {
            Decoded::Tcp(seg) if self.tracker.is_redis(seg.src.port(), seg.dst.port()) => {
                self.follow(at, &seg, emit)
            }
            Decoded::Tcp(seg) if self.discovery.is_some() => {
                let discovery = self.discovery.as_mut().expect("checked");
                match discovery.offer(at, &seg) {
                    discover::Decision::Undecided => {}
                    discover::Decision::NotRedis(segments) => self.facts.other += segments,
                    discover::Decision::Redis(port, held) => {
                        self.tracker.add_port(port);
                        for h in &held {
                            self.follow(h.at, &h.segment(), emit);
                        }
                    }
                }
            }
            Decoded::Tcp(_) | Decoded::Other => self.facts.other += 1,
            Decoded::Fragment => self.facts.fragments += 1,
        }
        Ok(())
    }

    /// A segment of a Redis connection, to the reassembly.
    fn follow(&mut self, at: Stamp, seg: &packet::Segment<'_>, emit: &mut dyn FnMut(Event)) {
        self.facts.redis_segments += 1;
        self.tracker.segment(at, seg, emit);
        if let Some(t) = &self.tally {
            t.connections
                .store(self.tracker.connections(), Ordering::Relaxed);
        }
    }

    /// A packet cut short: refused when it is Redis's, or when too little is left to tell.
    fn cut_short(&mut self, p: &Packet<'_>) -> Result<(), CaptureError> {
        let ports = self.tracker.ports();
        let port = match packet::truncated_ports(p.link, p.data) {
            // Looking for Redis, a cut packet could be its: refused as a named port's is
            // (the server's port taken as the lower one).
            Some((a, b)) if self.discovery.is_some() && !self.tracker.is_redis(a, b) => a.min(b),
            Some((a, b)) if !self.tracker.is_redis(a, b) => {
                self.facts.other += 1;
                return Ok(());
            }
            Some((a, b)) => {
                if ports.contains(&a) {
                    a
                } else {
                    b
                }
            }
            None if ports.is_empty() => {
                self.facts.other += 1;
                return Ok(());
            }
            None => ports[0],
        };
        Err(CaptureError::Truncated {
            from: self.facts.origin.clone(),
            packet: p.number,
            port,
            captured: p.data.len(),
            original: p.original_len,
            snaplen: p.snaplen,
        })
    }
}
