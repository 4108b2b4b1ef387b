//! What the observing proxy adds: redis-benchmark at each depth directly, through a plain
//! relay and through an in-process `Observer`, then the round-trip probe (`round_trip_probe`)
//! the same three ways, so what observing costs splits into relaying and recording.
//!
//! And what a live capture adds: in the same rounds, redis-benchmark direct while pipescope
//! captures `lo` as `observe --capture lo` does (`capture::Live`, analysed as it goes by
//! `observe::captured`). The capture runs only around those runs, so the direct runs beside
//! them are not captured. And, as the reference for that column, redis-benchmark direct while
//! tcpdump captures the same port (`tcpdump`): the kernel's part of any capture's cost.

use std::time::{Duration, Instant};

use anyhow::Context;

use crate::capture::Live;
use crate::net::{Compensation, DelayProxy, Hooks};
use crate::observe::Observer;
use crate::round_trip_probe;
use crate::target::RedisTarget;

use crate::versus::tcpdump::Tcpdump;
use crate::versus::{
    Bench, Contender, MAX_ROUNDS, Median, Sample, Section, deadlines, median_of, per_round,
};

/// `pipescope cost observer`, one depth: redis-benchmark direct, through a plain
/// relay and through the observing proxy.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ObservedRow {
    pub k: u32,
    /// SETs per run.
    pub count: u64,
    pub rounds: usize,
    pub direct_ops_per_sec: f64,
    pub relayed_ops_per_sec: f64,
    pub observed_ops_per_sec: f64,
    /// Median of the rounds' observed / direct throughput.
    pub ratio: Median,
    /// Median of the rounds' relayed / direct throughput: what any proxy in between costs.
    pub relayed_ratio: Median,
    /// Median of the rounds' observed / relayed throughput: what framing and recording cost.
    pub recording_ratio: Median,
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
    /// With a live capture on `lo` beside direct (`None` where this process may not capture).
    pub captured: Option<CapturedColumn>,
}

/// redis-benchmark direct while pipescope captured `lo` live, in the same rounds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CapturedColumn {
    pub ops_per_sec: f64,
    /// Median of the rounds' captured / direct throughput.
    pub ratio: Median,
    /// redis-benchmark's own p50, median, and the rounds' captured − direct p50.
    pub p50_us: f64,
    pub added_p50_us: Median,
    /// The fewest and most SETs the capture counted in a run, and the fewest and most Redis
    /// executed in those runs (`INFO commandstats`): equal, or the capture missed some.
    pub sets_min: u64,
    pub sets_max: u64,
    pub redis_sets_min: u64,
    pub redis_sets_max: u64,
    /// Runs whose capture counted other than the SETs Redis executed in them (0: it saw all).
    pub runs_not_all_seen: usize,
    /// Packets libpcap (or the interface) dropped, over all of this K's captured runs.
    pub dropped: u64,
    /// tcpdump capturing the same port in the same rounds (`None` where it could not run:
    /// `ObserveCost::tcpdump_unavailable` says why).
    pub tcpdump: Option<TcpdumpReference>,
}

/// redis-benchmark direct while tcpdump captured the same port, in the same rounds as the
/// captured runs: what the kernel's capture costs with nothing analysed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TcpdumpReference {
    pub ops_per_sec: f64,
    /// Median of the rounds' tcpdump / direct throughput.
    pub ratio: Median,
    /// Median of the rounds' captured (by pipescope) / tcpdump throughput: what pipescope's
    /// capture costs beyond the kernel's.
    pub captured_over_tcpdump: Median,
    /// Packets tcpdump reported dropped by the kernel, over all of this K's runs.
    pub dropped: u64,
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
    /// The interface captured for the captured column (`lo`).
    pub capture_interface: &'static str,
    /// Why there is no captured column (this process may not capture, say), in words.
    pub capture_unavailable: Option<String>,
    /// Why the captured column has no tcpdump reference (tcpdump missing, say), in words.
    pub tcpdump_unavailable: Option<String>,
}

