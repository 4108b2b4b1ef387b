//! What TLS costs our engine: the same SETs sequentially and pipelined, over plain TCP and
//! over TLS to one redis-server listening on both (`--port` and `--tls-port`), in rounds that
//! rotate who goes first, each run on an empty database.

use std::time::{Duration, Instant};

use crate::target::RedisTarget;

use crate::versus::{Bench, Contender, Median, SLEEPING, Section, deadlines, median_of, per_round};

/// `pipescope cost tls`, one row: one depth K (1 = sequential), plain against TLS.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TlsCostRow {
    pub k: u32,
    pub count: u64,
    pub rounds: usize,
    pub plain_ops_per_sec: f64,
    pub tls_ops_per_sec: f64,
    /// Median of the rounds' TLS / plain throughput.
    pub ratio: Median,
    /// Median of the rounds' per-command time added by TLS, µs: 1e6 / TLS ops/s − 1e6 /
    /// plain ops/s (at K = 1, the mean round trip's share).
    pub added_per_command_us: Median,
}

/// For each of `ks`, our engine sleeping for replies (as client libraries do) at depth K over
/// `plain` and over `tls`, both the server on `port`; `count` SETs a run, within
/// `time_budget`.
pub async fn measure(
    plain: &RedisTarget,
    tls: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    min_rounds: usize,
    time_budget: Duration,
) -> anyhow::Result<Vec<TlsCostRow>> {
    let began = Instant::now();
    let mut bench = Bench::new(plain, port, count, min_rounds).await?;
    bench.progress = true;
    bench.tls = Some(tls.clone());
    // The quick runs first, so K = 1's long ones get what is left.
    let mut by_depth = ks.to_vec();
    by_depth.sort_unstable_by(|a, b| b.cmp(a));
    let order = by_depth.into_iter().map(Section::Tls).collect();
    let mut rows = Vec::new();
    for (section, deadline) in deadlines(order, began, time_budget) {
        let Section::Tls(k) = section else {
            unreachable!("only TLS sections")
        };
        let s = bench
            .rounds(&[SLEEPING, Contender::OursOverTls], k, count, deadline)
            .await?;
        let (plain, tls) = (&s[0], &s[1]);
        rows.push(TlsCostRow {
            k,
            count,
            rounds: plain.len(),
            plain_ops_per_sec: median_of(plain, |s| s.ops_per_sec),
            tls_ops_per_sec: median_of(tls, |s| s.ops_per_sec),
            ratio: per_round(tls, plain, |t, p| t.ops_per_sec / p.ops_per_sec),
            added_per_command_us: per_round(tls, plain, |t, p| {
                1e6 / t.ops_per_sec - 1e6 / p.ops_per_sec
            }),
        });
    }
    rows.sort_by_key(|r| r.k);
    bench.empty().await?;
    tracing::info!(elapsed = ?began.elapsed(), "TLS cost done");
    Ok(rows)
}
