//! The delay line itself: a proxy whose every connection is copied through two directions,
//! each a reader thread that stamps arrivals and a writer thread that releases each chunk on
//! time (see `schedule` for when). What happens to each connection's traffic is its `Hooks`:
//! the wire tap for runs, observe mode's recorder for an application's connections.
//!
//! Why threads, not tokio tasks: tokio's timer ticks in 1 ms, too coarse for sub-millisecond
//! delays. The writer sleeps until just before a chunk's release time and spins the last stretch.
//!
//! - this file: the proxy, its listener and what it keeps (sockets, wire taps);
//! - `hooks`: what a connection's chunks are shown to, and how a connection ended;
//! - `connection`: one connection's two sockets;
//! - `ending`: how its two directions finish, shared by the connection and its pipes;
//! - `pipe`: one direction's copy, on time;
//! - `budget`: how many bytes a direction may hold before its reader stops reading;
//! - `hold`: holding a reply back on purpose (observe mode's probe), and letting it go.

mod budget;
mod connection;
mod ending;
mod hold;
mod hooks;
mod pipe;

use std::collections::VecDeque;
use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use shared::Network;

use super::schedule::{Compensation, Links};
use super::stats::ProxyStats;
use super::wire_tap::{TAP_STAMPS, WireTap, stamps_per_tap};
pub use budget::direction_budget;
use connection::{Connection, connect_pair, spawn_directions};
pub use hold::{Gate, Hold, Holding};
use hooks::tap_hooks;
pub use hooks::{Admit, Ended, Hooks};

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
                        let Ok(client) = client else { continue };
                        admit_one(client, &mut admit, upstream, links, &sockets, &stats);
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

/// One accepted client: its hooks (or a refusal), then its connection to Redis and the two
/// directions copying between them.
fn admit_one(
    mut client: TcpStream,
    admit: &mut Admit,
    upstream: SocketAddr,
    links: Links,
    sockets: &Mutex<Vec<Connection>>,
    stats: &Arc<ProxyStats>,
) {
    let peer = client
        .peer_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let hooks = match admit(peer) {
        Ok(hooks) => hooks,
        Err(why) => return refuse(&mut client, &why),
    };
    match connect_pair(client, upstream, sockets) {
        Ok((client, server, ending)) => {
            if let Err(e) = spawn_directions(client, server, links, stats.clone(), hooks, ending) {
                tracing::warn!("proxy: {e}");
            }
        }
        Err((mut client, e)) => {
            let why = format!("pipescope cannot reach Redis at {upstream}: {e}");
            tracing::warn!("{why}");
            refuse(&mut client, &why);
            (hooks.ended)(Ended::Error(why));
        }
    }
}

/// Tells a client it was not let through, as a RESP error its library shows, and closes.
fn refuse(client: &mut TcpStream, why: &str) {
    let line = why.replace(['\r', '\n'], " ");
    let _ = client.write_all(format!("-ERR {line}\r\n").as_bytes());
    let _ = client.shutdown(Shutdown::Both);
}