/// The interface the captured column captures: redis-benchmark reaches our server over it.
const CAPTURE_ON: &str = "lo";

/// SETs per probe run at most (fewer when runs are of fewer).
const PROBE_COUNT: u64 = 20_000;

/// What the observing proxy costs: for each K, `redis-benchmark -c 1 -P K` of `count` SETs
/// shaped like ours, directly against our server (`port`), through a plain relay, through an
/// in-process `Observer` with no network dialled (its instant path) and, where this process
/// may capture, directly while `lo` is captured live; then the round-trip probe direct,
/// relayed and observed. Rounds rotate who goes first, within `time_budget` (shared as for
/// the comparison). Prints each round on stderr.
pub async fn measure(
    target: &RedisTarget,
    port: u16,
    count: u64,
    ks: &[u32],
    min_rounds: usize,
    time_budget: Duration,
) -> anyhow::Result<ObserveCost> {
    let began = Instant::now();
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let observer = Observer::start(listen, target, shared::Network::default()).await?;
    let relay = DelayProxy::start(
        std::net::TcpListener::bind(listen)?,
        target.socket_addr().await?,
        shared::Network::default(),
        Compensation::default(),
        Box::new(|_| Ok(Hooks::none())),
    )?;
    let mut bench = Bench::new(target, port, count, min_rounds).await?;
    bench.observer = Some(observer);
    bench.relay = Some(relay);
    // Opened once to learn whether this process may capture (CAP_NET_RAW): if not, the
    // proxy's columns are still measured and the captured one says why it is missing.
    let capture_unavailable = match Live::open(CAPTURE_ON, &[port]) {
        Ok(_) => {
            bench.capture = Some(CAPTURE_ON);
            None
        }
        Err(e) => {
            eprintln!("cost observer: no captured column: {e}");
            Some(e.to_string())
        }
    };
    // Started once to learn whether tcpdump is here and may capture.
    let tcpdump_unavailable = match &capture_unavailable {
        Some(_) => Some("no live capture here".to_string()),
        None => match tcpdump_works(port).await {
            Ok(()) => {
                bench.tcpdump = true;
                None
            }
            Err(e) => {
                eprintln!("cost observer: no tcpdump reference: {e:#}");
                Some(format!("{e:#}"))
            }
        },
    };
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
    bench.empty().await?;
    tracing::info!(elapsed = ?began.elapsed(), "observe overhead done");
    Ok(ObserveCost {
        rows,
        probe: probe.expect("the probe section runs"),
        capture_interface: CAPTURE_ON,
        capture_unavailable,
        tcpdump_unavailable,
    })
}

/// Whether tcpdump starts capturing `CAPTURE_ON` and stops when asked.
async fn tcpdump_works(port: u16) -> anyhow::Result<()> {
    Tcpdump::start(CAPTURE_ON, port).await?.stop().await?;
    Ok(())
}

/// The captured runs beside the direct ones of the same rounds, and tcpdump's where it ran.
fn captured_column(
    captured: &[Sample],
    direct: &[Sample],
    tcpdump: Option<&[Sample]>,
) -> CapturedColumn {
    let throughput = |a: &Sample, b: &Sample| a.ops_per_sec / b.ops_per_sec;
    let p50 = |s: &Sample| s.p50_us.unwrap_or(f64::NAN);
    let sets: Vec<u64> = captured.iter().filter_map(|s| s.observed_sets).collect();
    let redis: Vec<u64> = captured.iter().filter_map(|s| s.redis_sets).collect();
    CapturedColumn {
        ops_per_sec: median_of(captured, |s| s.ops_per_sec),
        ratio: per_round(captured, direct, throughput),
        p50_us: median_of(captured, p50),
        added_p50_us: per_round(captured, direct, |c, d| p50(c) - p50(d)),
        sets_min: sets.iter().copied().min().unwrap_or(0),
        sets_max: sets.iter().copied().max().unwrap_or(0),
        redis_sets_min: redis.iter().copied().min().unwrap_or(0),
        redis_sets_max: redis.iter().copied().max().unwrap_or(0),
        runs_not_all_seen: captured
            .iter()
            .filter(|s| s.observed_sets.is_none() || s.observed_sets != s.redis_sets)
            .count(),
        dropped: captured.iter().filter_map(|s| s.capture_dropped).sum(),
        tcpdump: tcpdump.map(|t| TcpdumpReference {
            ops_per_sec: median_of(t, |s| s.ops_per_sec),
            ratio: per_round(t, direct, throughput),
            captured_over_tcpdump: per_round(captured, t, throughput),
            dropped: t.iter().filter_map(|s| s.capture_dropped).sum(),
        }),
    }
}

