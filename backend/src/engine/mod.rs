//! The workload engine: runs a `RunSpec` against a real Redis over one connection and measures
//! every request. Sequential and pipelined runs share one loop, `batched`: sequential is a
//! batch of one, so the only difference between the two measurements is the round trips.

mod batched;
pub mod keys;
pub mod resp;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use shared::{RunSpec, RunSummary, Timeline};

use crate::recorder::Progress;
use crate::target::{RedisTarget, TargetError};

/// A read or write that makes no progress for this long fails the run. It bounds inactivity,
/// not the whole batch, so a batch of 100,000 replies is fine as long as bytes keep coming.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("Redis sent no reply for {0:?} (waiting for request {1}); is it overloaded or paused?")]
    Timeout(Duration, u64),
    #[error("Redis closed the connection after {0} replies")]
    Closed(u64),
    #[error("connection to Redis failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("Redis refused request {index}: {message}")]
    Refused { index: u64, message: String },
    #[error(transparent)]
    Protocol(#[from] resp::ProtocolError),
    #[error("cancelled")]
    Cancelled,
    #[error("the engine crashed; see the server log")]
    Crashed,
}

/// What the caller hands the engine besides the spec.
pub struct RunContext {
    pub run_id: u64,
    pub progress: Arc<Progress>,
    /// Checked at every batch boundary.
    pub cancel: Arc<AtomicBool>,
    pub response_timeout: Duration,
    /// Keep per-request timings (the timeline). Off, only the histogram is kept.
    pub record_spans: bool,
    /// Measure at all (histogram, spans, live progress). Off only to measure what measuring
    /// costs: the run then reports wall time and throughput alone.
    pub instrument: bool,
    /// Where the first requests' timings go as they happen, for live streaming.
    pub span_outbox: Option<crate::spans::Outbox>,
}

impl RunContext {
    pub fn new(run_id: u64, progress: Arc<Progress>, cancel: Arc<AtomicBool>) -> Self {
        RunContext {
            run_id,
            progress,
            cancel,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            record_spans: true,
            instrument: true,
            span_outbox: None,
        }
    }
}

/// A finished run. `written` is how many commands were sent (so how many keys may exist).
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: RunSummary,
    pub timeline: Timeline,
    pub written: u64,
    /// The instant span times count from, so stamps taken elsewhere (the wire tap) can be
    /// placed on the same axis.
    pub started: Instant,
}

/// A run that stopped early, with what it measured up to the stop.
#[derive(Debug)]
pub struct RunFailure {
    pub error: EngineError,
    pub partial: RunSummary,
    pub timeline: Timeline,
    pub written: u64,
    pub started: Instant,
}

/// Runs `spec` once. The caller removes the keys afterwards with `keys::remove_run_keys`,
/// whatever the outcome.
///
/// The run gets a thread and a single-threaded runtime of its own: replies are handled on the
/// thread that sent the requests (no hand-over between worker threads on every round trip),
/// and nothing else scheduled in the server competes with the measurement.
pub async fn run(
    target: &RedisTarget,
    spec: RunSpec,
    ctx: RunContext,
) -> Result<RunOutcome, RunFailure> {
    let target = target.clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("engine-{}", ctx.run_id))
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt.block_on(batched::run(&target, spec, ctx)),
                Err(e) => Err(not_started(spec, EngineError::Io(e))),
            };
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        return Err(not_started(spec, EngineError::Io(e)));
    }
    rx.await
        .unwrap_or_else(|_| Err(not_started(spec, EngineError::Crashed)))
}

/// A failure before anything was sent.
fn not_started(spec: RunSpec, error: EngineError) -> RunFailure {
    let partial = crate::recorder::Recorder::new().summary(spec, 0, Duration::ZERO, 0);
    RunFailure {
        error,
        partial,
        timeline: Timeline::default(),
        written: 0,
        started: Instant::now(),
    }
}
