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

use shared::{Mode, Network, RoundTripSplit, Timeline};

use crate::engine::resp;
use crate::target::{RedisTarget, TargetError};

/// Longest delay a presenter can dial in, each way.
pub const MAX_DELAY: Duration = Duration::from_secs(1);
/// The writer spins (instead of sleeping) for at most this long before a release: Linux
/// sleeps overshoot by tens of µs, which would swamp sub-millisecond delays.
const SPIN: Duration = Duration::from_micros(120);
const CHUNK: usize = 64 * 1024;

/// `shared::Network` (the one description of a network: run specs, the page, the CLI) built
/// from `Duration`s, for callers that think in them. It converts into `Network`; the proxy
/// takes anything that does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NetworkProfile(pub Network);

impl NetworkProfile {
    pub fn symmetric(delay: Duration) -> Self {
        NetworkProfile(Network::symmetric(micros_u32(delay)))
    }
}

impl From<NetworkProfile> for Network {
    fn from(p: NetworkProfile) -> Network {
        p.0
    }
}

fn micros_u32(d: Duration) -> u32 {
    d.as_micros().min(u32::MAX as u128) as u32
}

/// Bytes and chunks (reads, hence writes) that crossed the proxy, per direction.
#[derive(Debug, Default)]
pub struct ProxyStats {
    pub bytes_out: AtomicU64,
    pub bytes_back: AtomicU64,
    pub chunks_out: AtomicU64,
    pub chunks_back: AtomicU64,
    /// How late chunks leave after their release time (the writer woke late): a running
    /// median, ns.
    pub late_ns_out: AtomicU64,
    pub late_ns_back: AtomicU64,
}

impl ProxyStats {
    /// Median lateness of a chunk's release, out and back (running estimate).
    pub fn lateness(&self) -> (Duration, Duration) {
        let get = |ns: &AtomicU64| Duration::from_nanos(ns.load(Ordering::Relaxed));
        (get(&self.late_ns_out), get(&self.late_ns_back))
    }
}

/// A running delay-line proxy on 127.0.0.1:<free port> in front of `upstream`.
pub struct DelayProxy {
    addr: SocketAddr,
    network: Network,
    /// How much earlier than arrival + delay each chunk leaves, to cancel what forwarding
    /// through the proxy costs by itself (see `forwarding_cost`).
    compensation: Compensation,
    stopping: Arc<AtomicBool>,
    sockets: Arc<Mutex<Vec<Connection>>>,
    accept: Option<JoinHandle<()>>,
    stats: Arc<ProxyStats>,
    /// The wire tap of the most recent connection (one run at a time uses the proxy).
    last_tap: Arc<Mutex<Option<Arc<WireTap>>>>,
}

/// The proxy's own cost taken off each direction's delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Compensation {
    pub out: Duration,
    pub back: Duration,
}

impl DelayProxy {
    /// Starts a proxy that delays by what `network` says, measured end to end: it first
    /// measures its own forwarding cost (`forwarding_cost`) and releases chunks that much
    /// earlier, so a round trip through it costs 2·D on top of the direct one, not 2·D plus
    /// the extra hop.
    pub fn start(upstream: SocketAddr, network: impl Into<Network>) -> std::io::Result<DelayProxy> {
        let network = network.into();
        let compensation = if network.round_trip_us() == 0 {
            Compensation::default()
        } else {
            let cost = forwarding_cost(calibration_delay(&network))?.min(MAX_COMPENSATION);
            Compensation::for_network(cost, &network)
        };
        Self::start_compensated(upstream, network, compensation)
    }

