//! What an observed connection's commands would cost pipelined by pipescope's own engine in
//! batches of 1,000 over the same path: measured by running that many, not predicted.
//!
//! The same path: the connection's commands crossed the observer (a relay, uncompensated, with
//! any network dialled in), so the engine's run crosses a relay like it. The run's values are
//! the connection's mean SET value size, and what it is compared with is fixed when it is
//! planned: the connection's time on round trips for those commands, not its own time nor
//! its idle gaps, so a connection that lives on does not make the ratio drift.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use shared::observe::{NoEquivalent, ObservedConnection, PipelinedEquivalent, stand_in};
use shared::{Limits, Mode, Network, RunSpec};

use crate::engine::{RunContext, RunError};
use crate::net::{DelayProxy, Proxies, Route};
use crate::target::{RedisTarget, TargetError};

pub const BATCH: u32 = 1_000;

/// The engine's run standing in for a connection's commands, and what it is compared with.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub spec: RunSpec,
    /// The connection's time on round trips (waiting and the observer's hops), scaled to
    /// `spec.count` when the engine runs fewer commands than the connection sent.
    compared_us: f64,
}

/// The engine's run standing in for `conn`'s commands (`shared::observe::stand_in`), at most
/// `Limits::max_count` of them, pipelined in batches of `BATCH` over `network`, with its
/// values the size of `conn`'s SET values.
pub fn plan(conn: &ObservedConnection, network: Network) -> Result<Plan, NoEquivalent> {
    let (command, count) = stand_in(conn)?;
    let limits = Limits::default();
    let value_bytes = conn
        .mean_set_value
        .map(|v| v.clamp(1, limits.max_value_bytes));
    // As many as one run may hold in Redis at once.
    let fit = limits.max_total_bytes / u64::from(value_bytes.unwrap_or(1));
    let runs = count.min(limits.max_count).min(fit).max(1);
    let t = &conn.times;
    Ok(Plan {
        spec: RunSpec {
            command,
            network,
            value_bytes,
            ..RunSpec::set(runs, Mode::pipelined(BATCH))
        },
        compared_us: (t.waiting_us + t.observer_us) * runs as f64 / count as f64,
    })
}

/// Runs `plan`'s spec through a relay like the observer's (on a cluster, through `proxies`'
/// route for its network), its keys under `run_id`'s namespace; raising `cancel` stops it
/// (its keys are removed all the same).
pub async fn measure(
    target: &RedisTarget,
    proxies: &Proxies,
    plan: Plan,
    run_id: u64,
    cancel: Arc<AtomicBool>,
) -> Result<PipelinedEquivalent, RunError> {
    let spec = plan.spec;
    let network_error = |source| RunError::Network {
        network: spec.network.label(),
        source,
    };
    let through_relay = !target.is_cluster();
    let route = if through_relay {
        let upstream = target.socket_addr().await.map_err(network_error)?;
        let relay = DelayProxy::raw(upstream, spec.network).map_err(|cause| {
            network_error(TargetError::Unreachable {
                addr: target.addr(),
                cause,
            })
        })?;
        Route {
            target: target.through(relay.addr()),
            proxy: Some(Arc::new(relay)),
            masters: Vec::new(),
        }
    } else {
        proxies
            .route(target, spec.network)
            .await
            .map_err(network_error)?
    };
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
        compared_us: plan.compared_us,
        value_bytes: spec.value_bytes,
        through_relay,
    })
}
