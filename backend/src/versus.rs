//! `pipescope bench --against-redis-benchmark`: our engine and `redis-benchmark -c 1 -P K -t
//! set` (fresh keys and values as long as ours, like our SETs) on the same Redis, in one run.
//!
//! Our engine runs twice per round: waiting for replies the way redis-benchmark and client
//! libraries do (sleeping in the kernel), and busy-polling for them (see `shared::Wait`). The
//! first is the like-for-like comparison; the second shows what the engine can do without the
//! client's wake-up, which can be most of a loopback round trip (the README's measurements).
//!
//! What makes the numbers comparable:
//! - every timed run starts from an empty database (`FLUSHALL SYNC` on our own server, outside
//!   the timing): Redis's hash table then grows through the same resizes for every run, where
//!   a run that followed a deletion otherwise depended on how far Redis had shrunk it again;
//! - rounds rotate who goes first, so the machine's mood of the moment (on a shared host,
//!   throughput moves from one moment to the next) weighs on all alike, and the ratio is the
//!   median of the rounds' own ratios, with a 95 % confidence interval for that median;
//! - rounds go on while the time budget lasts (short runs, like K = 1000's, get many).
//!
//! Also what measuring costs: the engine with its instrumentation on and off, interleaved the
//! same way. Bounded: at most `MAX_ROUNDS` rounds per comparison, and no new round after its
//! share of `time_budget` (but at least `min_rounds`).
//!
//! Always on an embedded redis-server of our own: redis-benchmark writes `key:*` keys, and we
//! empty the database before every run.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Context;
use shared::{Mode, RunSpec, Wait};

use crate::engine::{self, RunContext, keys};
pub use crate::median::Median;
use crate::net::{Compensation, DelayProxy, Hooks};
use crate::observe::Observer;
use crate::recorder::Progress;
use crate::round_trip_probe;
use crate::target::RedisTarget;

/// Rounds per comparison at most, whatever the budget.
pub const MAX_ROUNDS: usize = 101;
/// No new round starts after this long in all (each comparison gets its share).
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(420);
/// Commands per run when measuring the instrumentation at batch 1.
const OVERHEAD_COUNT_AT_1: u64 = 20_000;
/// How the busy-polling engine waits: long enough for Redis to answer a batch of 1,000 (the
/// largest K) on loopback, so that it does not sleep in this comparison.
const BUSY_POLL: Wait = Wait::BusyPoll {
    us: Wait::DEFAULT_BUSY_POLL_US,
};
/// Commands in each side's untimed warm-up run.
const WARM_UP: u64 = 10_000;

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
    /// Our engine busy-polling for replies.
    pub busy_poll_ops_per_sec: f64,
    pub busy_poll_ratio: Median,
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

/// One comparison of the run.
#[derive(Debug, Clone, Copy)]
enum Section {
    /// Theirs, ours sleeping and ours busy-polling at depth K.
    Versus(u32),
    /// Ours busy-polling with and without instrumentation at this batch.
    Overhead(u32),
    /// Theirs direct and through an in-process observing proxy at depth K.
    Observed(u32),
    /// The round-trip probe direct, through a plain relay and through the observing proxy.
    Probe,
}

/// Who runs in a round.
#[derive(Debug, Clone, Copy)]
enum Contender {
    Theirs,
    /// redis-benchmark through the observing proxy (`Bench::observer`).
    TheirsObserved,
    Ours {
        wait: Wait,
        instrument: bool,
    },
}

const SLEEPING: Contender = Contender::Ours {
    wait: Wait::Sleep,
    instrument: true,
};
const BUSY_POLLING: Contender = Contender::Ours {
    wait: BUSY_POLL,
    instrument: true,
};
/// The busy-polling engine measuring nothing. Instrumentation is measured against the
/// busy-polling engine: its round trips are the shortest, so the same bookkeeping is the
/// largest share of them (and its runs are the quickest, so more rounds fit).
const BARE: Contender = Contender::Ours {
    wait: BUSY_POLL,
    instrument: false,
};

