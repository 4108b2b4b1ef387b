//! A slow reader behind a dialled delay: the proxy holds at most its byte budget per direction
//! and backpressures Redis, as a real network would, instead of buffering the whole reply.
//!
//! `pipescope observe --delay-us 250` as a child process (so its memory is its own, read from
//! `/proc/<pid>/status`), a 100 MB value SET directly in Redis, then `GET` through the proxy
//! from a raw socket. The issue asks for the whole 100 MB read at 1 MB/s (100 s); to keep the
//! suite short the first `SLOW_BYTES` (15 MB, 15 s) are read at 1 MB/s, the proxy's memory
//! sampled every second, and the rest drained as fast as the socket gives it. Without a bound
//! the proxy has read all 100 MB from Redis within the first second or two, so 15 s of slow
//! reading is plenty to tell. The reply must arrive complete and byte for byte.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::support;
use crate::support::observe::Observe;

const VALUE_LEN: u64 = 100 * 1_000_000;
/// Read at `SLOW_RATE` before draining the rest.
const SLOW_BYTES: u64 = 15 * 1_000_000;
/// Bytes per second while reading slowly.
const SLOW_RATE: f64 = 1_000_000.0;
const READ: usize = 64 * 1024;
/// What the proxy's peak may exceed two budgets by: its allocator keeping freed chunks around,
/// the tokio runtime and its threads' stacks settling, the report's framing.
const MARGIN: u64 = 16 << 20;

/// The value's byte at `i`: depends on the whole offset, so a chunk lost, repeated or
/// reordered anywhere shows up as a mismatch.
fn byte_at(i: u64) -> u8 {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

/// A field of `/proc/<pid>/status` in bytes (`VmRSS`, `VmHWM`: given there in kB).
fn status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("/proc/{pid}/status: {e}"));
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    let kb: u64 = line.trim().trim_end_matches("kB").trim().parse().unwrap();
    kb * 1024
}

/// SETs `key` to the `VALUE_LEN`-byte pattern straight on Redis, sent in 1 MB pieces.
fn set_big_value(redis_port: u16, key: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", redis_port)).expect("connect to Redis");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${VALUE_LEN}\r\n",
        key.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut piece = vec![0u8; 1_000_000];
    for p in 0..VALUE_LEN / piece.len() as u64 {
        let from = p * piece.len() as u64;
        for (k, b) in piece.iter_mut().enumerate() {
            *b = byte_at(from + k as u64);
        }
        s.write_all(&piece).unwrap();
    }
    s.write_all(b"\r\n").unwrap();
    let mut ok = [0u8; 5];
    s.read_exact(&mut ok)
        .expect("Redis answers the 100 MB SET within 60 s");
    assert_eq!(&ok, b"+OK\r\n");
}

/// The reply read so far: its header, and how many of the value's bytes (and its closing
/// CRLF) came, each checked against the pattern.
struct Reply {
    head: Vec<u8>,
    value: u64,
    tail: Vec<u8>,
}

impl Reply {
    fn take(&mut self, mut bytes: &[u8]) {
        let want_head = format!("${VALUE_LEN}\r\n");
        if self.head.len() < want_head.len() {
            let k = (want_head.len() - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..k]);
            bytes = &bytes[k..];
            assert!(
                want_head.as_bytes().starts_with(&self.head),
                "the reply begins {:?}",
                String::from_utf8_lossy(&self.head)
            );
        }
        let k = ((VALUE_LEN - self.value) as usize).min(bytes.len());
        for (j, &b) in bytes[..k].iter().enumerate() {
            let at = self.value + j as u64;
            assert!(b == byte_at(at), "byte {at} of the value differs");
        }
        self.value += k as u64;
        self.tail.extend_from_slice(&bytes[k..]);
        assert!(
            self.tail.len() <= 2,
            "more than the reply came: {:?}",
            self.tail
        );
    }

    fn complete(&self) -> bool {
        self.tail.len() == 2
    }

    fn len(&self) -> u64 {
        self.head.len() as u64 + self.value + self.tail.len() as u64
    }
}

/// The proxy's memory against what it may reach: its peak at start + 2 × its budget + `MARGIN`.
struct Watch {
    pid: u32,
    start: u64,
    budget: u64,
}

impl Watch {
    fn bound(&self) -> u64 {
        self.start + 2 * self.budget + MARGIN
    }

    /// Asserts `bytes` (its VmRSS or VmHWM, named `what`) is within the bound.
    fn within(&self, what: &str, bytes: u64, when: &str) {
        let (bound, start, budget) = (self.bound(), self.start, self.budget);
        assert!(
            bytes <= bound,
            "the proxy's {what} reached {bytes} bytes {when}: over {bound} (its peak at start \
             {start} + 2 × its budget {budget} + {MARGIN})"
        );
    }
}

