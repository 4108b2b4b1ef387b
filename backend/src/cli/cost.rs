//! `pipescope cost …`: what one thing costs, measured in rounds that rotate who goes first,
//! reported as medians with 95 % intervals: TLS, a cluster, observe mode's proxy and its
//! memory, and how close the delay line comes to the delay dialled in.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;

use pipescope::local_redis::{LocalRedis, TlsServer};
use pipescope::target::RedisTarget;
use pipescope::versus::{ObserveCost, ProbeRow};

use super::args::{JsonArg, RoundsArgs, TargetArgs};
use super::output::{met, say, say_json_lines};

#[derive(clap::Subcommand)]
pub enum Cost {
    /// What TLS costs: a redis-server of our own on a plain port and a TLS port (a throwaway
    /// CA and certificate), --count SETs sequentially and pipelined 16 and --batch deep over
    /// each. Prints per depth the median TLS / plain throughput ratio. Each round on stderr.
    Tls(DepthArgs),
    /// What a cluster costs: a redis-server and a three-master cluster of our own, --count
    /// SETs sequentially and pipelined 16 and --batch deep on each (on the cluster each batch
    /// split per master). Prints per depth the median cluster / single throughput ratio.
    Cluster(DepthArgs),
    /// What observe mode's proxy costs: for K = 1, 16, 1000, `redis-benchmark -c 1 -P K` of
    /// --count SETs on our own redis-server, directly, through a plain relay and through an
    /// in-process observing proxy. Prints per K the median observed / direct throughput ratio
    /// and redis-benchmark's p50 added, beside the targets, and each round trip timed.
    Observer(ObserverArgs),
    /// Whether observe mode's memory stays flat: `pipescope observe` as a child process,
    /// --sets SETs sent through it pipelined 1,000 deep (redis-benchmark), its /proc status
    /// read every 200 ms; prints its peak RSS at start, after 1M SETs, at the end.
    ObserverMemory(ObserverMemoryArgs),
    /// The delay line against its promise: round trips through --delay-us (or 100 µs, 250 µs,
    /// 1 ms and 5 ms) against 2·D + the direct round trip, --rounds alternating pairs of
    /// sequential runs of --count (at most 1,000) SETs.
    Accuracy(AccuracyArgs),
}

/// Sequential, pipelined 16 deep and --batch deep.
#[derive(clap::Args)]
pub struct DepthArgs {
    /// SETs per run.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// The deepest pipeline measured.
    #[arg(long, default_value_t = 1000)]
    pub batch: u32,
    #[command(flatten)]
    pub rounds: RoundsArgs,
    #[command(flatten)]
    pub output: JsonArg,
}

#[derive(clap::Args)]
pub struct ObserverArgs {
    /// SETs per run.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    #[command(flatten)]
    pub rounds: RoundsArgs,
    #[command(flatten)]
    pub output: JsonArg,
}

#[derive(clap::Args)]
pub struct ObserverMemoryArgs {
    /// SETs to send through the observer.
    #[arg(long, default_value_t = 10_000_000)]
    pub sets: u64,
    /// No SET is sent after this many seconds.
    #[arg(long, default_value_t = pipescope::versus::DEFAULT_TIME_BUDGET.as_secs())]
    pub time_budget_secs: u64,
    #[command(flatten)]
    pub output: JsonArg,
}

