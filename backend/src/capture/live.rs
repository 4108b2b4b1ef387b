//! An interface captured live through libpcap (the `pcap` crate): whole packets to or from a
//! Redis port (a BPF filter, applied in the kernel), handed over by the kernel a block at a
//! time (TPACKET_V3: when a block is full, or `BLOCK_MS` after its first packet), until the
//! stop flag is raised; then what was captured before the stop is read (the block open then
//! waited out). The handle is non-blocking and waited on here (`poll`, 100 ms at a time), so
//! the flag is seen however quiet the interface is (libpcap's own read timeout may wait on
//! for ever).
//!
//! Capturing needs CAP_NET_RAW: without it, or on an interface that does not exist, the
//! error says what to do (and which interfaces there are), not libpcap's bare words.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::CaptureError;
use super::source::{Described, Link, Packet};

/// Whole packets: libpcap's largest snap length (tcpdump's `-s 0`), above loopback's 64 KiB
/// MTU and the segments a network card merged (GRO).
const SNAPLEN: u32 = 262_144;
/// The kernel's ring of packets not yet read (libpcap's default is 2 MiB). Out of immediate
/// mode libpcap uses TPACKET_V3: blocks of 256 KiB, each holding packets of their own length,
/// so this is 256 blocks, enough for the reader to be held up for a second at K = 1 without
/// drops. It is mapped into the process, so it is most of the RSS. (Immediate mode's
/// TPACKET_V2 gives each packet a frame of the snap length, so a ring as large holds far
/// fewer packets: not used.)
const BUFFER: i32 = 64 << 20;
/// How long the kernel holds a partly filled block before handing it over (TPACKET_V3's block
/// timeout; libpcap's read timeout). The reader is woken per block, or at this timeout, not
/// per packet, which costs the capturing process a small fraction of immediate mode's CPU
/// and wake-ups; a longer timeout makes a slow trickle of packets fill fewer blocks, so the
/// ring holds more time of it (256 blocks × 100 ms: 25 s of a reader held up), and costs at
/// the stop, where the block open then is waited out (`SETTLE`). Packets' stamps are the
/// kernel's, taken as each packet is captured, not when its block is handed over.
const BLOCK_MS: i32 = 100;
/// How long a wait for a packet lasts before the stop flag is looked at again.
const WAIT_MS: i32 = 100;
/// Once stopped, reading goes on until a read finds nothing this long after the stop: a packet
/// captured just before it may sit in a partly filled block until the block timeout, and
/// kernels whose block timer retires a block only when it finds the same one open at two
/// firings in a row may take two timeouts: hence 2 × `BLOCK_MS` and a margin.
const SETTLE: Duration = Duration::from_millis(2 * BLOCK_MS as u64 + 100);
/// Once stopped, a packet stamped this long after the stop means every packet captured before
/// it has been read (a packet stamped on another CPU may come microseconds out of order).
const PAST_STOP_NS: u64 = 20_000_000;
/// Once stopped, reading ends after this long whatever is left (a reader far behind: reading
/// runs at ~3,000,000 packets/s, so the whole ring takes well under a second).
const DRAIN: Duration = Duration::from_secs(5);

/// How far a live capture has got, for progress while it runs.
#[derive(Debug, Default)]
pub struct Tally {
    pub packets: AtomicU64,
    pub connections: AtomicU64,
}

/// An interface being captured: open, filtered, not yet read.
pub struct Live {
    capture: pcap::Capture<pcap::Active>,
    interface: String,
    filter: String,
    link: Link,
    /// Stamps in ns (asked for; µs where libpcap could not give them).
    nanos: bool,
    stop: Arc<AtomicBool>,
    pub(super) tally: Arc<Tally>,
}

