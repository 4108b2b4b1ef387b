//! `pipescope versus redis-benchmark`'s comparisons, and the rounds they and `cost`'s run in:
//! contenders run in rounds against our own redis-server, reported as medians of the rounds'
//! own ratios with 95 % intervals (`Bench`, `Contender`, `Sample`).
//!
//! - `compare`: our engine against `redis-benchmark -c 1 -P K` (and what our measuring
//!   costs), `versus redis-benchmark` (and `--tls`).
//! - `pool`: connections against pipelining, `versus redis-benchmark --connections`.
//! - `on_cluster`: our engine against `redis-benchmark --cluster` on a cluster,
//!   `versus redis-benchmark --cluster`.
//! - `contender`, `capturing`: who runs in a round, and the contenders that run beside a
//!   capture (pipescope's live capture, tcpdump) for `cost observer`.
//! - `redis_benchmark`: redis-benchmark's command line, shaped like our SETs, and its output.
//! - `tcpdump`: tcpdump as a child process, capturing beside a run (`cost observer`'s
//!   reference).
//!
//! `cost` builds its jobs (TLS, a cluster, the observer) from the same rounds.
//!
//! What makes the numbers comparable, everywhere:
//! - every timed run starts from an empty database (`FLUSHALL SYNC` on our own server, outside
//!   the timing): Redis's hash table then grows through the same resizes for every run, where
//!   a run that followed a deletion otherwise depended on how far Redis had shrunk it again;
//! - rounds rotate who goes first, so the machine's mood of the moment (on a shared host,
//!   throughput moves from one moment to the next) weighs on all alike, and the ratio is the
//!   median of the rounds' own ratios, with a 95 % confidence interval for that median;
//! - rounds go on while the time budget lasts (short runs, like K = 1000's, get many), at most
//!   `MAX_ROUNDS` per comparison, and no new round after its share of `time_budget` (but at
//!   least `min_rounds`).
//!
//! Always on an embedded redis-server (or cluster) of our own, or a cluster whose masters are
//! all empty at the start: redis-benchmark writes keys of its own, and we empty every database
//! before every run.

mod capturing;
mod compare;
mod contender;
mod on_cluster;
mod pool;
mod redis_benchmark;
pub(crate) mod tcpdump;

pub use compare::{Overhead, VersusRow, compare};
pub use on_cluster::{ClusterVersusRow, Landed, compare_on_cluster};
pub use pool::{PoolRow, compare_connections};
pub use redis_benchmark::supports_tls as redis_benchmark_supports_tls;
pub(crate) use redis_benchmark::{MAX_KEYSPACE, Shape, parse_csv, redis_benchmark};

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Context;
use shared::{Mode, RunSpec, Wait};

use crate::engine::{self, RunContext, keys};
pub use crate::median::Median;
use crate::net::DelayProxy;
use crate::observe::Observer;
use crate::recorder::Progress;
use crate::target::RedisTarget;
use contender::{BARE, BUSY_POLLING};
pub(crate) use contender::{Contender, SLEEPING, Sample};

/// Rounds per comparison at most, whatever the budget.
pub const MAX_ROUNDS: usize = 101;
/// No new round starts after this long in all (each comparison gets its share).
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(420);
/// How the busy-polling engine waits: long enough for Redis to answer a batch of 1,000 (the
/// largest K) on loopback, so that it does not sleep in this comparison.
const BUSY_POLL: Wait = Wait::BusyPoll {
    us: Wait::DEFAULT_BUSY_POLL_US,
};
/// Commands in each side's untimed warm-up run.
const WARM_UP: u64 = 10_000;

/// One comparison of the run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Section {
    /// Theirs, ours sleeping and ours busy-polling at depth K.
    Versus(u32),
    /// Ours busy-polling with and without instrumentation at this batch.
    Overhead(u32),
    /// Theirs direct and through an in-process observing proxy at depth K.
    Observed(u32),
    /// The round-trip probe direct, through a plain relay and through the observing proxy.
    Probe,
    /// Theirs on C connections (`-c C -P 1`) and ours on a pool of C.
    Pool(u32),
    /// Theirs and ours (sleeping) on one connection pipelined K deep, as the pool's reference.
    Pipelined(u32),
    /// Ours (sleeping) at depth K over plain TCP and over TLS to the same server.
    Tls(u32),
    /// Ours (sleeping) at depth K on our single server and on a cluster.
    Cluster(u32),
    /// `redis-benchmark --cluster` and ours on a cluster, at depth K.
    ClusterVersus(u32),
}

