//! `pipescope cost observer-memory`: does observe mode's memory stay flat however long a
//! connection runs? The real `pipescope observe` as a child process, redis-benchmark sending
//! `count` SETs pipelined 1,000 deep on one connection through it, and the child's memory read
//! from `/proc/<pid>/status` every 200 ms: its peak (VmHWM) at start, after the first million
//! SETs and at the end, and its resident size (VmRSS) along the way.
//!
//! A record keeps its first `spans::FULL_SPANS` requests' stamps in full and a bounded sample
//! of the rest, so the peak after 10 million SETs should be the peak after one million.
//!
//! Bounded: no SET is sent after `time_budget` (redis-benchmark is stopped there, and the
//! report says how far it got).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::io::AsyncReadExt;

use super::observe_child::ObserveChild;
use crate::engine::keys;
use crate::local_redis::LocalRedis;
use crate::target::RedisTarget;
use crate::versus::{MAX_KEYSPACE, Shape, parse_csv, redis_benchmark};

/// How often the child's memory is read.
const SAMPLE_EVERY: Duration = Duration::from_millis(200);
/// Pipeline depth of the SETs sent through the observer.
const DEPTH: u32 = 1_000;
/// The peak is also noted once this many SETs have gone through.
const FIRST_MILESTONE: u64 = 1_000_000;

/// The child's memory at one moment, kB.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Memory {
    pub rss_kb: u64,
    pub hwm_kb: u64,
}

/// One reading: SETs Redis had executed, and the observer's memory then.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Reading {
    pub secs: f64,
    pub sets: u64,
    #[serde(flatten)]
    pub memory: Memory,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct RssReport {
    /// SETs asked for, and executed by Redis (fewer if the time budget ran out).
    pub count: u64,
    pub sets: u64,
    pub elapsed_secs: f64,
    /// redis-benchmark's own throughput through the observer, if it finished.
    pub ops_per_sec: Option<f64>,
    pub at_start: Memory,
    /// The first reading at or after `FIRST_MILESTONE` SETs.
    pub after_first_million: Option<Reading>,
    pub at_end: Memory,
    /// The largest VmRSS read.
    pub max_rss_kb: u64,
    /// SETs the observer itself counted on its connections (its JSON report at the end).
    pub observed_sets: Option<u64>,
    /// A reading per million SETs (the first one at or after each).
    pub per_million: Vec<Reading>,
    pub readings: usize,
}

/// `pid`'s VmRSS and VmHWM.
pub fn memory(pid: u32) -> anyhow::Result<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("no {name} in /proc/{pid}/status"))
    };
    Ok(Memory {
        rss_kb: field("VmRSS:")?,
        hwm_kb: field("VmHWM:")?,
    })
}

/// SETs Redis executed since the last `CONFIG RESETSTAT` (`INFO commandstats`).
async fn sets_executed(admin: &mut redis::aio::MultiplexedConnection) -> anyhow::Result<u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(admin)
        .await?;
    // cmdstat_set:calls=123,usec=…
    Ok(info
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
        .and_then(|v| v.split(',').next()?.parse().ok())
        .unwrap_or(0))
}

