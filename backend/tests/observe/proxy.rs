//! An observing proxy in process (the library's `Observer`) in front of a real redis-server,
//! and raw TCP clients that write exactly the bytes a test chooses and read whole replies.

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use pipescope::local_redis::LocalRedis;
use pipescope::observe::Observer;
use pipescope::resp::framer::{Framer, Side};
use shared::Network;
use shared::observe::ObservedConnection;

use crate::support;

pub const LIMIT: Duration = Duration::from_secs(60);

/// A redis-server, an observing proxy in front of it (on a free port), and the runtime the
/// proxy was started on.
pub struct Setup {
    pub redis: LocalRedis,
    pub observer: Observer,
    _rt: tokio::runtime::Runtime,
}

pub fn setup() -> Setup {
    let (redis, target) = support::redis();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let observer = rt
        .block_on(Observer::start(
            "127.0.0.1:0".parse().unwrap(),
            &target,
            Network::LOOPBACK,
        ))
        .unwrap();
    Setup {
        redis,
        observer,
        _rt: rt,
    }
}

impl Setup {
    pub fn through_proxy(&self) -> TcpStream {
        connect(&self.observer.addr().to_string())
    }

    pub fn direct(&self) -> TcpStream {
        connect(&format!("127.0.0.1:{}", self.redis.port()))
    }

    /// Waits until connection `id` satisfies `done` (deadline `LIMIT`), and returns it.
    pub fn until(
        &self,
        id: u64,
        what: &str,
        done: impl Fn(&ObservedConnection) -> bool,
    ) -> ObservedConnection {
        let deadline = Instant::now() + LIMIT;
        loop {
            let found = self
                .observer
                .connections()
                .snapshot()
                .into_iter()
                .find(|c| c.id == id);
            match found {
                Some(c) if done(&c) => return c,
                seen if Instant::now() > deadline => {
                    panic!("connection {id}: {what}: not within {LIMIT:?}; last seen {seen:#?}")
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

pub fn connect(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    s
}

pub fn cmd(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend(format!("${}\r\n", a.len()).into_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads until `n` whole replies are in (the read timeout is the deadline); returns their bytes.
pub fn replies(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut framer = Framer::new(Side::Replies);
    let (mut got, mut out, mut buf) = (0, Vec::new(), vec![0u8; 64 * 1024]);
    while got < n {
        let k = s
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("{got} of {n} replies, then: {e}"));
        assert!(k > 0, "closed after {got} of {n} replies");
        got += framer.count(&buf[..k]);
        out.extend_from_slice(&buf[..k]);
    }
    assert_eq!(got, n, "more replies than commands");
    out
}

/// Reads until the peer closes (or resets); returns what came. The read timeout is the
/// deadline.
pub fn until_closed(s: &mut TcpStream) -> Vec<u8> {
    use std::io::ErrorKind::{TimedOut, WouldBlock};
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(k) => out.extend_from_slice(&buf[..k]),
            Err(e) if matches!(e.kind(), WouldBlock | TimedOut) => {
                panic!("not closed within {LIMIT:?}; got {out:?}")
            }
            Err(_) => return out,
        }
    }
}
