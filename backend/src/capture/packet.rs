//! One packet's bytes to a TCP segment: the link header stripped by its type, then the IP
//! (v4 or v6, extension headers and VLAN tags included) and TCP headers read by `etherparse`.

use std::net::{IpAddr, SocketAddr};

use etherparse::{EtherType, LaxSlicedPacket, NetSlice, SlicedPacket, TransportSlice};

use super::source::Link;

/// A TCP segment as captured.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    /// The acknowledgement number, when the ACK flag is set.
    pub ack: Option<u32>,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    /// The window field as sent (scaled by the sender's window scale, except in a SYN).
    pub window: u16,
    /// The window scale option, in a SYN or SYN-ACK that carries one.
    pub window_scale: Option<u8>,
    /// The maximum segment size option, likewise.
    pub mss: Option<u16>,
    pub payload: &'a [u8],
}

/// What a packet turned out to be.
pub enum Decoded<'a> {
    Tcp(Segment<'a>),
    /// A piece of a fragmented IP packet: its TCP header may be elsewhere (not reassembled).
    Fragment,
    /// Not TCP over IP (ARP, UDP, ICMP, another link type), or unreadable.
    Other,
}

/// Where the network layer starts, once the link header is stripped.
enum Below<'a> {
    Ethernet(&'a [u8]),
    EtherType(EtherType, &'a [u8]),
    Ip(&'a [u8]),
}

fn strip(link: Link, data: &[u8]) -> Option<Below<'_>> {
    Some(match link {
        Link::Ethernet => Below::Ethernet(data),
        // SLL: the protocol (an EtherType) is the header's last two bytes, at 14.
        Link::LinuxSll if data.len() >= 16 => {
            Below::EtherType(ether_type(&data[14..16]), &data[16..])
        }
        // SLL2: the protocol comes first; the header is 20 bytes.
        Link::LinuxSll2 if data.len() >= 20 => {
            Below::EtherType(ether_type(&data[0..2]), &data[20..])
        }
        // The address family's byte order depends on the capturing host; the IP header's
        // version nibble says all that is needed.
        Link::Null if data.len() >= 4 => Below::Ip(&data[4..]),
        Link::Raw => Below::Ip(data),
        _ => return None,
    })
}

/// Reads `data`, captured on a `link` interface.
pub fn decode(link: Link, data: &[u8]) -> Decoded<'_> {
    let sliced = match strip(link, data) {
        Some(Below::Ethernet(d)) => SlicedPacket::from_ethernet(d),
        Some(Below::EtherType(t, d)) => SlicedPacket::from_ether_type(t, d),
        Some(Below::Ip(d)) => SlicedPacket::from_ip(d),
        None => return Decoded::Other,
    };
    let Ok(p) = sliced else {
        return Decoded::Other;
    };
    let (src, dst, fragmented) = match &p.net {
        Some(NetSlice::Ipv4(ip)) => (
            IpAddr::V4(ip.header().source_addr()),
            IpAddr::V4(ip.header().destination_addr()),
            ip.is_payload_fragmented(),
        ),
        Some(NetSlice::Ipv6(ip)) => (
            IpAddr::V6(ip.header().source_addr()),
            IpAddr::V6(ip.header().destination_addr()),
            ip.is_payload_fragmented(),
        ),
        _ => return Decoded::Other,
    };
    match &p.transport {
        Some(TransportSlice::Tcp(tcp)) => Decoded::Tcp(Segment {
            src: SocketAddr::new(src, tcp.source_port()),
            dst: SocketAddr::new(dst, tcp.destination_port()),
            seq: tcp.sequence_number(),
            ack: tcp.ack().then(|| tcp.acknowledgment_number()),
            syn: tcp.syn(),
            fin: tcp.fin(),
            rst: tcp.rst(),
            window: tcp.window_size(),
            window_scale: tcp
                .syn()
                .then(|| {
                    tcp.options_iterator().find_map(|o| match o {
                        Ok(etherparse::TcpOptionElement::WindowScale(shift)) => Some(shift),
                        _ => None,
                    })
                })
                .flatten(),
            mss: tcp
                .syn()
                .then(|| {
                    tcp.options_iterator().find_map(|o| match o {
                        Ok(etherparse::TcpOptionElement::MaximumSegmentSize(mss)) => Some(mss),
                        _ => None,
                    })
                })
                .flatten(),
            payload: tcp.payload(),
        }),
        _ if fragmented => Decoded::Fragment,
        _ => Decoded::Other,
    }
}

/// The TCP ports of a packet whose end a snap length cut off, when its headers survived.
pub fn truncated_ports(link: Link, data: &[u8]) -> Option<(u16, u16)> {
    let p = match strip(link, data)? {
        Below::Ethernet(d) => LaxSlicedPacket::from_ethernet(d).ok()?,
        Below::EtherType(t, d) => LaxSlicedPacket::from_ether_type(t, d),
        Below::Ip(d) => LaxSlicedPacket::from_ip(d).ok()?,
    };
    match p.transport? {
        TransportSlice::Tcp(tcp) => Some((tcp.source_port(), tcp.destination_port())),
        _ => None,
    }
}

fn ether_type(two: &[u8]) -> EtherType {
    EtherType(u16::from_be_bytes([two[0], two[1]]))
}
