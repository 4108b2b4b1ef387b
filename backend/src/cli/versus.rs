//! `pipescope versus redis-benchmark`: our engine beside `redis-benchmark` on the same
//! server, shaped alike: one connection pipelined K deep (K = 1, 16, 1000), pools of
//! connections (`--connections`), over TLS (`--tls`), or on a cluster (`--cluster`).

use anyhow::Context;

use pipescope::local_redis::{LocalRedis, TlsServer};
use pipescope::target::RedisTarget;

use super::args::{JsonArg, RoundsArgs};
use super::output::{say, say_json_lines};

#[derive(clap::Subcommand)]
pub enum Versus {
    /// Our engine beside `redis-benchmark -c 1 -P K -t set` for K = 1, 16, 1000 on a
    /// redis-server of our own (an empty database before every run), and the cost of our
    /// instrumentation.
    RedisBenchmark(VersusArgs),
}

#[derive(clap::Args)]
pub struct VersusArgs {
    /// SETs per run.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// Connections against pipelining instead: `redis-benchmark -c C -P 1` beside our pool of
    /// C connections for each C in the list (e.g. 1,8,50), and one connection pipelined
    /// --batch deep (theirs and ours), with Redis's CPU per SET for every run.
    #[arg(long, value_delimiter = ',', value_parser = super::args::number_in(1, shared::Mode::MAX_CONNECTIONS))]
    pub connections: Vec<u32>,
    /// With --connections: the depth of the one pipelined connection.
    #[arg(long, default_value_t = 1000, requires = "connections")]
    pub batch: u32,
    /// Over TLS: on a redis-server of our own with a TLS port (a throwaway CA and certificate
    /// made for it), redis-benchmark with --tls --cacert and our engine over rustls.
    #[arg(long, conflicts_with_all = ["connections", "cluster"])]
    pub tls: bool,
    /// On a Redis Cluster: `redis-benchmark --cluster` (one client, and one per master)
    /// beside our engine, with where each side's SETs landed. The cluster is three masters of
    /// our own, or --redis-url's if all its masters are empty (every master is emptied before
    /// every run).
    #[arg(long, conflicts_with = "connections")]
    pub cluster: bool,
    /// With --cluster: a node of the cluster to use instead of our own.
    #[arg(long, requires = "cluster")]
    pub redis_url: Option<String>,
    #[command(flatten)]
    pub rounds: RoundsArgs,
    #[command(flatten)]
    pub output: JsonArg,
}

pub async fn versus(Versus::RedisBenchmark(args): Versus) -> anyhow::Result<()> {
    if args.cluster {
        return on_cluster(args).await;
    }
    if args.tls {
        return over_tls(args).await;
    }
    // Our own server, always: redis-benchmark leaves keys behind.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let target = RedisTarget::parse(&local.url())?;
    if !args.connections.is_empty() {
        let rows = pipescope::versus::compare_connections(
            &target,
            local.port(),
            args.count,
            &args.connections,
            args.batch,
            args.rounds.rounds(),
            args.rounds.budget(),
        )
        .await?;
        if args.output.json {
            return say_json_lines(&rows);
        }
        print_pools(args.count, &rows);
        return Ok(());
    }
    let (rows, overheads) = pipescope::versus::compare(
        &target,
        local.port(),
        args.count,
        &[1, 16, 1000],
        args.rounds.rounds(),
        args.rounds.budget(),
        None,
    )
    .await?;
    if args.output.json {
        say_json_lines(&rows)?;
        return say_json_lines(&overheads);
    }
    print_versus(args.count, &rows, &overheads, "");
    Ok(())
}