impl Bench<'_> {
    /// redis-benchmark at depth `k`, direct, relayed, observed and (where it may) captured.
    async fn observed_row(
        &mut self,
        k: u32,
        count: u64,
        deadline: Instant,
    ) -> anyhow::Result<ObservedRow> {
        let mut who = vec![
            Contender::Theirs,
            Contender::TheirsRelayed,
            Contender::TheirsObserved,
        ];
        if self.capture.is_some() {
            who.push(Contender::TheirsCaptured);
            if self.tcpdump {
                who.push(Contender::TheirsTcpdump);
            }
        }
        let s = self.rounds(&who, k, count, deadline).await?;
        let (direct, relayed, observed) = (&s[0], &s[1], &s[2]);
        let throughput = |a: &Sample, b: &Sample| a.ops_per_sec / b.ops_per_sec;
        let p50 = |s: &Sample| s.p50_us.unwrap_or(f64::NAN);
        let sets: Vec<u64> = observed.iter().filter_map(|s| s.observed_sets).collect();
        Ok(ObservedRow {
            k,
            count,
            rounds: direct.len(),
            direct_ops_per_sec: median_of(direct, |s| s.ops_per_sec),
            relayed_ops_per_sec: median_of(relayed, |s| s.ops_per_sec),
            observed_ops_per_sec: median_of(observed, |s| s.ops_per_sec),
            ratio: per_round(observed, direct, throughput),
            relayed_ratio: per_round(relayed, direct, throughput),
            recording_ratio: per_round(observed, relayed, throughput),
            direct_p50_us: median_of(direct, p50),
            observed_p50_us: median_of(observed, p50),
            added_p50_us: per_round(observed, direct, |o, d| p50(o) - p50(d)),
            added_per_command_us: per_round(observed, direct, |o, d| {
                1e6 / o.ops_per_sec - 1e6 / d.ops_per_sec
            }),
            observed_sets_min: sets.iter().copied().min().unwrap_or(0),
            observed_sets_max: sets.iter().copied().max().unwrap_or(0),
            captured: s
                .get(3)
                .map(|captured| captured_column(captured, direct, s.get(4).map(Vec::as_slice))),
        })
    }

    /// The round-trip probe direct, through a plain relay and through the observer, in
    /// rounds that rotate who goes first, from an empty database each run.
    async fn probe(&mut self, count: u64, deadline: Instant) -> anyhow::Result<ProbeRow> {
        let direct = self.target.socket_addr().await?;
        let relayed = self
            .relay
            .as_ref()
            .context("the probe needs the relay")?
            .addr();
        let observed = self
            .observer
            .as_ref()
            .context("the probe needs the observer")?
            .addr();
        let addrs = [direct, relayed, observed];
        let names = ["direct", "relayed", "observed"];
        let mut p50s: [Vec<f64>; 3] = Default::default();
        for round in 0..MAX_ROUNDS {
            if round >= self.min_rounds && Instant::now() >= deadline {
                break;
            }
            for j in 0..addrs.len() {
                let i = (round + j) % addrs.len();
                self.empty().await?;
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
