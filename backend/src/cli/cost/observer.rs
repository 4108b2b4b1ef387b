//! `pipescope cost observer` and `cost observer-memory`: what observe mode costs an
//! application's throughput (through the proxy, or beside a live capture) and whether its
//! memory stays flat.

use anyhow::Context;

use pipescope::cost::{ObserveCost, ProbeRow};
use pipescope::local_redis::LocalRedis;
use pipescope::target::RedisTarget;

use super::super::args::{JsonArg, RoundsArgs};
use super::super::output::{met, say, say_json_lines};

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
pub struct ProbeArgs {
    /// SETs per run.
    #[arg(long, default_value_t = 50_000)]
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

/// The targets observe mode's proxy is held to, printed beside the measurements.
const TARGET_RATIO_AT_1000: f64 = 0.9;
const TARGET_ADDED_P50_US_AT_1: f64 = 30.0;
/// The target a live capture is held to at every K: captured throughput over direct.
const TARGET_CAPTURED_RATIO: f64 = 0.95;

pub(super) async fn observer(args: ObserverArgs) -> anyhow::Result<()> {
    // Our own server, whatever --redis-url says: redis-benchmark leaves keys behind.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let target = RedisTarget::parse(&local.url())?;
    let cost = pipescope::cost::observer::measure(
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
    print_captured_runs(&cost, args.count);
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
        let sets = range(r.observed_sets_min, r.observed_sets_max);
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

/// What a live capture costs under redis-benchmark at each depth K, as a Markdown table: the
/// captured runs were a fourth contender in the rounds above.
fn print_captured_runs(cost: &ObserveCost, count: u64) {
    let interface = cost.capture_interface;
    say(format_args!(""));
    if let Some(why) = &cost.capture_unavailable {
        say(format_args!("Captured: not measured ({why})"));
        return;
    }
    say(format_args!(
        "Captured: the same redis-benchmark -c 1 -P K -n {count} SETs direct while pipescope \
         captures {interface} live, as `pipescope observe --capture {interface}` does (libpcap \
         through the pcap crate, a 64 MiB kernel ring handed over a block at a time, every \
         packet analysed on a thread of its own), a \
         fourth contender in the rounds above; the capture is opened before each captured run \
         and drained after it, outside redis-benchmark's timing. Its reference, a fifth: the \
         same runs while tcpdump captures the port (-s 0 -B 65536 -w /dev/null: whole packets, \
         a 64 MiB ring, nothing analysed), what the kernel's capture costs any capturing tool"
    ));
    if let Some(why) = &cost.tcpdump_unavailable {
        say(format_args!("tcpdump: not measured ({why})"));
    }
    say(format_args!(
        "| K | rounds | direct ops/s | captured ops/s | captured / direct | tcpdump / direct | captured / tcpdump | direct p50 | captured p50 | added p50 | SETs Redis executed per run | SETs the capture counted per run | libpcap drops | target |"
    ));
    say(format_args!(
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    ));
    for r in &cost.rows {
        let Some(c) = &r.captured else { continue };
        let all = c.runs_not_all_seen == 0 && c.sets_min == count;
        say(format_args!(
            "| {} | {} | {:.0} | {:.0} | {} | {} | {} | {:.0} µs | {:.0} µs | {} | {} | {}{} | {} | ≥ {TARGET_CAPTURED_RATIO}×: {} |",
            r.k,
            r.rounds,
            r.direct_ops_per_sec,
            c.ops_per_sec,
            c.ratio.with_interval(2, "×"),
            c.tcpdump
                .as_ref()
                .map_or("–".into(), |t| t.ratio.with_interval(2, "×")),
            c.tcpdump.as_ref().map_or("–".into(), |t| t
                .captured_over_tcpdump
                .with_interval(2, "×")),
            r.direct_p50_us,
            c.p50_us,
            c.added_p50_us.with_interval(0, " µs"),
            range(c.redis_sets_min, c.redis_sets_max),
            range(c.sets_min, c.sets_max),
            match (all, c.dropped) {
                (true, _) => " (all)".to_string(),
                (false, 0) => format!(" (NOT all, in {} runs)", c.runs_not_all_seen),
                (false, n) => format!(
                    " (NOT all, in {} runs: libpcap dropped {n} packets)",
                    c.runs_not_all_seen
                ),
            },
            c.dropped,
            met(c.ratio.median >= TARGET_CAPTURED_RATIO),
        ));
    }
    if cost.tcpdump_unavailable.is_none() {
        say(format_args!(
            "captured / tcpdump: per round, pipescope's captured run over tcpdump's, what \
             pipescope's capture costs beyond the kernel's (1.00×: nothing)"
        ));
    }
    for r in &cost.rows {
        if let Some(t) = r.captured.as_ref().and_then(|c| c.tcpdump.as_ref())
            && t.dropped > 0
        {
            say(format_args!(
                "K = {}: tcpdump reported {} packets dropped by the kernel",
                r.k, t.dropped
            ));
        }
    }
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

pub(super) async fn observer_memory(args: ObserverMemoryArgs) -> anyhow::Result<()> {
    use pipescope::cost::observer_memory::mb;
    let exe = std::env::current_exe().context("finding pipescope's own binary")?;
    let r = pipescope::cost::observer_memory::measure(
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

/// A count over several runs: "100000", or "79893–100000" where the runs differed.
fn range(lo: u64, hi: u64) -> String {
    match lo == hi {
        true => lo.to_string(),
        false => format!("{lo}–{hi}"),
    }
}

/// `cost probe`: the probe's cost to a client that waits for every reply.
pub(super) async fn probe(args: ProbeArgs) -> anyhow::Result<()> {
    // Our own server: redis-benchmark leaves keys behind.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let target = RedisTarget::parse(&local.url())?;
    let cost = pipescope::cost::probe::measure(
        &target,
        args.count,
        args.rounds.rounds(),
        args.rounds.budget(),
    )
    .await?;
    if args.output.json {
        return say_json_lines(&[&cost]);
    }
    say(format_args!(
        "redis-benchmark -c 1 -P 1 -n {} SETs through an observing proxy, without and with --probe (rounds alternate which goes first); the held figures are the probed connection's own",
        cost.count
    ));
    say(format_args!(
        "| round | without ops/s | with ops/s | with / without | held | sent while held | waited for the release | held time | of it past plan | wall | held share of the wall |"
    ));
    say(format_args!(
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    ));
    for (i, r) in cost.rounds.iter().enumerate() {
        say(format_args!(
            "| {} | {:.0} | {:.0} | {:.3}× | {} | {} | {} | {:.0} µs | {:.0} µs | {:.0} µs | {:.3} % |",
            i + 1,
            r.without_ops_per_sec,
            r.with_ops_per_sec,
            r.with_ops_per_sec / r.without_ops_per_sec,
            r.held,
            r.sent_while_held,
            r.waited_for_release,
            r.held_us,
            r.late_us,
            r.wall_us,
            100.0 * r.held_us / r.wall_us
        ));
    }
    say(format_args!(
        "median with / without {}; median held share of the wall {:.3} % [{:.3}–{:.3}] (target ≤ 1 %: {})",
        cost.ratio.with_interval(3, "×"),
        100.0 * cost.held_share.median,
        100.0 * cost.held_share.low,
        100.0 * cost.held_share.high,
        met(cost.held_share.high <= 0.01)
    ));
    say(format_args!(
        "holds decided (sent while held, or waited for the release): {} of {}, {:.1} % [{:.1}–{:.1}] (Wilson 95 %)",
        cost.decided.hits,
        cost.decided.of,
        100.0 * cost.decided.share,
        100.0 * cost.decided.low,
        100.0 * cost.decided.high
    ));
    Ok(())
}