    /// A proxy that takes `compensation` off each direction's delay (never releasing a chunk
    /// before it arrived). `Compensation::default()` is the raw delay line.
    pub fn start_compensated(
        upstream: SocketAddr,
        network: impl Into<Network>,
        compensation: Compensation,
    ) -> std::io::Result<DelayProxy> {
        let network = network.into();
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let sockets: Arc<Mutex<Vec<Connection>>> = Default::default();
        let stats: Arc<ProxyStats> = Default::default();
        let last_tap: Arc<Mutex<Option<Arc<WireTap>>>> = Default::default();
        let links = Links::new(&network, compensation);
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
                            Ok((client, server, live)) => {
                                let tap = Arc::new(WireTap::default());
                                *last_tap.lock().expect("proxy tap") = Some(tap.clone());
                                let stats = stats.clone();
                                if let Err(e) =
                                    spawn_directions(client, server, links, stats, tap, live)
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
            network,
            compensation,
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

    pub fn network(&self) -> Network {
        self.network
    }

    pub fn compensation(&self) -> Compensation {
        self.compensation
    }

    pub fn stats(&self) -> &ProxyStats {
        &self.stats
    }

    /// Proxied connections whose sockets are held (those still running, and any that ended
    /// since the last one was accepted).
    pub fn connections_held(&self) -> usize {
        self.sockets.lock().expect("proxy sockets").len()
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
        for c in self.sockets.lock().expect("proxy sockets").drain(..) {
            let _ = c.client.shutdown(Shutdown::Both);
            let _ = c.server.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// The one-way delay used to measure the proxy's own cost is the network's own (the cost
/// grows with it on a busy machine: threads idle longer wake slower), within these bounds:
/// long enough that the hand-over between the proxy's threads is hidden in the delay, as it is
/// then, short enough to measure quickly (beyond 1 ms the cost is under 5 % of the delay).
const CALIBRATION_DELAY: std::ops::RangeInclusive<Duration> =
    Duration::from_micros(100)..=Duration::from_millis(1);
const CALIBRATION_ROUNDS: usize = 150;

/// What forwarding through the proxy adds to a round trip beyond the delays dialled in.
///
/// Why: a connection through the proxy crosses two extra loopback hops, and each direction
/// pays a thread wake-up (the reader only stamps a chunk's arrival once the kernel has woken
/// it) and a second write. That was ~70 µs per round trip on a busy 2-core machine: a 250 µs
/// delay measured 600 µs instead of 2·250 + 31. The cost is the machine's (and its load's), so
/// it is measured, once per proxy: round trips directly and through an uncompensated proxy at
/// `delay` (see `calibration_delay`), interleaved so both see the same load, medians. The proxy
/// then releases chunks that much earlier, never before they arrived.
///
/// This one times small request/reply round trips to an echo server, so it works in front of
/// anything (`DelayProxy::start`); it is a lower bound of what the engine pays. The hub and
/// `bench` calibrate with the engine and Redis themselves (`engine_forwarding_cost`).
pub fn forwarding_cost(delay: Duration) -> std::io::Result<Duration> {
    let echo = EchoServer::start(2)?;
    forwarding_cost_to(echo.addr, delay)
}

/// The delay to calibrate at for `network`: its mean one-way delay, within `CALIBRATION_DELAY`.
pub fn calibration_delay(network: &Network) -> Duration {
    let mean = Duration::from_micros(network.round_trip_us() / 2);
    mean.clamp(*CALIBRATION_DELAY.start(), *CALIBRATION_DELAY.end())
}

/// `forwarding_cost` measured against an echo server at `upstream` (two connections to it) at
/// one-way `delay`.
fn forwarding_cost_to(upstream: SocketAddr, delay: Duration) -> std::io::Result<Duration> {
    let raw = DelayProxy::start_compensated(
        upstream,
        Network::symmetric(micros_u32(delay)),
        Compensation::default(),
    )?;
    // About the size of a SET.
    let request: &[u8] = b"*3\r\n$3\r\nSET\r\n$14\r\npipescope:0:k0\r\n$2\r\nv0\r\n";
    // The client is what the engine is: a single-threaded tokio runtime on a thread of its
    // own, writing, then awaiting the reply (a blocking client measured half the cost the
    // engine then paid).
    let via_addr = raw.addr();
    let measure = move || -> std::io::Result<Duration> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut direct = tokio::net::TcpStream::connect(upstream).await?;
            let mut via = tokio::net::TcpStream::connect(via_addr).await?;
            direct.set_nodelay(true)?;
            via.set_nodelay(true)?;
            let mut reply = Vec::with_capacity(256);
            let (mut d, mut v) = (Vec::new(), Vec::new());
            for round in 0..CALIBRATION_ROUNDS + 10 {
                for (s, times) in [(&mut direct, &mut d), (&mut via, &mut v)] {
                    let t = Instant::now();
                    s.write_all(request).await?;
                    reply.clear();
                    loop {
                        let read =
                            tokio::time::timeout(Duration::from_secs(5), s.read_buf(&mut reply))
                                .await
                                .map_err(|_| {
                                    std::io::Error::from(std::io::ErrorKind::TimedOut)
                                })??;
                        if read == 0 {
                            return Err(std::io::ErrorKind::UnexpectedEof.into());
                        }
                        if reply.len() >= request.len() {
                            break;
                        }
                    }
                    // The first rounds warm up caches and connections.
                    if round >= 10 {
                        times.push(t.elapsed());
                    }
                }
            }
            let (d, v) = (median_duration(d), median_duration(v));
            Ok(v.saturating_sub(2 * delay).saturating_sub(d))
        })
    };
    std::thread::Builder::new()
        .name("proxy-calibrate".into())
        .spawn(measure)?
        .join()
        .map_err(|_| std::io::Error::other("calibration panicked"))?
}

fn median_duration(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

impl Compensation {
    /// Takes a round trip's forwarding cost off the return leg, as far as its delay allows,
    /// and only the rest off the outbound one. So a request never reaches Redis sooner than the
    /// outbound delay after it reached the proxy (the tap's engine → Redis leg is ≥ D), and
    /// the round trip as a whole comes out at 2·D plus the direct one.
    pub fn for_network(cost: Duration, network: &Network) -> Compensation {
        let back = cost.min(Duration::from_micros(network.delay_back_us as u64));
        Compensation {
            out: cost - back,
            back,
        }
    }
}

/// An echo server for `connections` connections (a thread each), for calibration.
struct EchoServer {
    addr: SocketAddr,
}

impl EchoServer {
    fn start(connections: usize) -> std::io::Result<EchoServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        std::thread::Builder::new()
            .name("proxy-calibrate".into())
            .spawn(move || {
                for s in listener.incoming().take(connections) {
                    let Ok(mut s) = s else { continue };
                    let _ = s.set_nodelay(true);
                    let _ =
                        std::thread::Builder::new()
                            .name("proxy-echo".into())
                            .spawn(move || {
                                let mut buf = [0u8; 4096];
                                while let Ok(n @ 1..) = s.read(&mut buf) {
                                    if s.write_all(&buf[..n]).is_err() {
                                        break;
                                    }
                                }
                            });
                }
            })?;
        Ok(EchoServer { addr })
    }
}

/// A proxied connection's two sockets, kept so dropping the proxy can end it, and how many of
/// its two directions are still running.
struct Connection {
    client: TcpStream,
    server: TcpStream,
    live: Arc<AtomicU64>,
}

fn connect_pair(
    client: TcpStream,
    upstream: SocketAddr,
    sockets: &Mutex<Vec<Connection>>,
) -> std::io::Result<(TcpStream, TcpStream, Arc<AtomicU64>)> {
    let server = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    for s in [&client, &server] {
        s.set_nodelay(true)?;
    }
    let live = Arc::new(AtomicU64::new(2));
    let mut all = sockets.lock().expect("proxy sockets");
    // A proxy the hub keeps serves run after run: let go of finished connections' sockets.
    all.retain(|c| c.live.load(Ordering::Acquire) > 0);
    all.push(Connection {
        client: client.try_clone()?,
        server: server.try_clone()?,
        live: live.clone(),
    });
    Ok((client, server, live))
}

#[derive(Debug, Clone, Copy)]
struct Links {
    out: Link,
    back: Link,
}

impl Links {
    fn new(n: &Network, c: Compensation) -> Links {
        let link = |delay_us: u32, early| Link {
            delay: Duration::from_micros(delay_us as u64),
            jitter: Duration::from_micros(n.jitter_us as u64),
            bandwidth: n.bandwidth,
            early,
        };
        Links {
            out: link(n.delay_out_us, c.out),
            back: link(n.delay_back_us, c.back),
        }
    }
}

fn spawn_directions(
    client: TcpStream,
    server: TcpStream,
    links: Links,
    stats: Arc<ProxyStats>,
    tap: Arc<WireTap>,
    live: Arc<AtomicU64>,
) -> std::io::Result<()> {
    let (c2, s2) = (client.try_clone()?, server.try_clone()?);
    let (stats_out, tap_read, tap_out) = (stats.clone(), tap.clone(), tap.clone());
    let mut commands = RespFramer::default();
    pipe(
        "proxy-out",
        client,
        server,
        links.out,
        live.clone(),
        move |_, _| {
            tap_read.in_flight.fetch_add(1, Ordering::AcqRel);
        },
        move |at, late, bytes| {
            stats_out
                .bytes_out
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            stats_out.chunks_out.fetch_add(1, Ordering::Relaxed);
            stats_out
                .late_ns_out
                .store(late.as_nanos() as u64, Ordering::Relaxed);
            // Commands whose last byte has just been handed to Redis.
            tap_out.delivered(at, commands.feed(bytes));
            tap_out.in_flight.fetch_sub(1, Ordering::AcqRel);
        },
    )?;
    let mut replies = RespFramer::default();
    pipe(
        "proxy-back",
        s2,
        c2,
        links.back,
        live,
        move |at, bytes| tap.replied(at, replies.feed(bytes)),
        move |_, late, bytes| {
            stats
                .bytes_back
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            stats.chunks_back.fetch_add(1, Ordering::Relaxed);
            stats
                .late_ns_back
                .store(late.as_nanos() as u64, Ordering::Relaxed);
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
    /// Chunks read from the engine and not yet handed to Redis and stamped.
    in_flight: AtomicU64,
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

    /// True when every byte the engine sent has been handed to Redis and stamped. The writer
    /// stamps just after its write, so Redis's reply (and the engine's end of run) can come a
    /// moment before the last stamp is in.
    pub fn settled(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }

    /// Waits (briefly, at most `limit`) until `settled`, then returns the stamps.
    pub async fn settle(&self, limit: Duration) -> TapLog {
        let deadline = Instant::now() + limit;
        while !self.settled() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        self.snapshot()
    }
}

/// One direction's link.
#[derive(Debug, Clone, Copy)]
struct Link {
    delay: Duration,
    jitter: Duration,
    bandwidth: Option<u64>,
    /// Released this much before arrival + delay: the proxy's own forwarding cost, which the
    /// chunk pays anyway (never before arrival).
    early: Duration,
}

/// When each chunk may leave: arrival, then transmission (queued behind earlier chunks on
/// the link), then the delay with jitter less the compensation; never before it arrived,
/// never before the chunk ahead of it.
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
            self.link.delay.as_nanos() as i128 + offset - self.link.early.as_nanos() as i128;
        let delay = Duration::from_nanos(delay.max(0) as u64);
        let release = (sent + delay).max(self.last_release.unwrap_or(sent));
        self.last_release = Some(release);
        release
    }
}

/// Copies `from` → `to` through the delay line: a reader thread stamps and schedules, a
/// writer thread releases on time. `on_read` sees each chunk as it arrives, `on_written` as
/// it leaves (with the time and the writer's median lateness), e.g. for the wire tap.
fn pipe(
    name: &str,
    mut from: TcpStream,
    mut to: TcpStream,
    link: Link,
    live: Arc<AtomicU64>,
    mut on_read: impl FnMut(Instant, &[u8]) + Send + 'static,
    mut on_written: impl FnMut(Instant, Duration, &[u8]) + Send + 'static,
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
            precise_sleeps();
            let mut late = MedianEstimate::default();
            for (release, bytes) in rx {
                wait_until(release);
                // Stamped as the bytes are handed over: on loopback that is when they reach
                // the far side, and a stamp taken after the write could come later than the
                // reply the other direction already read.
                let at = Instant::now();
                if to.write_all(&bytes).is_err() {
                    break;
                }
                let l = at.saturating_duration_since(release);
                late.add(l);
                on_written(at, late.value(), &bytes);
            }
            let _ = to.shutdown(Shutdown::Write);
            live.fetch_sub(1, Ordering::AcqRel);
        })?;
    Ok(())
}