/// The comparison's state: our server, the run ids, redis-benchmark's command shape.
pub(crate) struct Bench<'a> {
    pub(crate) target: &'a RedisTarget,
    pub(crate) port: u16,
    admin: redis::aio::MultiplexedConnection,
    shape: Shape,
    run_id: u64,
    pub(crate) min_rounds: usize,
    /// The observing proxy in front of our server, for `Contender::TheirsObserved`.
    pub(crate) observer: Option<Observer>,
    /// A proxy with no hooks in front of our server, for `Contender::TheirsRelayed`.
    pub(crate) relay: Option<DelayProxy>,
    /// The interface captured live around each `Contender::TheirsCaptured` run (`lo`).
    pub(crate) capture: Option<&'static str>,
    /// Whether tcpdump captures that interface around each `Contender::TheirsTcpdump` run.
    pub(crate) tcpdump: bool,
    /// Print each round on stderr.
    pub(crate) progress: bool,
    /// The same server over TLS, for `Contender::OursOverTls`.
    pub(crate) tls: Option<RedisTarget>,
    /// A cluster and an admin connection to each of its masters, for
    /// `Contender::OursOnCluster`.
    cluster: Option<(RedisTarget, Vec<redis::aio::MultiplexedConnection>)>,
    /// The cluster's masters' addresses, in the order of `cluster`'s connections.
    master_addrs: Vec<String>,
    /// Per contender of the current `rounds` (by its index), the SETs each master executed
    /// over all its runs, warm-up included (`INFO commandstats`): where the keys landed.
    landed: Vec<Vec<u64>>,
}

