//! Observe mode: an application points its Redis client at pipescope's observing proxy and
//! sees whether, and how, it pipelines.
//!
//! ```text
//! application ══ its own connections ══▶ observing proxy ══▶ Redis
//!                                         │ hooks: framer + record per connection
//!                                         ▼
//!                              Connections ──▶ hub (page) / CLI report
//! ```
//!
//! The proxy is the delay line (`net::DelayProxy`) on the address the user chose, forwarding
//! every byte unchanged, with no network dialled in unless asked. Its hooks frame each
//! direction with the streaming RESP framer (`resp::framer`) and keep a `record::Record` per
//! connection: exact counts, where the time went, the first requests' stamps. The verdict is
//! worked out from those in `shared::observe::verdict`, so the page and the CLI say the same
//! thing.
//!
//! - `record`: one connection's record, chunk by chunk.
//! - `captured`: the same records fed from a capture, a file or live (`crate::capture`), no
//!   proxy at all.
//! - `receive_window`: the client's receive window in a capture, shrinking as replies lie unread.
//! - `traced`: a client process's syscalls (`crate::syscalls`) given to the connections seen,
//!   each judged again with them.
//! - `hops`: the observer's own two hops (client → proxy → client), measured at start, so
//!   they are their own part of a connection's time, not the client's.
//! - `equivalent`: what the same number of commands cost pipelined by pipescope's own engine.
//! - `report`: the CLI's table, JSON and Markdown.

pub mod captured;
pub mod equivalent;
mod hops;
mod receive_window;
mod record;
pub mod report;
pub mod traced;
/// The probe's bounds (`observe --probe`), for what the CLI and page say of it.
pub mod holding {
    pub use super::record::holding::{FEW, HARD_CAP, MAX_HOLDS, SHARE};
}

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shared::Network;
use shared::observe::{
    MAX_OBSERVED_CONNECTIONS, ObserveStatus, ObservedConnection, ObservedTimeline, Vantage,
};

use crate::net::{Compensation, DelayProxy, Holding, Hooks};
use crate::resp::framer::{Framer, Side};
use crate::target::{RedisTarget, TargetError};
use record::Record;

/// Ended connections kept for the report and the page (the oldest go first).
const KEPT_ENDED: usize = 1_000;

/// Ended connections whose requests are kept for the timeline (the latest ones); older ended
/// connections keep their counts and times only. With the open ones' requests, this bounds
/// the stamps held: (`MAX_OBSERVED_CONNECTIONS` + this) connections' worth.
const KEPT_ENDED_TIMELINES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    #[error(
        "cannot listen on {addr}: {source} (choose another address with --listen, e.g. 127.0.0.1:0 for any free port)"
    )]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(
        "observe mode reads your application's RESP as it passes, and TLS hides it: it cannot observe a rediss:// Redis. Point pipescope at a plain redis:// port of that Redis to observe"
    )]
    Tls,
}

/// The observing proxy and what it has seen. Dropping it closes the proxy and every
/// connection through it, and stops measuring its hops.
pub struct Observer {
    proxy: DelayProxy,
    connections: Arc<Connections>,
    remeasuring: tokio::task::JoinHandle<()>,
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.remeasuring.abort();
    }
}

impl Observer {
    /// Listens on `listen` and forwards each connection to `target`'s Redis over `network`,
    /// after measuring its own two hops (`hops`). The proxy's own forwarding cost is not
    /// taken off a dialled delay: an application's round trip through it is its direct one,
    /// plus the proxy, plus 2·D.
    pub async fn start(
        listen: SocketAddr,
        target: &RedisTarget,
        network: Network,
    ) -> Result<Observer, ObserveError> {
        Self::start_probing(listen, target, network, false).await
    }

