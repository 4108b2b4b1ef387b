//! Our engine against `redis-benchmark -c 1 -P K -t set` (fresh keys and values as long as
//! ours, like our SETs) on the same Redis, in one run.
//!
//! Our engine runs twice per round: waiting for replies the way redis-benchmark and client
//! libraries do (sleeping in the kernel), and busy-polling for them (see `shared::Wait`). The
//! first is the like-for-like comparison; the second shows what the engine can do without the
//! client's wake-up, which can be most of a loopback round trip (the README's measurements).
//!
//! Also what measuring costs: the engine with its instrumentation on and off, interleaved the
//! same way.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::target::RedisTarget;

use super::{
    BARE, BUSY_POLLING, Bench, Contender, Median, SLEEPING, Sample, Section, deadlines, median_of,
    per_round,
};

/// Commands per run when measuring the instrumentation at batch 1.
const OVERHEAD_COUNT_AT_1: u64 = 20_000;

#[derive(Debug, Clone, serde::Serialize)]
pub struct VersusRow {
    pub k: u32,
    pub rounds: usize,
    pub theirs_ops_per_sec: f64,
    /// Our engine sleeping until replies arrive, as redis-benchmark does (and as the page's
    /// runs do).
    pub sleeping_ops_per_sec: f64,
    /// Median of the rounds' ours (sleeping) / theirs.
    pub sleeping_ratio: Median,
    /// Our engine busy-polling for replies (not over TLS: busy-polling reads the socket
    /// below TLS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_poll_ops_per_sec: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_poll_ratio: Option<Median>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Overhead {
    pub batch: u32,
    /// Commands per run.
    pub count: u64,
    pub rounds: usize,
    pub instrumented_ops_per_sec: f64,
    pub bare_ops_per_sec: f64,
    /// (bare − instrumented) / bare throughput, in percent: the median of the rounds'.
    pub overhead_percent: Median,
}

/// Runs the comparison; `port` is our own redis-server's (emptied before every run). Returns
/// a row per K and the instrumentation overhead at K = 1 (where per-request bookkeeping weighs
/// most) and at the largest K. With `tls_ca`, `port` is a TLS port (`target` a rediss://
/// one): redis-benchmark goes over TLS too (`--tls --cacert tls_ca`), our engine only sleeps
/// for replies (busy-polling reads the socket below TLS), and the overhead, measured
/// busy-polling, is left out.
pub async fn compare(
    target: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    min_rounds: usize,
    time_budget: Duration,
    tls_ca: Option<&Path>,
) -> anyhow::Result<(Vec<VersusRow>, Vec<Overhead>)> {
    let began = Instant::now();
    let mut bench = Bench::new(target, port, count, min_rounds).await?;
    if let Some(ca) = tls_ca {
        anyhow::ensure!(
            super::redis_benchmark::supports_tls().await?,
            "this redis-benchmark was built without TLS (its --help lists no --tls): it cannot run over TLS"
        );
        bench.shape.over_tls(ca);
    }
    let mut rows = Vec::new();
    let mut overheads = Vec::new();
    let tls = tls_ca.is_some();
    let mut plan = schedule(ks, began, time_budget);
    if tls {
        let order = plan
            .into_iter()
            .map(|(s, _)| s)
            .filter(|s| matches!(s, Section::Versus(_)))
            .collect();
        plan = deadlines(order, began, time_budget);
    }
    for (section, deadline) in plan {
        match section {
            Section::Versus(k) => rows.push(bench.versus(k, count, deadline, !tls).await?),
            Section::Overhead(batch) => {
                overheads.push(bench.overhead(batch, count, deadline).await?)
            }
            Section::Observed(_)
            | Section::Probe
            | Section::Pool(_)
            | Section::Pipelined(_)
            | Section::Tls(_)
            | Section::Cluster(_)
            | Section::ClusterVersus(_) => {
                unreachable!("not in a comparison's schedule")
            }
        }
    }
    rows.sort_by_key(|r| r.k);
    overheads.sort_by_key(|o| o.batch);
    bench.empty().await?;
    tracing::info!(elapsed = ?began.elapsed(), "comparison done");
    Ok((rows, overheads))
}