impl<'a> Bench<'a> {
    /// Against `target`'s server on `port`, with redis-benchmark's SETs shaped like runs of
    /// `count`; no observer, and quiet.
    pub(crate) async fn new(
        target: &'a RedisTarget,
        port: u16,
        count: u64,
        min_rounds: usize,
    ) -> anyhow::Result<Bench<'a>> {
        let run_id = keys::first_run_id();
        Ok(Bench {
            target,
            port,
            admin: target.admin_connection().await?,
            shape: Shape::like_ours(run_id, count),
            run_id,
            min_rounds: min_rounds.clamp(1, MAX_ROUNDS),
            observer: None,
            relay: None,
            capture: None,
            tcpdump: false,
            progress: false,
            tls: None,
            cluster: None,
            master_addrs: Vec::new(),
            landed: Vec::new(),
        })
    }

    /// Empties our redis-server, and the cluster's masters when there is one (between runs,
    /// and when a comparison is done).
    pub(crate) async fn empty(&mut self) -> anyhow::Result<()> {
        let masters = self.cluster.iter_mut().flat_map(|(_, m)| m.iter_mut());
        for con in std::iter::once(&mut self.admin).chain(masters) {
            redis::cmd("FLUSHALL")
                .arg("SYNC")
                .exec_async(con)
                .await
                .context("emptying our redis-server")?;
        }
        Ok(())
    }

    /// Adds `cluster` (a node of it) for `Contender::OursOnCluster`.
    pub(crate) async fn with_cluster(&mut self, cluster: &RedisTarget) -> anyhow::Result<()> {
        let mut seed = cluster.admin_connection().await?;
        let map = crate::cluster::SlotMap::discover(&mut seed, &cluster.addr()).await?;
        let mut masters = Vec::new();
        for m in map.masters() {
            masters.push(cluster.at(&m.host, m.port)?.admin_connection().await?);
        }
        self.master_addrs = map.masters().iter().map(|m| m.addr()).collect();
        self.cluster = Some((cluster.clone(), masters));
        Ok(())
    }

    /// Each cluster master's `cmdstat_set` calls now (empty without a cluster).
    async fn master_set_calls(&mut self) -> anyhow::Result<Vec<u64>> {
        let mut calls = Vec::new();
        let masters = self.cluster.iter_mut().flat_map(|(_, m)| m.iter_mut());
        for (con, addr) in masters.zip(&self.master_addrs) {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query_async(con)
                .await
                .with_context(|| format!("INFO commandstats on master {addr}"))?;
            calls.push(
                engine::redis_time::parse_counters(&info, "set")
                    .command
                    .calls,
            );
        }
        Ok(calls)
    }

    /// `once`, adding the SETs each cluster master executed during the run to
    /// `landed[index]`.
    async fn once_counted(
        &mut self,
        index: usize,
        who: Contender,
        k: u32,
        count: u64,
    ) -> anyhow::Result<Sample> {
        if self.cluster.is_none() {
            return self.once(who, k, count).await;
        }
        // Counted around `once`, its emptying included: FLUSHALL is not a SET.
        let before = self.master_set_calls().await?;
        let sample = self.once(who, k, count).await?;
        let after = self.master_set_calls().await?;
        if self.landed.len() <= index {
            self.landed.resize(index + 1, vec![0; after.len()]);
        }
        for (sum, (a, b)) in self.landed[index].iter_mut().zip(after.iter().zip(&before)) {
            *sum += a.saturating_sub(*b);
        }
        Ok(sample)
    }

    /// One timed run of `count` SETs at depth `k`, on an empty database.
    async fn once(&mut self, who: Contender, k: u32, count: u64) -> anyhow::Result<Sample> {
        self.empty().await?;
        let before = self.redis_counters().await;
        let sample = match who {
            Contender::Theirs => self.theirs(self.port, 1, count, k).await,
            Contender::TheirsConnections => self.theirs(self.port, k, count, 1).await,
            Contender::TheirsObserved => self.observed(count, k).await,
            Contender::TheirsCaptured => self.captured(count, k).await,
            Contender::TheirsTcpdump => self.tcpdumped(count, k).await,
            Contender::TheirsRelayed => {
                let relay = self.relay.as_ref().context("no relay")?;
                self.theirs(relay.addr().port(), 1, count, k).await
            }
            Contender::Ours { wait, instrument } => {
                self.run_id += 1;
                let mode = if k == 1 {
                    Mode::Sequential
                } else {
                    Mode::pipelined(k)
                };
                self.ours(self.target, count, mode, wait, instrument).await
            }
            Contender::OursConnections => {
                self.run_id += 1;
                let mode = Mode::Connections { connections: k };
                self.ours(self.target, count, mode, Wait::Sleep, true).await
            }
            Contender::OursOverTls => {
                self.run_id += 1;
                let tls = self.tls.as_ref().context("no TLS target")?;
                let mode = if k == 1 {
                    Mode::Sequential
                } else {
                    Mode::pipelined(k)
                };
                self.ours(tls, count, mode, Wait::Sleep, true).await
            }
            Contender::OursOnCluster => {
                self.run_id += 1;
                let (cluster, _) = self.cluster.as_ref().context("no cluster")?;
                let mode = if k == 1 {
                    Mode::Sequential
                } else {
                    Mode::pipelined(k)
                };
                self.ours(cluster, count, mode, Wait::Sleep, true).await
            }
            Contender::TheirsOnCluster { clients } => {
                self.theirs(self.port, clients, count, k).await
            }
            Contender::OursOnClusterTimes { times } => {
                self.run_id += 1;
                let (cluster, _) = self.cluster.as_ref().context("no cluster")?;
                let mode = match k * times {
                    1 => Mode::Sequential,
                    depth => Mode::pipelined(depth),
                };
                self.ours(cluster, count, mode, Wait::Sleep, true).await
            }
        }?;
        let after = self.redis_counters().await;
        let sets = match (&before, &after) {
            (Some(b), Some(a)) => Some(a.command.calls.saturating_sub(b.command.calls)),
            _ => None,
        };
        let cpu = match (before, after, sets) {
            (Some(b), Some(a), Some(sets)) if sets > 0 => {
                a.cpu_us.zip(b.cpu_us).map(|(a, b)| (a - b) / sets as f64)
            }
            _ => None,
        };
        Ok(Sample {
            redis_cpu_us_per_set: cpu,
            redis_sets: sets,
            ..sample
        })
    }

    /// Our server's CPU time and SET calls now (`None`, logged, if INFO fails).
    async fn redis_counters(&mut self) -> Option<engine::redis_time::Counters> {
        let info = redis::cmd("INFO")
            .arg("cpu")
            .arg("stats")
            .arg("commandstats")
            .query_async::<String>(&mut self.admin)
            .await;
        match info {
            Ok(info) => Some(engine::redis_time::parse_counters(&info, "set")),
            Err(e) => {
                tracing::warn!("INFO on our redis-server: {e}");
                None
            }
        }
    }

    async fn ours(
        &self,
        target: &RedisTarget,
        count: u64,
        mode: Mode,
        wait: Wait,
        instrument: bool,
    ) -> anyhow::Result<Sample> {
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
        let outcome = engine::run(target, spec, ctx)
            .await
            .map_err(|f| anyhow::anyhow!("{}", f.error))?;
        Ok(Sample::ours(outcome.summary.ops_per_sec))
    }

    /// redis-benchmark on `clients` connections `k` deep against 127.0.0.1:`port`: our
    /// server, or the observing proxy.
    pub(crate) async fn theirs(
        &self,
        port: u16,
        clients: u32,
        count: u64,
        k: u32,
    ) -> anyhow::Result<Sample> {
        let out = redis_benchmark(port, clients, k, count, MAX_KEYSPACE, &self.shape)
            .output()
            .await
            .context("running redis-benchmark (Debian: apt-get install redis-tools)")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let (ops_per_sec, p50_us) = parse_csv(&stdout).with_context(|| {
            format!(
                "unexpected redis-benchmark output: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        Ok(Sample {
            ops_per_sec,
            p50_us: Some(p50_us),
            ..Sample::default()
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
        let sample = self.theirs(observer.addr().port(), 1, count, k).await?;
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
    pub(crate) async fn rounds(
        &mut self,
        who: &[Contender],
        k: u32,
        count: u64,
        deadline: Instant,
    ) -> anyhow::Result<Vec<Vec<Sample>>> {
        self.landed.clear();
        for (i, &c) in who.iter().enumerate() {
            self.once_counted(i, c, k, count.min(WARM_UP)).await?;
        }
        let mut samples = vec![Vec::new(); who.len()];
        for round in 0..MAX_ROUNDS {
            if round >= self.min_rounds && Instant::now() >= deadline {
                break;
            }
            for j in 0..who.len() {
                let i = (round + j) % who.len();
                let sample = self.once_counted(i, who[i], k, count).await?;
                samples[i].push(sample);
            }
            if self.progress {
                let runs: Vec<String> = who
                    .iter()
                    .zip(&samples)
                    .map(|(c, s)| {
                        let s = s.last().expect("this round's sample");
                        format!(
                            "{} {:.0} ops/s{}{}{}",
                            c.name(),
                            s.ops_per_sec,
                            s.redis_cpu_us_per_set
                                .map(|us| format!(" Redis CPU {us:.2} µs/SET"))
                                .unwrap_or_default(),
                            s.p50_us
                                .map(|p| format!(" p50 {p:.0} µs"))
                                .unwrap_or_default(),
                            s.observed_sets
                                .map(|n| format!(" ({n} SETs seen by the {})", c.seer()))
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

/// Per round, `f(a, b)`: each round's samples ran back to back and share the machine's load.
pub(crate) fn per_round(a: &[Sample], b: &[Sample], f: impl Fn(&Sample, &Sample) -> f64) -> Median {
    Median::of(a.iter().zip(b).map(|(a, b)| f(a, b)).collect())
}

pub(crate) fn median_of(v: &[Sample], f: impl Fn(&Sample) -> f64) -> f64 {
    Median::of(v.iter().map(f).collect()).median
}

/// Each section's deadline: its share of `time_budget` by weight, counted from `began`, so
/// time one leaves unused goes to those after it. Rounds of three runs (or of two runs at
/// K = 1 through the observer) weigh more than rounds of two, and K = 1's long runs most.
pub(crate) fn deadlines(
    order: Vec<Section>,
    began: Instant,
    time_budget: Duration,
) -> Vec<(Section, Instant)> {
    let weight = |s: &Section| match s {
        Section::Versus(1)
        | Section::Observed(1)
        | Section::Pool(1)
        | Section::Tls(1)
        | Section::Cluster(1)
        | Section::ClusterVersus(1) => 3,
        Section::Versus(_)
        | Section::Observed(_)
        | Section::Probe
        | Section::Pool(_)
        | Section::Pipelined(_)
        | Section::Tls(_)
        | Section::Cluster(_)
        | Section::ClusterVersus(_) => 2,
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