    /// `start`, with the probe on (`probe`): each connection has a few of its replies held
    /// back, to see whether the client waits for them (`record::holding`).
    pub async fn start_probing(
        listen: SocketAddr,
        target: &RedisTarget,
        network: Network,
        probe: bool,
    ) -> Result<Observer, ObserveError> {
        if target.tls_trust().is_some() {
            return Err(ObserveError::Tls);
        }
        let upstream = target.socket_addr().await?;
        let mut samples = hops::HopSamples::default();
        measure_hops(&mut samples, upstream, network).await;
        let (hop_us, hop_spread) = samples.figure().unzip();
        let compensation = Compensation::default();
        let listener = TcpListener::bind(listen).map_err(|source| ObserveError::Listen {
            addr: listen,
            source,
        })?;
        let remote_redis = !upstream.ip().is_loopback();
        let connections = Arc::new(Connections {
            vantage: Mutex::new(Vantage::Proxy {
                hop_us,
                remote_redis,
                hop_spread,
            }),
            probe,
            ..Connections::default()
        });
        // Measured again while a connection is open, on a probe connection of its own: the
        // figure charged is the median of every measurement's PINGs (the latest kept). While
        // nothing is observed, nothing is sent: the user's Redis (and its monitoring) sees no
        // PINGs from an idle observer.
        let remeasuring = {
            let connections = connections.clone();
            tokio::spawn(async move {
                let every = Duration::from_secs(shared::observe::HOP_REMEASURE_SECS);
                loop {
                    tokio::time::sleep(every).await;
                    if connections.open() == 0 {
                        continue;
                    }
                    measure_hops(&mut samples, upstream, network).await;
                    if let Some((hop, spread)) = samples.figure() {
                        *connections.vantage.lock().expect("vantage") = Vantage::Proxy {
                            hop_us: Some(hop),
                            remote_redis,
                            hop_spread: Some(spread),
                        };
                    }
                }
            })
        };
        let admit = {
            let connections = connections.clone();
            Box::new(move |client: SocketAddr| connections.admit(client))
        };
        let proxy = DelayProxy::start(listener, upstream, network, compensation, admit).map_err(
            |cause| TargetError::Unreachable {
                addr: target.addr(),
                cause,
            },
        )?;
        Ok(Observer {
            proxy,
            connections,
            remeasuring,
        })
    }

    /// Where the proxy listens.
    pub fn addr(&self) -> SocketAddr {
        self.proxy.addr()
    }

    /// What to point an application at: `redis://127.0.0.1:6380`.
    pub fn connect_url(&self) -> String {
        let addr = self.addr();
        let shown = if addr.ip().is_unspecified() {
            SocketAddr::new([127, 0, 0, 1].into(), addr.port())
        } else {
            addr
        };
        format!("redis://{shown}")
    }

    pub fn status(&self) -> ObserveStatus {
        ObserveStatus {
            connect_url: self.connect_url(),
            network: self.proxy.network(),
            note: None,
            forwards_to: String::new(),
            own_redis: false,
            probe: self.connections.probe,
        }
    }

    pub fn connections(&self) -> &Arc<Connections> {
        &self.connections
    }

    /// The observer's two hops a round trip, as measured so far (`None`: not measured), and
    /// their spread.
    pub fn hop_us(&self) -> Option<f64> {
        self.hops().map(|(hop, _)| hop)
    }

    pub fn hops(&self) -> Option<(f64, Option<shared::observe::HopSpread>)> {
        match &*self.connections.vantage.lock().expect("vantage") {
            Vantage::Proxy {
                hop_us, hop_spread, ..
            } => hop_us.map(|hop| (hop, hop_spread.clone())),
            Vantage::Capture => None,
        }
    }
}

/// One more measurement of the observer's hops into `samples`; a failure is logged (the
/// figure stands as measured before, or unmeasured).
async fn measure_hops(samples: &mut hops::HopSamples, upstream: SocketAddr, network: Network) {
    match tokio::task::spawn_blocking(move || hops::hop_cost(upstream, network)).await {
        Ok(Ok(Some(hops))) => samples.add(&hops),
        Ok(Ok(None)) => tracing::warn!("the observer's hops: too few PINGs came back"),
        Ok(Err(e)) => tracing::warn!("the observer's hops could not be measured: {e}"),
        Err(e) => tracing::warn!("the observer's probe failed: {e}"),
    }
}

/// Every connection the proxy has followed: open ones, and the latest `KEPT_ENDED` ended.
#[derive(Default)]
pub struct Connections {
    list: Mutex<List>,
    /// How they are seen: through this proxy, with its hops as measured so far.
    vantage: Mutex<Vantage>,
    /// Whether each connection's probe holds a few of its replies back.
    probe: bool,
}

#[derive(Default)]
struct List {
    next_id: u64,
    followed: Vec<Arc<Followed>>,
}

/// One connection's record, and whether it changed since the page last heard of it.
struct Followed {
    record: Mutex<Record>,
    changed: AtomicBool,
}

impl Followed {
    fn with<T>(&self, f: impl FnOnce(&mut Record) -> T) -> T {
        let out = f(&mut self.record.lock().expect("observed record"));
        self.changed.store(true, Ordering::Release);
        out
    }
}

