//! The delay line itself: a proxy whose every connection is copied through two directions,
//! each a reader thread that stamps arrivals and a writer thread that releases each chunk on
//! time (see `schedule` for when). What happens to each connection's traffic is its `Hooks`:
//! the wire tap for runs, observe mode's recorder for an application's connections.
//!
//! Why threads, not tokio tasks: tokio's timer ticks in 1 ms, too coarse for sub-millisecond
//! delays. The writer sleeps until just before a chunk's release time and spins the last stretch.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shared::Network;

use super::schedule::{Compensation, Link, Links, Schedule};
use super::stats::{Direction, ProxyStats};
use super::wire_tap::{TAP_STAMPS, WireTap, stamps_per_tap};
use crate::resp::framer::{Framer, Side};

/// The writer spins (instead of sleeping) for at most this long before a release: Linux
/// sleeps overshoot by tens of µs, which would swamp sub-millisecond delays.
const SPIN: Duration = Duration::from_micros(120);
const CHUNK: usize = 64 * 1024;

/// A running delay-line proxy in front of `upstream`.
pub struct DelayProxy {
    addr: SocketAddr,
    /// Where it forwards to: Redis (one node of a cluster, for a cluster's per-master proxies).
    upstream: SocketAddr,
    network: Network,
    /// How much earlier than arrival + delay each chunk leaves, to cancel what forwarding
    /// through the proxy costs by itself (see `calibration`).
    compensation: Compensation,
    stopping: Arc<AtomicBool>,
    sockets: Arc<Mutex<Vec<Connection>>>,
    accept: Option<JoinHandle<()>>,
    /// What crossed it (counted only for the integration tests).
    #[cfg(feature = "test-util")]
    stats: Arc<ProxyStats>,
    /// The wire taps of the most recent connections, oldest first (one run at a time uses the
    /// proxy; a pool's run opens up to `Mode::MAX_CONNECTIONS` connections, all kept).
    taps: Taps,
    /// Stamps each new connection's tap keeps (`expect_run`).
    tap_limit: Arc<AtomicUsize>,
}

type Taps = Arc<Mutex<VecDeque<Arc<WireTap>>>>;

/// Taps kept: every connection of the largest pool.
const KEPT_TAPS: usize = shared::Mode::MAX_CONNECTIONS as usize;

/// Sees a chunk as it arrives: when, and its bytes.
pub type OnRead = Box<dyn FnMut(Instant, &[u8]) + Send>;
/// Sees a chunk as it leaves: when it was due, when it was handed over, and its bytes.
pub type OnWritten = Box<dyn FnMut(Instant, Instant, &[u8]) + Send>;

/// Told once a connection is over.
pub type OnEnded = Box<dyn FnOnce(Ended) + Send>;

/// What the proxy does as one connection's chunks cross it. Each direction's two hooks run on
/// that direction's own threads (or thread), so they may hold per-direction state (a framer).
pub struct Hooks {
    /// A chunk read from the client, when it arrived.
    pub client_read: OnRead,
    /// A chunk handed to Redis: when it was due, when it was handed over.
    pub to_server: OnWritten,
    /// A chunk read from Redis, when it arrived.
    pub server_read: OnRead,
    /// A chunk handed to the client: when it was due, when it was handed over.
    pub to_client: OnWritten,
    /// The connection is over (both directions): who ended it first.
    pub ended: OnEnded,
}

impl Hooks {
    /// Hooks that do nothing: the proxy as a plain relay (to measure what relaying alone
    /// costs, beside what observing adds).
    pub fn none() -> Hooks {
        Hooks {
            client_read: Box::new(|_, _| {}),
            to_server: Box::new(|_, _, _| {}),
            server_read: Box::new(|_, _| {}),
            to_client: Box::new(|_, _, _| {}),
            ended: Box::new(|_| {}),
        }
    }
}

/// How a proxied connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    ByClient,
    ByRedis,
    /// An I/O error on one side, or Redis could not be reached.
    Error(String),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::ByClient => f.write_str("closed by the client"),
            Ended::ByRedis => f.write_str("closed by Redis"),
            Ended::Error(e) => f.write_str(e),
        }
    }
}

