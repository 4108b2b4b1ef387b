//! Captures written byte by byte: a TCP conversation between a client and Redis as packets
//! (headers by etherparse, link headers by hand), stored as pcap or pcapng.

use std::net::SocketAddr;

use etherparse::PacketBuilder;

// Link types (tcpdump.org/linktypes.html).
pub const ETHERNET: u16 = 1;
pub const NULL: u16 = 0;
pub const RAW: u16 = 101;
pub const SLL2: u16 = 276;

/// One RESP command.
pub fn cmd(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

pub fn set(k: usize) -> Vec<u8> {
    cmd(&["SET", &format!("k{k}"), "value"])
}

pub const OK: &[u8] = b"+OK\r\n";

/// A captured packet: which interface, when (ns), its bytes.
pub struct Frame {
    pub interface: u32,
    pub ns: u64,
    pub data: Vec<u8>,
}

/// One TCP connection between a client and Redis, written as packets on one interface.
pub struct Conv {
    pub client: SocketAddr,
    pub redis: SocketAddr,
    pub link: u16,
    pub interface: u32,
    pub cseq: u32,
    pub rseq: u32,
    pub ns: u64,
    pub frames: Vec<Frame>,
}

impl Conv {
    pub fn new(client: &str, redis: &str, link: u16) -> Conv {
        Conv {
            client: client.parse().unwrap(),
            redis: redis.parse().unwrap(),
            link,
            interface: 0,
            // Near the wrap, so sequence numbers wrap within the test.
            cseq: u32::MAX - 20,
            rseq: 1_000,
            ns: 1_700_000_000_000_000_000,
            frames: Vec::new(),
        }
    }

    /// A segment's packet, link header included.
    pub fn packet(&self, from_client: bool, seq: u32, flags: &str, payload: &[u8]) -> Vec<u8> {
        let (src, dst) = if from_client {
            (self.client, self.redis)
        } else {
            (self.redis, self.client)
        };
        let ip = match (src.ip(), dst.ip()) {
            (std::net::IpAddr::V4(s), std::net::IpAddr::V4(d)) => {
                PacketBuilder::ipv4(s.octets(), d.octets(), 64)
            }
            (std::net::IpAddr::V6(s), std::net::IpAddr::V6(d)) => {
                PacketBuilder::ipv6(s.octets(), d.octets(), 64)
            }
            _ => unreachable!(),
        };
        let mut tcp = ip.tcp(src.port(), dst.port(), seq, 65_535);
        if flags.contains('S') {
            tcp = tcp.syn();
        }
        if flags.contains('F') {
            tcp = tcp.fin();
        }
        if flags.contains('R') {
            tcp = tcp.rst();
        }
        if !(flags.contains('R') || flags == "S" && from_client) {
            tcp = tcp.ack(if from_client { self.rseq } else { self.cseq });
        }
        let mut ip_packet = Vec::new();
        tcp.write(&mut ip_packet, payload).unwrap();
        let v6 = src.is_ipv6();
        let mut out = Vec::new();
        match self.link {
            ETHERNET => {
                out.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
                out.extend_from_slice(if v6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
            }
            SLL2 => {
                out.extend_from_slice(if v6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
                out.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 1, 4, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            }
            NULL => out.extend_from_slice(&(if v6 { 10u32 } else { 2 }).to_le_bytes()),
            _ => {}
        }
        out.extend_from_slice(&ip_packet);
        out
    }

    pub fn push(&mut self, data: Vec<u8>) {
        self.ns += 20_000;
        self.frames.push(Frame {
            interface: self.interface,
            ns: self.ns,
            data,
        });
    }

    /// SYN, SYN-ACK, ACK.
    pub fn open(&mut self) {
        let syn = self.packet(true, self.cseq, "S", b"");
        self.push(syn);
        self.cseq = self.cseq.wrapping_add(1);
        let syn_ack = self.packet(false, self.rseq, "S", b"");
        self.push(syn_ack);
        self.rseq = self.rseq.wrapping_add(1);
        let ack = self.packet(true, self.cseq, "", b"");
        self.push(ack);
    }

    /// The client's segment carrying `bytes`, made (not yet captured).
    pub fn client_segment(&mut self, bytes: &[u8]) -> Vec<u8> {
        let p = self.packet(true, self.cseq, "P", bytes);
        self.cseq = self.cseq.wrapping_add(bytes.len() as u32);
        p
    }

    pub fn redis_segment(&mut self, bytes: &[u8]) -> Vec<u8> {
        let p = self.packet(false, self.rseq, "P", bytes);
        self.rseq = self.rseq.wrapping_add(bytes.len() as u32);
        p
    }

    pub fn send(&mut self, bytes: &[u8]) {
        let p = self.client_segment(bytes);
        self.push(p);
    }

    pub fn reply(&mut self, bytes: &[u8]) {
        let p = self.redis_segment(bytes);
        self.push(p);
    }

    /// `k` SETs one at a time, each in its own segment and answered.
    pub fn one_at_a_time(&mut self, k: usize) {
        for i in 0..k {
            self.send(&set(i));
            self.reply(OK);
        }
    }

    /// FIN from one side, FIN from the other, the last ACK.
    pub fn close(&mut self, client_first: bool) {
        for from_client in [client_first, !client_first] {
            let seq = if from_client { self.cseq } else { self.rseq };
            let fin = self.packet(from_client, seq, "F", b"");
            self.push(fin);
            if from_client {
                self.cseq = self.cseq.wrapping_add(1);
            } else {
                self.rseq = self.rseq.wrapping_add(1);
            }
        }
        let ack = self.packet(
            client_first,
            if client_first { self.cseq } else { self.rseq },
            "",
            b"",
        );
        self.push(ack);
    }

    pub fn reset(&mut self, by_client: bool) {
        let seq = if by_client { self.cseq } else { self.rseq };
        let rst = self.packet(by_client, seq, "R", b"");
        self.push(rst);
    }
}

/// A pcap file (microsecond stamps, little-endian), each packet cut to `snaplen`.
pub fn pcap(link: u16, snaplen: u32, frames: &[Frame]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&snaplen.to_le_bytes());
    out.extend_from_slice(&u32::from(link).to_le_bytes());
    for f in frames {
        let caplen = f.data.len().min(snaplen as usize);
        out.extend_from_slice(&((f.ns / 1_000_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((f.ns % 1_000_000_000 / 1_000) as u32).to_le_bytes());
        out.extend_from_slice(&(caplen as u32).to_le_bytes());
        out.extend_from_slice(&(f.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&f.data[..caplen]);
    }
    out
}

/// A pcapng block: type, length, body (padded to 4 bytes), length.
pub fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let padded = body.len().div_ceil(4) * 4;
    let len = (12 + padded) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(body);
    out.resize(8 + padded, 0);
    out.extend_from_slice(&len.to_le_bytes());
    out
}

/// A pcapng file: one section, `interfaces` as (link type, stamp units: 6 for µs, 9 for ns),
/// then each frame on its interface.
pub fn pcapng(interfaces: &[(u16, u8)], frames: &[Frame]) -> Vec<u8> {
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut out = block(0x0a0d_0d0a, &shb);
    for &(link, tsresol) in interfaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&link.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&262_144u32.to_le_bytes());
        // if_tsresol (option 9, one byte, padded), then the end of options.
        idb.extend_from_slice(&[9, 0, 1, 0, tsresol, 0, 0, 0, 0, 0, 0, 0]);
        out.extend(block(1, &idb));
    }
    for f in frames {
        let tsresol = interfaces[f.interface as usize].1;
        let stamp = f.ns / 10u64.pow(9 - u32::from(tsresol));
        let mut epb = Vec::new();
        epb.extend_from_slice(&f.interface.to_le_bytes());
        epb.extend_from_slice(&((stamp >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(stamp as u32).to_le_bytes());
        epb.extend_from_slice(&(f.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(f.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&f.data);
        out.extend(block(6, &epb));
    }
    out
}