/// One timed run's result.
#[derive(Debug, Clone, Copy)]
struct Sample {
    ops_per_sec: f64,
    /// redis-benchmark's own p50 (its `--csv` column: a histogram bucket's value, 8 µs apart
    /// below 1 ms): per request at K = 1, per batch of K above. Not measured for our engine's
    /// runs.
    p50_us: Option<f64>,
    /// Through the observing proxy: the SETs it framed during the run.
    observed_sets: Option<u64>,
}

impl Sample {
    fn ours(ops_per_sec: f64) -> Sample {
        Sample {
            ops_per_sec,
            p50_us: None,
            observed_sets: None,
        }
    }
}

/// Where redis-benchmark's keys go (it writes `<prefix>` + 12 digits).
const THEIR_PREFIX: &str = "redis-benchmark:";

/// redis-benchmark's command arguments for SETs shaped like ours.
pub(crate) struct Shape {
    key: String,
    value: String,
}

impl Shape {
    /// Keys and values as long as ours on average (Redis's own cost per SET grows with them,
    /// so redis-benchmark's shorter default keys would flatter it), a fresh key each (`-r` over a keyspace so large that almost none
    /// repeat; its default `-r N` overwrites a third of them, which costs Redis less than
    /// creating keys, as ours all do).
    pub(crate) fn like_ours(run_id: u64, count: u64) -> Shape {
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

/// `redis-benchmark -c 1 -P k -n count` of SETs shaped as `shape` against 127.0.0.1:`port`,
/// over a keyspace of `keyspace` (`-r`; at most `MAX_KEYSPACE`), printing `--csv`.
pub(crate) fn redis_benchmark(
    port: u16,
    k: u32,
    count: u64,
    keyspace: u64,
    shape: &Shape,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("redis-benchmark");
    cmd.args([
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
        &keyspace.min(MAX_KEYSPACE).to_string(),
        "--csv",
        "SET",
        &shape.key,
        &shape.value,
    ]);
    cmd
}

/// redis-benchmark's `-r` at most: its random numbers are C ints, and above 2^31 it silently
/// writes one key.
pub(crate) const MAX_KEYSPACE: u64 = 2_000_000_000;

/// redis-benchmark's `--csv` line for the SETs: (requests per second, p50 in µs).
pub(crate) fn parse_csv(stdout: &str) -> Option<(f64, f64)> {
    // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...
    // "SET redis-benchmark:…","123456.79","0.070","0.016","0.023",...
    let line = stdout.lines().find(|l| l.starts_with("\"SET"))?;
    let cells: Vec<&str> = line.trim_matches('"').split("\",\"").collect();
    let rps = cells.get(1)?.parse().ok()?;
    let p50_ms: f64 = cells.get(4)?.parse().ok()?;
    Some((rps, p50_ms * 1000.0))
}

/// The comparison's state: our server, the run ids, redis-benchmark's command shape.
struct Bench<'a> {
    target: &'a RedisTarget,
    port: u16,
    admin: redis::aio::MultiplexedConnection,
    shape: Shape,
    run_id: u64,
    min_rounds: usize,
    /// The observing proxy in front of our server, for `Contender::TheirsObserved`.
    observer: Option<Observer>,
    /// Print each round on stderr.
    progress: bool,
}

impl<'a> Bench<'a> {
    /// Against `target`'s server on `port`, with redis-benchmark's SETs shaped like runs of
    /// `count`; no observer, and quiet.
    async fn new(
        target: &'a RedisTarget,
        port: u16,
        run_id: u64,
        count: u64,
        min_rounds: usize,
    ) -> anyhow::Result<Bench<'a>> {
        Ok(Bench {
            target,
            port,
            admin: target.admin_connection().await?,
            shape: Shape::like_ours(run_id, count),
            run_id,
            min_rounds: min_rounds.clamp(1, MAX_ROUNDS),
            observer: None,
            progress: false,
        })
    }

    /// One timed run of `count` SETs at depth `k`, on an empty database.
    async fn once(&mut self, who: Contender, k: u32, count: u64) -> anyhow::Result<Sample> {
        redis::cmd("FLUSHALL")
            .arg("SYNC")
            .exec_async(&mut self.admin)
            .await
            .context("emptying our redis-server between runs")?;
        match who {
            Contender::Theirs => self.theirs(self.port, count, k).await,
            Contender::TheirsObserved => self.observed(count, k).await,
            Contender::Ours { wait, instrument } => {
                self.run_id += 1;
                self.ours(count, k, wait, instrument).await
            }
        }
    }

