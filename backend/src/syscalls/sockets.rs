//! A process's TCP sockets as /proc shows them when tracing begins: each descriptor's socket
//! inode (/proc/PID/fd), its addresses (/proc/PID/net/tcp and tcp6) and whether it is in
//! non-blocking mode (/proc/PID/fdinfo). Sockets connected later are named by the `connect`
//! the trace sees.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Whether reads on a descriptor block, as far as the trace knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Blocking,
    Nonblocking,
    Unknown,
}

impl Mode {
    pub fn known(nonblocking: bool) -> Mode {
        if nonblocking {
            Mode::Nonblocking
        } else {
            Mode::Blocking
        }
    }

    pub fn flipped(self) -> Mode {
        match self {
            Mode::Blocking => Mode::Nonblocking,
            Mode::Nonblocking => Mode::Blocking,
            Mode::Unknown => Mode::Unknown,
        }
    }
}

/// A connected TCP socket found under /proc.
#[derive(Debug, Clone)]
pub struct Known {
    pub pid: u32,
    pub fd: i64,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    pub mode: Mode,
}

/// The TCP sockets process `pid` holds now (none if it is gone).
pub fn of_process(pid: u32) -> Vec<Known> {
    let mut by_inode = HashMap::new();
    for table in ["tcp", "tcp6"] {
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) {
            by_inode.extend(parse_table(&text));
        }
    }
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<i64>() else {
            continue;
        };
        let Ok(link) = std::fs::read_link(entry.path()) else {
            continue;
        };
        let link = link.to_string_lossy();
        let Some(inode) = link
            .strip_prefix("socket:[")
            .and_then(|l| l.strip_suffix(']'))
            .and_then(|i| i.parse::<u64>().ok())
        else {
            continue;
        };
        let Some(&(local, peer)) = by_inode.get(&inode) else {
            continue;
        };
        let mode = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
            .ok()
            .and_then(|info| {
                info.lines()
                    .find_map(|l| l.strip_prefix("flags:"))
                    .and_then(|f| u64::from_str_radix(f.trim(), 8).ok())
            })
            .map(|flags| Mode::known(flags & 0o4000 != 0))
            .unwrap_or(Mode::Unknown);
        found.push(Known {
            pid,
            fd,
            local,
            peer,
            mode,
        });
    }
    found
}

/// /proc/net/tcp or tcp6: inode → (local, remote) of each connection with a peer.
fn parse_table(text: &str) -> HashMap<u64, (SocketAddr, SocketAddr)> {
    let mut out = HashMap::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 10 {
            continue;
        }
        let (Some(local), Some(peer), Ok(inode)) = (
            parse_addr(cols[1]),
            parse_addr(cols[2]),
            cols[9].parse::<u64>(),
        ) else {
            continue;
        };
        if peer.port() != 0 && inode != 0 {
            out.insert(inode, (local, peer));
        }
    }
    out
}

/// "0100007F:1F90" (IPv4, its 32 bits in host order) or 32 hex digits (IPv6, four 32-bit
/// words in host order), then the port.
fn parse_addr(s: &str) -> Option<SocketAddr> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |k: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(ip.get(8 * k..8 * k + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for k in 0..4 {
                b[4 * k..4 * k + 4].copy_from_slice(&word(k)?);
            }
            let v6 = Ipv6Addr::from(b);
            // An IPv4 peer of an IPv6 socket, as the proxy and a capture name it.
            match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(v6),
            }
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_net_tcp_addresses_read_as_the_kernel_writes_them() {
        assert_eq!(
            parse_addr("0100007F:1F90").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert_eq!(
            parse_addr("00000000000000000000000001000000:1F90").unwrap(),
            "[::1]:8080".parse().unwrap()
        );
        assert_eq!(
            parse_addr("0000000000000000FFFF00000100007F:0050").unwrap(),
            "127.0.0.1:80".parse().unwrap()
        );
    }
}