#[derive(clap::Args)]
pub struct AccuracyArgs {
    /// SETs per sequential run (at most 1,000).
    #[arg(long, default_value_t = 1_000)]
    pub count: u64,
    /// The one-way delay to check, in µs (default: 100, 250, 1,000 and 5,000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub delay_us: Option<u32>,
    #[command(flatten)]
    pub rounds: RoundsArgs,
    #[command(flatten)]
    pub output: JsonArg,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub async fn cost(job: Cost, cancel: Arc<AtomicBool>) -> anyhow::Result<()> {
    match job {
        Cost::Tls(args) => tls(args).await,
        Cost::Cluster(args) => cluster(args).await,
        Cost::Observer(args) => observer(args).await,
        Cost::ObserverMemory(args) => observer_memory(args).await,
        Cost::Accuracy(args) => accuracy(args, cancel).await,
    }
}

/// The targets observe mode's proxy is held to, printed beside the measurements.
const TARGET_RATIO_AT_1000: f64 = 0.9;
const TARGET_ADDED_P50_US_AT_1: f64 = 30.0;

async fn accuracy(args: AccuracyArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<()> {
    let delays = match args.delay_us {
        Some(d) => vec![d],
        None => pipescope::bench::ACCURACY_DELAYS.to_vec(),
    };
    let redis = args.target.connect().await?;
    let target = redis.target.clone();
    let count = args.count.min(1_000);
    let rows =
        pipescope::bench::accuracy(&target, &delays, count, args.rounds.rounds(), cancel).await?;
    if args.output.json {
        return say_json_lines(&rows);
    }
    say(format_args!(
        "sequential runs of {count} SETs, direct and through the delay line alternating; medians of the runs' p50 round trips"
    ));
    say(format_args!(
        "| one-way delay D | pairs | direct p50 | expected 2·D + direct | measured p50 | deviation | released early by |"
    ));
    say(format_args!("|---:|---:|---:|---:|---:|---:|---:|"));
    for r in &rows {
        say(format_args!(
            "| {} µs | {} | {:.1} µs | {:.1} µs | {:.1} µs | {:+.1} % | {:.1} µs |",
            r.delay_us,
            r.rounds,
            r.loopback_p50_us,
            r.expected_us,
            r.measured_p50_us,
            r.deviation_percent,
            r.compensation_us
        ));
    }
    Ok(())
}

async fn cluster(args: DepthArgs) -> anyhow::Result<()> {
    // Our own servers, whatever --redis-url says: every run starts on empty databases.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let cluster = pipescope::cluster::LocalCluster::start(3)
        .context("starting a three-master cluster for the comparison")?;
    let single = RedisTarget::parse(&local.url())?;
    let on_cluster = RedisTarget::parse(&cluster.url())?.as_cluster();
    let mut ks = vec![1, 16, args.batch.max(1)];
    ks.dedup();
    let rows = pipescope::versus::cluster_cost(
        &single,
        &on_cluster,
        local.port(),
        args.count,
        &ks,
        args.rounds.rounds(),
        args.rounds.budget(),
    )
    .await?;
    if args.output.json {
        return say_json_lines(&rows);
    }
    say(format_args!(
        "{} SETs per run, our engine sleeping for replies, on one redis-server and on a cluster of three (each batch split per master, sent side by side), all on this machine's cores with the client; empty databases before every run; medians of rounds that rotate who goes first, 95 % confidence intervals in brackets",
        args.count
    ));
    say(format_args!(
        "| K | rounds | one server ops/s | cluster ops/s | cluster / one server |"
    ));
    say(format_args!("|---:|---:|---:|---:|---:|"));
    for r in &rows {
        say(format_args!(
            "| {} | {} | {:.0} | {:.0} | {} |",
            if r.k == 1 {
                "1 (sequential)".to_string()
            } else {
                r.k.to_string()
            },
            r.rounds,
            r.single_ops_per_sec,
            r.cluster_ops_per_sec,
            r.ratio.with_interval(2, "×"),
        ));
    }
    Ok(())
}

async fn tls(args: DepthArgs) -> anyhow::Result<()> {
    // Our own server, whatever --redis-url says: one server on both ports, so only TLS differs.
    let own =
        TlsServer::start().context("starting a redis-server with a TLS port for the comparison")?;
    let (plain, tls) = (&own.plain, &own.tls);
    let mut ks = vec![1, 16, args.batch.max(1)];
    ks.dedup();
    let rows = pipescope::versus::tls_cost(
        plain,
        tls,
        own.local.port(),
        args.count,
        &ks,
        args.rounds.rounds(),
        args.rounds.budget(),
    )
    .await?;
    if args.output.json {
        return say_json_lines(&rows);
    }
    say(format_args!(
        "{} SETs per run, our engine sleeping for replies, one redis-server on a plain port and a TLS port \
         (rustls with ring; a throwaway CA), an empty database before every run; \
         medians of rounds that rotate who goes first, 95 % confidence intervals in brackets",
        args.count
    ));
    say(format_args!(
        "| K | rounds | plain ops/s | TLS ops/s | TLS / plain | added per command by TLS (1/throughput) |"
    ));
    say(format_args!("|---:|---:|---:|---:|---:|---:|"));
    for r in &rows {
        say(format_args!(
            "| {} | {} | {:.0} | {:.0} | {} | {} |",
            if r.k == 1 {
                "1 (sequential)".to_string()
            } else {
                r.k.to_string()
            },
            r.rounds,
            r.plain_ops_per_sec,
            r.tls_ops_per_sec,
            r.ratio.with_interval(2, "×"),
            r.added_per_command_us.with_interval(2, " µs"),
        ));
    }
    Ok(())
}

async fn observer(args: ObserverArgs) -> anyhow::Result<()> {
    // Our own server, whatever --redis-url says: redis-benchmark leaves keys behind.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let target = RedisTarget::parse(&local.url())?;
    let cost = pipescope::versus::observe_overhead(
        &target,
        local.port(),
        args.count,
        &[1, 16, 1000],
        args.rounds.rounds(),
        args.rounds.budget(),
    )
    .await?;
    if args.output.json {
        return say_json_lines(&[&cost]);
    }
    print_observer_runs(&cost, args.count);
    print_observer_probe(&cost.probe);
    Ok(())
}

/// The observer's cost under redis-benchmark at each depth K, as a Markdown table.
fn print_observer_runs(cost: &ObserveCost, count: u64) {
    let rows = &cost.rows;
    say(format_args!(
        "redis-benchmark -c 1 -P K -n {} SETs, direct, through the proxy with no hooks (a \
         plain relay) and through an in-process observing proxy (no delay dialled); an empty \
         database before every run; medians of rounds that rotate who goes first, 95 % \
         confidence intervals in brackets",
        count
    ));
    say(format_args!(
        "| K | rounds | direct ops/s | observed ops/s | observed / direct | relayed / direct | observed / relayed | direct p50 | observed p50 | added p50 | added per command (1/throughput) | SETs the proxy counted per run | target |"
    ));
    say(format_args!(
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    ));
    for r in rows {
        let target = match r.k {
            1000 => format!(
                "≥ {TARGET_RATIO_AT_1000}×: {}",
                met(r.ratio.median >= TARGET_RATIO_AT_1000)
            ),
            1 => format!(
                "< {TARGET_ADDED_P50_US_AT_1} µs added p50: {}",
                met(r.added_p50_us.median < TARGET_ADDED_P50_US_AT_1)
            ),
            _ => "–".into(),
        };
        let sets = if r.observed_sets_min == r.observed_sets_max {
            format!("{}", r.observed_sets_min)
        } else {
            format!("{}–{}", r.observed_sets_min, r.observed_sets_max)
        };
        say(format_args!(
            "| {} | {} | {:.0} | {:.0} | {} | {} | {} | {:.0} µs | {:.0} µs | {} | {} | {}{} | {} |",
            r.k,
            r.rounds,
            r.direct_ops_per_sec,
            r.observed_ops_per_sec,
            r.ratio.with_interval(2, "×"),
            r.relayed_ratio.with_interval(2, "×"),
            r.recording_ratio.with_interval(2, "×"),
            r.direct_p50_us,
            r.observed_p50_us,
            r.added_p50_us.with_interval(0, " µs"),
            r.added_per_command_us.with_interval(1, " µs"),
            sets,
            if r.observed_sets_min == r.count && r.observed_sets_max == r.count {
                " (all)"
            } else {
                " (NOT all: traffic bypassed the proxy?)"
            },
            target,
        ));
    }
    say(format_args!(
        "p50: redis-benchmark's own (its --csv p50): per request at K = 1, per batch of K \
         above; a histogram bucket's value, 8 µs apart below 1 ms, so per-round \
         differences move in such steps. Added per command: 1e6 / observed ops/s − 1e6 / \
         direct ops/s (at K = 1, -c 1, the mean round trip)."
    ));
}

/// The observer's cost per round trip, timed by pipescope's probe, as a Markdown table.
fn print_observer_probe(p: &ProbeRow) {
    say(format_args!(""));
    say(format_args!(
        "Each round trip timed: {} SETs one at a time on one blocking connection (pipescope's \
         probe: the clock read before each write and after its +OK), direct, through the proxy \
         with no hooks (a plain relay: what any proxy in between costs) and through the \
         observing proxy; {} rounds, medians of each run's p50, and of the rounds' differences \
         with 95 % confidence intervals",
        p.count, p.rounds
    ));
    say(format_args!(
        "| direct p50 | relayed p50 | observed p50 | relaying adds | observing adds (relay + framing and recording) | framing and recording add | target |"
    ));
    say(format_args!("|---:|---:|---:|---:|---:|---:|---|"));
    say(format_args!(
        "| {:.1} µs | {:.1} µs | {:.1} µs | {} | {} | {} | < {TARGET_ADDED_P50_US_AT_1} µs added p50: {} |",
        p.direct_p50_us,
        p.relayed_p50_us,
        p.observed_p50_us,
        p.relay_added_us.with_interval(1, " µs"),
        p.observe_added_us.with_interval(1, " µs"),
        p.recording_added_us.with_interval(1, " µs"),
        met(p.observe_added_us.median < TARGET_ADDED_P50_US_AT_1),
    ));
}

async fn observer_memory(args: ObserverMemoryArgs) -> anyhow::Result<()> {
    use pipescope::observe_rss::mb;
    let exe = std::env::current_exe().context("finding pipescope's own binary")?;
    let r = pipescope::observe_rss::measure(
        &exe,
        args.sets,
        std::time::Duration::from_secs(args.time_budget_secs),
    )
    .await?;
    if args.output.json {
        return say_json_lines(&[&r]);
    }
    say(format_args!(
        "pipescope observe (child process) with {} SETs sent through it: redis-benchmark -c 1 -P 1000, shaped like ours; /proc/<pid>/status every 200 ms ({} readings)",
        r.count, r.readings
    ));
    say(format_args!(
        "SETs executed by Redis: {}{} in {:.1} s{}; counted by the observer: {}",
        r.sets,
        if r.sets < r.count {
            " (the time budget ran out first)"
        } else {
            ""
        },
        r.elapsed_secs,
        r.ops_per_sec
            .map(|o| format!(" ({o:.0} ops/s, redis-benchmark's)"))
            .unwrap_or_default(),
        r.observed_sets
            .map(|n| n.to_string())
            .unwrap_or_else(|| "unknown (no report)".into()),
    ));
    say(format_args!("| when | SETs | VmHWM (peak RSS) | VmRSS |"));
    say(format_args!("|---|---:|---:|---:|"));
    say(format_args!(
        "| start | 0 | {} | {} |",
        mb(r.at_start.hwm_kb),
        mb(r.at_start.rss_kb)
    ));
    for m in &r.per_million {
        say(format_args!(
            "| {:.1} s | {} | {} | {} |",
            m.secs,
            m.sets,
            mb(m.memory.hwm_kb),
            mb(m.memory.rss_kb)
        ));
    }
    say(format_args!(
        "| end | {} | {} | {} |",
        r.sets,
        mb(r.at_end.hwm_kb),
        mb(r.at_end.rss_kb)
    ));
    say(format_args!(
        "peak RSS (VmHWM): {} at start, {} after 1M SETs, {} at the end; largest VmRSS read {}",
        mb(r.at_start.hwm_kb),
        r.after_first_million
            .map(|m| mb(m.memory.hwm_kb))
            .unwrap_or_else(|| "–".into()),
        mb(r.at_end.hwm_kb),
        mb(r.max_rss_kb),
    ));
    Ok(())
}
