//! An interface captured live through libpcap (the `pcap` crate): whole packets to or from a
//! Redis port (a BPF filter, applied in the kernel), in immediate mode (each packet handed
//! over as it arrives), until the stop flag is raised; then what is still buffered is read.
//! The handle is non-blocking and waited on here (`poll`, 100 ms at a time), so the flag is
//! seen however quiet the interface is (libpcap's own read timeout may wait on for ever).
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
/// The kernel's buffer of packets not yet read (libpcap's default is 2 MiB). In immediate mode
/// each packet takes a frame of the snap length, so this holds 1,024 packets: 32 MiB (128)
/// dropped part of a burst of 1,000 SETs on `lo` in 7 runs of 12 while other processes kept
/// the CPUs busy; 256 MiB dropped none in 12 such runs.
const BUFFER: i32 = 256 << 20;
/// How long a wait for a packet lasts before the stop flag is looked at again.
const WAIT_MS: i32 = 100;
/// Once stopped, the packets still buffered are read: until a read finds none, at most this.
const DRAIN: Duration = Duration::from_secs(1);

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
    /// Starts capturing on `interface` every TCP packet to or from one of `redis_ports`:
    /// from here on, packets are kept (in the kernel's buffer) until `read` takes them.
    pub fn open(interface: &str, redis_ports: &[u16]) -> Result<Live, CaptureError> {
        let filter = redis_ports
            .iter()
            .map(|p| format!("tcp port {p}"))
            .collect::<Vec<_>>()
            .join(" or ");
        let known = interfaces();
        if let Ok(names) = &known
            && !names.iter().any(|n| n == interface)
        {
            return Err(no_such(interface, &known));
        }
        let failed = |e: pcap::Error| refused(interface, &filter, &known, e);
        let mut capture = pcap::Capture::from_device(interface)
            .map_err(failed)?
            .snaplen(SNAPLEN as i32)
            .immediate_mode(true)
            .buffer_size(BUFFER)
            .timeout(WAIT_MS)
            .precision(pcap::Precision::Nano)
            .open()
            .and_then(pcap::Capture::setnonblock)
            .map_err(failed)?;
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

    /// Raised, the capture stops (after reading what is buffered); it is looked at after each
    /// packet, and at least every 100 ms.
    pub fn stopper(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Packets and connections so far, while `read` runs on another thread.
    pub fn tally(&self) -> Arc<Tally> {
        self.tally.clone()
    }

    /// Reads packets as they come, handing each to `packet`, until stopped.
    pub(super) fn read(
        &mut self,
        mut packet: impl FnMut(Packet<'_>) -> Result<(), CaptureError>,
    ) -> Result<Described, CaptureError> {
        let mut number = 0;
        let mut stopping: Option<Instant> = None;
        loop {
            if stopping.is_none() && self.stop.load(Ordering::SeqCst) {
                stopping = Some(Instant::now());
            }
            if stopping.is_some_and(|since| since.elapsed() >= DRAIN) {
                break;
            }
            match self.capture.next_packet() {
                Ok(p) => {
                    number += 1;
                    let (s, frac) = (p.header.ts.tv_sec, p.header.ts.tv_usec);
                    let frac = frac.max(0) as u64 * if self.nanos { 1 } else { 1_000 };
                    packet(Packet {
                        number,
                        at_ns: s.max(0) as u64 * 1_000_000_000 + frac,
                        link: self.link,
                        data: p.data,
                        original_len: p.header.len,
                        snaplen: SNAPLEN,
                    })?;
                }
                // Nothing buffered: stopped, that is the end; otherwise wait for more.
                Err(pcap::Error::TimeoutExpired) if stopping.is_some() => break,
                Err(pcap::Error::TimeoutExpired) => self.wait()?,
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
    /// Until a packet may be there to read, at most `WAIT_MS`.
    fn wait(&self) -> Result<(), CaptureError> {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd {
            fd: self.capture.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, alive for the call.
        let n = unsafe { libc::poll(&mut fd, 1, WAIT_MS) };
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

/// The interfaces libpcap can capture on, by name.
fn interfaces() -> Result<Vec<String>, String> {
    pcap::Device::list()
        .map(|all| all.into_iter().map(|d| d.name).collect())
        .map_err(|e| e.to_string())
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
