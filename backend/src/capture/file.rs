//! A capture file, packet by packet: pcap (micro- or nanosecond, either byte order) and pcapng
//! (any number of sections and interfaces, each with its own link type, snap length and clock
//! resolution), as tcpdump, tshark and Wireshark write them.
//!
//! `pcap-parser` reads the blocks through a fixed buffer, so a file of any size costs the same
//! memory; each packet is lent to the caller and gone when it returns.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use pcap_parser::pcapng::{Block, EnhancedPacketBlock};
use pcap_parser::{PcapBlockOwned, PcapError, create_reader};

use super::CaptureError;
use super::source::{Described, Link, Packet};

/// The reader's buffer: one whole block must fit (a packet of tcpdump's largest snap length,
/// 262,144 bytes, with room to spare).
const BUFFER: usize = 1 << 20;

/// One pcapng interface: what its packets' bytes and stamps mean.
struct Interface {
    link: Link,
    snaplen: u32,
    /// Stamp units per second, and seconds added to every stamp.
    per_second: u64,
    offset_s: i64,
}

/// Reads `path` packet by packet, handing each to `packet` in file order, until its end or
/// until `stop` is raised (then `Described::stopped`).
pub(super) fn read(
    path: &Path,
    stop: Option<&AtomicBool>,
    packet: impl FnMut(Packet<'_>) -> Result<(), CaptureError>,
) -> Result<Described, CaptureError> {
    read_from(path, super::unpack::open(path)?, stop, packet)
}

/// Reads the capture `file` (named `path` in the messages: a file's bytes a page sent are read
/// from memory) packet by packet, until its end or `stop`.
pub(super) fn read_from(
    path: &Path,
    file: impl Read + Send,
    stop: Option<&AtomicBool>,
    mut packet: impl FnMut(Packet<'_>) -> Result<(), CaptureError>,
) -> Result<Described, CaptureError> {
    let open = |cause: std::io::Error| CaptureError::Open {
        path: path.to_path_buf(),
        cause,
    };
    let file = super::unpack::unpacked(path, file)?;
    let mut reader = match create_reader(BUFFER, file) {
        Ok(r) => r,
        Err(PcapError::ReadError) => return Err(open(std::io::Error::other("read failed"))),
        Err(_) => {
            return Err(CaptureError::NotACapture {
                path: path.to_path_buf(),
            });
        }
    };
    let mut blocks = Blocks {
        path,
        facts: Described::default(),
        legacy: None,
        interfaces: Vec::new(),
        number: 0,
        last_ns: 0,
    };
    loop {
        // A relaxed load a block: Ctrl-C is seen within one block's reading.
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            blocks.facts.stopped = true;
            break;
        }
        let (offset, block) = match reader.next() {
            Ok(next) => next,
            Err(PcapError::Eof) => break,
            Err(PcapError::Incomplete(_)) => {
                reader
                    .refill()
                    .map_err(|_| open(std::io::Error::other("read failed")))?;
                continue;
            }
            Err(PcapError::UnexpectedEof) => {
                blocks.facts.cut_short = true;
                break;
            }
            Err(PcapError::BufferTooSmall) => {
                return Err(blocks.malformed(format!("a block larger than {BUFFER} bytes")));
            }
            Err(e) => return Err(blocks.malformed(format!("{e}"))),
        };
        blocks.take(block, &mut packet)?;
        reader.consume(offset);
    }
    Ok(blocks.facts)
}

/// What the blocks read so far say the next ones mean, and how many packets they held.
struct Blocks<'p> {
    path: &'p Path,
    facts: Described,
    /// Legacy pcap: one link type for the whole file, and whether stamps are in ns.
    legacy: Option<(Link, u32, bool)>,
    /// pcapng: the current section's interfaces, in order (a new section starts afresh).
    interfaces: Vec<Interface>,
    /// Packets handed over so far.
    number: u64,
    /// The latest packet's stamp, ns.
    last_ns: u64,
}

