//! `pipescope bench --against-redis-benchmark`: our engine and `redis-benchmark -c 1 -P K -t
//! set` on the same Redis, in one run, alternating A B A B so the machine's mood affects both
//! alike; medians and the ratio ours/theirs per K. Also what measuring costs: the engine with
//! its instrumentation on and off.
//!
//! Always on an embedded redis-server of our own: redis-benchmark writes `key:*` keys we must
//! not leave in anybody's database.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use shared::{Mode, RunSpec};

use crate::engine::{self, RunContext, keys};
use crate::recorder::Progress;
use crate::target::RedisTarget;

#[derive(Debug, Clone, serde::Serialize)]
pub struct VersusRow {
    pub k: u32,
    pub ours_ops_per_sec: f64,
    pub theirs_ops_per_sec: f64,
    pub ratio: f64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Overhead {
    pub batch: u32,
    pub instrumented_ops_per_sec: f64,
    pub bare_ops_per_sec: f64,
    /// (bare − instrumented) / bare, in percent.
    pub overhead_percent: f64,
}

/// Median of a few measurements.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

async fn ours(
    target: &RedisTarget,
    run_id: u64,
    count: u64,
    batch: u32,
    instrument: bool,
) -> anyhow::Result<f64> {
    let mode = if batch == 1 {
        Mode::Sequential
    } else {
        Mode::pipelined(batch)
    };
    let spec = RunSpec::set(count, mode);
    let ctx = RunContext {
        instrument,
        ..RunContext::new(
            run_id,
            Arc::new(Progress::default()),
            Arc::new(AtomicBool::new(false)),
        )
    };
    let outcome = engine::run(target, spec, ctx)
        .await
        .map_err(|f| anyhow::anyhow!("{}", f.error))?;
    keys::remove_run_keys(target, run_id, outcome.written).await?;
    Ok(outcome.summary.ops_per_sec)
}

async fn theirs(port: u16, count: u64, k: u32) -> anyhow::Result<f64> {
    let out = tokio::process::Command::new("redis-benchmark")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-c",
            "1",
            "-P",
            &k.to_string(),
        ])
        .args([
            "-t",
            "set",
            "-n",
            &count.to_string(),
            "-r",
            &count.to_string(),
            "--csv",
        ])
        .output()
        .await
        .context("running redis-benchmark (Debian: apt-get install redis-tools)")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    // "SET","123456.79",...
    stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("\"SET\",\"")?
                .split('"')
                .next()?
                .parse()
                .ok()
        })
        .with_context(|| format!("unexpected redis-benchmark output: {stdout}"))
}

/// Removes redis-benchmark's keys from our own server, so every round starts alike.
async fn clear_their_keys(target: &RedisTarget) -> anyhow::Result<()> {
    let mut con = target.admin_connection().await?;
    keys::unlink_matching(&mut con, "key:*", |_| true).await?;
    Ok(())
}

/// Runs the comparison; `port` is our own redis-server's.
pub async fn compare(
    target: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    rounds: usize,
) -> anyhow::Result<(Vec<VersusRow>, Overhead)> {
    let mut run_id = crate::hub::first_run_id();
    let mut rows = Vec::new();
    for &k in ks {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            run_id += 1;
            a.push(ours(target, run_id, count, k, true).await?);
            b.push(theirs(port, count, k).await?);
            clear_their_keys(target).await?;
        }
        let (ours, theirs) = (median(a), median(b));
        rows.push(VersusRow {
            k,
            ours_ops_per_sec: ours,
            theirs_ops_per_sec: theirs,
            ratio: ours / theirs,
        });
    }
    let batch = ks.iter().copied().max().unwrap_or(1000);
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(3) {
        run_id += 2;
        on.push(ours(target, run_id, count, batch, true).await?);
        off.push(ours(target, run_id + 1, count, batch, false).await?);
    }
    let (on, off) = (median(on), median(off));
    let overhead = Overhead {
        batch,
        instrumented_ops_per_sec: on,
        bare_ops_per_sec: off,
        overhead_percent: (off - on) / off * 100.0,
    };
    Ok((rows, overhead))
}

#[cfg(test)]
mod tests {
    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(super::median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(super::median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
