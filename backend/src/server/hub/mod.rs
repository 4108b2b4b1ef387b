//! The one run at a time, and everyone watching it. A start becomes a plan (one or more specs
//! run in order); its events go to every connected page through a bounded broadcast, so the
//! engine never waits on a viewer: a slow viewer skips ahead instead. Each event is serialised
//! once for all viewers, and the hub keeps a snapshot of the run in progress (its start, the
//! spans streamed so far, its latest progress) so a page that connects mid-run catches up.
//!
//! This file is the hub's face (subscribe, start, cancel, the one `emit` every event goes
//! through). Beside it:
//!
//! - `plan`: runs a plan's specs and streams them, and says what became of each.
//! - `state`: what the hub remembers between events (the rate limit, the latest runs, the
//!   snapshot).
//! - `observing`: observe mode (the observing proxy the presenter starts, and its connections
//!   for every page).
//! - `stopping`: cancels what runs when the server shuts down and waits for its cleanup.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use shared::{Limits, Network, PROTOCOL_VERSION, RunSpec, ServerMsg, validate_runs};
use tokio::sync::broadcast;

mod observing;
pub mod plan;
mod state;
mod stopping;

pub use observing::{DEFAULT_OBSERVE_LISTEN, OBSERVED_HZ};

use state::State;

use crate::engine::{DEFAULT_RESPONSE_TIMEOUT, keys};
use crate::net::Proxies;
use crate::target::{RedisTarget, TargetError};

/// At most this many starts in any window of `STARTS_WINDOW`, whoever sends them.
pub const STARTS_PER_WINDOW: usize = 10;
pub const STARTS_WINDOW: Duration = Duration::from_secs(10);

/// Progress frames per second, whatever the count.
pub const PROGRESS_HZ: u64 = 30;
const EVENT_BUFFER: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("invalid request: {0}")]
    Invalid(#[from] shared::SpecError),
    #[error("a run is already in progress; wait for it to finish or cancel it")]
    Busy,
    #[error("too many starts ({STARTS_PER_WINDOW} in {STARTS_WINDOW:?}); wait a moment")]
    TooMany,
    /// A presenter action from a page without the presenter's token.
    #[error(
        "this page can only watch: starting or cancelling a run, and starting or stopping observation, need the presenter's link (with its token), printed when pipescope started"
    )]
    WatchOnly,
    #[error("already observing: stop first to start again")]
    AlreadyObserving,
    #[error("not observing: start observing first")]
    NotObserving,
    #[error("cannot observe: {0}")]
    ObserveFailed(String),
    #[error("no observed connection {0}")]
    NoSuchConnection(u64),
    #[error("a pipelined equivalent is being measured already; wait for it")]
    Measuring,
    #[error("connection {0}: {1}")]
    NothingToMeasure(u64, shared::observe::NoEquivalent),
    #[error("the pipelined equivalent failed: {0}")]
    EquivalentFailed(String),
    #[error("pipescope is shutting down: nothing new runs")]
    ShuttingDown,
}

/// What a new connection gets from the hub: see `Hub::subscribe`.
pub struct Subscription {
    pub welcome: ServerMsg,
    pub catch_up: Vec<ServerMsg>,
    pub events: broadcast::Receiver<Utf8Bytes>,
}

#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    /// Redis, directly. A run whose spec dials in a network reaches it through one of `proxies`.
    target: RedisTarget,
    proxies: Proxies,
    /// The network the server was started with: the page's initial choice (`Welcome`).
    network: Network,
    redis_version: String,
    limits: Limits,
    response_timeout: Duration,
    /// Every event as the JSON text frame all viewers send (serialised once).
    events: broadcast::Sender<Utf8Bytes>,
    /// Raised once when the server shuts down; every websocket then closes with a reason.
    closing: tokio::sync::watch::Sender<bool>,
    state: Mutex<State>,
    next_run: AtomicU64,
    /// When set, only connections that present it may start or cancel runs.
    token: Option<String>,
    /// Where the observing proxy listens when the presenter starts it.
    observe_listen: std::net::SocketAddr,
    /// The Redis is pipescope's own, started for this server (no `--redis-url`).
    own_redis: bool,
    observing: Mutex<observing::Observing>,
    /// Raised once the server shuts down: cancels a pipelined equivalent being measured, and
    /// nothing new starts.
    stopping: Arc<AtomicBool>,
}

impl Hub {
    /// A hub whose default network (what `Welcome` offers the page) is `network`; each run
    /// still crosses the network its own spec names. The default's delay-line proxy is started
    /// (and calibrated) now, so a bad setup shows at start-up and the first run does not wait
    /// for it. Also sweeps keys that earlier, crashed runs of pipescope left behind.
    pub async fn with_network(
        target: RedisTarget,
        redis_version: String,
        network: Network,
    ) -> Result<Self, TargetError> {
        let swept = keys::sweep_leftovers(&target, keys::first_run_id()).await?;
        if swept > 0 {
            tracing::warn!(
                keys = swept,
                "removed keys left behind by earlier pipescope runs"
            );
        }
        let hub = Self::build(target, redis_version, network);
        hub.inner.proxies.route(&hub.inner.target, network).await?;
        Ok(hub)
    }

