//! The one run at a time, and everyone watching it. A start becomes a plan (one or more specs
//! run in order); its events go to every connected page through a bounded broadcast, so the
//! engine never waits on a viewer: a slow viewer skips ahead instead. Each event is serialised
//! once for all viewers, and the hub keeps a snapshot of the run in progress (its start, the
//! spans streamed so far, its latest progress) so a page that connects mid-run catches up.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use shared::Span;
use shared::protocol::MAX_SPANS_PER_FRAME;
use shared::{
    Limits, Network, PROTOCOL_VERSION, RunRecord, RunSpec, RunSummary, ServerMsg, Timeline,
    validate_runs,
};
use tokio::sync::broadcast;

use crate::engine::{DEFAULT_RESPONSE_TIMEOUT, RunContext, RunError, keys};
use crate::net::Proxies;
use crate::recorder::Progress;
use crate::spans::Outbox;
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
}

#[derive(Default)]
struct State {
    /// Set while a plan runs; raising it cancels the plan.
    running: Option<Arc<AtomicBool>>,
    /// Finished runs of the latest plan, for pages that connect later.
    recent: Vec<RunRecord>,
    /// When the latest starts were accepted (for the rate limit).
    starts: std::collections::VecDeque<std::time::Instant>,
    /// The run in progress, as a page connecting now needs it.
    live: Option<LiveRun>,
}

/// What a late page needs to follow the run in progress. Bounded: the engine streams at most
/// its first few thousand spans.
struct LiveRun {
    started: ServerMsg,
    spans: Vec<Span>,
    progress: Option<ServerMsg>,
}

impl State {
    /// Keeps the snapshot in step with the event about to be broadcast.
    fn track(&mut self, msg: &ServerMsg) {
        match msg {
            ServerMsg::RunStarted { .. } => {
                self.live = Some(LiveRun {
                    started: msg.clone(),
                    spans: Vec::new(),
                    progress: None,
                });
            }
            ServerMsg::Spans { spans, .. } => {
                if let Some(live) = &mut self.live {
                    live.spans.extend_from_slice(spans);
                }
            }
            ServerMsg::Progress { .. } => {
                if let Some(live) = &mut self.live {
                    live.progress = Some(msg.clone());
                }
            }
            ServerMsg::Finished {
                run,
                summary,
                timeline,
            } => {
                self.live = None;
                self.recent.push(RunRecord {
                    run: *run,
                    summary: summary.clone(),
                    timeline: timeline.clone(),
                });
            }
            ServerMsg::Failed { .. } => self.live = None,
            ServerMsg::Welcome { .. } | ServerMsg::Rejected { .. } => {}
        }
    }

    /// The run in progress as messages, in the order a page would have received them.
    fn snapshot(&self) -> Vec<ServerMsg> {
        let Some(live) = &self.live else {
            return Vec::new();
        };
        let ServerMsg::RunStarted { run, .. } = live.started else {
            return Vec::new();
        };
        let mut msgs = vec![live.started.clone()];
        msgs.extend(
            live.spans
                .chunks(MAX_SPANS_PER_FRAME)
                .map(|chunk| ServerMsg::Spans {
                    run,
                    spans: chunk.to_vec(),
                }),
        );
        msgs.extend(live.progress.clone());
        msgs
    }
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

    /// The default network: the page's initial choice.
    pub fn network(&self) -> Network {
        self.inner.network
    }

