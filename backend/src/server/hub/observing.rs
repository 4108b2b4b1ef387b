//! Observe mode on the page: the presenter starts and stops the observing proxy
//! (`observe::Observer`); every page sees its connections as they change.
//!
//! ```text
//! application ══▶ observing proxy ══▶ Redis
//!                   │ Connections (counts, times, stamps)
//!                   ▼ ticker, ≤ OBSERVED_HZ: take_changed → Observed (every page)
//!                 hub ── Welcome carries the snapshot; WantTimeline answers one page
//! ```
//!
//! The latest observation's connections are kept once it stops, so a page that opens later
//! still sees them and can ask for their timelines. A measured pipelined equivalent is kept
//! per connection id and sent inside the connection from then on.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use shared::observe::{ObserveStatus, ObservedConnection, ObservedTimeline, PipelinedEquivalent};
use shared::{Mode, Network, RunSpec, ServerMsg};

use super::{Hub, Rejection};
use crate::observe::{Connections, ObserveError, Observer, equivalent};

/// Where the observing proxy listens unless `--observe-listen` says otherwise: the port next
/// to Redis's own, so a connection string differs by one digit.
pub const DEFAULT_OBSERVE_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 6380);

/// `Observed` frames per second at most: enough for a table to feel live, few enough that a
/// busy application's thousands of changes cost the pages nothing.
pub const OBSERVED_HZ: u64 = 4;

/// What the hub knows of observe mode.
#[derive(Default)]
pub(super) struct Observing {
    /// The proxy, while it runs.
    live: Option<Live>,
    /// Set while a presenter's start is binding the proxy (so two starts cannot race).
    starting: bool,
    /// The latest observation's connections, kept once it stops.
    connections: Option<Arc<Connections>>,
    /// The latest observation's network (its equivalents are measured over it).
    network: Network,
    /// Pipelined equivalents measured, per connection id (of the latest observation).
    equivalents: HashMap<u64, PipelinedEquivalent>,
    /// The connection whose equivalent is being measured (one at a time).
    measuring: Option<u64>,
}

struct Live {
    observer: Observer,
    status: ObserveStatus,
    ticker: tokio::task::JoinHandle<()>,
}

impl Observing {
    /// Connections as pages see them: each with its equivalent, once measured, and worded
    /// (`ObservedConnection::with_words`: the page carries no wording of its own).
    fn for_pages(&self, conns: Vec<ObservedConnection>) -> Vec<ObservedConnection> {
        conns
            .into_iter()
            .map(|mut c| {
                if let Some(e) = self.equivalents.get(&c.id) {
                    c.equivalent = Some(e.clone());
                }
                c.with_words()
            })
            .collect()
    }
}