/// Reads the reply at `SLOW_RATE` until `SLOW_BYTES` came, checking the proxy's VmRSS every
/// second: the highest seen.
fn read_slowly(s: &mut TcpStream, reply: &mut Reply, watch: &Watch) -> u64 {
    let mut buf = vec![0u8; READ];
    let began = Instant::now();
    let deadline = began + Duration::from_secs(120);
    let mut sampled = began;
    let mut peak_rss = 0;
    while reply.len() < SLOW_BYTES {
        assert!(
            Instant::now() < deadline,
            "only {} bytes of the reply within 120 s",
            reply.len()
        );
        let n = s.read(&mut buf).expect("a read within 30 s");
        assert!(n > 0, "the proxy closed after {} bytes", reply.len());
        reply.take(&buf[..n]);
        if sampled.elapsed() >= Duration::from_secs(1) {
            sampled = Instant::now();
            let rss = status_bytes(watch.pid, "VmRSS");
            peak_rss = peak_rss.max(rss);
            eprintln!(
                "{:>5.1} s: read {:>6.1} MB, proxy VmRSS {:.1} MB (started at a peak of {:.1} MB)",
                began.elapsed().as_secs_f64(),
                reply.len() as f64 / 1e6,
                rss as f64 / 1e6,
                watch.start as f64 / 1e6
            );
            let when = format!("with {} bytes of the reply read", reply.len());
            watch.within("VmRSS", rss, &when);
        }
        let due = began + Duration::from_secs_f64(reply.len() as f64 / SLOW_RATE);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    }
    peak_rss
}

/// Reads the rest of the reply as fast as it comes: how long that took.
fn drain(s: &mut TcpStream, reply: &mut Reply) -> Duration {
    let mut buf = vec![0u8; 1 << 20];
    let began = Instant::now();
    let deadline = began + Duration::from_secs(120);
    while !reply.complete() {
        assert!(
            Instant::now() < deadline,
            "the reply is not complete 120 s after the slow part: {} bytes read",
            reply.len()
        );
        let n = s.read(&mut buf).expect("a read within 30 s");
        assert!(n > 0, "the proxy closed after {} bytes", reply.len());
        reply.take(&buf[..n]);
    }
    began.elapsed()
}

#[test]
fn a_100_mb_reply_to_a_slow_reader_keeps_the_proxy_within_its_budget() {
    let (redis, _target) = support::redis();
    set_big_value(redis.port(), "bigkey");
    let mut observe = Observe::start(
        &redis.url(),
        &[
            "--delay-us",
            "250",
            "--json",
            "--no-equivalent",
            "--duration",
            "300s",
        ],
    );
    let pid = observe.child.id();

    let mut s = TcpStream::connect(&observe.addr).expect("connect to the observing proxy");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    let mut pong = [0u8; 7];
    s.read_exact(&mut pong).expect("PONG within 30 s");
    assert_eq!(&pong, b"+PONG\r\n");
    let watch = Watch {
        pid,
        start: status_bytes(pid, "VmHWM"),
        budget: pipescope::net::direction_budget(&shared::Network::symmetric(250)) as u64,
    };

    s.write_all(b"*2\r\n$3\r\nGET\r\n$6\r\nbigkey\r\n").unwrap();
    let mut reply = Reply {
        head: Vec::new(),
        value: 0,
        tail: Vec::new(),
    };
    let peak_rss = read_slowly(&mut s, &mut reply, &watch);
    let slow_peak = status_bytes(pid, "VmHWM");
    let drained = drain(&mut s, &mut reply);
    assert_eq!(reply.value, VALUE_LEN);
    assert_eq!(reply.tail, b"\r\n");
    // The kernel folds threads' RSS counts in lazily: two reads of VmHWM can differ by a page
    // or two, so the larger counts.
    let peak = status_bytes(pid, "VmHWM").max(slow_peak);
    eprintln!(
        "proxy peak (VmHWM): {:.1} MB at start, {:.1} MB after the slow {:.0} MB, {:.1} MB at the \
         end (bound {:.1} MB, budget {:.1} MB a direction; highest VmRSS sampled {:.1} MB); the \
         other {:.0} MB drained in {:.2} s",
        watch.start as f64 / 1e6,
        slow_peak as f64 / 1e6,
        SLOW_BYTES as f64 / 1e6,
        peak as f64 / 1e6,
        watch.bound() as f64 / 1e6,
        watch.budget as f64 / 1e6,
        peak_rss as f64 / 1e6,
        (reply.len() - SLOW_BYTES) as f64 / 1e6,
        drained.as_secs_f64()
    );
    watch.within("peak VmHWM", peak, "over the whole reply");

    drop(s);
    let conns = observe.report(Duration::from_secs(30));
    let c = conns.first().expect("the connection is in the report");
    assert_eq!(
        (c.counts.commands, c.counts.replies),
        (2, 2),
        "{:?}",
        c.counts
    );
    assert_eq!(c.counts.bytes_from_redis, 7 + reply.len(), "{:?}", c.counts);
}
