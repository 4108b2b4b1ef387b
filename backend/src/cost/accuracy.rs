//! `pipescope cost accuracy`: how close the delay line comes to its promise, sequential runs
//! direct and through it alternating.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::Serialize;
use shared::RunSpec;

use crate::cancel::{Interrupted, Removed};
use crate::engine::{self, RunContext, keys};
use crate::net::Proxies;
use crate::target::RedisTarget;

/// How close the latency proxy comes to its promise, at one delay: sequential runs direct and
/// through the delay line alternate, and the medians of their median round trips are compared
/// with 2·D + the direct one.
#[derive(Debug, Clone, Serialize)]
pub struct Accuracy {
    pub delay_us: u32,
    pub rounds: usize,
    pub loopback_p50_us: f64,
    pub expected_us: f64,
    pub measured_p50_us: f64,
    /// (measured − expected) / expected, in percent.
    pub deviation_percent: f64,
    /// How much earlier than D the proxy releases chunks, both directions together (µs): its
    /// own forwarding cost as it measured it when it started, 80 % of it. A round trip is never
    /// shorter than 2·D less this.
    pub compensation_us: f64,
}

/// The delays `cost accuracy` measures unless `--delay-us` names one.
pub const DELAYS: [u32; 4] = [100, 250, 1_000, 5_000];

/// Measures the proxy at each of `delays` with `count` SETs a run, in pairs as `versus` runs
/// its rounds: `rounds` pairs at least, more while the delay's share of `budget` lasts, at
/// most `MAX_ROUNDS`. Raising `cancel` stops it as it stops `run`.
pub async fn measure(
    target: &RedisTarget,
    delays: &[u32],
    count: u64,
    rounds: usize,
    budget: std::time::Duration,
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<Vec<Accuracy>> {
    let share = budget / delays.len().max(1) as u32;
    let proxies = Proxies::default();
    let mut run_id = keys::first_run_id();
    let mut p50 = async |target: &RedisTarget| -> anyhow::Result<f64> {
        run_id += 1;
        let ctx = RunContext::new(run_id, Default::default(), cancel.clone());
        let spec = RunSpec::set(count, shared::Mode::Sequential);
        match engine::run_and_clean_up(target, spec, ctx).await {
            Ok(outcome) => Ok(outcome.summary.latency.p50_us),
            Err(e) => Err(match Removed::of(run_id, &e) {
                Some(removed) => Interrupted(vec![removed]).into(),
                None => e.into(),
            }),
        }
    };
    let median = |v: Vec<f64>| crate::median::median(v).unwrap_or(f64::NAN);
    let mut rows = Vec::new();
    for &delay_us in delays {
        let route = proxies
            .route(target, shared::Network::symmetric(delay_us))
            .await?;
        let (mut direct, mut delayed) = (Vec::new(), Vec::new());
        let began = std::time::Instant::now();
        for round in 0..crate::versus::MAX_ROUNDS {
            if round >= rounds.max(1) && began.elapsed() > share {
                break;
            }
            // Alternating who goes first, so both see the machine alike.
            if round % 2 == 0 {
                direct.push(p50(target).await?);
                delayed.push(p50(&route.target).await?);
            } else {
                delayed.push(p50(&route.target).await?);
                direct.push(p50(target).await?);
            }
        }
        let compensation_us = route.proxy.as_ref().map_or(0.0, |p| {
            let c = p.compensation();
            (c.out + c.back).as_nanos() as f64 / 1000.0
        });
        let pairs = direct.len();
        let loopback = median(direct);
        let measured = median(delayed);
        let expected = 2.0 * delay_us as f64 + loopback;
        rows.push(Accuracy {
            delay_us,
            rounds: pairs,
            loopback_p50_us: loopback,
            expected_us: expected,
            measured_p50_us: measured,
            deviation_percent: (measured - expected) / expected * 100.0,
            compensation_us,
        });
    }
    Ok(rows)
}
