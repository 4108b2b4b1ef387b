//! What forwarding through the proxy costs by itself, measured with the engine. A route's
//! proxy then releases each chunk that much earlier than arrival + delay (`Compensation`, in
//! `schedule`), which cancels it.

use std::net::SocketAddr;
use std::time::Duration;

use shared::{KeyLayout, Mode, Network};

use super::delay_line::DelayProxy;
use crate::median::median;
use crate::target::{RedisTarget, TargetError};

/// The one-way delay used to measure the proxy's own cost is the network's own (the cost
/// grows with it on a busy machine: threads idle longer wake slower), within these bounds:
/// long enough that the hand-over between the proxy's threads is hidden in the delay, as it is
/// then, short enough to measure quickly (beyond 1 ms the cost is under 5 % of the delay).
const CALIBRATION_DELAY: std::ops::RangeInclusive<Duration> =
    Duration::from_micros(100)..=Duration::from_millis(1);

/// The delay to calibrate at for `network`: its mean one-way delay, within `CALIBRATION_DELAY`.
fn calibration_delay(network: &Network) -> Duration {
    let mean = Duration::from_micros(network.round_trip_us() / 2);
    mean.clamp(*CALIBRATION_DELAY.start(), *CALIBRATION_DELAY.end())
}

/// The calibration's cost is capped: a stall during it must not make the proxy release
/// chunks much earlier than the delay dialled in.
const MAX_COMPENSATION: Duration = Duration::from_micros(200);
/// Sequential SETs per calibration run, and runs per side: many short runs, alternating, so a
/// burst of load lands on both sides alike.
const ENGINE_CALIBRATION: (u64, usize) = (50, 8);
/// The share of the measured cost taken off. On a busy machine one calibration's estimate
/// varies from the next (see the README's measurements); taking off a little less keeps a
/// round trip from coming out under 2·D (a network never delivers faster than its delay), at
/// the price of a few µs over 2·D + loopback.
const COMPENSATED_SHARE: f64 = 0.8;

/// What forwarding through the proxy adds to a round trip beyond the delays dialled in.
///
/// Why: a connection through the proxy crosses two extra loopback hops, and each direction
/// pays a thread wake-up (the reader only stamps a chunk's arrival once the kernel has woken
/// it) and a second write. That cost is the machine's (and its load's), so it is measured,
/// once per proxy, with the engine itself against Redis: short sequential runs directly and
/// through a raw proxy at `calibration_delay(network)`, alternating, medians of their median
/// round trips. The engine is what the page's numbers come from, and it pays more for the
/// proxy than a bare client does: directly its reply often arrives before it has gone to
/// sleep, through the proxy it always sleeps and is woken. Its keys are removed after each
/// run, as a run's are.
pub async fn forwarding_cost(
    target: &RedisTarget,
    upstream: SocketAddr,
    network: &Network,
) -> Result<Duration, TargetError> {
    forwarding_cost_with(target, upstream, network, KeyLayout::Spread, &|_| true).await
}

/// `forwarding_cost` against one master of a cluster (`node`, taken alone): its runs write
/// keys under one hash tag, the run id, choosing only run ids for which `on_node` says the
/// tag's slot is that master's.
pub async fn forwarding_cost_on_node(
    node: &RedisTarget,
    upstream: SocketAddr,
    network: &Network,
    on_node: &(dyn Fn(u64) -> bool + Sync),
) -> Result<Duration, TargetError> {
    forwarding_cost_with(
        &node.as_node(),
        upstream,
        network,
        KeyLayout::OneTag,
        on_node,
    )
    .await
}

async fn forwarding_cost_with(
    target: &RedisTarget,
    upstream: SocketAddr,
    network: &Network,
    layout: KeyLayout,
    use_run_id: &(dyn Fn(u64) -> bool + Sync),
) -> Result<Duration, TargetError> {
    use crate::engine::{self, RunContext, RunError, keys};
    let delay = calibration_delay(network);
    let one_way_us = delay.as_micros().min(u32::MAX as u128) as u32;
    let raw = DelayProxy::raw(upstream, Network::symmetric(one_way_us)).map_err(|cause| {
        TargetError::Unreachable {
            addr: target.addr(),
            cause,
        }
    })?;
    let routed = target.through(raw.addr());
    let (count, runs) = ENGINE_CALIBRATION;
    let mut run_id = keys::first_run_id();
    let (mut direct, mut via) = (Vec::new(), Vec::new());
    for round in 0..runs * 2 {
        run_id += 1;
        while !use_run_id(run_id) {
            run_id += 1;
        }
        let (route, times) = if round % 2 == 0 {
            (target, &mut direct)
        } else {
            (&routed, &mut via)
        };
        // Round trips only: no second connection polling Redis meanwhile.
        let ctx = RunContext {
            record_spans: false,
            sample_memory: false,
            ..RunContext::new(run_id, Default::default(), Default::default())
        };
        let spec = shared::RunSpec {
            keys: layout,
            ..shared::RunSpec::set(count, Mode::Sequential)
        };
        match engine::run_and_clean_up(route, spec, ctx).await {
            Ok(o) => times.push(o.summary.latency.p50_us),
            Err(RunError::Cleanup { source, .. }) => return Err(source),
            Err(e) => {
                return Err(TargetError::Unreachable {
                    addr: target.addr(),
                    cause: std::io::Error::other(format!("calibrating the latency proxy: {e}")),
                });
            }
        }
    }
    let excess = median(via).unwrap_or_default()
        - 2.0 * delay.as_micros() as f64
        - median(direct).unwrap_or_default();
    let cost = Duration::from_nanos((excess.max(0.0) * COMPENSATED_SHARE * 1000.0) as u64)
        .min(MAX_COMPENSATION);
    tracing::debug!(
        ?delay,
        ?cost,
        "calibrated the latency proxy with the engine"
    );
    Ok(cost)
}
