//! Connections against pipelining: for each C, redis-benchmark `-c C -P 1` beside our
//! engine's pool of C connections (`Mode::Connections`), and one pipelined connection
//! (`-c 1 -P batch` beside ours) for reference; each run also reads what it cost Redis's CPU
//! per SET (`INFO cpu` and `INFO commandstats` before and after it, on our otherwise idle
//! server).

use std::time::{Duration, Instant};

use crate::target::RedisTarget;

use super::{Bench, Contender, Median, SLEEPING, Sample, Section, deadlines, median_of, per_round};

/// `pipescope versus redis-benchmark --connections …`, one row: the same SETs on C
/// connections one command at a time each (theirs `-c C -P 1`, ours `Mode::Connections`), or,
/// for reference, on one connection pipelined `depth` deep.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PoolRow {
    pub connections: u32,
    /// Commands each connection has in flight: 1 for a pool, the batch for the pipeline.
    pub depth: u32,
    pub count: u64,
    pub rounds: usize,
    pub theirs_ops_per_sec: f64,
    pub ours_ops_per_sec: f64,
    /// Median of the rounds' ours / theirs.
    pub ratio: Median,
    /// Redis's CPU time per SET executed (`INFO cpu` user + sys over `INFO commandstats`
    /// calls, across each run), medians, µs.
    pub theirs_redis_cpu_us_per_set: f64,
    pub ours_redis_cpu_us_per_set: f64,
}

/// Connections against pipelining: for each of `connections`, redis-benchmark `-c C -P 1`
/// beside our engine's pool of C, then one connection pipelined `batch` deep (theirs and ours)
/// for reference; `count` SETs a run, rounds rotating who goes first, within `time_budget`.
pub async fn compare_connections(
    target: &RedisTarget,
    port: u16,
    count: u64,
    connections: &[u32],
    batch: u32,
    min_rounds: usize,
    time_budget: Duration,
) -> anyhow::Result<Vec<PoolRow>> {
    let began = Instant::now();
    let mut bench = Bench::new(target, port, count, min_rounds).await?;
    bench.progress = true;
    // The quick runs first, as for the comparison: the pipeline, then the largest pools.
    let mut by_size = connections.to_vec();
    by_size.sort_unstable_by(|a, b| b.cmp(a));
    let mut order = vec![Section::Pipelined(batch)];
    order.extend(by_size.into_iter().map(Section::Pool));
    let mut rows = Vec::new();
    for (section, deadline) in deadlines(order, began, time_budget) {
        let (who, c, depth, k) = match section {
            Section::Pool(c) => (
                [Contender::TheirsConnections, Contender::OursConnections],
                c,
                1,
                c,
            ),
            Section::Pipelined(b) => ([Contender::Theirs, SLEEPING], 1, b, b),
            _ => unreachable!("only pool and pipeline sections"),
        };
        let s = bench.rounds(&who, k, count, deadline).await?;
        let (theirs, ours) = (&s[0], &s[1]);
        let cpu = |s: &Sample| s.redis_cpu_us_per_set.unwrap_or(f64::NAN);
        rows.push(PoolRow {
            connections: c,
            depth,
            count,
            rounds: theirs.len(),
            theirs_ops_per_sec: median_of(theirs, |s| s.ops_per_sec),
            ours_ops_per_sec: median_of(ours, |s| s.ops_per_sec),
            ratio: per_round(ours, theirs, |a, b| a.ops_per_sec / b.ops_per_sec),
            theirs_redis_cpu_us_per_set: median_of(theirs, cpu),
            ours_redis_cpu_us_per_set: median_of(ours, cpu),
        });
    }
    rows.sort_by_key(|r| (r.depth, r.connections));
    bench.empty().await?;
    tracing::info!(elapsed = ?began.elapsed(), "connections comparison done");
    Ok(rows)
}