/// A running median (frugal streaming: a step towards each sample), 1 µs steps.
#[derive(Default)]
struct MedianEstimate(Duration);

impl MedianEstimate {
    const STEP: Duration = Duration::from_micros(1);

    fn add(&mut self, sample: Duration) {
        if sample > self.0 {
            self.0 += Self::STEP;
        } else if sample < self.0 {
            self.0 = self.0.saturating_sub(Self::STEP);
        }
    }

    fn value(&self) -> Duration {
        self.0
    }
}

/// Asks Linux to wake this thread's sleeps on time: by default a thread's timers may fire up
/// to 50 µs late (timer slack, to batch wake-ups), a fifth of a 250 µs delay.
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and only affects the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
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

/// Where item `i` of a run of `count` items in `mode` is on the wire, as the tap counts
/// commands and replies (connection order, from 0): the command whose delivery to Redis is the
/// item's `at_server`, and the reply whose departure from Redis is its `from_server`.
///
/// - Sequential, pipelined, multiplexed: one command per item, so item `i` is command `i`.
/// - Transaction of `batch`: each batch is `MULTI`, its commands, `EXEC`. Item `j` of batch `b`
///   is command `b·(batch+2) + 1 + j`, and its reply travels in `EXEC`'s, command
///   `b·(batch+2) + n + 1` (`n` = the batch's commands; only the last batch may be short).
/// - MSET/MGET of `batch`: one command per batch, so item `i` is command `i / batch`.
pub fn wire_indices(mode: Mode, count: u64, i: u64) -> (u64, u64) {
    match mode {
        Mode::Sequential | Mode::Pipelined { .. } | Mode::Multiplexed { .. } => (i, i),
        Mode::Transaction { batch } => {
            let batch = batch.max(1) as u64;
            let (b, j) = (i / batch, i % batch);
            let base = b * (batch + 2);
            let n = batch.min(count.saturating_sub(b * batch)).max(j + 1);
            (base + 1 + j, base + n + 1)
        }
        Mode::Mset { batch } => {
            let b = i / batch.max(1) as u64;
            (b, b)
        }
    }
}