impl Hub {
    /// Listens for observed applications on `listen` (default `DEFAULT_OBSERVE_LISTEN`).
    pub fn observe_on(mut self, listen: SocketAddr) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("set before the hub is shared")
            .observe_listen = listen;
        self
    }

    /// Says the Redis behind the hub is pipescope's own throwaway one (no `--redis-url`): the
    /// observe panel warns that an application's data is not there.
    pub fn redis_is_own(mut self, own: bool) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("set before the hub is shared")
            .own_redis = own;
        self
    }

    fn observing(&self) -> std::sync::MutexGuard<'_, Observing> {
        self.inner.observing.lock().expect("hub observing")
    }

    /// Whether a pipelined equivalent is being measured (its keys may be in Redis).
    pub(super) fn is_measuring(&self) -> bool {
        self.observing().measuring.is_some()
    }

    /// For `Welcome`: the proxy's status while it runs, and the latest observation's
    /// connections.
    pub(super) fn observe_welcome(&self) -> (Option<ObserveStatus>, Vec<ObservedConnection>) {
        let o = self.observing();
        let status = o.live.as_ref().map(|l| l.status.clone());
        let conns = o
            .connections
            .as_ref()
            .map(|c| o.for_pages(c.snapshot()))
            .unwrap_or_default();
        (status, conns)
    }

    /// Starts the observing proxy over `network` (a presenter action), its probe on with
    /// `probe`. If the chosen port is taken, a free loopback port is used instead and the
    /// status says so.
    pub async fn observe(&self, network: Network, probe: bool) -> Result<ObserveStatus, Rejection> {
        // The same bounds as a run's network.
        RunSpec {
            network,
            ..RunSpec::set(1, Mode::Sequential)
        }
        .validate(&self.inner.limits)?;
        {
            let mut o = self.observing();
            if o.live.is_some() || o.starting {
                return Err(Rejection::AlreadyObserving);
            }
            o.starting = true;
        }
        let started = self.bind_observer(network, probe).await;
        let mut o = self.observing();
        o.starting = false;
        let (observer, note) = started?;
        let status = ObserveStatus {
            note,
            forwards_to: self.inner.target.redacted(),
            own_redis: self.inner.own_redis,
            ..observer.status()
        };
        let connections = observer.connections().clone();
        o.connections = Some(connections.clone());
        o.network = network;
        o.equivalents.clear();
        let hub = self.clone();
        let ticker = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(1000 / OBSERVED_HZ));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tick.tick().await;
                hub.broadcast_changed(&connections);
            }
        });
        o.live = Some(Live {
            observer,
            status: status.clone(),
            ticker,
        });
        drop(o);
        // A fresh observation: pages forget the previous one's connections.
        self.emit(ServerMsg::ObserveStarted {
            status: status.clone(),
        });
        tracing::info!(url = %status.connect_url, "observing");
        Ok(status)
    }

    async fn bind_observer(
        &self,
        network: Network,
        probe: bool,
    ) -> Result<(Observer, Option<String>), Rejection> {
        let listen = self.inner.observe_listen;
        let failed = |e: ObserveError| Rejection::ObserveFailed(e.to_string());
        let target = &self.inner.target;
        match Observer::start_probing(listen, target, network, probe).await {
            Ok(observer) => Ok((observer, None)),
            Err(ObserveError::Listen { source, .. })
                if source.kind() == std::io::ErrorKind::AddrInUse && listen.port() != 0 =>
            {
                let free = SocketAddr::new(listen.ip(), 0);
                let observer = Observer::start_probing(free, target, network, probe)
                    .await
                    .map_err(failed)?;
                let note = format!(
                    "{listen} was taken (something else listens there), so pipescope listens on {} instead",
                    observer.addr()
                );
                Ok((observer, Some(note)))
            }
            Err(e) => Err(failed(e)),
        }
    }

    /// Stops the observing proxy: its connections end; their numbers stay for the pages.
    pub fn stop_observing(&self, reason: Option<String>) -> Result<(), Rejection> {
        let (live, connections) = {
            let mut o = self.observing();
            let live = o.live.take().ok_or(Rejection::NotObserving)?;
            (live, o.connections.clone())
        };
        live.ticker.abort();
        // Closes the proxy and every connection through it.
        drop(live.observer);
        // The last changes (how each connection ended) before saying it stopped.
        if let Some(connections) = connections {
            self.broadcast_changed(&connections);
        }
        self.emit(ServerMsg::ObserveStopped { reason });
        Ok(())
    }

    /// Broadcasts the connections that changed since the last call, if any.
    fn broadcast_changed(&self, connections: &Connections) {
        let changed = connections.take_changed();
        if changed.is_empty() {
            return;
        }
        let changed = self.observing().for_pages(changed);
        self.emit(ServerMsg::Observed {
            connections: changed,
        });
    }

    /// The latest observation as the observe view's file holds it (`html_file::of_proxy`):
    /// its connections with their measured equivalents, not worded yet (a redaction comes
    /// first), the requests kept of each, and where it was observed.
    pub fn observation(&self) -> Result<crate::html_file::Observed, Rejection> {
        let (connections, equivalents, network) = {
            let o = self.observing();
            let connections = o.connections.clone().ok_or(Rejection::NotObserving)?;
            (connections, o.equivalents.clone(), o.network)
        };
        let conns: Vec<ObservedConnection> = connections
            .snapshot()
            .into_iter()
            .map(|mut c| {
                c.equivalent = equivalents.get(&c.id).cloned().or(c.equivalent);
                c
            })
            .collect();
        let timelines = conns
            .iter()
            .filter_map(|c| connections.timeline(c.id))
            .collect();
        Ok(crate::html_file::Observed {
            conns,
            timelines,
            redis_version: self.inner.redis_version.clone(),
            target: self.inner.target.redacted(),
            network,
        })
    }

    /// Connection `id`'s requests, for the page that asked.
    pub fn observed_timeline(&self, id: u64) -> Result<ObservedTimeline, Rejection> {
        let connections = self
            .observing()
            .connections
            .clone()
            .ok_or(Rejection::NotObserving)?;
        connections
            .timeline(id)
            .ok_or(Rejection::NoSuchConnection(id))
    }

    /// Measures what connection `id`'s commands cost pipelined by pipescope's engine (a
    /// presenter action, one at a time); every page then gets the connection with it.
    pub async fn measure_equivalent(&self, id: u64) -> Result<(), Rejection> {
        let (conn, network, connections) = {
            let mut o = self.observing();
            if self
                .inner
                .stopping
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                return Err(Rejection::ShuttingDown);
            }
            if o.measuring.is_some() {
                return Err(Rejection::Measuring);
            }
            let connections = o.connections.clone().ok_or(Rejection::NotObserving)?;
            let conn = connections
                .snapshot()
                .into_iter()
                .find(|c| c.id == id)
                .ok_or(Rejection::NoSuchConnection(id))?;
            o.measuring = Some(id);
            (conn, o.network, connections)
        };
        let measured = self.measure(&conn, network).await;
        let mut o = self.observing();
        o.measuring = None;
        o.equivalents.insert(id, measured?);
        let conns = connections
            .snapshot()
            .into_iter()
            .filter(|c| c.id == id)
            .collect();
        let conns = o.for_pages(conns);
        drop(o);
        self.emit(ServerMsg::Observed { connections: conns });
        Ok(())
    }

    async fn measure(
        &self,
        conn: &ObservedConnection,
        network: Network,
    ) -> Result<PipelinedEquivalent, Rejection> {
        if self.is_busy() {
            return Err(Rejection::Busy);
        }
        let plan = equivalent::plan(conn, network)
            .map_err(|why| Rejection::NothingToMeasure(conn.id, why))?;
        // Its own run id, so its keys never meet a run's.
        let run_id = self.reserve_runs(1);
        let stopping = self.inner.stopping.clone();
        equivalent::measure(
            &self.inner.target,
            &self.inner.proxies,
            plan,
            run_id,
            stopping,
        )
        .await
        .map_err(|e| {
            self.note_cancelled(run_id, &e);
            Rejection::EquivalentFailed(e.to_string())
        })
    }
}
