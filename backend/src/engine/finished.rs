//! A run as every caller needs it: its lease taken (`lease`), Redis's own time read around
//! it, the run, then its keys removed whatever happened and counted (a key gone before then
//! was removed by someone else, and the run says so), and a failure typed.

use shared::{RunSpec, RunSummary};

use super::lease::{Lease, LeaseError};
use super::{EngineError, RunContext, RunOutcome, keys, redis_time};
use crate::target::{RedisTarget, TargetError};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The run's network could not be dialled in (its proxy, or Redis behind it).
    #[error("cannot dial in {network}: {source}")]
    Network {
        network: String,
        source: TargetError,
    },
    /// The run stopped early; `partial` is what it measured until then.
    #[error("{error}{}", cleanup_note(.cleanup))]
    Stopped {
        error: EngineError,
        partial: Box<RunSummary>,
        /// Keys of the run removed after it stopped.
        removed: u64,
        /// Its keys could not be removed either.
        cleanup: Option<TargetError>,
    },
    #[error("the run finished but its keys could not be removed: {source}")]
    Cleanup {
        summary: Box<RunSummary>,
        source: TargetError,
    },
    /// The run could not take its lease: it did not start.
    #[error("{0}")]
    Lease(#[from] LeaseError),
    /// Keys the run wrote were gone before it removed them: something else removed them
    /// while it ran (or Redis evicted them), so what it measured is not what it seems.
    #[error(
        "{} of the run's {} keys were gone when it ended: something else removed them while it ran (FLUSHDB, a clean, another tool) or Redis evicted them (maxmemory); its figures are not those of the workload asked for",
        shared::digits::group(written - found),
        shared::digits::group(*written)
    )]
    KeysVanished {
        summary: Box<RunSummary>,
        written: u64,
        found: u64,
    },
}

fn cleanup_note(cleanup: &Option<TargetError>) -> String {
    cleanup
        .as_ref()
        .map(|e| format!("; its keys could not be removed either: {e}"))
        .unwrap_or_default()
}

impl RunError {
    /// What the run measured before it failed, if it ran at all.
    pub fn partial(&self) -> Option<&RunSummary> {
        match self {
            RunError::Network { .. } | RunError::Lease(_) => None,
            RunError::Stopped { partial, .. } => Some(partial),
            RunError::Cleanup { summary, .. } | RunError::KeysVanished { summary, .. } => {
                Some(summary)
            }
        }
    }
}

/// Runs `spec` once over `target` (maybe through a proxy), reads Redis's own time per call and
/// what the run cost it (`RunSummary::redis_usec_per_call` and `redis_load`, on admin
/// connections straight to Redis) from the end of the run's set-up (`redis_time::open_window`)
/// to its last reply, then removes the run's keys, also after a failure or a cancel.
pub async fn run_and_clean_up(
    target: &RedisTarget,
    spec: RunSpec,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    let run_id = ctx.run_id;
    // Held from before its first key is written until they are all removed.
    let lease = Lease::take(target, run_id).await?;
    // Until its keys are removed, a second Ctrl-C names this run (`crate::cancel`).
    let _in_flight = keys::InFlight::new(run_id);
    let counted = redis_time::counted_command(&spec);
    let (window, opens) = tokio::sync::oneshot::channel();
    let ctx = RunContext {
        window: Some(window),
        ..ctx
    };
    let run = super::run(target, spec, ctx);
    let (outcome, before) = redis_time::counters_at_window(target, &counted, opens, run).await;
    let written = match &outcome {
        Ok(o) => o.written,
        Err(f) => f.written,
    };
    let result = match outcome {
        Ok(mut o) => {
            if let Some(before) = before
                && let Some(after) = redis_time::counters(target, &counted).await
            {
                o.summary.redis_usec_per_call = before.command.usec_per_call_until(after.command);
                o.summary.redis_load = before.load_until(after, o.summary.wire_commands);
            }
            Ok(o)
        }
        Err(f) => Err((f.error, f.partial)),
    };
    // After a crash `written` is 0, but the cleanup's SCAN sweep of the run's namespace still
    // finds whatever it wrote.
    let cleanup = keys::remove_laid_out_keys(target, run_id, spec.keys, written).await;
    lease.release().await;
    match (result, cleanup) {
        // A run that finished wrote every key below `written` (or seeded it, to read it):
        // each was still there to remove, unless something else removed it first. (With the
        // other client, its commands all go to the one shared counter.)
        (Ok(o), Ok(found)) if !spec.other_client && found < written => {
            Err(RunError::KeysVanished {
                summary: Box::new(o.summary),
                written,
                found,
            })
        }
        (Ok(o), Ok(_)) => Ok(o),
        (Ok(o), Err(source)) => Err(RunError::Cleanup {
            summary: Box::new(o.summary),
            source,
        }),
        (Err((error, partial)), cleanup) => Err(RunError::Stopped {
            error,
            partial: Box::new(partial),
            removed: *cleanup.as_ref().unwrap_or(&0),
            cleanup: cleanup.err(),
        }),
    }
}