/// The same comparison over TLS, on a redis-server of our own with a TLS port.
async fn over_tls(args: VersusArgs) -> anyhow::Result<()> {
    if !pipescope::versus::redis_benchmark_supports_tls().await? {
        anyhow::bail!(
            "this redis-benchmark was built without TLS (`redis-benchmark --help` lists no --tls): \
             versus redis-benchmark --tls cannot run here"
        );
    }
    let own =
        TlsServer::start().context("starting a redis-server with a TLS port for the comparison")?;
    let (rows, overheads) = pipescope::versus::compare(
        &own.tls,
        own.tls_port,
        args.count,
        &[1, 16, 1000],
        args.rounds.rounds(),
        args.rounds.budget(),
        Some(&own.certs.ca),
    )
    .await?;
    if args.output.json {
        say_json_lines(&rows)?;
        return say_json_lines(&overheads);
    }
    print_versus(
        args.count,
        &rows,
        &overheads,
        " over TLS (redis-benchmark --tls --cacert, our engine with rustls; a throwaway CA)",
    );
    Ok(())
}

/// On our own three-master cluster, or on --redis-url's if every master is empty (each is
/// emptied before every run).
async fn on_cluster(args: VersusArgs) -> anyhow::Result<()> {
    let target_args = super::args::TargetArgs {
        redis_url: args.redis_url.clone(),
        cluster: true,
        ..Default::default()
    };
    let redis = target_args.connect().await?;
    let target = &redis.target;
    if target.tls_trust().is_some() {
        anyhow::bail!("versus redis-benchmark --cluster over rediss:// is not supported yet");
    }
    if !redis.own {
        let mut admin = target.admin_connection().await?;
        let map = pipescope::cluster::SlotMap::discover(&mut admin, &target.addr()).await?;
        for m in map.masters() {
            let mut con = target.at(&m.host, m.port)?.admin_connection().await?;
            let keys: u64 = redis::cmd("DBSIZE").query_async(&mut con).await?;
            anyhow::ensure!(
                keys == 0,
                "master {} holds {keys} keys: versus redis-benchmark --cluster empties every master \
                 before every run, so it runs only on a cluster whose masters are all empty (or on its own: drop --redis-url)",
                m.addr()
            );
        }
    }
    let rows = pipescope::versus::compare_on_cluster(
        target,
        args.count,
        &[1, 16, 1000],
        args.rounds.rounds(),
        args.rounds.budget(),
        None,
    )
    .await?;
    if args.output.json {
        return say_json_lines(&rows);
    }
    print_versus_on_cluster(args.count, &rows);
    Ok(())
}

/// The comparison on a cluster as a Markdown table, then where each side's SETs landed.
fn print_versus_on_cluster(count: u64, rows: &[pipescope::versus::ClusterVersusRow]) {
    let masters = rows.first().map_or(0, |r| r.ours_landed.len());
    say(format_args!(
        "{count} SETs per run on a cluster of {masters} masters, every master emptied before every run; \
         redis-benchmark --cluster binds each client to one master (a hash tag of that master's slots in its keys), \
         our engine opens a connection per master and splits each batch by slot, sending the parts side by side \
         (sleeping for replies, as redis-benchmark does); medians of rounds that rotate who goes first, \
         95 % confidence intervals in brackets. redis-benchmark runs with --threads 1: with its default \
         of a thread per master, -c 1 aborts (\"All clients disconnected\") and a thread left without clients \
         stops only on a 250 ms timer, rounding the time it reports up to the next tick"
    ));
    say(format_args!(
        "| K | redis-benchmark --cluster | rounds | redis-benchmark ops/s | pipescope | pipescope ops/s | ours / theirs |"
    ));
    say(format_args!("|---:|---|---:|---:|---|---:|---:|"));
    for r in rows {
        let theirs = match r.clients {
            1 => format!("--cluster -c 1 -P {}: one client, one master", r.k),
            c => format!("--cluster -c {c} -P {}: a client per master", r.k),
        };
        let ours = match r.ours_depth {
            1 => "sequential, on every master".to_string(),
            d => format!("pipelined {d}, each batch split per master"),
        };
        say(format_args!(
            "| {} | {theirs} | {} | {:.0} | {ours} | {:.0} | {} |",
            r.k,
            r.rounds,
            r.theirs_ops_per_sec,
            r.ours_ops_per_sec,
            r.ratio.with_interval(2, ""),
        ));
    }
    let landed = |l: &[pipescope::versus::Landed]| {
        l.iter()
            .map(|l| format!("{}={}", l.master, l.sets))
            .collect::<Vec<_>>()
            .join(" ")
    };
    say(format_args!(
        "where the SETs landed, per master (INFO commandstats SET calls over each side's runs, warm-up included):"
    ));
    for r in rows {
        say(format_args!(
            "K={} -c {}: redis-benchmark {} | pipescope {}",
            r.k,
            r.clients,
            landed(&r.theirs_landed),
            landed(&r.ours_landed)
        ));
    }
}