/// Runs the measurement with `exe` (this very binary) as `pipescope observe`, on a
/// redis-server of our own.
pub async fn measure(exe: &Path, count: u64, time_budget: Duration) -> anyhow::Result<RssReport> {
    let local = LocalRedis::start().context("starting a redis-server for the measurement")?;
    let target = RedisTarget::parse(&local.url())?;
    let mut admin = target.admin_connection().await?;
    // The child outlives the budget by a margin; it is stopped with SIGTERM before then.
    let duration = format!("{}s", (time_budget + Duration::from_secs(120)).as_secs());
    let observer = ObserveChild::start(exe, &local.url(), &["--duration", &duration]).await?;
    let pid = observer.pid;
    let at_start = memory(pid)?;
    eprintln!(
        "observer-memory: pipescope observe (pid {pid}) on {}: VmRSS {}, VmHWM {} at start",
        observer.addr,
        mb(at_start.rss_kb),
        mb(at_start.hwm_kb)
    );

    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .exec_async(&mut admin)
        .await?;
    let shape = Shape::like_ours(keys::first_run_id(), count);
    let mut benchmark =
        redis_benchmark(observer.addr.port(), 1, DEPTH, count, MAX_KEYSPACE, &shape)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("running redis-benchmark (Debian: apt-get install redis-tools)")?;
    let mut bench_out = benchmark
        .stdout
        .take()
        .context("redis-benchmark's stdout")?;
    let began = Instant::now();
    let (mut readings, finished) =
        sample(&mut benchmark, &mut admin, pid, count, began, time_budget).await?;
    let mut csv = String::new();
    bench_out.read_to_string(&mut csv).await?;
    let ops_per_sec = finished.then(|| parse_csv(&csv)).flatten().map(|(r, _)| r);
    let sets = sets_executed(&mut admin).await?;
    let at_end = memory(pid)?;
    readings.push(Reading {
        secs: began.elapsed().as_secs_f64(),
        sets,
        memory: at_end,
    });
    let elapsed_secs = began.elapsed().as_secs_f64();
    let observed_sets = match observer.stop(libc::SIGTERM, Duration::from_secs(30)).await {
        Ok(ended) => observed_sets(&ended.report),
        Err(_) => None,
    };

    let per_million = (1..=count / FIRST_MILESTONE)
        .filter_map(|m| {
            readings
                .iter()
                .find(|r| r.sets >= m * FIRST_MILESTONE)
                .copied()
        })
        .collect();
    Ok(RssReport {
        count,
        sets,
        elapsed_secs,
        ops_per_sec,
        at_start,
        after_first_million: readings
            .iter()
            .find(|r| r.sets >= FIRST_MILESTONE.min(count))
            .copied(),
        at_end,
        max_rss_kb: readings.iter().map(|r| r.memory.rss_kb).max().unwrap_or(0),
        observed_sets,
        per_million,
        readings: readings.len(),
    })
}

/// Reads the SETs executed and the observer's memory every `SAMPLE_EVERY` until
/// redis-benchmark ends (whether it succeeded) or `time_budget` is spent (then stopped).
async fn sample(
    benchmark: &mut tokio::process::Child,
    admin: &mut redis::aio::MultiplexedConnection,
    pid: u32,
    count: u64,
    began: Instant,
    time_budget: Duration,
) -> anyhow::Result<(Vec<Reading>, bool)> {
    let deadline = began + time_budget;
    let mut readings = Vec::new();
    let mut tick = tokio::time::interval(SAMPLE_EVERY);
    let mut last_said = began;
    let finished = loop {
        tick.tick().await;
        let reading = Reading {
            secs: began.elapsed().as_secs_f64(),
            sets: sets_executed(admin).await?,
            memory: memory(pid)?,
        };
        readings.push(reading);
        if last_said.elapsed() >= Duration::from_secs(2) {
            last_said = Instant::now();
            eprintln!(
                "observer-memory: {:>5.1} s  {:>10} of {count} SETs  VmRSS {}  VmHWM {}",
                reading.secs,
                reading.sets,
                mb(reading.memory.rss_kb),
                mb(reading.memory.hwm_kb)
            );
        }
        if let Some(status) = benchmark.try_wait()? {
            break status.success();
        }
        if Instant::now() >= deadline {
            eprintln!("observer-memory: the time budget is spent; stopping redis-benchmark");
            benchmark.kill().await?;
            break false;
        }
    };
    Ok((readings, finished))
}

/// SETs over every connection in `pipescope observe --json`'s report.
fn observed_sets(report: &str) -> Option<u64> {
    let start = report.find('[')?;
    let conns: Vec<shared::observe::ObservedConnection> =
        serde_json::from_str(report[start..].trim()).ok()?;
    Some(
        conns
            .iter()
            .flat_map(|c| &c.top_commands)
            .filter(|(name, _)| name == "SET")
            .map(|(_, n)| n)
            .sum(),
    )
}

/// kB as MB with one decimal.
pub fn mb(kb: u64) -> String {
    format!("{:.1} MB", kb as f64 / 1024.0)
}