    async fn ours(
        &self,
        count: u64,
        k: u32,
        wait: Wait,
        instrument: bool,
    ) -> anyhow::Result<Sample> {
        let mode = if k == 1 {
            Mode::Sequential
        } else {
            Mode::pipelined(k)
        };
        // Not sampling Redis's memory: redis-benchmark's runs beside these are not polled either.
        let ctx = RunContext {
            instrument,
            sample_memory: false,
            ..RunContext::new(
                self.run_id,
                Arc::new(Progress::default()),
                Arc::new(AtomicBool::new(false)),
            )
        };
        let spec = RunSpec {
            wait,
            ..RunSpec::set(count, mode)
        };
        let outcome = engine::run(self.target, spec, ctx)
            .await
            .map_err(|f| anyhow::anyhow!("{}", f.error))?;
        Ok(Sample::ours(outcome.summary.ops_per_sec))
    }

    /// redis-benchmark against 127.0.0.1:`port`: our server, or the observing proxy.
    async fn theirs(&self, port: u16, count: u64, k: u32) -> anyhow::Result<Sample> {
        let out = redis_benchmark(port, k, count, MAX_KEYSPACE, &self.shape)
            .output()
            .await
            .context("running redis-benchmark (Debian: apt-get install redis-tools)")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let (ops_per_sec, p50_us) = parse_csv(&stdout)
            .with_context(|| format!("unexpected redis-benchmark output: {stdout}"))?;
        Ok(Sample {
            ops_per_sec,
            p50_us: Some(p50_us),
            observed_sets: None,
        })
    }

    /// redis-benchmark through the observing proxy, and the SETs the proxy framed meanwhile
    /// (on the connections it accepted during the run).
    async fn observed(&self, count: u64, k: u32) -> anyhow::Result<Sample> {
        let observer = self.observer.as_ref().context("no observing proxy")?;
        let connections = observer.connections();
        let before = connections
            .snapshot()
            .iter()
            .map(|c| c.id)
            .max()
            .unwrap_or(0);
        let sample = self.theirs(observer.addr().port(), count, k).await?;
        let sets = connections
            .snapshot()
            .iter()
            .filter(|c| c.id > before)
            .flat_map(|c| &c.top_commands)
            .filter(|(name, _)| name == "SET")
            .map(|(_, n)| n)
            .sum();
        Ok(Sample {
            observed_sets: Some(sets),
            ..sample
        })
    }

    /// After an untimed warm-up of each, rounds of one run of `count` SETs per contender at
    /// depth `k`, the order rotating by one each round, until `deadline` (at least
    /// `min_rounds`). Returns each contender's samples, round by round.
    async fn rounds(
        &mut self,
        who: &[Contender],
        k: u32,
        count: u64,
        deadline: Instant,
    ) -> anyhow::Result<Vec<Vec<Sample>>> {
        for &c in who {
            self.once(c, k, count.min(WARM_UP)).await?;
        }
        let mut samples = vec![Vec::new(); who.len()];
        for round in 0..MAX_ROUNDS {
            if round >= self.min_rounds && Instant::now() >= deadline {
                break;
            }
            for j in 0..who.len() {
                let i = (round + j) % who.len();
                let sample = self.once(who[i], k, count).await?;
                samples[i].push(sample);
            }
            if self.progress {
                let runs: Vec<String> = who
                    .iter()
                    .zip(&samples)
                    .map(|(c, s)| {
                        let s = s.last().expect("this round's sample");
                        format!(
                            "{} {:.0} ops/s{}{}",
                            c.name(),
                            s.ops_per_sec,
                            s.p50_us
                                .map(|p| format!(" p50 {p:.0} µs"))
                                .unwrap_or_default(),
                            s.observed_sets
                                .map(|n| format!(" ({n} SETs seen by the proxy)"))
                                .unwrap_or_default()
                        )
                    })
                    .collect();
                eprintln!("K={k} round {}: {}", round + 1, runs.join(", "));
            }
        }
        tracing::debug!(k, ?who, ?samples, "rounds");
        Ok(samples)
    }
}