impl Connections {
    /// A new connection from `client`: its hooks, or a refusal when `MAX_OBSERVED_CONNECTIONS`
    /// are open.
    fn admit(&self, client: SocketAddr) -> Result<Hooks, String> {
        let mut list = self.list.lock().expect("observed connections");
        let open = list
            .followed
            .iter()
            .filter(|f| f.record.lock().expect("observed record").is_open())
            .count();
        if open >= MAX_OBSERVED_CONNECTIONS {
            return Err(format!(
                "pipescope observes at most {MAX_OBSERVED_CONNECTIONS} connections at once; this one was refused (close some first)"
            ));
        }
        if list.followed.len() >= MAX_OBSERVED_CONNECTIONS + KEPT_ENDED
            && let Some(at) = list
                .followed
                .iter()
                .position(|f| !f.record.lock().expect("observed record").is_open())
        {
            list.followed.remove(at);
        }
        let ended: Vec<&Arc<Followed>> = list
            .followed
            .iter()
            .filter(|f| !f.record.lock().expect("observed record").is_open())
            .collect();
        let older = ended.len().saturating_sub(KEPT_ENDED_TIMELINES);
        for f in &ended[..older] {
            f.record.lock().expect("observed record").forget_requests();
        }
        list.next_id += 1;
        let mut record = Record::new(list.next_id, client.to_string());
        if self.probe {
            record.probe();
        }
        let followed = Arc::new(Followed {
            record: Mutex::new(record),
            changed: AtomicBool::new(true),
        });
        list.followed.push(followed.clone());
        Ok(hooks(followed, self.probe))
    }

    /// How they are seen now: the hops' figure changes as they are measured again.
    fn vantage(&self) -> Vantage {
        self.vantage.lock().expect("vantage").clone()
    }

    fn all(&self) -> Vec<Arc<Followed>> {
        self.list
            .lock()
            .expect("observed connections")
            .followed
            .clone()
    }

    /// Every connection, as it stands now.
    pub fn snapshot(&self) -> Vec<ObservedConnection> {
        let now = Instant::now();
        let vantage = self.vantage();
        self.all()
            .iter()
            .map(|f| {
                f.record
                    .lock()
                    .expect("observed record")
                    .seen_from(now, &vantage)
            })
            .collect()
    }

    /// Connections that changed since the last call (or that are waiting on replies, whose
    /// time runs on).
    pub fn take_changed(&self) -> Vec<ObservedConnection> {
        let now = Instant::now();
        let vantage = self.vantage();
        self.all()
            .iter()
            .filter_map(|f| {
                let changed = f.changed.swap(false, Ordering::AcqRel);
                let record = f.record.lock().expect("observed record");
                (changed || record.awaits_reply()).then(|| record.seen_from(now, &vantage))
            })
            .collect()
    }

    /// How many are open.
    pub fn open(&self) -> usize {
        self.all()
            .iter()
            .filter(|f| f.record.lock().expect("observed record").is_open())
            .count()
    }

    /// Connection `id`'s requests, for the timeline.
    pub fn timeline(&self, id: u64) -> Option<ObservedTimeline> {
        let all = self.all();
        let f = all
            .iter()
            .find(|f| f.record.lock().expect("observed record").id == id)?;
        let (timeline, writes_us) = f.record.lock().expect("observed record").timeline();
        Some(ObservedTimeline {
            id,
            timeline,
            writes_us,
        })
    }
}

/// The proxy's hooks for one followed connection: each direction frames its chunks as they
/// arrive and the record takes them as they leave; with the probe on (`probe`), the record
/// decides which replies are held back.
fn hooks(f: Arc<Followed>, probe: bool) -> Hooks {
    let (f1, f2, f3, f4, f5) = (f.clone(), f.clone(), f.clone(), f.clone(), f.clone());
    let hold = probe.then(|| {
        let (f6, f7) = (f.clone(), f.clone());
        Holding {
            decide: Box::new(move |at| f6.with(|r| r.hold(at))),
            released: Box::new(move |at, unread| f7.with(|r| r.released(at, unread))),
        }
    });
    let mut commands = Framer::new(Side::Commands);
    let mut replies = Framer::new(Side::Replies);
    Hooks {
        client_read: Box::new(move |at, bytes| {
            f1.with(|r| r.client_read(at, bytes, &mut commands))
        }),
        to_server: Box::new(move |_, at, _| f2.with(|r| r.handed_to_redis(at))),
        server_read: Box::new(move |at, bytes| f3.with(|r| r.redis_read(at, bytes, &mut replies))),
        to_client: Box::new(move |_, at, _| f4.with(|r| r.handed_to_client(at))),
        ended: Box::new(move |why| f.with(|r| r.end(Instant::now(), why.to_string()))),
        client_socket: Some(Box::new(move |socket| f5.with(|r| r.watch(socket)))),
        hold,
    }
}
