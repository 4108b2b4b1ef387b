//! The traced events, and the classic tracepoints' records (`sched_waking`,
//! `tcp_rcv_space_adjust`) decoded by their ids and field offsets from tracefs's `format`
//! files, not hard-coded.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::TraceError;

/// Where tracefs is mounted; the tracepoints' ids and formats are read from it.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The classic tracepoint whose records `trace.bpf.c` copies whole, decoded here.
const TCP: (&str, &str) = ("tcp", "tcp_rcv_space_adjust");

/// One tracepoint's id and the offsets of the fields read from it.
#[derive(Debug, Clone)]
pub struct Format {
    pub id: u64,
    fields: HashMap<String, usize>,
}

impl Format {
    /// Reads `events/CATEGORY/NAME/format` under tracefs.
    pub fn read(category: &str, name: &str) -> Result<Format, TraceError> {
        let path = format!("{TRACEFS}/events/{category}/{name}/format");
        let text = std::fs::read_to_string(&path).map_err(|e| TraceError::Tracepoint {
            name: format!("{category}:{name}"),
            why: e.to_string(),
        })?;
        Format::parse(&text).ok_or_else(|| TraceError::Tracepoint {
            name: format!("{category}:{name}"),
            why: format!("{path} has no ID line"),
        })
    }

    /// `ID: 374` and lines like `field:pid_t pid; offset:24; size:4; signed:1;` (tab-separated).
    fn parse(text: &str) -> Option<Format> {
        let mut id = None;
        let mut fields = HashMap::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(n) = line.strip_prefix("ID:") {
                id = n.trim().parse().ok();
            }
            let Some(rest) = line.strip_prefix("field:") else {
                continue;
            };
            let mut parts = rest.split(';');
            let decl = parts.next()?.trim();
            // The name is the declaration's last word, less any array size: `__u8 saddr[4]`.
            let name = decl.rsplit(' ').next()?.split('[').next()?.to_string();
            let offset = parts
                .find_map(|p| p.trim().strip_prefix("offset:"))
                .and_then(|o| o.parse().ok())?;
            fields.insert(name, offset);
        }
        Some(Format { id: id?, fields })
    }

    fn at(&self, field: &str) -> Result<usize, TraceError> {
        self.fields
            .get(field)
            .copied()
            .ok_or_else(|| TraceError::Tracepoint {
                name: format!("tracepoint {}", self.id),
                why: format!("no field {field} in its format"),
            })
    }
}

/// Field offsets of the tracepoint's record, resolved once.
#[derive(Debug, Clone)]
pub struct Layout {
    sock_sport: usize,
    sock_dport: usize,
    sock_family: usize,
    sock_saddr: usize,
    sock_daddr: usize,
    sock_saddr_v6: usize,
    sock_daddr_v6: usize,
}

impl Layout {
    pub fn read() -> Result<Layout, TraceError> {
        let f = Format::read(TCP.0, TCP.1)?;
        Ok(Layout {
            sock_sport: f.at("sport")?,
            sock_dport: f.at("dport")?,
            sock_family: f.at("family")?,
            sock_saddr: f.at("saddr")?,
            sock_daddr: f.at("daddr")?,
            sock_saddr_v6: f.at("saddr_v6")?,
            sock_daddr_v6: f.at("daddr_v6")?,
        })
    }

    /// `tcp_rcv_space_adjust`'s record: the socket's addresses.
    pub fn tcp(&self, raw: &[u8]) -> Option<Event> {
        let u16_at = |o: usize| raw.get(o..o + 2).map(|b| u16::from_ne_bytes([b[0], b[1]]));
        let family = u16_at(self.sock_family)?;
        let ip = |v4: usize, v6: usize| -> Option<IpAddr> {
            Some(if family == libc::AF_INET6 as u16 {
                let b: [u8; 16] = raw.get(v6..v6 + 16)?.try_into().ok()?;
                let v6 = Ipv6Addr::from(b);
                // An IPv4 peer of an IPv6 socket, as the proxy and a capture name it.
                match v6.to_ipv4_mapped() {
                    Some(v4) => IpAddr::V4(v4),
                    None => IpAddr::V6(v6),
                }
            } else {
                let b: [u8; 4] = raw.get(v4..v4 + 4)?.try_into().ok()?;
                IpAddr::V4(Ipv4Addr::from(b))
            })
        };
        Some(Event::TcpAddrs {
            local: SocketAddr::new(
                ip(self.sock_saddr, self.sock_saddr_v6)?,
                u16_at(self.sock_sport)?,
            ),
            peer: SocketAddr::new(
                ip(self.sock_daddr, self.sock_daddr_v6)?,
                u16_at(self.sock_dport)?,
            ),
        })
    }
}

/// One traced event, in the context of thread `tid` of process `pid`.
#[derive(Debug, Clone)]
pub struct Record {
    /// CLOCK_MONOTONIC, ns.
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub event: Event,
}

#[derive(Debug, Clone)]
pub enum Event {
    /// A syscall entered, with its arguments.
    Enter { nr: i64, args: [u64; 6] },
    /// A syscall returned (a negative `ret` is -errno).
    Exit { nr: i64, ret: i64 },
    /// The CPU switched away from thread `prev`; `slept` unless it was only preempted.
    Switch { prev: u32, slept: bool },
    /// This thread woke thread `wakee`.
    Waking { wakee: u32 },
    /// A TCP socket read in this thread's syscall (`tcp_rcv_space_adjust`, which every
    /// TCP receive passes through), with its addresses.
    TcpAddrs { local: SocketAddr, peer: SocketAddr },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_file_gives_its_id_and_offsets() {
        let f = Format::parse(
            "name: inet_sock_set_state\nID: 2287\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:__u16 sport;\toffset:24;\tsize:2;\tsigned:0;\n\tfield:__u8 saddr_v6[16];\toffset:40;\tsize:16;\tsigned:0;\n",
        )
        .unwrap();
        assert_eq!(f.id, 2287);
        assert_eq!(f.at("sport").unwrap(), 24);
        assert_eq!(f.at("saddr_v6").unwrap(), 40);
        assert_eq!(f.at("common_type").unwrap(), 0);
        assert!(f.at("dport").is_err());
    }
}