impl Contender {
    fn name(&self) -> &'static str {
        match self {
            Contender::Theirs => "direct",
            Contender::TheirsObserved => "observed",
            Contender::Ours {
                instrument: false, ..
            } => "bare",
            Contender::Ours {
                wait: Wait::Sleep, ..
            } => "sleeping",
            Contender::Ours { .. } => "busy-polling",
        }
    }
}

/// Per round, `f(a, b)`: each round's samples ran back to back and share the machine's load.
fn per_round(a: &[Sample], b: &[Sample], f: impl Fn(&Sample, &Sample) -> f64) -> Median {
    Median::of(a.iter().zip(b).map(|(a, b)| f(a, b)).collect())
}

fn median_of(v: &[Sample], f: impl Fn(&Sample) -> f64) -> f64 {
    Median::of(v.iter().map(f).collect()).median
}

/// Runs the comparison; `port` is our own redis-server's (emptied before every run). Returns
/// a row per K and the instrumentation overhead at K = 1 (where per-request bookkeeping weighs
/// most) and at the largest K.
pub async fn compare(
    target: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    min_rounds: usize,
    time_budget: Duration,
) -> anyhow::Result<(Vec<VersusRow>, Vec<Overhead>)> {
    let began = Instant::now();
    let run_id = keys::first_run_id();
    let mut bench = Bench::new(target, port, run_id, count, min_rounds).await?;
    let mut rows = Vec::new();
    let mut overheads = Vec::new();
    for (section, deadline) in schedule(ks, began, time_budget) {
        match section {
            Section::Versus(k) => rows.push(bench.versus(k, count, deadline).await?),
            Section::Overhead(batch) => {
                overheads.push(bench.overhead(batch, count, deadline).await?)
            }
            Section::Observed(_) | Section::Probe => {
                unreachable!("not in a comparison's schedule")
            }
        }
    }
    rows.sort_by_key(|r| r.k);
    overheads.sort_by_key(|o| o.batch);
    redis::cmd("FLUSHALL")
        .arg("SYNC")
        .exec_async(&mut bench.admin)
        .await?;
    tracing::info!(elapsed = ?began.elapsed(), "comparison done");
    Ok((rows, overheads))
}

/// `pipescope bench --observe-overhead`, one depth: redis-benchmark direct and through the
/// observing proxy.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ObservedRow {
    pub k: u32,
    /// SETs per run.
    pub count: u64,
    pub rounds: usize,
    pub direct_ops_per_sec: f64,
    pub observed_ops_per_sec: f64,
    /// Median of the rounds' observed / direct throughput.
    pub ratio: Median,
    /// redis-benchmark's own p50 (per request at K = 1, per batch of K above), medians.
    pub direct_p50_us: f64,
    pub observed_p50_us: f64,
    /// Median of the rounds' observed − direct p50, µs.
    pub added_p50_us: Median,
    /// Median of the rounds' observed − direct mean time per command (1 / throughput), µs.
    pub added_per_command_us: Median,
    /// The fewest and most SETs the proxy framed in a run: `count` each, or traffic went
    /// elsewhere.
    pub observed_sets_min: u64,
    pub observed_sets_max: u64,
}

/// The round-trip probe's figures: one-at-a-time SETs, each timed (`round_trip_probe`),
/// direct, through the proxy with no hooks (a plain relay) and through the observing proxy.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbeRow {
    /// SETs per run.
    pub count: u64,
    pub rounds: usize,
    /// Medians of the runs' p50 round trips, µs.
    pub direct_p50_us: f64,
    pub relayed_p50_us: f64,
    pub observed_p50_us: f64,
    /// Medians of the rounds' differences in p50, µs: what relaying adds, what observing adds
    /// in all, and what observing adds beyond relaying (framing and recording).
    pub relay_added_us: Median,
    pub observe_added_us: Median,
    pub recording_added_us: Median,
}

