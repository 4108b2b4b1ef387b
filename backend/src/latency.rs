//! A delay line between the engine and Redis: a network dialled in. Every chunk of bytes is
//! released at arrival + one-way delay (+ jitter, + its transmission time at the bandwidth
//! cap), in order, with any number in flight, so a pipeline really pays one delay per batch
//! and a sequential run one per command.
//!
//! Why threads, not tokio tasks: tokio's timer ticks in 1 ms, which turned a 250 µs delay into
//! ~3 ms. Each direction has a reader thread that stamps arrivals and a writer thread that
//! sleeps until just before a chunk's release time and spins the last stretch.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engine::resp;

/// Longest delay a presenter can dial in, each way.
pub const MAX_DELAY: Duration = Duration::from_secs(1);
/// The writer spins (instead of sleeping) for at most this long before a release: Linux
/// sleeps overshoot by tens of µs, which would swamp sub-millisecond delays.
const SPIN: Duration = Duration::from_micros(120);
const CHUNK: usize = 64 * 1024;

/// What the network between the engine and Redis looks like.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NetworkProfile {
    /// One-way delay, engine → Redis.
    pub delay_out: Duration,
    /// One-way delay, Redis → engine.
    pub delay_back: Duration,
    /// Each chunk's delay varies uniformly within ± this (never below zero, never reordered).
    pub jitter: Duration,
    /// Bytes per second on each direction's link; `None` is unlimited.
    pub bandwidth: Option<u64>,
}

impl NetworkProfile {
    pub fn symmetric(delay: Duration) -> Self {
        NetworkProfile {
            delay_out: delay,
            delay_back: delay,
            ..Default::default()
        }
    }

    pub fn is_loopback(&self) -> bool {
        *self == NetworkProfile::default()
    }
}

impl std::fmt::Display for NetworkProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "one-way delay {} µs out, {} µs back",
            self.delay_out.as_micros(),
            self.delay_back.as_micros()
        )?;
        if !self.jitter.is_zero() {
            write!(f, ", jitter ±{} µs", self.jitter.as_micros())?;
        }
        match self.bandwidth {
            Some(bw) => write!(f, ", bandwidth {bw} B/s"),
            None => Ok(()),
        }
    }
}

/// Bytes and chunks (reads, hence writes) that crossed the proxy, per direction.
#[derive(Debug, Default)]
pub struct ProxyStats {
    pub bytes_out: AtomicU64,
    pub bytes_back: AtomicU64,
    pub chunks_out: AtomicU64,
    pub chunks_back: AtomicU64,
}

/// A running delay-line proxy on 127.0.0.1:<free port> in front of `upstream`.
pub struct DelayProxy {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    sockets: Arc<Mutex<Vec<TcpStream>>>,
    accept: Option<JoinHandle<()>>,
    stats: Arc<ProxyStats>,
    /// The wire tap of the most recent connection (one run at a time uses the proxy).
    last_tap: Arc<Mutex<Option<Arc<WireTap>>>>,
}