    fn build(target: RedisTarget, redis_version: String, network: Network) -> Self {
        let first = keys::first_run_id();
        Self {
            inner: Arc::new(Inner {
                target,
                proxies: Proxies::default(),
                network,
                redis_version,
                limits: Limits::DEFAULT,
                response_timeout: DEFAULT_RESPONSE_TIMEOUT,
                events: broadcast::channel(EVENT_BUFFER).0,
                closing: tokio::sync::watch::channel(false).0,
                state: Mutex::new(State::default()),
                next_run: AtomicU64::new(first),
                token: None,
                observe_listen: DEFAULT_OBSERVE_LISTEN,
                own_redis: false,
                observing: Mutex::default(),
                stopping: Arc::default(),
            }),
        }
    }

    /// Requires `token` to start or cancel runs (when listening beyond loopback).
    pub fn require_token(mut self, token: String) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("set before the hub is shared")
            .token = Some(token);
        self
    }

    /// Whether a connection that presented `token` may start and cancel runs.
    pub fn may_control(&self, token: Option<&str>) -> bool {
        match &self.inner.token {
            None => true,
            Some(required) => token.is_some_and(|t| t.as_bytes() == required.as_bytes()),
        }
    }

    /// Redis, directly (runs over a network go through a proxy in front of it).
    pub fn target(&self) -> &RedisTarget {
        &self.inner.target
    }

    /// What any run here may be (`RunSpec::validate`).
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The default network: the page's initial choice.
    pub fn network(&self) -> Network {
        self.inner.network
    }

    /// A `Welcome` describing the current state, the run in progress as messages (empty when
    /// idle), and a receiver of every event after them, as JSON text frames (all taken under
    /// the lock `emit` holds, so nothing falls between them and nothing arrives twice).
    pub fn subscribe(&self) -> Subscription {
        let state = self.inner.state.lock().expect("hub state");
        let (observing, observed) = self.observe_welcome();
        let welcome = ServerMsg::Welcome {
            protocol: PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            redis_version: self.inner.redis_version.clone(),
            target: self.inner.target.shown(),
            limits: self.inner.limits,
            network: self.inner.network,
            can_control: false,
            busy: state.running.is_some(),
            recent: state.recent.clone(),
            observing,
            observed,
            replay: None,
        };
        Subscription {
            welcome,
            catch_up: state.snapshot(),
            events: self.inner.events.subscribe(),
        }
    }

    /// Tells every websocket to close: the server is shutting down.
    pub fn close(&self) {
        self.inner.closing.send_replace(true);
    }

    pub fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.inner.closing.subscribe()
    }

    pub fn is_busy(&self) -> bool {
        self.inner
            .state
            .lock()
            .expect("hub state")
            .running
            .is_some()
    }

    /// Validates and starts a plan in the background; refuses if one is running.
    pub fn start(&self, runs: Vec<RunSpec>) -> Result<(), Rejection> {
        if self.inner.stopping.load(Ordering::SeqCst) {
            return Err(Rejection::ShuttingDown);
        }
        validate_runs(&runs, &self.inner.limits)?;
        let cancel = Arc::new(AtomicBool::new(false));
        self.inner.state.lock().expect("hub state").admit(
            cancel.clone(),
            std::time::Instant::now(),
            true,
        )?;
        let hub = self.clone();
        let first = self.reserve_runs(runs.len());
        tokio::spawn(async move {
            hub.run_plan(first, runs, &cancel).await;
            hub.inner.state.lock().expect("hub state").running = None;
        });
        Ok(())
    }

    /// Starts a plan for the lab's lane (`server::lab`), which has its own limits per
    /// participant: as `start` without the starts' rate limit, cancelled by raising `cancel`.
    /// Its runs' ids (consecutive from the one returned), and what became of each when the
    /// plan ends.
    pub fn start_lane(
        &self,
        runs: Vec<RunSpec>,
        cancel: Arc<AtomicBool>,
    ) -> Result<(u64, tokio::task::JoinHandle<Vec<plan::Ended>>), Rejection> {
        if self.inner.stopping.load(Ordering::SeqCst) {
            return Err(Rejection::ShuttingDown);
        }
        validate_runs(&runs, &self.inner.limits)?;
        self.inner.state.lock().expect("hub state").admit(
            cancel.clone(),
            std::time::Instant::now(),
            false,
        )?;
        let hub = self.clone();
        let first = self.reserve_runs(runs.len());
        let ended = tokio::spawn(async move {
            let ended = hub.run_plan(first, runs, &cancel).await;
            hub.inner.state.lock().expect("hub state").running = None;
            ended
        });
        Ok((first, ended))
    }

    /// Ids for `n` runs, consecutive: the first.
    fn reserve_runs(&self, n: usize) -> u64 {
        self.inner.next_run.fetch_add(n as u64, Ordering::Relaxed)
    }

    /// Asks the running plan (if any) to stop at its next batch boundary.
    pub fn cancel(&self) -> bool {
        match &self.inner.state.lock().expect("hub state").running {
            Some(flag) => {
                flag.store(true, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    fn emit(&self, msg: ServerMsg) {
        let frame = Utf8Bytes::from(msg.to_json());
        let mut state = self.inner.state.lock().expect("hub state");
        state.track(&msg);
        // No receivers is fine: nobody is watching.
        let _ = self.inner.events.send(frame);
    }
}
