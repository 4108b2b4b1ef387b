//! `pipescope cost …`: what one thing costs, measured in rounds that rotate who goes first,
//! reported as medians with 95 % intervals. This file holds TLS, a cluster, `observe --pid` and
//! the delay line's accuracy; beside it:
//!
//! - `observer`: observe mode's proxy, a live capture, the probe's held replies, and the
//!   observer's memory.
//! - `capture_reading`: how fast a capture file is read, beside tshark.
//! - `html`: one HTML file's size and load time.

mod capture_reading;
mod html;
mod observer;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;

use pipescope::local_redis::{LocalRedis, TlsServer};
use pipescope::target::RedisTarget;

use super::args::{JsonArg, RoundsArgs, TargetArgs};
use super::output::{say, say_json_lines};
use capture_reading::CaptureReadingArgs;
use html::HtmlArgs;
use observer::{ObserverArgs, ObserverMemoryArgs, ProbeArgs};

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
    /// --count SETs on our own redis-server, directly, through a plain relay, through an
    /// in-process observing proxy, directly while pipescope captures lo live (as
    /// `observe --capture lo`; needs CAP_NET_RAW) and directly while tcpdump does (the
    /// kernel's part of a capture's cost). Prints per K the median observed / direct,
    /// captured / direct, tcpdump / direct and captured / tcpdump throughput ratios and
    /// redis-benchmark's p50 added, beside the targets, and each round trip timed.
    Observer(ObserverArgs),
    /// Whether observe mode's memory stays flat: `pipescope observe` as a child process,
    /// --sets SETs sent through it pipelined 1,000 deep (redis-benchmark), its /proc status
    /// read every 200 ms; prints its peak RSS at start, after 1M SETs, at the end.
    ObserverMemory(ObserverMemoryArgs),
    /// What `observe --probe` costs a client that waits for every reply (its worst case: it
    /// waits out each hold in full): `redis-benchmark -c 1 -P 1` of --count SETs on our own
    /// redis-server through an observing proxy with the probe off and on, rounds alternating
    /// which goes first. Prints per round and as medians the throughput with / without, and
    /// the replies held, their time and its share of the connection's wall, and the share of
    /// holds that decided (with its 95 % interval).
    Probe(ProbeArgs),
    /// How fast a capture file is read: makes a capture of at least --packets packets of
    /// redis-benchmark SETs on lo (our own redis-server; needs CAP_NET_RAW), then reads it, and
    /// its first --prefix-packets, with `pipescope observe --pcap` and with `tshark -r` (its
    /// RESP dissector), each as a child process. Prints packets/s, MB/s, peak RSS and the
    /// pipescope / tshark ratio beside the target.
    CaptureReading(CaptureReadingArgs),
    /// What `observe --pid` costs the client it traces: `redis-benchmark -c 1 -P 1` of
    /// --count SETs on our own redis-server, untraced, traced (attached by pid before it
    /// starts), under `strace -f`, and with only the syscall tracepoints' programs attached,
    /// returning at once (the kernel's hooks alone), in rounds rotating who goes first.
    /// Prints each one's median throughput ratio to untraced. Needs root.
    Pid(PidCostArgs),
    /// One HTML file of the seed's experiment (--count SETs sequentially and pipelined at
    /// --batch, `bench --html` on a redis-server of our own): its size, part by part, against
    /// 1 MB, and the time until its timeline is drawn, opened from disk in headless Chromium
    /// (--loads fresh profiles; median) against 1.5 s. Or a sweep (--sweep), or an observation
    /// of --observed connections (`observe --html`), timed until its table shows them.
    Html(HtmlArgs),
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
pub struct PidCostArgs {
    /// SETs per run.
    #[arg(long, default_value_t = 20_000)]
    pub count: u64,
    #[command(flatten)]
    pub rounds: RoundsArgs,
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
        Cost::Observer(args) => observer::observer(args).await,
        Cost::ObserverMemory(args) => observer::observer_memory(args).await,
        Cost::Probe(args) => observer::probe(args).await,
        Cost::CaptureReading(args) => capture_reading::capture_reading(args).await,
        Cost::Html(args) => html::html(args).await,
        Cost::Accuracy(args) => accuracy(args, cancel).await,
        Cost::Pid(args) => pid(args).await,
    }
}

async fn pid(args: PidCostArgs) -> anyhow::Result<()> {
    // Our own server: redis-benchmark leaves keys behind.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let c = pipescope::cost::pid::measure(
        &local.url(),
        local.port(),
        args.count,
        args.rounds.rounds(),
        args.rounds.budget(),
    )
    .await?;
    if args.output.json {
        return say_json_lines(&[c]);
    }
    say(format_args!(
        "redis-benchmark -c 1 -P 1 -n {} SETs, {} rounds rotating who goes first; medians with 95 % intervals",
        c.count, c.rounds
    ));
    say(format_args!(
        "| run | SETs/s | / untraced | target | client CPU per SET |\n|---|---:|---:|---|---:|"
    ));
    say(format_args!(
        "| untraced | {} | 1 | | {} |",
        c.untraced_ops_per_sec.with_interval(0, ""),
        c.untraced_cpu_us.with_interval(1, " µs")
    ));
    say(format_args!(
        "| traced by `observe --pid` | {} | {} | ≥ 0.9×: {} | {} |",
        c.traced_ops_per_sec.with_interval(0, ""),
        c.traced_ratio.with_interval(2, "×"),
        super::output::met(c.traced_ratio.median >= 0.9),
        c.traced_cpu_us.with_interval(1, " µs")
    ));
    say(format_args!(
        "| under `strace -f` | {} | {} | | {} |",
        c.strace_ops_per_sec.with_interval(0, ""),
        c.strace_ratio.with_interval(2, "×"),
        c.strace_cpu_us.with_interval(1, " µs")
    ));
    say(format_args!(
        "| the syscall tracepoints' programs alone, returning at once | {} | {} | | {} |",
        c.hooks_ops_per_sec.with_interval(0, ""),
        c.hooks_ratio.with_interval(2, "×"),
        c.hooks_cpu_us.with_interval(1, " µs")
    ));
    say(format_args!(
        "the trace saw {} sends per SET on redis-benchmark's socket",
        c.sends_per_set.with_interval(3, "")
    ));
    Ok(())
}

async fn accuracy(args: AccuracyArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<()> {
    let delays = match args.delay_us {
        Some(d) => vec![d],
        None => pipescope::cost::accuracy::DELAYS.to_vec(),
    };
    let redis = args.target.connect().await?;
    let target = redis.target.clone();
    let count = args.count.min(1_000);
    let rows = pipescope::cost::accuracy::measure(
        &target,
        &delays,
        count,
        args.rounds.rounds(),
        args.rounds.budget(),
        cancel,
    )
    .await?;
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
    let rows = pipescope::cost::cluster::measure(
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
    let rows = pipescope::cost::tls::measure(
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