/// Decides, for each connection accepted, its hooks, or refuses it with a message the client
/// gets as a RESP error.
pub type Admit = Box<dyn FnMut(SocketAddr) -> Result<Hooks, String> + Send>;

impl DelayProxy {
    /// The raw delay line: each chunk leaves at arrival + what `network` says, with nothing
    /// taken off for the proxy's own cost (calibration measures that cost through one).
    pub fn raw(upstream: SocketAddr, network: Network) -> std::io::Result<DelayProxy> {
        Self::start_compensated(upstream, network, Compensation::default())
    }

    /// A proxy for runs, on a free loopback port, that takes `compensation` off each
    /// direction's delay (never releasing a chunk before it arrived) and keeps a wire tap of
    /// its latest connection. `Compensation::default()` is the raw delay line.
    pub fn start_compensated(
        upstream: SocketAddr,
        network: Network,
        compensation: Compensation,
    ) -> std::io::Result<DelayProxy> {
        let taps: Taps = Default::default();
        let tap_limit = Arc::new(AtomicUsize::new(TAP_STAMPS));
        let admit: Admit = {
            let (taps, tap_limit) = (taps.clone(), tap_limit.clone());
            Box::new(move |_| {
                let tap = Arc::new(WireTap::with_limit(tap_limit.load(Ordering::Relaxed)));
                let mut taps = taps.lock().expect("proxy taps");
                if taps.len() >= KEPT_TAPS {
                    taps.pop_front();
                }
                taps.push_back(tap.clone());
                Ok(tap_hooks(tap))
            })
        };
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let mut proxy = Self::start(listener, upstream, network, compensation, admit)?;
        proxy.taps = taps;
        proxy.tap_limit = tap_limit;
        Ok(proxy)
    }

