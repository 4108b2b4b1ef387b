//! What a packet source (a capture file, `file`; an interface captured live, `live`) hands
//! the packet loop: each packet with its link type and the capture host's stamp, and what the
//! source said about itself.

use pcap_parser::Linktype;

/// How a packet's bytes begin, from its interface's link type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Ethernet,
    /// Linux "cooked" capture (`tcpdump -i any`), version 1: a 16-byte header.
    LinuxSll,
    /// Version 2 (libpcap ≥ 1.10's `-i any`): a 20-byte header.
    LinuxSll2,
    /// BSD loopback: a 4-byte address family, in the capturing host's byte order (NULL) or
    /// big-endian (LOOP).
    Null,
    /// The IP header first.
    Raw,
    /// Any other link type: its packets are counted, not read.
    Other(i32),
}

impl Link {
    /// The link type a file or libpcap names (the same numbers, tcpdump.org's LINKTYPE_*).
    pub(super) fn of(linktype: Linktype) -> Link {
        match linktype {
            Linktype::ETHERNET => Link::Ethernet,
            Linktype::LINUX_SLL => Link::LinuxSll,
            Linktype::LINUX_SLL2 => Link::LinuxSll2,
            Linktype::NULL | Linktype::LOOP => Link::Null,
            Linktype::RAW | Linktype::IPV4 | Linktype::IPV6 => Link::Raw,
            Linktype(n) => Link::Other(n),
        }
    }

    pub fn name(self) -> String {
        match self {
            Link::Ethernet => "Ethernet".into(),
            Link::LinuxSll => "Linux cooked (SLL)".into(),
            Link::LinuxSll2 => "Linux cooked v2 (SLL2)".into(),
            Link::Null => "BSD loopback (NULL)".into(),
            Link::Raw => "raw IP".into(),
            Link::Other(n) => format!("link type {n}"),
        }
    }
}

/// One captured packet, lent while the caller looks at it.
pub struct Packet<'a> {
    /// Counted from 1 in capture order, as Wireshark numbers them.
    pub number: u64,
    /// Capture time, ns since the Unix epoch (the capture host's clock).
    pub at_ns: u64,
    pub link: Link,
    /// The bytes captured: all of the packet unless the snap length cut it.
    pub data: &'a [u8],
    /// The packet's length on the wire.
    pub original_len: u32,
    /// The interface's snap length (0: none given).
    pub snaplen: u32,
}

/// What the source said about itself.
#[derive(Debug, Clone, Default)]
pub struct Described {
    /// "pcap" or "pcapng" for a file; empty for a live capture.
    pub format: &'static str,
    /// Each interface's link type and snap length, in the order the source described them.
    pub interfaces: Vec<(Link, u32)>,
    /// The file ended inside a packet (a capture stopped while writing it): that packet is
    /// not read.
    pub cut_short: bool,
    /// A file's reading was stopped before its end (Ctrl-C): what was read is all there is.
    pub stopped: bool,
    /// A live capture: packets libpcap dropped because its buffer was full (the kernel's
    /// count), and ones the interface or its driver dropped.
    pub dropped: u64,
    pub if_dropped: u64,
}