impl DelayProxy {
    pub fn start(upstream: SocketAddr, profile: NetworkProfile) -> std::io::Result<DelayProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let sockets: Arc<Mutex<Vec<TcpStream>>> = Default::default();
        let stats: Arc<ProxyStats> = Default::default();
        let last_tap: Arc<Mutex<Option<Arc<WireTap>>>> = Default::default();
        let accept = {
            let (stopping, sockets, stats, last_tap) = (
                stopping.clone(),
                sockets.clone(),
                stats.clone(),
                last_tap.clone(),
            );
            std::thread::Builder::new()
                .name("proxy-accept".into())
                .spawn(move || {
                    for client in listener.incoming() {
                        if stopping.load(Ordering::Relaxed) {
                            break;
                        }
                        let Ok(client) = client else { continue };
                        match connect_pair(client, upstream, &sockets) {
                            Ok((client, server)) => {
                                let tap = Arc::new(WireTap::default());
                                *last_tap.lock().expect("proxy tap") = Some(tap.clone());
                                let stats = stats.clone();
                                if let Err(e) =
                                    spawn_directions(client, server, profile, stats, tap)
                                {
                                    tracing::warn!("proxy: {e}");
                                }
                            }
                            Err(e) => tracing::warn!("proxy cannot reach {upstream}: {e}"),
                        }
                    }
                })?
        };
        Ok(DelayProxy {
            addr,
            stopping,
            sockets,
            accept: Some(accept),
            stats,
            last_tap,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn stats(&self) -> &ProxyStats {
        &self.stats
    }

    /// The wire tap of the latest connection through this proxy, if any.
    pub fn last_tap(&self) -> Option<Arc<WireTap>> {
        self.last_tap.lock().expect("proxy tap").clone()
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::Relaxed);
        // Wake the accept loop, and end every proxied connection (their threads then exit).
        let _ = TcpStream::connect(self.addr);
        for s in self.sockets.lock().expect("proxy sockets").drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn connect_pair(
    client: TcpStream,
    upstream: SocketAddr,
    sockets: &Mutex<Vec<TcpStream>>,
) -> std::io::Result<(TcpStream, TcpStream)> {
    let server = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    for s in [&client, &server] {
        s.set_nodelay(true)?;
    }
    let mut all = sockets.lock().expect("proxy sockets");
    all.push(client.try_clone()?);
    all.push(server.try_clone()?);
    Ok((client, server))
}

fn spawn_directions(
    client: TcpStream,
    server: TcpStream,
    p: NetworkProfile,
    stats: Arc<ProxyStats>,
    tap: Arc<WireTap>,
) -> std::io::Result<()> {
    let out = Link {
        delay: p.delay_out,
        jitter: p.jitter,
        bandwidth: p.bandwidth,
    };
    let back = Link {
        delay: p.delay_back,
        jitter: p.jitter,
        bandwidth: p.bandwidth,
    };
    let (c2, s2) = (client.try_clone()?, server.try_clone()?);
    let (stats_out, tap_out) = (stats.clone(), tap.clone());
    let mut commands = RespFramer::default();
    pipe(
        "proxy-out",
        client,
        server,
        out,
        |_, _| {},
        move |at, bytes| {
            stats_out
                .bytes_out
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            stats_out.chunks_out.fetch_add(1, Ordering::Relaxed);
            // Commands whose last byte has just been handed to Redis.
            tap_out.delivered(at, commands.feed(bytes));
        },
    )?;
    let mut replies = RespFramer::default();
    pipe(
        "proxy-back",
        s2,
        c2,
        back,
        move |at, bytes| tap.replied(at, replies.feed(bytes)),
        move |_, bytes| {
            stats
                .bytes_back
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            stats.chunks_back.fetch_add(1, Ordering::Relaxed);
        },
    )?;
    Ok(())
}

/// Counts complete RESP messages in a byte stream that arrives in arbitrary pieces.
#[derive(Default)]
struct RespFramer {
    /// An incomplete message carried over from earlier pieces.
    pending: Vec<u8>,
}

impl RespFramer {
    /// Feeds the next piece; returns how many messages it completed.
    fn feed(&mut self, bytes: &[u8]) -> usize {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        let mut complete = 0;
        while let Ok(Some(reply)) = resp::scan_reply(&self.pending[at..]) {
            at += reply.len();
            complete += 1;
        }
        self.pending.drain(..at);
        complete
    }
}

/// Server-side times of one proxied connection, per command in connection order: when its
/// bytes were delivered to Redis and when its reply was read from Redis. Bounded: the first
/// `TAP_STAMPS` of each, and counts of all.
#[derive(Debug, Default)]
pub struct WireTap {
    log: Mutex<TapLog>,
}

/// Stamps kept per direction per connection (the first requests, as spans are).
pub const TAP_STAMPS: usize = 5_100;

#[derive(Debug, Default, Clone)]
pub struct TapLog {
    pub at_server: Vec<Instant>,
    pub from_server: Vec<Instant>,
    pub commands: u64,
    pub replies: u64,
}

impl WireTap {
    fn delivered(&self, at: Instant, n: usize) {
        let mut log = self.log.lock().expect("wire tap");
        log.commands += n as u64;
        let room = TAP_STAMPS.saturating_sub(log.at_server.len()).min(n);
        log.at_server.extend(std::iter::repeat_n(at, room));
    }

    fn replied(&self, at: Instant, n: usize) {
        let mut log = self.log.lock().expect("wire tap");
        log.replies += n as u64;
        let room = TAP_STAMPS.saturating_sub(log.from_server.len()).min(n);
        log.from_server.extend(std::iter::repeat_n(at, room));
    }

    pub fn snapshot(&self) -> TapLog {
        self.log.lock().expect("wire tap").clone()
    }
}

/// One direction's link.
#[derive(Debug, Clone, Copy)]
struct Link {
    delay: Duration,
    jitter: Duration,
    bandwidth: Option<u64>,
}

/// When each chunk may leave: arrival, then transmission (queued behind earlier chunks on
/// the link), then the delay with jitter; never before the chunk ahead of it.
struct Schedule {
    link: Link,
    link_free: Option<Instant>,
    last_release: Option<Instant>,
    rng: fastrand::Rng,
}

impl Schedule {
    fn new(link: Link) -> Self {
        Schedule {
            link,
            link_free: None,
            last_release: None,
            rng: fastrand::Rng::new(),
        }
    }

    fn release(&mut self, arrival: Instant, bytes: usize) -> Instant {
        let sent = match self.link.bandwidth {
            Some(bw) if bw > 0 => {
                let start = self.link_free.map_or(arrival, |free| free.max(arrival));
                let done = start
                    + Duration::from_nanos((bytes as u128 * 1_000_000_000 / bw as u128) as u64);
                self.link_free = Some(done);
                done
            }
            _ => arrival,
        };
        let jitter = self.link.jitter.as_nanos() as i128;
        let offset = if jitter > 0 {
            self.rng.i128(-jitter..=jitter)
        } else {
            0
        };
        let delay =
            Duration::from_nanos((self.link.delay.as_nanos() as i128 + offset).max(0) as u64);
        let release = (sent + delay).max(self.last_release.unwrap_or(sent));
        self.last_release = Some(release);
        release
    }
}

/// Copies `from` → `to` through the delay line: a reader thread stamps and schedules, a
/// writer thread releases on time. `on_read` sees each chunk as it arrives, `on_written` as
/// it leaves (both with the time), e.g. for the wire tap.
fn pipe(
    name: &str,
    mut from: TcpStream,
    mut to: TcpStream,
    link: Link,
    mut on_read: impl FnMut(Instant, &[u8]) + Send + 'static,
    mut on_written: impl FnMut(Instant, &[u8]) + Send + 'static,
) -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::Builder::new()
        .name(format!("{name}-read"))
        .spawn(move || {
            let mut schedule = Schedule::new(link);
            let mut buf = vec![0u8; CHUNK];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let now = Instant::now();
                        on_read(now, &buf[..n]);
                        if tx
                            .send((schedule.release(now, n), buf[..n].to_vec()))
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            }
            // Dropping `tx` tells the writer to finish what is in flight, then close.
        })?;
    std::thread::Builder::new()
        .name(format!("{name}-write"))
        .spawn(move || {
            for (release, bytes) in rx {
                wait_until(release);
                // Stamped as the bytes are handed over: on loopback that is when they reach
                // the far side, and a stamp taken after the write could come later than the
                // reply the other direction already read.
                let at = Instant::now();
                if to.write_all(&bytes).is_err() {
                    break;
                }
                on_written(at, &bytes);
            }
            let _ = to.shutdown(Shutdown::Write);
        })?;
    Ok(())
}

/// Sleeps until shortly before `t`, then spins: sub-millisecond precision without burning a
/// core for long delays.
fn wait_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(delay_us: u64, jitter_us: u64, bandwidth: Option<u64>) -> Link {
        Link {
            delay: Duration::from_micros(delay_us),
            jitter: Duration::from_micros(jitter_us),
            bandwidth,
        }
    }

