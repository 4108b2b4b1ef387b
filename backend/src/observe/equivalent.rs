//! What an observed connection's commands would cost pipelined by pipescope's own engine in
//! batches of 1,000 over the same network: measured by running that many, not predicted.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use shared::observe::{NoEquivalent, ObservedConnection, PipelinedEquivalent, stand_in};
use shared::{Limits, Mode, Network, RunSpec};

use crate::engine::{RunContext, RunError};
use crate::net::Proxies;
use crate::target::RedisTarget;

pub const BATCH: u32 = 1_000;

/// The engine's run standing in for `conn`'s commands (`shared::observe::stand_in`), at most
/// `Limits::max_count` of them, pipelined in batches of `BATCH` over `network`.
pub fn spec_for(conn: &ObservedConnection, network: Network) -> Result<RunSpec, NoEquivalent> {
    let (command, count) = stand_in(conn)?;
    Ok(RunSpec {
        command,
        network,
        ..RunSpec::set(
            count.min(Limits::default().max_count),
            Mode::pipelined(BATCH),
        )
    })
}

/// Runs `spec` (from `spec_for`) through `proxies`' route for its network, its keys under
/// `run_id`'s namespace; raising `cancel` stops it (its keys are removed all the same).
pub async fn measure(
    target: &RedisTarget,
    proxies: &Proxies,
    spec: RunSpec,
    run_id: u64,
    cancel: Arc<AtomicBool>,
) -> Result<PipelinedEquivalent, RunError> {
    let route = proxies
        .route(target, spec.network)
        .await
        .map_err(|source| RunError::Network {
            network: spec.network.label(),
            source,
        })?;
    let ctx = RunContext {
        record_spans: false,
        ..RunContext::new(run_id, Arc::default(), cancel)
    };
    let outcome = route.run(spec, ctx).await?;
    Ok(PipelinedEquivalent {
        command: spec.command.name().to_string(),
        count: outcome.summary.done,
        batch: BATCH,
        wall_us: outcome.summary.wall_us,
    })
}