impl Live {
    /// Starts capturing on `interface` every TCP packet to or from one of `redis_ports` (none
    /// named: every TCP packet):
    /// from here on, packets are kept (in the kernel's buffer) until `read` takes them.
    pub fn open(interface: &str, redis_ports: &[u16]) -> Result<Live, CaptureError> {
        // No port named: every TCP packet, for Redis to be found among them.
        let filter = match redis_ports {
            [] => "tcp".to_string(),
            ports => ports
                .iter()
                .map(|p| format!("tcp port {p}"))
                .collect::<Vec<_>>()
                .join(" or "),
        };
        let devices = pcap::Device::list().map_err(|e| e.to_string());
        let known: Result<Vec<String>, String> = devices
            .as_ref()
            .map(|all| all.iter().map(|d| d.name.clone()).collect())
            .map_err(Clone::clone);
        if let Ok(names) = &known
            && !names.iter().any(|n| n == interface)
        {
            return Err(no_such(interface, &known));
        }
        let loopback = devices.as_ref().is_ok_and(|all| {
            all.iter()
                .any(|d| d.name == interface && d.flags.is_loopback())
        });
        let failed = |e: pcap::Error| refused(interface, &filter, &known, e);
        let mut capture = pcap::Capture::from_device(interface)
            .map_err(failed)?
            .snaplen(SNAPLEN as i32)
            .buffer_size(BUFFER)
            .timeout(BLOCK_MS)
            .precision(pcap::Precision::Nano)
            .open()
            .and_then(pcap::Capture::setnonblock)
            .map_err(failed)?;
        if loopback {
            ignore_sent_copies(&capture);
        }
        capture.filter(&filter, true).map_err(failed)?;
        let link = Link::of(pcap_parser::Linktype(capture.get_datalink().0));
        let nanos = nanosecond_stamps(&capture);
        Ok(Live {
            capture,
            interface: interface.to_string(),
            filter,
            link,
            nanos,
            stop: Arc::default(),
            tally: Arc::default(),
        })
    }

    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// The BPF filter it captures with: `tcp port P or tcp port Q`.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// Raised, the capture stops (after reading what was captured before it, which takes
    /// 0.3 s on a quiet interface: `SETTLE`); it is looked at after each packet, and at least
    /// every 100 ms.
    pub fn stopper(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Packets and connections so far, while `read` runs on another thread.
    pub fn tally(&self) -> Arc<Tally> {
        self.tally.clone()
    }

    /// Reads packets as they come, handing each to `packet`, until stopped; then every packet
    /// captured before the stop: until a read finds none once `SETTLE` has passed (the block
    /// open at the stop handed over), or a packet stamped after the stop comes (`PAST_STOP_NS`),
    /// or at most `DRAIN`.
    pub(super) fn read(
        &mut self,
        mut packet: impl FnMut(Packet<'_>) -> Result<(), CaptureError>,
    ) -> Result<Described, CaptureError> {
        let mut number = 0;
        // When the stop was seen, and the wall clock then (the packets' clock).
        let mut stopping: Option<(Instant, u64)> = None;
        loop {
            if stopping.is_none() && self.stop.load(Ordering::SeqCst) {
                stopping = Some((Instant::now(), wall_ns()));
            }
            if stopping.is_some_and(|(since, _)| since.elapsed() >= DRAIN) {
                break;
            }
            match self.capture.next_packet() {
                Ok(p) => {
                    let (s, frac) = (p.header.ts.tv_sec, p.header.ts.tv_usec);
                    let frac = frac.max(0) as u64 * if self.nanos { 1 } else { 1_000 };
                    let at_ns = s.max(0) as u64 * 1_000_000_000 + frac;
                    if stopping.is_some_and(|(_, wall)| at_ns > wall + PAST_STOP_NS) {
                        break;
                    }
                    number += 1;
                    packet(Packet {
                        number,
                        at_ns,
                        link: self.link,
                        data: p.data,
                        original_len: p.header.len,
                        snaplen: SNAPLEN,
                    })?;
                }
                // Nothing handed over: stopped long enough, that is the end; otherwise wait.
                Err(pcap::Error::TimeoutExpired) => match stopping {
                    Some((since, _)) if since.elapsed() >= SETTLE => break,
                    Some((since, _)) => self.wait(SETTLE.saturating_sub(since.elapsed()))?,
                    None => self.wait(Duration::from_millis(WAIT_MS as u64))?,
                },
                Err(pcap::Error::PcapError(e)) if e.contains("Interrupted system call") => {}
                Err(e) => {
                    return Err(CaptureError::Live {
                        interface: self.interface.clone(),
                        cause: e.to_string(),
                    });
                }
            }
        }
        let stats = self.capture.stats().ok();
        Ok(Described {
            format: "",
            interfaces: vec![(self.link, SNAPLEN)],
            cut_short: false,
            dropped: stats.as_ref().map_or(0, |s| u64::from(s.dropped)),
            if_dropped: stats.as_ref().map_or(0, |s| u64::from(s.if_dropped)),
        })
    }
}

impl Live {
    /// Until a packet may be there to read, at most `most` (and `WAIT_MS`).
    fn wait(&self, most: Duration) -> Result<(), CaptureError> {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd {
            fd: self.capture.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, alive for the call.
        let ms = (most.as_millis() as i32).clamp(1, WAIT_MS);
        let n = unsafe { libc::poll(&mut fd, 1, ms) };
        let e = std::io::Error::last_os_error();
        match n < 0 && e.kind() != std::io::ErrorKind::Interrupted {
            true => Err(CaptureError::Live {
                interface: self.interface.clone(),
                cause: format!("waiting for packets: {e}"),
            }),
            false => Ok(()),
        }
    }
}

/// The wall clock in ns since the epoch: the clock the kernel stamps packets with.
fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// On a loopback interface, has the kernel deliver each packet to the capture once, as
/// received, not also as sent (PACKET_IGNORE_OUTGOING, Linux ≥ 4.20). On `lo` every packet
/// is both sent and received: the kernel cloned the sent one to the capture socket, ran the
/// filter on it and copied it into the ring, only for libpcap to skip it when read (it keeps
/// the received copy, and its stamp, on loopback). The received copies are every packet, so
/// what is captured is unchanged, in half the ring and half the kernel's work for it.
/// libpcap 1.10.3's `pcap_setdirection(PCAP_D_IN)` only filters when reading; it does not ask
/// the kernel (no such setsockopt under strace), hence the socket option here. Loopback only:
/// on any other interface the packets this host sends exist only as sent copies, and would
/// all be lost. Where the kernel refuses, both copies come as before.
fn ignore_sent_copies(capture: &pcap::Capture<pcap::Active>) {
    use std::os::fd::AsRawFd;
    /// linux/if_packet.h
    const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
    let one: libc::c_int = 1;
    // SAFETY: the capture's socket, open while `capture` is borrowed; one int, alive for the
    // call.
    let done = unsafe {
        libc::setsockopt(
            capture.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            (&raw const one).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if done != 0 {
        tracing::debug!(
            error = %std::io::Error::last_os_error(),
            "PACKET_IGNORE_OUTGOING refused: lo's sent copies are captured and skipped"
        );
    }
}

fn no_such(interface: &str, known: &Result<Vec<String>, String>) -> CaptureError {
    CaptureError::NoSuchInterface {
        interface: interface.to_string(),
        known: match known {
            Ok(names) if names.is_empty() => "libpcap lists none here".into(),
            Ok(names) => format!("the interfaces here are {}", names.join(", ")),
            Err(e) => format!("libpcap could not list the interfaces: {e}"),
        },
    }
}

/// libpcap's refusal to open or filter, said as what to do about it.
pub(crate) fn refused(
    interface: &str,
    filter: &str,
    known: &Result<Vec<String>, String>,
    e: pcap::Error,
) -> CaptureError {
    let cause = e.to_string();
    let lower = cause.to_lowercase();
    if lower.contains("permission") || lower.contains("not permitted") {
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "$(command -v pipescope)".into());
        return CaptureError::NoPermission {
            interface: interface.to_string(),
            filter: filter.to_string(),
            exe,
            cause,
        };
    }
    if lower.contains("no such device") {
        return no_such(interface, known);
    }
    CaptureError::Live {
        interface: interface.to_string(),
        cause,
    }
}

/// Whether libpcap gives this capture's stamps in ns, as asked (it may fall back to µs).
fn nanosecond_stamps(capture: &pcap::Capture<pcap::Active>) -> bool {
    unsafe extern "C" {
        // libpcap ≥ 1.5, which the `pcap` crate links: PCAP_TSTAMP_PRECISION_NANO is 1.
        fn pcap_get_tstamp_precision(p: *mut std::ffi::c_void) -> std::ffi::c_int;
    }
    // SAFETY: the handle is open for as long as `capture` is borrowed.
    unsafe { pcap_get_tstamp_precision(capture.as_ptr().cast()) == 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpcaps_refusals_are_said_as_what_to_do() {
        let known = Ok(vec!["lo".to_string(), "eth0".to_string()]);
        let said = |interface: &str, cause: &str| {
            refused(
                interface,
                "tcp port 6379",
                &known,
                pcap::Error::PcapError(cause.into()),
            )
        };
        let denied = said("lo", "socket: Operation not permitted");
        assert!(
            matches!(denied, CaptureError::NoPermission { .. }),
            "{denied}"
        );
        let text = denied.to_string();
        assert!(text.starts_with("live capture needs CAP_NET_RAW"), "{text}");
        assert!(
            text.contains("sudo setcap cap_net_raw,cap_net_admin=eip /"),
            "{text}"
        );
        assert!(
            text.contains("sudo tcpdump -i lo -s 0 -w redis.pcap 'tcp port 6379'"),
            "{text}"
        );
        let gone = said("eth9", "SIOCGIFHWADDR: No such device").to_string();
        assert!(gone.contains("no interface \"eth9\""), "{gone}");
        assert!(gone.contains("the interfaces here are lo, eth0"), "{gone}");
        let other = said("lo", "something else");
        assert!(matches!(other, CaptureError::Live { .. }), "{other}");
    }
}