    #[test]
    fn release_is_arrival_plus_delay() {
        let mut s = Schedule::new(link(250, 0, None));
        let t0 = Instant::now();
        assert_eq!(s.release(t0, 100), t0 + Duration::from_micros(250));
        // Many in flight: the next chunk is not held behind the first's delay.
        let t1 = t0 + Duration::from_micros(10);
        assert_eq!(s.release(t1, 100), t1 + Duration::from_micros(250));
    }

    #[test]
    fn bandwidth_queues_chunks_on_the_link() {
        // 1 MB/s: 1000 bytes take 1 ms on the wire.
        let mut s = Schedule::new(link(0, 0, Some(1_000_000)));
        let t0 = Instant::now();
        assert_eq!(s.release(t0, 1000), t0 + Duration::from_millis(1));
        assert_eq!(
            s.release(t0, 1000),
            t0 + Duration::from_millis(2),
            "the second waits for the first"
        );
    }

    #[test]
    fn the_framer_counts_messages_split_anywhere() {
        let stream = b"*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n+OK\r\n";
        for split in 0..stream.len() {
            let mut f = RespFramer::default();
            let n = f.feed(&stream[..split]) + f.feed(&stream[split..]);
            assert_eq!(n, 3, "split at {split}");
            assert!(f.pending.is_empty());
        }
    }

    #[test]
    fn jitter_never_reorders() {
        let mut s = Schedule::new(link(100, 90, None));
        let t0 = Instant::now();
        let mut last = t0;
        for i in 0..10_000u64 {
            let r = s.release(t0 + Duration::from_nanos(i * 500), 10);
            assert!(r >= last);
            assert!(r <= t0 + Duration::from_nanos(i * 500) + Duration::from_micros(190));
            last = r;
        }
    }
}