/// Puts the wire tap's stamps into a finished run's timeline (µs since `started`, the instant
/// its spans count from) and returns the split of a round trip: medians of engine → Redis
/// (at_server − issued), in Redis (from_server − at_server) and Redis → engine (replied −
/// from_server) over the spans the tap stamped. `None` if it stamped none.
pub fn stamp_timeline(
    timeline: &mut Timeline,
    mode: Mode,
    count: u64,
    started: Instant,
    tap: &TapLog,
) -> Option<RoundTripSplit> {
    let us = |t: Instant| t.saturating_duration_since(started).as_nanos() as f64 / 1000.0;
    let stamp = |span: &mut shared::Span| {
        let (at, from) = wire_indices(mode, count, span.i);
        if let (Some(&a), Some(&f)) = (
            tap.at_server.get(at as usize),
            tap.from_server.get(from as usize),
        ) {
            span.at_server_us = Some(us(a));
            span.from_server_us = Some(us(f));
        }
    };
    timeline.first.iter_mut().for_each(stamp);
    timeline.sampled.iter_mut().for_each(stamp);
    // Each request once: the first ones in full, then the sample beyond them.
    let covered = timeline.first.len() as u64;
    let spans = timeline
        .first
        .iter()
        .chain(timeline.sampled.iter().filter(|s| s.i >= covered));
    let (mut out, mut server, mut back) = (Vec::new(), Vec::new(), Vec::new());
    for s in spans {
        if let (Some(a), Some(f)) = (s.at_server_us, s.from_server_us) {
            out.push(a - s.issued_us);
            server.push(f - a);
            back.push(s.replied_us - f);
        }
    }
    if out.is_empty() {
        return None;
    }
    Some(RoundTripSplit {
        samples: out.len() as u64,
        out_us: median(out),
        server_us: median(server),
        back_us: median(back),
        ..Default::default()
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Delay-line proxies in front of one Redis, one per network in use: started when a run first
/// asks for that network and reused by later runs with the same one (a run at a time uses
/// one; the few most recent are kept, so switching between presets is quick).
#[derive(Default)]
pub struct Proxies {
    kept: tokio::sync::Mutex<Vec<Arc<DelayProxy>>>,
}

/// Proxies kept for reuse.
const KEPT_PROXIES: usize = 4;

/// Where a run's engine connects: straight to Redis, or through a proxy.
pub struct Route {
    pub target: RedisTarget,
    pub proxy: Option<Arc<DelayProxy>>,
}

impl Proxies {
    /// The route for a run over `network` to `target`: direct for loopback, else through a
    /// proxy with that profile (started, and calibrated with the engine, if there is none yet:
    /// see `engine_forwarding_cost`).
    pub async fn route(
        &self,
        target: &RedisTarget,
        network: Network,
    ) -> Result<Route, TargetError> {
        if network.is_loopback() {
            return Ok(Route {
                target: target.clone(),
                proxy: None,
            });
        }
        let mut kept = self.kept.lock().await;
        let proxy = match kept.iter().position(|p| p.network() == network) {
            Some(at) => {
                let p = kept.remove(at);
                kept.push(p.clone());
                p
            }
            None => {
                let upstream = target.socket_addr().await?;
                let unreachable = |cause| TargetError::Unreachable {
                    addr: target.addr(),
                    cause,
                };
                let cost = engine_forwarding_cost(target, upstream, &network).await?;
                let compensation = Compensation::for_network(cost, &network);
                let p = DelayProxy::start_compensated(upstream, network, compensation)
                    .map_err(unreachable)?;
                tracing::info!(
                    network = %network.label(),
                    compensation = ?p.compensation(),
                    "started a delay-line proxy"
                );
                let p = Arc::new(p);
                kept.push(p.clone());
                if kept.len() > KEPT_PROXIES {
                    kept.remove(0);
                }
                p
            }
        };
        Ok(Route {
            target: target.through(proxy.addr()),
            proxy: Some(proxy),
        })
    }
}

/// The calibration's cost is capped: a stall during it must not make the proxy release
/// chunks much earlier than the delay dialled in.
const MAX_COMPENSATION: Duration = Duration::from_micros(200);
/// Sequential SETs per calibration run, and runs per side: many short runs, alternating, so a
/// burst of load lands on both sides alike.
const ENGINE_CALIBRATION: (u64, usize) = (50, 8);
/// The share of the measured cost taken off. On a busy machine one calibration's estimate
/// varies by ±20–30 % from the next; taking off a little less keeps a round trip from coming
/// out under 2·D (a network never delivers faster than its delay), at the price of a few µs
/// over 2·D + loopback.
const COMPENSATED_SHARE: f64 = 0.8;

/// `forwarding_cost`, measured with the engine itself against Redis: short sequential runs
/// directly and through an uncompensated proxy at `calibration_delay(network)`, alternating,
/// medians of their median round trips. The engine is what the page's numbers come from, and
/// it pays more for the proxy than a bare client does: directly its reply often arrives before
/// it has gone to sleep, through the proxy it always sleeps and is woken (on a busy machine,
/// tens of µs more per round trip). Its keys are removed after each run, as a run's are.
pub async fn engine_forwarding_cost(
    target: &RedisTarget,
    upstream: SocketAddr,
    network: &Network,
) -> Result<Duration, TargetError> {
    use crate::engine::{self, RunContext, keys};
    let delay = calibration_delay(network);
    let raw = DelayProxy::start_compensated(
        upstream,
        Network::symmetric(micros_u32(delay)),
        Compensation::default(),
    )
    .map_err(|cause| TargetError::Unreachable {
        addr: target.addr(),
        cause,
    })?;
    let routed = target.through(raw.addr());
    let (count, runs) = ENGINE_CALIBRATION;
    let mut run_id = crate::hub::first_run_id();
    let (mut direct, mut via) = (Vec::new(), Vec::new());
    for round in 0..runs * 2 {
        run_id += 1;
        let (route, times) = if round % 2 == 0 {
            (target, &mut direct)
        } else {
            (&routed, &mut via)
        };
        let ctx = RunContext {
            record_spans: false,
            ..RunContext::new(run_id, Default::default(), Default::default())
        };
        let outcome = engine::run(route, shared::RunSpec::set(count, Mode::Sequential), ctx).await;
        let written = match &outcome {
            Ok(o) => o.written,
            Err(f) => f.written,
        };
        keys::remove_run_keys(target, run_id, written).await?;
        match outcome {
            Ok(o) => times.push(o.summary.latency.p50_us),
            Err(f) => {
                return Err(TargetError::Unreachable {
                    addr: target.addr(),
                    cause: std::io::Error::other(format!(
                        "calibrating the latency proxy: {}",
                        f.error
                    )),
                });
            }
        }
    }
    let excess = median(via) - 2.0 * delay.as_micros() as f64 - median(direct);
    let cost = Duration::from_nanos((excess.max(0.0) * COMPENSATED_SHARE * 1000.0) as u64)
        .min(MAX_COMPENSATION);
    tracing::debug!(
        ?delay,
        ?cost,
        "calibrated the latency proxy with the engine"
    );
    Ok(cost)
}

impl Route {
    /// After a finished run over this route: its wire-tap stamps in `timeline`, and the split.
    pub async fn stamp(
        &self,
        spec: &shared::RunSpec,
        started: Instant,
        timeline: &mut Timeline,
    ) -> Option<RoundTripSplit> {
        let tap = self.proxy.as_ref()?.last_tap()?;
        let log = tap.settle(Duration::from_secs(1)).await;
        stamp_timeline(timeline, spec.mode, spec.count, started, &log)
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
            early: Duration::ZERO,
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

    #[test]
    fn compensation_releases_earlier_but_never_before_arrival() {
        let mut s = Schedule::new(Link {
            early: Duration::from_micros(40),
            ..link(250, 0, None)
        });
        let t0 = Instant::now();
        assert_eq!(s.release(t0, 10), t0 + Duration::from_micros(210));
        let mut s = Schedule::new(Link {
            early: Duration::from_micros(40),
            ..link(10, 0, None)
        });
        let t1 = t0 + Duration::from_millis(1);
        assert_eq!(s.release(t1, 10), t1, "not before it arrived");
    }

    #[test]
    fn the_return_leg_absorbs_the_compensation_first() {
        let cost = Duration::from_micros(40);
        let c = Compensation::for_network(cost, &Network::symmetric(250));
        assert_eq!((c.out, c.back), (Duration::ZERO, cost));
        let short_back = Network {
            delay_back_us: 10,
            ..Network::symmetric(250)
        };
        let c = Compensation::for_network(cost, &short_back);
        assert_eq!(
            (c.out, c.back),
            (Duration::from_micros(30), Duration::from_micros(10))
        );
    }

    #[test]
    fn one_wire_command_per_item_in_the_plain_modes() {
        for mode in [
            Mode::Sequential,
            Mode::pipelined(100),
            Mode::Multiplexed { in_flight: 8 },
        ] {
            for i in [0, 1, 99, 100, 4_999] {
                assert_eq!(wire_indices(mode, 5_000, i), (i, i), "{mode:?}");
            }
        }
    }

    #[test]
    fn a_transaction_item_is_its_queued_command_and_replies_with_exec() {
        let mode = Mode::Transaction { batch: 3 };
        // Wire: MULTI c0 c1 c2 EXEC | MULTI c3 c4 c5 EXEC | MULTI c6 EXEC
        //       0     1  2  3  4      5     6  7  8  9      10    11 12
        let expect = [(1, 4), (2, 4), (3, 4), (6, 9), (7, 9), (8, 9), (11, 12)];
        for (i, e) in expect.iter().enumerate() {
            assert_eq!(wire_indices(mode, 7, i as u64), *e, "item {i}");
        }
    }

    #[test]
    fn an_mset_item_is_its_batch() {
        let mode = Mode::Mset { batch: 10 };
        assert_eq!(wire_indices(mode, 25, 0), (0, 0));
        assert_eq!(wire_indices(mode, 25, 9), (0, 0));
        assert_eq!(wire_indices(mode, 25, 10), (1, 1));
        assert_eq!(wire_indices(mode, 25, 24), (2, 2));
    }

    #[test]
    fn stamps_land_on_their_spans_and_make_the_split() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        // Transaction of 2, 4 items: wire MULTI c0 c1 EXEC MULTI c2 c3 EXEC.
        let tap = TapLog {
            at_server: (0..8).map(|k| at(100 + k)).collect(),
            from_server: (0..8).map(|k| at(200 + k)).collect(),
            commands: 8,
            replies: 8,
        };
        let span = |i| shared::Span::new(i, 10.0, 400.0);
        let mut timeline = Timeline {
            first: (0..3).map(span).collect(),
            sampled: vec![span(0), span(2)],
            stride: 2,
        };
        let split = stamp_timeline(
            &mut timeline,
            Mode::Transaction { batch: 2 },
            4,
            t0,
            &TapLog {
                at_server: tap.at_server[..6].to_vec(),
                ..tap
            },
        )
        .unwrap();
        let got: Vec<_> = timeline
            .first
            .iter()
            .map(|s| (s.at_server_us, s.from_server_us))
            .collect();
        assert_eq!(
            got,
            [
                (Some(101.0), Some(203.0)),
                (Some(102.0), Some(203.0)),
                (Some(105.0), Some(207.0)),
            ]
        );
        assert_eq!(timeline.sampled[1].at_server_us, Some(105.0));
        // Three distinct spans (the sample repeats the first ones).
        assert_eq!(split.samples, 3);
        assert_eq!(split.out_us, 92.0);
        assert_eq!(split.server_us, 102.0);
        assert_eq!(split.back_us, 197.0);
    }
}