    /// A proxy on `listener` whose connections `admit` decides and hooks (observe mode).
    pub fn start(
        listener: TcpListener,
        upstream: SocketAddr,
        network: Network,
        compensation: Compensation,
        mut admit: Admit,
    ) -> std::io::Result<DelayProxy> {
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let sockets: Arc<Mutex<Vec<Connection>>> = Default::default();
        let stats: Arc<ProxyStats> = Default::default();
        let links = Links::new(&network, compensation);
        let accept = {
            let (stopping, sockets, stats) = (stopping.clone(), sockets.clone(), stats.clone());
            std::thread::Builder::new()
                .name("proxy-accept".into())
                .spawn(move || {
                    for client in listener.incoming() {
                        if stopping.load(Ordering::Relaxed) {
                            break;
                        }
                        let Ok(mut client) = client else { continue };
                        let peer = client
                            .peer_addr()
                            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
                        let hooks = match admit(peer) {
                            Ok(hooks) => hooks,
                            Err(why) => {
                                refuse(&mut client, &why);
                                continue;
                            }
                        };
                        match connect_pair(client, upstream, &sockets) {
                            Ok((client, server, ending)) => {
                                if let Err(e) = spawn_directions(
                                    client,
                                    server,
                                    links,
                                    stats.clone(),
                                    hooks,
                                    ending,
                                ) {
                                    tracing::warn!("proxy: {e}");
                                }
                            }
                            Err((mut client, e)) => {
                                let why =
                                    format!("pipescope cannot reach Redis at {upstream}: {e}");
                                tracing::warn!("{why}");
                                refuse(&mut client, &why);
                                (hooks.ended)(Ended::Error(why));
                            }
                        }
                    }
                })?
        };
        Ok(DelayProxy {
            addr,
            upstream,
            network,
            compensation,
            stopping,
            sockets,
            accept: Some(accept),
            #[cfg(feature = "test-util")]
            stats,
            taps: Default::default(),
            tap_limit: Arc::new(AtomicUsize::new(TAP_STAMPS)),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn network(&self) -> Network {
        self.network
    }

    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    pub fn compensation(&self) -> Compensation {
        self.compensation
    }

    /// What crossed this proxy (counted only with feature `test-util`).
    #[cfg(feature = "test-util")]
    pub fn stats(&self) -> &ProxyStats {
        &self.stats
    }

    /// Proxied connections whose sockets are held (those still running, and any that ended
    /// since the last one was accepted).
    #[cfg(feature = "test-util")]
    pub fn connections_held(&self) -> usize {
        self.sockets.lock().expect("proxy sockets").len()
    }

    /// The wire tap of the latest connection through this proxy, if any.
    pub fn last_tap(&self) -> Option<Arc<WireTap>> {
        self.taps.lock().expect("proxy taps").back().cloned()
    }

    /// Before a run through this proxy: its connections' taps share one connection's stamp
    /// budget (`stamps_per_tap`), and the taps of earlier runs are let go.
    pub fn expect_run(&self, connections: u32) {
        self.tap_limit
            .store(stamps_per_tap(connections), Ordering::Relaxed);
        self.taps.lock().expect("proxy taps").clear();
    }

    /// The wire taps of the latest `n` connections through this proxy, in the order they were
    /// accepted; `None` if fewer than `n` came through.
    pub fn last_taps(&self, n: usize) -> Option<Vec<Arc<WireTap>>> {
        let taps = self.taps.lock().expect("proxy taps");
        let from = taps.len().checked_sub(n)?;
        Some(taps.range(from..).cloned().collect())
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

/// Tells a client it was not let through, as a RESP error its library shows, and closes.
fn refuse(client: &mut TcpStream, why: &str) {
    let line = why.replace(['\r', '\n'], " ");
    let _ = client.write_all(format!("-ERR {line}\r\n").as_bytes());
    let _ = client.shutdown(Shutdown::Both);
}

/// The wire tap's hooks: count and stamp the commands handed to Redis and the replies read
/// from it.
fn tap_hooks(tap: Arc<WireTap>) -> Hooks {
    let (tap_read, tap_out, tap_back) = (tap.clone(), tap.clone(), tap);
    let mut commands = Framer::new(Side::Commands);
    let mut replies = Framer::new(Side::Replies);
    Hooks {
        client_read: Box::new(move |_, _| {
            tap_read.in_flight.fetch_add(1, Ordering::AcqRel);
        }),
        to_server: Box::new(move |_, at, bytes| {
            // Commands whose last byte has just been handed to Redis; none when the
            // connection is TLS, which the tap says rather than counting ciphertext.
            let n = commands.count(bytes);
            if commands.encrypted() {
                tap_out.encrypted();
            }
            tap_out.delivered(at, n);
            tap_out.in_flight.fetch_sub(1, Ordering::AcqRel);
        }),
        server_read: Box::new(move |at, bytes| tap_back.replied(at, replies.count(bytes))),
        to_client: Box::new(|_, _, _| {}),
        ended: Box::new(|_| {}),
    }
}

/// A proxied connection's two sockets, kept so dropping the proxy can end it, and how many of
/// its two directions are still running.
struct Connection {
    client: TcpStream,
    server: TcpStream,
    ending: Arc<Ending>,
}

/// How a connection's two directions finish: the first to end says why, the last to end
/// calls the `ended` hook.
struct Ending {
    live: AtomicU64,
    first: Mutex<Option<Ended>>,
    hook: Mutex<Option<OnEnded>>,
}

impl Ending {
    fn new() -> Arc<Ending> {
        Arc::new(Ending {
            live: AtomicU64::new(2),
            first: Mutex::new(None),
            hook: Mutex::new(None),
        })
    }

    /// Why the connection is ending, if nothing said so before: noted as soon as a side closes
    /// or fails, before the other side is told, so the first cause wins.
    fn note(&self, why: Ended) {
        self.first.lock().expect("ending").get_or_insert(why);
    }

    /// A direction finished; the last one calls the `ended` hook.
    fn end(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            let why = self
                .first
                .lock()
                .expect("ending")
                .clone()
                .unwrap_or(Ended::ByClient);
            if let Some(hook) = self.hook.lock().expect("ending").take() {
                hook(why);
            }
        }
    }
}

fn connect_pair(
    client: TcpStream,
    upstream: SocketAddr,
    sockets: &Mutex<Vec<Connection>>,
) -> Result<(TcpStream, TcpStream, Arc<Ending>), (TcpStream, std::io::Error)> {
    let server = match TcpStream::connect_timeout(&upstream, Duration::from_secs(5)) {
        Ok(s) => s,
        Err(e) => return Err((client, e)),
    };
    let kept = (|| {
        for s in [&client, &server] {
            s.set_nodelay(true)?;
        }
        Ok::<_, std::io::Error>((client.try_clone()?, server.try_clone()?))
    })();
    let (client_copy, server_copy) = match kept {
        Ok(k) => k,
        Err(e) => return Err((client, e)),
    };
    let ending = Ending::new();
    let mut all = sockets.lock().expect("proxy sockets");
    // A proxy serves connection after connection: let go of finished ones' sockets.
    all.retain(|c| c.ending.live.load(Ordering::Acquire) > 0);
    all.push(Connection {
        client: client_copy,
        server: server_copy,
        ending: ending.clone(),
    });
    Ok((client, server, ending))
}

fn spawn_directions(
    client: TcpStream,
    server: TcpStream,
    links: Links,
    stats: Arc<ProxyStats>,
    hooks: Hooks,
    ending: Arc<Ending>,
) -> std::io::Result<()> {
    let Hooks {
        client_read,
        mut to_server,
        server_read,
        mut to_client,
        ended,
    } = hooks;
    *ending.hook.lock().expect("ending") = Some(ended);
    // Commands go to Redis before their hooks have seen them (see `Ends::write_first`); this
    // lock keeps their hooks ahead of the replies' all the same.
    let order: Arc<Mutex<()>> = Default::default();
    let (c2, s2) = (client.try_clone()?, server.try_clone()?);
    // When Redis goes, the client's side goes too, so its record ends with it.
    let client_side = client.try_clone()?;
    let stats_back = stats.clone();
    pipe(
        "proxy-out",
        Ends {
            from: client,
            to: server,
            on_source_end: None,
            closed: Ended::ByClient,
            names: ("the client", "Redis"),
            order: order.clone(),
            write_first: true,
        },
        links.out,
        ending.clone(),
        client_read,
        move |release, at, bytes| {
            stats.written(Direction::Out, release, at, bytes.len());
            to_server(release, at, bytes);
        },
    )?;
    pipe(
        "proxy-back",
        Ends {
            from: s2,
            to: c2,
            on_source_end: Some(client_side),
            closed: Ended::ByRedis,
            names: ("Redis", "the client"),
            order,
            write_first: false,
        },
        links.back,
        ending,
        server_read,
        move |release, at, bytes| {
            stats_back.written(Direction::Back, release, at, bytes.len());
            to_client(release, at, bytes);
        },
    )?;
    Ok(())
}

/// One direction's sockets: where bytes come from and go, a socket whose reading stops when
/// the source closes, and what the source closing means.
struct Ends {
    from: TcpStream,
    to: TcpStream,
    on_source_end: Option<TcpStream>,
    closed: Ended,
    /// Who is at each end, for error messages: "the client", "Redis".
    names: (&'static str, &'static str),
    /// Held by the client → Redis direction from before it hands a chunk over until its
    /// hooks have seen it, and by the other direction while its reader's hook sees a chunk:
    /// so a command's hooks always run before its reply's, whichever thread is quicker.
    order: Arc<Mutex<()>>,
    /// With no delay dialled: hand each chunk over first (what the socket takes at once) and
    /// tell the hooks after, holding `order` until they are done, so the far side (Redis)
    /// works on it while the hooks (framing a pipeline of commands, say) run. Only for commands: the hooks still see replies before
    /// the client gets them, so whoever asked (a run reading the wire tap) finds them counted.
    write_first: bool,
}

/// Writes what `to` takes of `bytes` without waiting: how many bytes (0 if none fit now).
fn send_now(to: &TcpStream, bytes: &[u8]) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: send(2) reads `bytes.len()` bytes from a live slice on an open socket.
    let n = unsafe {
        libc::send(
            to.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if n >= 0 {
        return Ok(n as usize);
    }
    match std::io::Error::last_os_error() {
        e if matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
        ) =>
        {
            Ok(0)
        }
        e => Err(e),
    }
}

/// `order`'s guard (nothing it guards can be left half-done by a panic).
fn in_order(order: &Mutex<()>) -> std::sync::MutexGuard<'_, ()> {
    order.lock().unwrap_or_else(|e| e.into_inner())
}

/// Copies `from` → `to` through the delay line: a reader thread stamps and schedules, a
/// writer thread releases on time. `on_read` sees each chunk as it arrives, `on_written` as
/// it leaves (when it was due, and when it left: just before the write), e.g. for the wire
/// tap. A link with no delay, jitter or cap copies on the reader thread alone (client →
/// Redis handing each chunk over before its hooks run: see `Ends::write_first`).
fn pipe(
    name: &str,
    ends: Ends,
    link: Link,
    ending: Arc<Ending>,
    mut on_read: impl FnMut(Instant, &[u8]) + Send + 'static,
    mut on_written: impl FnMut(Instant, Instant, &[u8]) + Send + 'static,
) -> std::io::Result<()> {
    let Ends {
        mut from,
        mut to,
        on_source_end,
        closed,
        names: (from_name, to_name),
        order,
        write_first,
    } = ends;
    let failed = move |side: &str, e: std::io::Error| Ended::Error(format!("{side}: {e}"));
    let noted = ending.clone();
    let source_ended = move |why: Ended| {
        noted.note(why);
        if let Some(s) = &on_source_end {
            let _ = s.shutdown(Shutdown::Read);
        }
    };
    if link.is_instant() {
        std::thread::Builder::new()
            .name(format!("{name}-copy"))
            .spawn(move || {
                let mut buf = vec![0u8; CHUNK];
                loop {
                    match from.read(&mut buf) {
                        Ok(0) => break source_ended(closed),
                        Err(e) => break source_ended(failed(from_name, e)),
                        Ok(n) => {
                            let now = Instant::now();
                            let chunk = &buf[..n];
                            let wrote = if write_first {
                                let order = in_order(&order);
                                let handed = Instant::now();
                                // What the socket takes now; the rest (if any) after the hooks
                                // and without `order`, so a Redis slow to read never holds up
                                // the replies' direction.
                                let sent = send_now(&to, chunk);
                                on_read(now, chunk);
                                on_written(now, handed, chunk);
                                drop(order);
                                sent.and_then(|k| to.write_all(&chunk[k..]))
                            } else {
                                {
                                    let _order = in_order(&order);
                                    on_read(now, chunk);
                                }
                                // Told before the write: the far side may answer at once.
                                on_written(now, Instant::now(), chunk);
                                to.write_all(chunk)
                            };
                            if let Err(e) = wrote {
                                break ending.note(failed(to_name, e));
                            }
                        }
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
                ending.end();
            })?;
        return Ok(());
    }
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::Builder::new()
        .name(format!("{name}-read"))
        .spawn(move || {
            let mut schedule = Schedule::new(link);
            let mut buf = vec![0u8; CHUNK];
            loop {
                match from.read(&mut buf) {
                    Ok(0) => break source_ended(closed),
                    Err(e) => break source_ended(failed(from_name, e)),
                    Ok(n) => {
                        let now = Instant::now();
                        {
                            let _order = in_order(&order);
                            on_read(now, &buf[..n]);
                        }
                        if tx
                            .send((schedule.release(now, n), buf[..n].to_vec()))
                            .is_err()
                        {
                            break; // the writer failed, and noted why
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
            for (release, bytes) in rx {
                wait_until(release);
                // Stamped and told as the bytes are handed over, before the write: on loopback
                // they reach the far side at once, and a stamp or count taken after the write
                // could come later than the answer the other direction already read.
                on_written(release, Instant::now(), &bytes);
                if let Err(e) = to.write_all(&bytes) {
                    ending.note(failed(to_name, e));
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
            ending.end();
        })?;
    Ok(())
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