/// What `observe_overhead` measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ObserveCost {
    pub rows: Vec<ObservedRow>,
    pub probe: ProbeRow,
}

/// SETs per probe run at most (fewer when runs are of fewer).
const PROBE_COUNT: u64 = 20_000;

/// What the observing proxy costs: for each K, `redis-benchmark -c 1 -P K` of `count` SETs
/// shaped like ours, directly against our server (`port`) and through an in-process
/// `Observer` with no network dialled (its instant path); then the round-trip probe direct,
/// relayed and observed. Rounds rotate who goes first, within `time_budget` (shared as for
/// the comparison). Prints each round on stderr.
pub async fn observe_overhead(
    target: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    min_rounds: usize,
    time_budget: Duration,
) -> anyhow::Result<ObserveCost> {
    let began = Instant::now();
    let run_id = keys::first_run_id();
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let observer = Observer::start(listen, target, shared::Network::default()).await?;
    let mut bench = Bench::new(target, port, run_id, count, min_rounds).await?;
    bench.observer = Some(observer);
    bench.progress = true;
    let mut by_depth = ks.to_vec();
    by_depth.sort_unstable_by(|a, b| b.cmp(a));
    let mut order: Vec<Section> = by_depth.into_iter().map(Section::Observed).collect();
    order.push(Section::Probe);
    let mut rows = Vec::new();
    let mut probe = None;
    for (section, deadline) in deadlines(order, began, time_budget) {
        match section {
            Section::Observed(k) => rows.push(bench.observed_row(k, count, deadline).await?),
            Section::Probe => probe = Some(bench.probe(count.min(PROBE_COUNT), deadline).await?),
            _ => unreachable!("only observed sections and the probe"),
        }
    }
    rows.sort_by_key(|r| r.k);
    redis::cmd("FLUSHALL")
        .arg("SYNC")
        .exec_async(&mut bench.admin)
        .await?;
    tracing::info!(elapsed = ?began.elapsed(), "observe overhead done");
    Ok(ObserveCost {
        rows,
        probe: probe.expect("the probe section runs"),
    })
}

impl Bench<'_> {
    /// redis-benchmark at depth `k`, direct and through the observer.
    async fn observed_row(
        &mut self,
        k: u32,
        count: u64,
        deadline: Instant,
    ) -> anyhow::Result<ObservedRow> {
        let s = self
            .rounds(
                &[Contender::Theirs, Contender::TheirsObserved],
                k,
                count,
                deadline,
            )
            .await?;
        let (direct, observed) = (&s[0], &s[1]);
        let p50 = |s: &Sample| s.p50_us.unwrap_or(f64::NAN);
        let sets: Vec<u64> = observed.iter().filter_map(|s| s.observed_sets).collect();
        Ok(ObservedRow {
            k,
            count,
            rounds: direct.len(),
            direct_ops_per_sec: median_of(direct, |s| s.ops_per_sec),
            observed_ops_per_sec: median_of(observed, |s| s.ops_per_sec),
            ratio: per_round(observed, direct, |o, d| o.ops_per_sec / d.ops_per_sec),
            direct_p50_us: median_of(direct, p50),
            observed_p50_us: median_of(observed, p50),
            added_p50_us: per_round(observed, direct, |o, d| p50(o) - p50(d)),
            added_per_command_us: per_round(observed, direct, |o, d| {
                1e6 / o.ops_per_sec - 1e6 / d.ops_per_sec
            }),
            observed_sets_min: sets.iter().copied().min().unwrap_or(0),
            observed_sets_max: sets.iter().copied().max().unwrap_or(0),
        })
    }

    /// The round-trip probe direct, through a plain relay and through the observer, in
    /// rounds that rotate who goes first, from an empty database each run.
    async fn probe(&mut self, count: u64, deadline: Instant) -> anyhow::Result<ProbeRow> {
        let direct = self.target.socket_addr().await?;
        let relay = DelayProxy::start(
            std::net::TcpListener::bind("127.0.0.1:0")?,
            direct,
            shared::Network::default(),
            Compensation::default(),
            Box::new(|_| Ok(Hooks::none())),
        )?;
        let observed = self
            .observer
            .as_ref()
            .context("the probe needs the observer")?
            .addr();
        let addrs = [direct, relay.addr(), observed];
        let names = ["direct", "relayed", "observed"];
        let mut p50s: [Vec<f64>; 3] = Default::default();
        for round in 0..MAX_ROUNDS {
            if round >= self.min_rounds && Instant::now() >= deadline {
                break;
            }
            for j in 0..addrs.len() {
                let i = (round + j) % addrs.len();
                redis::cmd("FLUSHALL")
                    .arg("SYNC")
                    .exec_async(&mut self.admin)
                    .await?;
                let addr = addrs[i];
                let times =
                    tokio::task::spawn_blocking(move || round_trip_probe::round_trips(addr, count))
                        .await??;
                p50s[i].push(round_trip_probe::p50_us(&times));
            }
            if self.progress {
                let runs: Vec<String> = names
                    .iter()
                    .zip(&p50s)
                    .map(|(n, v)| {
                        format!("{n} p50 {:.1} µs", v.last().copied().unwrap_or(f64::NAN))
                    })
                    .collect();
                eprintln!("probe round {}: {}", round + 1, runs.join(", "));
            }
        }
        let [d, r, o] = &p50s;
        let diff = |a: &[f64], b: &[f64]| Median::of(a.iter().zip(b).map(|(a, b)| a - b).collect());
        let mid = |v: &[f64]| Median::of(v.to_vec()).median;
        Ok(ProbeRow {
            count,
            rounds: d.len(),
            direct_p50_us: mid(d),
            relayed_p50_us: mid(r),
            observed_p50_us: mid(o),
            relay_added_us: diff(r, d),
            observe_added_us: diff(o, d),
            recording_added_us: diff(o, r),
        })
    }
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