    /// A `Welcome` describing the current state, the run in progress as messages (empty when
    /// idle), and a receiver of every event after them, as JSON text frames (all taken under
    /// the lock `emit` holds, so nothing falls between them and nothing arrives twice).
    pub fn subscribe(&self) -> Subscription {
        let state = self.inner.state.lock().expect("hub state");
        let welcome = ServerMsg::Welcome {
            protocol: PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            redis_version: self.inner.redis_version.clone(),
            target: self.inner.target.redacted(),
            limits: self.inner.limits,
            network: self.inner.network,
            can_control: false,
            busy: state.running.is_some(),
            recent: state.recent.clone(),
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
        validate_runs(&runs, &self.inner.limits)?;
        let cancel = Arc::new(AtomicBool::new(false));
        {
            let mut state = self.inner.state.lock().expect("hub state");
            if state.running.is_some() {
                return Err(Rejection::Busy);
            }
            let now = std::time::Instant::now();
            while state
                .starts
                .front()
                .is_some_and(|t| now.duration_since(*t) > STARTS_WINDOW)
            {
                state.starts.pop_front();
            }
            if state.starts.len() >= STARTS_PER_WINDOW {
                return Err(Rejection::TooMany);
            }
            state.starts.push_back(now);
            state.running = Some(cancel.clone());
            state.recent.clear();
        }
        let hub = self.clone();
        tokio::spawn(async move {
            hub.run_plan(runs, &cancel).await;
            hub.inner.state.lock().expect("hub state").running = None;
        });
        Ok(())
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

    async fn run_plan(&self, runs: Vec<RunSpec>, cancel: &Arc<AtomicBool>) {
        let of = runs.len();
        for (index, spec) in runs.into_iter().enumerate() {
            let run = self.inner.next_run.fetch_add(1, Ordering::Relaxed);
            self.emit(ServerMsg::RunStarted {
                run,
                index,
                of,
                spec,
            });
            tracing::info!(run, ?spec, "run started");
            match self.run_one(run, spec, cancel).await {
                Ok((summary, timeline)) => {
                    tracing::info!(
                        run,
                        wall_ms = summary.wall_ms(),
                        ops_per_sec = summary.ops_per_sec,
                        "run finished"
                    );
                    // `emit` also files it in `recent`, under the same lock.
                    self.emit(ServerMsg::Finished {
                        run,
                        summary,
                        timeline,
                    });
                }
                Err(e) => {
                    tracing::warn!(run, reason = %e, "run failed");
                    self.emit(ServerMsg::Failed {
                        run: Some(run),
                        reason: e.to_string(),
                        partial: e.partial().cloned(),
                    });
                    return;
                }
            }
        }
    }

    /// Runs one spec while a ticker reports its progress; its keys are removed after it.
    async fn run_one(
        &self,
        run: u64,
        spec: RunSpec,
        cancel: &Arc<AtomicBool>,
    ) -> Result<(RunSummary, Timeline), RunError> {
        let route = self
            .inner
            .proxies
            .route(&self.inner.target, spec.network)
            .await
            .map_err(|source| RunError::Network {
                network: spec.network.label(),
                source,
            })?;
        let progress = Arc::new(Progress::default());
        let outbox = Outbox::default();
        // The engine gives the run its own thread; this future only waits for its result.
        let ctx = RunContext {
            response_timeout: self.inner.response_timeout,
            span_outbox: Some(outbox.clone()),
            ..RunContext::new(run, progress.clone(), cancel.clone())
        };
        let engine = route.run(spec, ctx);
        let mut engine = std::pin::pin!(engine);
        let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / PROGRESS_HZ));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // A frame only when the run moved: the future also reads Redis's counters around the
        // run and removes its keys, while the engine reports nothing new.
        let mut shown = None;
        let outcome = loop {
            tokio::select! {
                joined = &mut engine => break joined,
                _ = ticker.tick() => {
                    let (done, elapsed_us) = progress.read();
                    if shown != Some((done, elapsed_us)) {
                        shown = Some((done, elapsed_us));
                        self.emit(progress_msg(run, spec.count, done, elapsed_us));
                    }
                    self.emit_spans(run, &outbox);
                }
            }
        };
        let (done, elapsed_us) = progress.read();
        self.emit(progress_msg(run, spec.count, done, elapsed_us));
        self.emit_spans(run, &outbox);

        outcome.map(|o| (o.summary, o.timeline))
    }
}

impl Hub {
    /// Streams the spans the engine recorded since the last tick, in frames of bounded size.
    fn emit_spans(&self, run: u64, outbox: &Outbox) {
        let spans = std::mem::take(&mut *outbox.lock().expect("span outbox"));
        for chunk in spans.chunks(MAX_SPANS_PER_FRAME) {
            self.emit(ServerMsg::Spans {
                run,
                spans: chunk.to_vec(),
            });
        }
    }
}

fn progress_msg(run: u64, total: u64, done: u64, elapsed_us: u64) -> ServerMsg {
    ServerMsg::Progress {
        run,
        done,
        total,
        elapsed_us,
        ops_per_sec: shared::report::ops_per_sec(done, elapsed_us),
    }
}
