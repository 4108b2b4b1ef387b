//! Our engine against `redis-benchmark --cluster` on a cluster, at depths K, in rounds that
//! rotate who goes first, every run on empty masters.
//!
//! The two do not spread their SETs alike, so each row says what each side did and where its
//! SETs landed (each master's `INFO commandstats` across the runs):
//! - `redis-benchmark --cluster` binds each client to one master and puts a hash tag of that
//!   master's slots in its keys (`{tag}`), so each client writes to one master only. With
//!   `-c 1` all its SETs go to one master (the first it lists: the node it was pointed at).
//! - our engine, like cluster clients, opens a connection per master and splits each batch
//!   of K by the master serving each key, sending the sub-batches side by side.
//!
//! redis-benchmark runs on one thread (`--threads 1`, see `Shape::on_cluster`): with its
//! default of a thread per master, `-c 1` fails and the times are rounded up to 250 ms ticks.
//!
//! Per K, three runs a round: ours K deep beside `--cluster -c 1 -P K` (one client each:
//! theirs writes to one master, ours to all), and `--cluster -c <masters> -P K` (a client per
//! master, K deep each) beside ours `masters × K` deep (about K per master per round trip: as
//! many in flight on each master; their clients run independently, our sub-batches wait for
//! each other at the end of every batch).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::target::RedisTarget;

use super::{Bench, Contender, Median, Section, deadlines, median_of, per_round};

/// The SETs one master executed for one side, over all its runs of a row (warm-up included).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Landed {
    pub master: String,
    pub sets: u64,
}

/// `versus redis-benchmark --cluster`, one row: one K, one client count of theirs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClusterVersusRow {
    pub k: u32,
    /// redis-benchmark's clients (`-c`), each pipelining K (`-P K`): 1, or one per master.
    pub clients: u32,
    /// Our engine's batch: K beside one client, masters × K beside one per master (1 is
    /// sequential).
    pub ours_depth: u32,
    pub count: u64,
    pub rounds: usize,
    pub theirs_ops_per_sec: f64,
    /// Our engine sleeping for replies, as redis-benchmark does.
    pub ours_ops_per_sec: f64,
    /// Median of the rounds' ours / theirs throughput.
    pub ratio: Median,
    pub theirs_landed: Vec<Landed>,
    pub ours_landed: Vec<Landed>,
}

/// For each of `ks`, redis-benchmark `--cluster` and our engine on `cluster` (a node of it,
/// every master of which is emptied before every run), `count` SETs a run, within
/// `time_budget`. With `tls_ca`, the cluster's ports are TLS ports and redis-benchmark goes
/// over TLS too (`--tls --cacert tls_ca`).
pub async fn compare_on_cluster(
    cluster: &RedisTarget,
    count: u64,
    ks: &[u32],
    min_rounds: usize,
    time_budget: Duration,
    tls_ca: Option<&Path>,
) -> anyhow::Result<Vec<ClusterVersusRow>> {
    let began = Instant::now();
    let mut bench = Bench::new(cluster, 0, count, min_rounds).await?;
    bench.progress = true;
    bench.with_cluster(cluster).await?;
    if let Some(ca) = tls_ca {
        anyhow::ensure!(
            super::redis_benchmark::supports_tls().await?,
            "this redis-benchmark was built without TLS (its --help lists no --tls): it cannot run over TLS"
        );
        bench.shape.over_tls(ca);
    }
    bench.shape.on_cluster();
    // redis-benchmark is pointed at the first master (it runs against 127.0.0.1).
    let first = bench
        .master_addrs
        .first()
        .context("a cluster with no masters")?;
    bench.port = first
        .strip_prefix("127.0.0.1:")
        .and_then(|p| p.parse().ok())
        .with_context(|| {
            format!(
                "redis-benchmark runs against 127.0.0.1, and this cluster's first master is {first}"
            )
        })?;
    let masters = bench.master_addrs.len() as u32;
    let ours = Contender::OursOnClusterTimes { times: 1 };
    let who = [
        ours,
        Contender::TheirsOnCluster { clients: 1 },
        Contender::TheirsOnCluster { clients: masters },
        Contender::OursOnClusterTimes { times: masters },
    ];
    // The quick runs first, so K = 1's long ones get what is left.
    let mut by_depth = ks.to_vec();
    by_depth.sort_unstable_by(|a, b| b.cmp(a));
    let order = by_depth.into_iter().map(Section::ClusterVersus).collect();
    let mut rows = Vec::new();
    for (section, deadline) in deadlines(order, began, time_budget) {
        let Section::ClusterVersus(k) = section else {
            unreachable!("only cluster comparisons")
        };
        let s = bench.rounds(&who, k, count, deadline).await?;
        let landed = |i: usize| -> Vec<Landed> {
            let sets = bench.landed.get(i).cloned().unwrap_or_default();
            bench
                .master_addrs
                .iter()
                .zip(sets.into_iter().chain(std::iter::repeat(0)))
                .map(|(m, sets)| Landed {
                    master: m.clone(),
                    sets,
                })
                .collect()
        };
        // (theirs, ours, redis-benchmark's clients)
        for (t, o, clients) in [(1, 0, 1), (2, 3, masters)] {
            let (theirs, ours) = (&s[t], &s[o]);
            rows.push(ClusterVersusRow {
                k,
                clients,
                ours_depth: k * clients,
                count,
                rounds: theirs.len(),
                theirs_ops_per_sec: median_of(theirs, |s| s.ops_per_sec),
                ours_ops_per_sec: median_of(ours, |s| s.ops_per_sec),
                ratio: per_round(ours, theirs, |o, t| o.ops_per_sec / t.ops_per_sec),
                theirs_landed: landed(t),
                ours_landed: landed(o),
            });
        }
    }
    rows.sort_by_key(|r| (r.k, r.clients));
    bench.empty().await?;
    tracing::info!(elapsed = ?began.elapsed(), "comparison on the cluster done");
    Ok(rows)
}
