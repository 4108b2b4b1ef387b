//! What a cluster changes for our engine: the same SETs sequentially and pipelined on one
//! redis-server and on a cluster of three masters (each batch split per master, sent side by
//! side), in rounds that rotate who goes first, each run on empty databases. All the servers
//! share the machine's cores with the client.

use std::time::{Duration, Instant};

use crate::target::RedisTarget;

use crate::versus::{Bench, Contender, Median, SLEEPING, Section, deadlines, median_of, per_round};

/// `pipescope cost cluster`, one row: one depth K (1 = sequential), single against
/// cluster.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClusterCostRow {
    pub k: u32,
    pub count: u64,
    pub rounds: usize,
    pub single_ops_per_sec: f64,
    pub cluster_ops_per_sec: f64,
    /// Median of the rounds' cluster / single throughput.
    pub ratio: Median,
}

/// For each of `ks`, our engine sleeping for replies at depth K on `single` (its server on
/// `port`) and on `cluster` (a node of it); `count` SETs a run, within `time_budget`.
pub async fn measure(
    single: &RedisTarget,
    cluster: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    min_rounds: usize,
    time_budget: Duration,
) -> anyhow::Result<Vec<ClusterCostRow>> {
    let began = Instant::now();
    let mut bench = Bench::new(single, port, count, min_rounds).await?;
    bench.progress = true;
    bench.with_cluster(cluster).await?;
    // The quick runs first, so K = 1's long ones get what is left.
    let mut by_depth = ks.to_vec();
    by_depth.sort_unstable_by(|a, b| b.cmp(a));
    let order = by_depth.into_iter().map(Section::Cluster).collect();
    let mut rows = Vec::new();
    for (section, deadline) in deadlines(order, began, time_budget) {
        let Section::Cluster(k) = section else {
            unreachable!("only cluster sections")
        };
        let s = bench
            .rounds(&[SLEEPING, Contender::OursOnCluster], k, count, deadline)
            .await?;
        let (single, cluster) = (&s[0], &s[1]);
        rows.push(ClusterCostRow {
            k,
            count,
            rounds: single.len(),
            single_ops_per_sec: median_of(single, |s| s.ops_per_sec),
            cluster_ops_per_sec: median_of(cluster, |s| s.ops_per_sec),
            ratio: per_round(cluster, single, |c, s| c.ops_per_sec / s.ops_per_sec),
        });
    }
    rows.sort_by_key(|r| r.k);
    bench.empty().await?;
    tracing::info!(elapsed = ?began.elapsed(), "cluster cost done");
    Ok(rows)
}