impl Blocks<'_> {
    /// Notes what `block` says about the file, or hands its packet to `packet`.
    fn take(
        &mut self,
        block: PcapBlockOwned<'_>,
        packet: &mut impl FnMut(Packet<'_>) -> Result<(), CaptureError>,
    ) -> Result<(), CaptureError> {
        match block {
            PcapBlockOwned::LegacyHeader(h) => {
                self.facts.format = "pcap";
                let link = Link::of(h.network);
                self.facts.interfaces.push((link, h.snaplen));
                self.legacy = Some((link, h.snaplen, h.is_nanosecond_precision()));
            }
            PcapBlockOwned::Legacy(b) => {
                let (link, snaplen, nanos) = self.legacy.ok_or_else(|| self.not_a_capture())?;
                let frac = if nanos { 1 } else { 1_000 };
                self.number += 1;
                self.last_ns = u64::from(b.ts_sec) * 1_000_000_000 + u64::from(b.ts_usec) * frac;
                packet(Packet {
                    number: self.number,
                    at_ns: self.last_ns,
                    link,
                    data: b.data,
                    original_len: b.origlen,
                    snaplen,
                })?;
            }
            PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                self.facts.format = "pcapng";
                self.interfaces.clear();
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                let link = Link::of(idb.linktype);
                self.facts.interfaces.push((link, idb.snaplen));
                self.interfaces.push(Interface {
                    link,
                    snaplen: idb.snaplen,
                    per_second: idb.ts_resolution().unwrap_or(1_000_000).max(1),
                    offset_s: idb.ts_offset(),
                });
            }
            PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => self.enhanced(&epb, packet)?,
            PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                // No stamp of its own: it gets the previous packet's.
                let i = self
                    .interfaces
                    .first()
                    .ok_or_else(|| self.not_a_capture())?;
                let caplen = if i.snaplen == 0 {
                    spb.origlen as usize
                } else {
                    (spb.origlen.min(i.snaplen)) as usize
                };
                self.number += 1;
                packet(Packet {
                    number: self.number,
                    at_ns: self.last_ns,
                    link: i.link,
                    data: &spb.data[..caplen.min(spb.data.len())],
                    original_len: spb.origlen,
                    snaplen: i.snaplen,
                })?;
            }
            // Statistics, name resolution, comments: nothing a connection needs.
            PcapBlockOwned::NG(_) => {}
        }
        Ok(())
    }

    /// A pcapng packet with its interface's stamp units and offset.
    fn enhanced(
        &mut self,
        epb: &EnhancedPacketBlock<'_>,
        packet: &mut impl FnMut(Packet<'_>) -> Result<(), CaptureError>,
    ) -> Result<(), CaptureError> {
        let Some(i) = self.interfaces.get(epb.if_id as usize) else {
            return Err(self.malformed(format!(
                "a packet on interface {} that was never described",
                epb.if_id
            )));
        };
        let stamp = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
        let ns = u128::from(stamp) * 1_000_000_000 / u128::from(i.per_second);
        let ns = (ns as i128 + i128::from(i.offset_s) * 1_000_000_000).max(0);
        let caplen = (epb.caplen as usize).min(epb.data.len());
        self.number += 1;
        self.last_ns = ns as u64;
        packet(Packet {
            number: self.number,
            at_ns: self.last_ns,
            link: i.link,
            data: &epb.data[..caplen],
            original_len: epb.origlen,
            snaplen: i.snaplen,
        })
    }

    /// The file is not one, or not one this reads.
    fn not_a_capture(&self) -> CaptureError {
        CaptureError::NotACapture {
            path: self.path.to_path_buf(),
        }
    }

    /// The next packet cannot be read, and why.
    fn malformed(&self, why: String) -> CaptureError {
        CaptureError::Malformed {
            path: self.path.to_path_buf(),
            packet: self.number + 1,
            why,
        }
    }
}
