//! `pipescope bench --against-redis-benchmark`: our engine and `redis-benchmark -c 1 -P K -t
//! set` (fresh keys and values as long as ours, like our SETs) on the same Redis, in one run: after an untimed warm-up of each, rounds alternate
//! A B, B A, … so the machine's mood (and whoever goes second) affects both alike; medians and
//! the ratio ours/theirs per K. Also what measuring costs: the engine with its instrumentation
//! on and off, interleaved the same way. Bounded: at most `MAX_ROUNDS` rounds, and no new round
//! starts after `time_budget`.
//!
//! Always on an embedded redis-server of our own: redis-benchmark writes `key:*` keys we must
//! not leave in anybody's database.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

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
    /// The median of the rounds' ours/theirs ratios.
    pub ratio: f64,
}

impl VersusRow {
    /// Medians of each side; the ratio is the median of the rounds' own ratios (each round's
    /// two runs ran back to back, so they share the machine's load of the moment, which moves
    /// both by far more than the difference being measured).
    fn from_rounds(k: u32, ours: Vec<f64>, theirs: Vec<f64>) -> VersusRow {
        let ratios = ours.iter().zip(&theirs).map(|(a, b)| a / b).collect();
        VersusRow {
            k,
            ours_ops_per_sec: median(ours),
            theirs_ops_per_sec: median(theirs),
            ratio: median(ratios),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Overhead {
    pub batch: u32,
    pub instrumented_ops_per_sec: f64,
    pub bare_ops_per_sec: f64,
    /// (bare − instrumented) / bare, in percent (median of the rounds').
    pub overhead_percent: f64,
    /// CPU time our process spent per command (user + system, ns), measured and bare. On a
    /// busy machine wall-clock throughput swings by tens of percent from one run to the next;
    /// the CPU the engine burns per command is what instrumentation adds to, and it swings far
    /// less.
    pub instrumented_cpu_ns_per_command: f64,
    pub bare_cpu_ns_per_command: f64,
    /// (measured − bare) / bare CPU per command, in percent (median of the rounds').
    pub cpu_overhead_percent: f64,
}

/// Rounds per side at most, whatever is asked.
pub const MAX_ROUNDS: usize = 15;
/// No new round starts after this long (the comparison still reports at least one).
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(180);

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
    Ok(ours_timed(target, run_id, count, batch, instrument)
        .await?
        .0)
}

/// This process's CPU time so far (user + system).
fn cpu_time() -> std::time::Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv =
        |t: libc::timeval| std::time::Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Our run's throughput and the CPU our process spent per command during it (the engine's
/// thread; the rest of the process idles while it runs).
async fn ours_timed(
    target: &RedisTarget,
    run_id: u64,
    count: u64,
    batch: u32,
    instrument: bool,
) -> anyhow::Result<(f64, f64)> {
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
    let cpu = cpu_time();
    let outcome = engine::run(target, spec, ctx)
        .await
        .map_err(|f| anyhow::anyhow!("{}", f.error))?;
    let cpu_ns = (cpu_time() - cpu).as_nanos() as f64 / count.max(1) as f64;
    keys::remove_run_keys(target, run_id, outcome.written).await?;
    Ok((outcome.summary.ops_per_sec, cpu_ns))
}

/// Where redis-benchmark's keys go (it writes `<prefix>` + 12 digits).
const THEIR_PREFIX: &str = "redis-benchmark:";

/// redis-benchmark sending the SETs we send: the same command with keys and values as long as
/// ours (Redis's own cost per SET grows with them: with its default 16-byte keys it did a
/// third more SETs a second at K=1000 than with our 30-byte ones), a fresh key each (`-r` over
/// a keyspace so large that almost none repeat; its default `-r N` overwrites a third of
/// them, which costs Redis less than creating keys, as ours all do).
async fn theirs(port: u16, count: u64, k: u32, shape: &Shape) -> anyhow::Result<f64> {
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
            "-n",
            &count.to_string(),
            "-r",
            "2000000000",
            "--csv",
            "SET",
            &shape.key,
            &shape.value,
        ])
        .output()
        .await
        .context("running redis-benchmark (Debian: apt-get install redis-tools)")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    // "SET redis-benchmark:…","123456.79",...
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("\"SET")?.split("\",\"").nth(1)?.parse().ok())
        .with_context(|| format!("unexpected redis-benchmark output: {stdout}"))
}

/// redis-benchmark's command arguments for SETs shaped like ours.
struct Shape {
    key: String,
    value: String,
}

impl Shape {
    fn like_ours(run_id: u64, count: u64) -> Shape {
        let mean = |f: &dyn Fn(u64) -> usize| {
            let total: usize = (0..count).map(f).sum();
            (total + count as usize / 2) / count.max(1) as usize
        };
        let digits = |i: u64| itoa::Buffer::new().format(i).len();
        let ns = keys::namespace(run_id).len();
        // Ours: `<namespace>k<i>`, `v<i>`; theirs: `<prefix><pad>` + 12 digits, `v` + padding.
        let key_len = mean(&|i| ns + 1 + digits(i));
        let value_len = mean(&|i| 1 + digits(i));
        let pad = key_len.saturating_sub(THEIR_PREFIX.len() + 12);
        Shape {
            key: format!("{THEIR_PREFIX}{}__rand_int__", "k".repeat(pad)),
            value: format!("v{}", "0".repeat(value_len.saturating_sub(1))),
        }
    }
}

