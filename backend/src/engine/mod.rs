//! The workload engine: runs a `RunSpec` against a real Redis over one connection and measures
//! every request. Sequential and pipelined runs share one loop, `batched`: sequential is a
//! batch of one, so the only difference between the two measurements is the round trips.

mod batched;
pub mod keys;
pub mod resp;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

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
}

/// What the caller hands the engine besides the spec.
pub struct RunContext<'a> {
    pub run_id: u64,
    pub progress: &'a Progress,
    /// Checked at every batch boundary.
    pub cancel: &'a AtomicBool,
    pub response_timeout: Duration,
    /// Keep per-request timings (the timeline). Off, only the histogram is kept.
    pub record_spans: bool,
    /// Measure at all (histogram, spans, live progress). Off only to measure what measuring
    /// costs: the run then reports wall time and throughput alone.
    pub instrument: bool,
    /// Where the first requests' timings go as they happen, for live streaming.
    pub span_outbox: Option<crate::spans::Outbox>,
}

impl<'a> RunContext<'a> {
    pub fn new(run_id: u64, progress: &'a Progress, cancel: &'a AtomicBool) -> Self {
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
}

/// A run that stopped early, with what it measured up to the stop.
#[derive(Debug)]
pub struct RunFailure {
    pub error: EngineError,
    pub partial: RunSummary,
    pub timeline: Timeline,
    pub written: u64,
}

/// Runs `spec` once. The caller removes the keys afterwards with `keys::remove_run_keys`,
/// whatever the outcome.
pub async fn run(
    target: &RedisTarget,
    spec: RunSpec,
    ctx: RunContext<'_>,
) -> Result<RunOutcome, RunFailure> {
    batched::run(target, spec, ctx).await
}