/// Each section's deadline: its share of `time_budget` by weight, counted from `began`, so
/// time one leaves unused goes to those after it. Rounds of three runs (or of two runs at
/// K = 1 through the observer) weigh more than rounds of two, and K = 1's long runs most.
fn deadlines(
    order: Vec<Section>,
    began: Instant,
    time_budget: Duration,
) -> Vec<(Section, Instant)> {
    let weight = |s: &Section| match s {
        Section::Versus(1) | Section::Observed(1) => 3,
        Section::Versus(_) | Section::Observed(_) | Section::Probe => 2,
        Section::Overhead(_) => 1,
    };
    let total: u32 = order.iter().map(weight).sum();
    let mut used = 0;
    order
        .into_iter()
        .map(|s| {
            used += weight(&s);
            (s, began + time_budget * used / total)
        })
        .collect()
}

impl Bench<'_> {
    /// Theirs, ours sleeping and ours busy-polling at depth `k`.
    async fn versus(&mut self, k: u32, count: u64, deadline: Instant) -> anyhow::Result<VersusRow> {
        let who = [Contender::Theirs, SLEEPING, BUSY_POLLING];
        let s = self.rounds(&who, k, count, deadline).await?;
        let (theirs, sleeping, busy) = (&s[0], &s[1], &s[2]);
        let ratio = |a: &Sample, b: &Sample| a.ops_per_sec / b.ops_per_sec;
        Ok(VersusRow {
            k,
            rounds: theirs.len(),
            theirs_ops_per_sec: median_of(theirs, |s| s.ops_per_sec),
            sleeping_ops_per_sec: median_of(sleeping, |s| s.ops_per_sec),
            sleeping_ratio: per_round(sleeping, theirs, ratio),
            busy_poll_ops_per_sec: median_of(busy, |s| s.ops_per_sec),
            busy_poll_ratio: per_round(busy, theirs, ratio),
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

    use super::{Section, schedule};

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

    #[test]
    fn their_sets_are_shaped_like_ours() {
        let run_id = 1_764_701_234_567;
        let s = super::Shape::like_ours(run_id, 100_000);
        // Ours: "pipescope:1764701234567:k" + 4.9 digits on average; "v" + 4.9 digits.
        assert_eq!(s.key.replace("__rand_int__", "000000012345").len(), 30);
        assert_eq!(s.value, "v00000");
        assert!(s.key.starts_with(super::THEIR_PREFIX));
    }
}