/// Removes redis-benchmark's keys from our own server, so every round starts alike.
async fn clear_their_keys(target: &RedisTarget) -> anyhow::Result<()> {
    let mut con = target.admin_connection().await?;
    keys::unlink_matching(&mut con, &format!("{THEIR_PREFIX}*"), |_| true).await?;
    Ok(())
}

/// Runs the comparison; `port` is our own redis-server's. Returns a row per K and the
/// instrumentation overhead at K = 1 (where per-request bookkeeping weighs most) and at the
/// largest K.
pub async fn compare(
    target: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    rounds: usize,
    time_budget: Duration,
) -> anyhow::Result<(Vec<VersusRow>, Vec<Overhead>)> {
    let rounds = rounds.clamp(1, MAX_ROUNDS);
    let began = Instant::now();
    // Each K and the overhead get an equal share of the budget.
    let share = time_budget / (ks.len() as u32 + 2);
    let mut run_id = crate::hub::first_run_id();
    let shape = Shape::like_ours(run_id, count);
    let mut next_id = || {
        run_id += 1;
        run_id
    };
    let mut rows = Vec::new();
    for &k in ks {
        let started = Instant::now();
        // Warm-up, not measured: first connections, page cache, Redis's dict growing.
        ours(target, next_id(), count, k, true).await?;
        theirs(port, count, k, &shape).await?;
        clear_their_keys(target).await?;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            if round > 0 && started.elapsed() > share {
                break;
            }
            // A B, then B A: neither side always goes first.
            if round % 2 == 0 {
                a.push(ours(target, next_id(), count, k, true).await?);
                b.push(theirs(port, count, k, &shape).await?);
            } else {
                b.push(theirs(port, count, k, &shape).await?);
                a.push(ours(target, next_id(), count, k, true).await?);
            }
            clear_their_keys(target).await?;
        }
        tracing::debug!(k, ?a, ?b, "versus rounds");
        rows.push(VersusRow::from_rounds(k, a, b));
    }
    let mut overheads = Vec::new();
    let largest = ks.iter().copied().max().unwrap_or(1000);
    for batch in [1, largest] {
        let started = Instant::now();
        ours(target, next_id(), count, batch, true).await?;
        ours(target, next_id(), count, batch, false).await?;
        let (mut on, mut off) = (Vec::new(), Vec::new());
        // Twice the rounds: the difference is a few percent, the noise about as much.
        for round in 0..(2 * rounds).clamp(5, MAX_ROUNDS) {
            if round >= 3 && started.elapsed() > share {
                break;
            }
            if round % 2 == 0 {
                on.push(ours_timed(target, next_id(), count, batch, true).await?);
                off.push(ours_timed(target, next_id(), count, batch, false).await?);
            } else {
                off.push(ours_timed(target, next_id(), count, batch, false).await?);
                on.push(ours_timed(target, next_id(), count, batch, true).await?);
            }
        }
        tracing::debug!(batch, ?on, ?off, "overhead rounds");
        // Per round, as for the ratios: (bare − measured) / bare, and the CPU's (m − b) / b.
        let pairs = || on.iter().zip(&off);
        let costs = pairs().map(|(a, b)| (b.0 - a.0) / b.0 * 100.0).collect();
        let cpu_costs = pairs().map(|(a, b)| (a.1 - b.1) / b.1 * 100.0).collect();
        overheads.push(Overhead {
            batch,
            instrumented_ops_per_sec: median(on.iter().map(|r| r.0).collect()),
            bare_ops_per_sec: median(off.iter().map(|r| r.0).collect()),
            overhead_percent: median(costs),
            instrumented_cpu_ns_per_command: median(on.iter().map(|r| r.1).collect()),
            bare_cpu_ns_per_command: median(off.iter().map(|r| r.1).collect()),
            cpu_overhead_percent: median(cpu_costs),
        });
    }
    tracing::info!(elapsed = ?began.elapsed(), "comparison done");
    Ok((rows, overheads))
}

#[cfg(test)]
mod tests {
    #[test]
    fn their_sets_are_shaped_like_ours() {
        let run_id = 1_764_701_234_567;
        let s = super::Shape::like_ours(run_id, 100_000);
        // Ours: "pipescope:1764701234567:k" + 4.9 digits on average; "v" + 4.9 digits.
        assert_eq!(s.key.replace("__rand_int__", "000000012345").len(), 30);
        assert_eq!(s.value, "v00000");
        assert!(s.key.starts_with(super::THEIR_PREFIX));
    }

    #[test]
    fn the_ratio_is_the_median_of_the_rounds_ratios() {
        let row = super::VersusRow::from_rounds(1, vec![10.0, 30.0, 20.0], vec![10.0, 20.0, 40.0]);
        assert_eq!(row.ratio, 1.0);
        assert_eq!((row.ours_ops_per_sec, row.theirs_ops_per_sec), (20.0, 20.0));
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(super::median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(super::median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
