//! The records `trace.bpf.c` writes into its ring buffer, decoded: a 24-byte header (kind,
//! pid, tid, unused length, CLOCK_MONOTONIC time) and the kind's fields. A record may stand
//! for more than one event: a whole syscall (its entry and return), or a return after which
//! the thread had slept.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::events::{Event, Record};

const ENTER: u32 = 1;
const EXIT: u32 = 2;
const WAKING: u32 = 4;
const TCP: u32 = 5;
const CALL: u32 = 6;
const HEADER: usize = 24;
const AF_INET6: u16 = 10;

/// The events of one record from the ring buffer, in time order, appended to `out`; nothing
/// for a record it cannot read.
pub fn decode(rec: &[u8], out: &mut Vec<Record>) {
    let _ = events(rec, out);
}

/// `decode`'s work: `None` where the record is cut short.
fn events(rec: &[u8], out: &mut Vec<Record>) -> Option<()> {
    let u16_at = |o: usize| {
        rec.get(o..o + 2)
            .map(|b| u16::from_ne_bytes(b.try_into().unwrap()))
    };
    let u32_at = |o: usize| {
        rec.get(o..o + 4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
    };
    let i64_at = |o: usize| {
        rec.get(o..o + 8)
            .map(|b| i64::from_ne_bytes(b.try_into().unwrap()))
    };
    let (kind, pid, tid) = (u32_at(0)?, u32_at(4)?, u32_at(8)?);
    let time = i64_at(16)? as u64;
    let at = |time: u64, event: Event| Record {
        time,
        pid,
        tid,
        event,
    };
    let args = || -> Option<[u64; 6]> {
        let mut args = [0u64; 6];
        for (k, a) in args.iter_mut().enumerate() {
            *a = i64_at(HEADER + 8 + 8 * k)? as u64;
        }
        Some(args)
    };
    match kind {
        CALL => {
            let nr = i64_at(HEADER)?;
            let (enter, ret) = (i64_at(HEADER + 56)? as u64, i64_at(HEADER + 64)?);
            out.push(at(enter, Event::Enter { nr, args: args()? }));
            out.push(at(time, Event::Exit { nr, ret }));
        }
        ENTER => out.push(at(
            time,
            Event::Enter {
                nr: i64_at(HEADER)?,
                args: args()?,
            },
        )),
        EXIT => {
            let (nr, ret, slept) = (i64_at(HEADER)?, i64_at(HEADER + 8)?, i64_at(HEADER + 16)?);
            if slept != 0 {
                out.push(at(
                    time,
                    Event::Switch {
                        prev: tid,
                        slept: true,
                    },
                ));
            }
            out.push(at(time, Event::Exit { nr, ret }));
        }
        WAKING => out.push(at(
            time,
            Event::Waking {
                wakee: u32_at(HEADER)?,
            },
        )),
        TCP => {
            let (family, sport, dport) =
                (u16_at(HEADER)?, u16_at(HEADER + 2)?, u16_at(HEADER + 4)?);
            let ip = |o: usize| -> Option<IpAddr> {
                Some(if family == AF_INET6 {
                    let b: [u8; 16] = rec.get(o..o + 16)?.try_into().ok()?;
                    let v6 = Ipv6Addr::from(b);
                    // An IPv4 peer of an IPv6 socket, as the proxy and a capture name it.
                    match v6.to_ipv4_mapped() {
                        Some(v4) => IpAddr::V4(v4),
                        None => IpAddr::V6(v6),
                    }
                } else {
                    let b: [u8; 4] = rec.get(o..o + 4)?.try_into().ok()?;
                    IpAddr::V4(Ipv4Addr::from(b))
                })
            };
            out.push(at(
                time,
                Event::TcpAddrs {
                    local: SocketAddr::new(ip(HEADER + 8)?, sport),
                    peer: SocketAddr::new(ip(HEADER + 24)?, dport),
                },
            ));
        }
        _ => {}
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u32, pid: u32, tid: u32, time: u64) -> Vec<u8> {
        let mut r = Vec::new();
        for v in [kind, pid, tid, 0] {
            r.extend(v.to_ne_bytes());
        }
        r.extend(time.to_ne_bytes());
        r
    }

    fn decoded(rec: &[u8]) -> Vec<Record> {
        let mut out = Vec::new();
        decode(rec, &mut out);
        out
    }

    #[test]
    fn a_whole_call_is_its_entry_then_its_return_each_at_its_time() {
        let mut rec = header(CALL, 7, 8, 5_000);
        rec.extend(44i64.to_ne_bytes());
        for a in [3u64, 0x1000, 14, 0, 0, 0] {
            rec.extend(a.to_ne_bytes());
        }
        rec.extend(4_000u64.to_ne_bytes());
        rec.extend(14i64.to_ne_bytes());
        let got = decoded(&rec);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].time, got[0].pid, got[0].tid), (4_000, 7, 8));
        assert!(
            matches!(got[0].event, Event::Enter { nr: 44, args } if args[..3] == [3, 0x1000, 14])
        );
        assert_eq!(got[1].time, 5_000);
        assert!(matches!(got[1].event, Event::Exit { nr: 44, ret: 14 }));
    }

    #[test]
    fn a_return_after_sleeping_says_so_first() {
        let mut rec = header(EXIT, 7, 9, 6_000);
        for v in [232i64, 1, 1] {
            rec.extend(v.to_ne_bytes());
        }
        let got = decoded(&rec);
        assert_eq!(got.len(), 2);
        assert!(matches!(
            got[0].event,
            Event::Switch {
                prev: 9,
                slept: true
            }
        ));
        assert!(matches!(got[1].event, Event::Exit { nr: 232, ret: 1 }));
        rec[HEADER + 16] = 0;
        assert_eq!(decoded(&rec).len(), 1, "no sleep, no switch");
    }

    #[test]
    fn a_socket_s_addresses_v4_and_v4_mapped_v6() {
        let tcp = |family: u16, saddr: [u8; 16], daddr: [u8; 16]| {
            let mut rec = header(TCP, 7, 8, 1);
            for v in [family, 40_000, 6379, 0] {
                rec.extend(v.to_ne_bytes());
            }
            rec.extend(saddr);
            rec.extend(daddr);
            decoded(&rec).remove(0).event
        };
        let mut v4 = [0u8; 16];
        v4[..4].copy_from_slice(&[127, 0, 0, 1]);
        let mut peer = [0u8; 16];
        peer[..4].copy_from_slice(&[10, 0, 0, 2]);
        let Event::TcpAddrs { local, peer } = tcp(2, v4, peer) else {
            panic!("not addresses")
        };
        assert_eq!(local.to_string(), "127.0.0.1:40000");
        assert_eq!(peer.to_string(), "10.0.0.2:6379");
        let mapped = std::net::Ipv4Addr::new(127, 0, 0, 1)
            .to_ipv6_mapped()
            .octets();
        let v6 = std::net::Ipv6Addr::LOCALHOST.octets();
        let Event::TcpAddrs { local, peer } = tcp(10, mapped, v6) else {
            panic!("not addresses")
        };
        assert_eq!(local.to_string(), "127.0.0.1:40000");
        assert_eq!(peer.to_string(), "[::1]:6379");
    }

    #[test]
    fn a_short_or_unknown_record_is_nothing() {
        assert!(decoded(&header(CALL, 1, 1, 1)).is_empty());
        assert!(decoded(&header(99, 1, 1, 1)).is_empty());
        assert!(decoded(&[1, 2, 3]).is_empty());
    }
}
