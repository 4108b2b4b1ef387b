//! The delay line itself: a proxy on a free loopback port whose every connection is copied
//! through two directions, each a reader thread that stamps arrivals and a writer thread that
//! releases each chunk on time (see `schedule` for when).
//!
//! Why threads, not tokio tasks: tokio's timer ticks in 1 ms, too coarse for sub-millisecond
//! delays. The writer sleeps until just before a chunk's release time and spins the last stretch.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shared::Network;

use super::schedule::{Compensation, Link, Links, Schedule};
use super::stats::{Direction, ProxyStats};
use super::wire_tap::{RespFramer, WireTap};

/// The writer spins (instead of sleeping) for at most this long before a release: Linux
/// sleeps overshoot by tens of µs, which would swamp sub-millisecond delays.
const SPIN: Duration = Duration::from_micros(120);
const CHUNK: usize = 64 * 1024;

/// A running delay-line proxy on a free loopback port in front of `upstream`.
pub struct DelayProxy {
    addr: SocketAddr,
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
    /// The wire tap of the most recent connection (one run at a time uses the proxy).
    last_tap: Arc<Mutex<Option<Arc<WireTap>>>>,
}

impl DelayProxy {
    /// The raw delay line: each chunk leaves at arrival + what `network` says, with nothing
    /// taken off for the proxy's own cost (calibration measures that cost through one).
    pub fn raw(upstream: SocketAddr, network: Network) -> std::io::Result<DelayProxy> {
        Self::start_compensated(upstream, network, Compensation::default())
    }

    /// A proxy that takes `compensation` off each direction's delay (never releasing a chunk
    /// before it arrived). `Compensation::default()` is the raw delay line.
    pub fn start_compensated(
        upstream: SocketAddr,
        network: Network,
        compensation: Compensation,
    ) -> std::io::Result<DelayProxy> {
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
            #[cfg(feature = "test-util")]
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
        move |release, at, bytes| {
            stats_out.written(Direction::Out, release, at, bytes.len());
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
        move |release, at, bytes| stats.written(Direction::Back, release, at, bytes.len()),
    )?;
    Ok(())
}

/// Copies `from` → `to` through the delay line: a reader thread stamps and schedules, a
/// writer thread releases on time. `on_read` sees each chunk as it arrives, `on_written` as
/// it leaves (with when it was due and when it left), e.g. for the wire tap.
fn pipe(
    name: &str,
    mut from: TcpStream,
    mut to: TcpStream,
    link: Link,
    live: Arc<AtomicU64>,
    mut on_read: impl FnMut(Instant, &[u8]) + Send + 'static,
    mut on_written: impl FnMut(Instant, Instant, &[u8]) + Send + 'static,
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
            for (release, bytes) in rx {
                wait_until(release);
                // Stamped as the bytes are handed over: on loopback that is when they reach
                // the far side, and a stamp taken after the write could come later than the
                // reply the other direction already read.
                let at = Instant::now();
                if to.write_all(&bytes).is_err() {
                    break;
                }
                on_written(release, at, &bytes);
            }
            let _ = to.shutdown(Shutdown::Write);
            live.fetch_sub(1, Ordering::AcqRel);
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