/// The comparisons in the order they run, each with the moment after which it starts no new
/// round.
///
/// Each comparison may run until its share of the budget is used up, counted from the start,
/// so time one leaves unused goes to those after it. The quick ones (large K, whose runs take
/// a tenth of a second) go first and reach `MAX_ROUNDS` early; K = 1, whose runs take
/// seconds, goes late and gets what they left. Comparisons with redis-benchmark (three runs a
/// round) get twice the share of the overheads (two), and K = 1 (the longest rounds) three
/// times.
fn schedule(ks: &[u32], began: Instant, time_budget: Duration) -> Vec<(Section, Instant)> {
    let largest = ks.iter().copied().max().unwrap_or(1000);
    let mut order: Vec<Section> = vec![Section::Overhead(largest)];
    let mut by_depth = ks.to_vec();
    by_depth.sort_unstable_by(|a, b| b.cmp(a));
    order.extend(by_depth.into_iter().map(Section::Versus));
    order.push(Section::Overhead(1));
    deadlines(order, began, time_budget)
}

impl Bench<'_> {
    /// Theirs, ours sleeping and (if `busy`) ours busy-polling at depth `k`.
    async fn versus(
        &mut self,
        k: u32,
        count: u64,
        deadline: Instant,
        busy: bool,
    ) -> anyhow::Result<VersusRow> {
        let who: &[Contender] = if busy {
            &[Contender::Theirs, SLEEPING, BUSY_POLLING]
        } else {
            &[Contender::Theirs, SLEEPING]
        };
        let s = self.rounds(who, k, count, deadline).await?;
        let (theirs, sleeping, busy) = (&s[0], &s[1], s.get(2));
        let ratio = |a: &Sample, b: &Sample| a.ops_per_sec / b.ops_per_sec;
        Ok(VersusRow {
            k,
            rounds: theirs.len(),
            theirs_ops_per_sec: median_of(theirs, |s| s.ops_per_sec),
            sleeping_ops_per_sec: median_of(sleeping, |s| s.ops_per_sec),
            sleeping_ratio: per_round(sleeping, theirs, ratio),
            busy_poll_ops_per_sec: busy.map(|b| median_of(b, |s| s.ops_per_sec)),
            busy_poll_ratio: busy.map(|b| per_round(b, theirs, ratio)),
        })
    }

    /// Ours busy-polling with and without instrumentation at `batch`.
    async fn overhead(
        &mut self,
        batch: u32,
        count: u64,
        deadline: Instant,
    ) -> anyhow::Result<Overhead> {
        // Ours against ours: no need for redis-benchmark's N. At batch 1 shorter runs give
        // more rounds, and rounds are what a difference of a percent needs.
        let count = if batch == 1 {
            count.min(OVERHEAD_COUNT_AT_1)
        } else {
            count
        };
        let s = self
            .rounds(&[BUSY_POLLING, BARE], batch, count, deadline)
            .await?;
        let (on, off) = (&s[0], &s[1]);
        Ok(Overhead {
            batch,
            count,
            rounds: on.len(),
            instrumented_ops_per_sec: median_of(on, |s| s.ops_per_sec),
            bare_ops_per_sec: median_of(off, |s| s.ops_per_sec),
            overhead_percent: per_round(on, off, |a, b| {
                (b.ops_per_sec - a.ops_per_sec) / b.ops_per_sec * 100.0
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::Section;
    use super::schedule;

    #[test]
    fn the_budget_is_shared_by_weight_quick_comparisons_first() {
        let began = Instant::now();
        let plan = schedule(&[1, 16, 1000], began, Duration::from_secs(100));
        let order: Vec<String> = plan.iter().map(|(s, _)| format!("{s:?}")).collect();
        assert_eq!(
            order,
            [
                "Overhead(1000)",
                "Versus(1000)",
                "Versus(16)",
                "Versus(1)",
                "Overhead(1)"
            ]
        );
        // Weights 1, 2, 2, 3, 1 of 9: each deadline is the share used so far.
        let ms: Vec<u64> = plan
            .iter()
            .map(|(_, d)| (*d - began).as_millis() as u64)
            .collect();
        assert_eq!(ms, [11_111, 33_333, 55_555, 88_888, 100_000]);
        assert!(matches!(plan[0].0, Section::Overhead(1000)));
    }
}