/// Connections against pipelining as a Markdown table.
fn print_pools(count: u64, rows: &[pipescope::versus::PoolRow]) {
    say(format_args!(
        "{count} SETs per run, an empty database before every run, our engine sleeping for replies as redis-benchmark does; \
         medians of rounds that rotate who goes first, 95 % confidence intervals in brackets; \
         Redis CPU per SET = INFO cpu (used_cpu_user + used_cpu_sys) over INFO commandstats SET calls, across each run",
    ));
    say(format_args!(
        "| connections × depth | rounds | redis-benchmark ops/s | pipescope ops/s | ours / theirs | Redis CPU per SET, redis-benchmark | Redis CPU per SET, pipescope |"
    ));
    say(format_args!("|---|---:|---:|---:|---:|---:|---:|"));
    for r in rows {
        let what = if r.depth == 1 {
            format!(
                "{} connection{} × 1 (-c {} -P 1)",
                r.connections,
                if r.connections == 1 { "" } else { "s" },
                r.connections
            )
        } else {
            format!("1 connection × {} pipelined (-c 1 -P {})", r.depth, r.depth)
        };
        say(format_args!(
            "| {what} | {} | {:.0} | {:.0} | {} | {:.2} µs | {:.2} µs |",
            r.rounds,
            r.theirs_ops_per_sec,
            r.ours_ops_per_sec,
            r.ratio.with_interval(2, ""),
            r.theirs_redis_cpu_us_per_set,
            r.ours_redis_cpu_us_per_set,
        ));
    }
}

/// The comparison as a Markdown table, then the instrumentation's cost.
fn print_versus(
    count: u64,
    rows: &[pipescope::versus::VersusRow],
    overheads: &[pipescope::versus::Overhead],
    how: &str,
) {
    say(format_args!(
        "{count} SETs per run, one connection{how}, an empty database before every run; medians of \
         rounds that rotate who goes first, 95 % confidence intervals in brackets",
    ));
    say(format_args!(
        "| K | rounds | redis-benchmark ops/s | pipescope ops/s, sleeping for replies | ours / theirs | pipescope ops/s, busy-polling | ours / theirs |"
    ));
    say(format_args!("|---:|---:|---:|---:|---:|---:|---:|"));
    for r in rows {
        // Not over TLS: busy-polling reads the socket below TLS.
        let (busy, busy_ratio) = match (r.busy_poll_ops_per_sec, r.busy_poll_ratio) {
            (Some(b), Some(ratio)) => (format!("{b:.0}"), ratio.with_interval(2, "")),
            _ => ("— (not over TLS)".to_string(), "—".to_string()),
        };
        say(format_args!(
            "| {} | {} | {:.0} | {:.0} | {} | {busy} | {busy_ratio} |",
            r.k,
            r.rounds,
            r.theirs_ops_per_sec,
            r.sleeping_ops_per_sec,
            r.sleeping_ratio.with_interval(2, ""),
        ));
    }
    for o in overheads {
        say(format_args!(
            "instrumentation overhead at batch {} (busy-polling, {} rounds of {} commands): {} of throughput ({:.0} ops/s measured vs {:.0} bare)",
            o.batch,
            o.rounds,
            o.count,
            o.overhead_percent.with_interval(1, " %"),
            o.instrumented_ops_per_sec,
            o.bare_ops_per_sec,
        ));
    }
}
