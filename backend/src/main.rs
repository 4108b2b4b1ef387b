//! `pipescope`: serve the page (the default), run the engine headless (`bench`), observe
//! an application's own connections (`observe`), or serve the page from a recording with no
//! Redis (`replay`).

use std::net::{IpAddr, SocketAddr};

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};

use pipescope::bench::{BenchOptions, Format};
use pipescope::hub::Hub;
use pipescope::local_redis::LocalRedis;
use pipescope::target::RedisTarget;
use shared::{Command, Flush, KeyLayout, Mode, Network, RunSpec, Wait};
use tokio::net::TcpListener;

#[derive(Parser)]
#[command(
    version,
    about = "Makes Redis pipelining visible: real runs, measured, streamed to a page"
)]
struct Cli {
    /// Redis to run against, e.g. redis://:password@host:6379/0. Without it pipescope starts
    /// its own redis-server on a free loopback port and stops it on exit.
    #[arg(long, env = "REDIS_URL", global = true, hide_env_values = true)]
    redis_url: Option<String>,
    /// For a rediss:// URL: trust only the CA certificates in this PEM file (a private CA)
    /// instead of the system's roots.
    #[arg(long, global = true, value_name = "FILE")]
    tls_ca: Option<std::path::PathBuf>,
    /// For a rediss:// URL: accept any server certificate, without verifying it. Anyone in
    /// between can then read and change the traffic; pipescope says so loudly.
    #[arg(long, global = true)]
    tls_insecure: bool,
    /// Run against a Redis Cluster: with --redis-url, the cluster that node belongs to; without
    /// it, three masters of pipescope's own on free loopback ports, stopped on exit. Each batch
    /// is split per master; MULTI/EXEC and MSET need --keys one-tag (every key in one slot).
    #[arg(long, global = true)]
    cluster: bool,
    /// Serving is the default, so its options work without `serve` too
    /// (`pipescope --delay-us 250`).
    #[command(flatten)]
    serve: ServeArgs,
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the page (the default).
    Serve(ServeArgs),
    /// Run the engine headless and print the results.
    Bench(BenchArgs),
    /// Listen for your application's Redis connections, forward them to Redis unchanged, and
    /// say per connection whether, and how, it pipelines.
    Observe(ObserveArgs),
    /// Serve the page from a recording (`bench --record FILE`, or the page's "Save session"):
    /// its runs, timelines and charts, with no Redis at all. Nothing can run.
    Replay(ReplayArgs),
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// The recording to show (a .pipescope.json file).
    file: std::path::PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", env = "PIPESCOPE_LISTEN")]
    listen: IpAddr,
    /// Port to listen on; 0 picks a free one. If the default is taken, a free one is used.
    #[arg(long, default_value_t = 8080, env = "PIPESCOPE_PORT")]
    port: u16,
}

#[derive(clap::Args)]
struct ObserveArgs {
    /// Where your application connects instead of Redis (loopback unless told otherwise).
    #[arg(long, default_value = "127.0.0.1:6380")]
    listen: SocketAddr,
    /// How long to observe ("30s", "5m", "1h", or seconds); until Ctrl-C without it.
    #[arg(long, value_parser = parse_duration)]
    duration: Option<std::time::Duration>,
    /// Output: table, json (one array of connections) or markdown.
    #[arg(long, value_enum, default_value_t = ObserveFormat::Table)]
    format: ObserveFormat,
    /// Same as --format json.
    #[arg(long)]
    json: bool,
    /// Don't measure what each connection's commands cost pipescope's engine pipelined in
    /// batches of 1,000 (it runs that many SETs, GETs or INCRs on its own keys, then removes them).
    #[arg(long)]
    no_equivalent: bool,
    /// Read a capture file instead of listening (pcap or pcapng, e.g. from
    /// `tcpdump -i any -s 0 -w redis.pcap 'tcp port 6379'`): each connection to Redis in it,
    /// reported as if observed. No proxy, and no Redis is started or reached.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["listen", "duration"])]
    pcap: Option<std::path::PathBuf>,
    /// With --pcap: the port Redis listened on in the capture (6379 unless told; repeat for
    /// several).
    #[arg(long = "redis-port", value_name = "PORT", requires = "pcap")]
    redis_port: Vec<u16>,
    #[command(flatten)]
    network: NetworkArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ObserveFormat {
    Table,
    Json,
    Markdown,
}

/// "30s", "5m", "1h", "250ms", or a number of seconds.
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a duration: say 30s, 5m, 1h or 250ms"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1e3,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (ms, s, m or h)")),
    };
    if !(secs > 0.0 && secs <= 7.0 * 86_400.0) {
        return Err(format!("{s:?}: between 1 ms and a week, please"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

#[derive(clap::Args, Clone)]
struct ServeArgs {
    /// Address to listen on. Loopback by default; the page controls real Redis runs.
    #[arg(long, default_value = "127.0.0.1", env = "PIPESCOPE_LISTEN")]
    listen: IpAddr,
    /// Port to listen on; 0 picks a free one. If the default is taken, a free one is used.
    #[arg(long, default_value_t = 8080, env = "PIPESCOPE_PORT")]
    port: u16,
    #[command(flatten)]
    network: NetworkArgs,
    /// The presenter token: needed to start or cancel runs when listening beyond loopback
    /// (viewers only watch). Generated and printed if not given.
    #[arg(long, env = "PIPESCOPE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Where the page's observe mode (/observe) listens for applications when the presenter
    /// starts it. If that port is taken, a free loopback port is used and the page says so.
    #[arg(long, default_value_t = pipescope::hub::DEFAULT_OBSERVE_LISTEN, env = "PIPESCOPE_OBSERVE_LISTEN")]
    observe_listen: SocketAddr,
}

/// A network dialled in between the engine and Redis (a delay-line proxy in pipescope). For
/// `serve`, the page's initial choice (each run crosses the network its own spec names); for
/// `bench`, every run's.
#[derive(clap::Args, Clone, Copy, Default)]
struct NetworkArgs {
    /// One-way delay each way, in µs (e.g. 250 for a 0.5 ms round trip on top of loopback).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    delay_us: u32,
    /// Jitter on that delay, ± µs (bytes are never reordered).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    jitter_us: u32,
    /// Bandwidth cap on each direction, bytes per second (makes transmission time real).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1_000..))]
    bandwidth: Option<u64>,
}

impl NetworkArgs {
    fn network(self) -> Network {
        Network {
            jitter_us: self.jitter_us,
            bandwidth: self.bandwidth,
            ..Network::symmetric(self.delay_us)
        }
    }
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Commands per run.
    #[arg(long, default_value_t = 100_000)]
    count: u64,
    /// What to run (see the values below).
    #[arg(long, value_enum, default_value_t = BenchMode::Compare)]
    mode: BenchMode,
    /// Commands per pipeline batch (per MULTI/EXEC, per MSET; in flight for multiplexed).
    #[arg(long, default_value_t = 1000)]
    batch: u32,
    /// How a pipeline's batch reaches the socket: one write per batch, a write per command
    /// (Spring Data Redis + Lettuce's default inside executePipelined), or a write every
    /// --flush-every commands.
    #[arg(long, value_enum, default_value_t = FlushArg::Batch)]
    flush: FlushArg,
    /// With --flush every: commands per write.
    #[arg(long, default_value_t = 16)]
    flush_every: u32,
    /// The command: SET, GET (of keys written beforehand, untimed) or INCR.
    #[arg(long, default_value = "SET", value_parser = parse_command)]
    command: Command,
    /// Bytes per value (default: the classic `v{i}`).
    #[arg(long)]
    value_bytes: Option<u32>,
    /// Key names: spread (`pipescope:<run>:k<i>`, over every cluster slot) or one-tag
    /// (`pipescope:{<run>}:k<i>`: one hash tag, so every key is in one slot on one master, as
    /// MULTI/EXEC and MSET need on a cluster).
    #[arg(long, default_value = "spread", value_parser = parse_keys)]
    keys: KeyLayout,
    /// Output: table, json (one object per run), csv, or markdown (paste into slides).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Same as --format json.
    #[arg(long)]
    json: bool,
    /// Instead of one run: our engine beside `redis-benchmark -c 1 -P K -t set` for K = 1, 16,
    /// 1000 on our own redis-server, and the cost of our instrumentation. With --connections:
    /// connections against pipelining instead, `redis-benchmark -c C -P 1` beside our pool of
    /// C connections for each C, and one connection pipelined --batch deep (theirs and ours),
    /// with Redis's CPU per SET (INFO cpu over INFO commandstats) for every run. With
    /// --cluster: `redis-benchmark --cluster` (one client, and one per master) beside our engine
    /// on the cluster (the embedded one, or --redis-url's if all its masters are empty: every
    /// master is emptied before every run), with where each side's SETs landed. With --tls:
    /// over TLS (`redis-benchmark --tls --cacert`).
    #[arg(long)]
    against_redis_benchmark: bool,
    /// With --against-redis-benchmark: on a redis-server of our own with a TLS port (a
    /// throwaway CA and certificate made for it), redis-benchmark with --tls --cacert and our
    /// engine over rustls.
    #[arg(long, requires = "against_redis_benchmark")]
    tls: bool,
    /// Connections in the pool for --mode connections (one C), or the pools to compare with
    /// --against-redis-benchmark (a list: 1,8,50). Each connection sends its share of the
    /// commands one at a time.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=shared::Mode::MAX_CONNECTIONS as i64))]
    connections: Vec<u32>,
    /// After the runs, print this process's peak resident memory (VmHWM in /proc/self/status)
    /// and its resident memory before them: what the engine needed for the runs.
    #[arg(long)]
    rss: bool,
    /// Instead of one run: what observe mode's proxy costs. For K = 1, 16, 1000,
    /// `redis-benchmark -c 1 -P K` of --count SETs (shaped as for --against-redis-benchmark)
    /// on our own redis-server, directly and through an in-process observing proxy (no
    /// network dialled), in rounds that rotate who goes first. Prints per K the median
    /// observed / direct throughput ratio and redis-benchmark's p50 added, with 95 %
    /// intervals, beside the targets (≥ 0.9× at K = 1000, < 30 µs added p50 at K = 1), and
    /// the SETs the proxy counted per run. Each round on stderr.
    #[arg(long, conflicts_with_all = ["against_redis_benchmark", "observe_rss"])]
    observe_overhead: bool,
    /// Instead of one run: whether observe mode's memory stays flat. Starts `pipescope
    /// observe` as a child process, sends --rss-sets SETs through it pipelined 1,000 deep on
    /// one connection (redis-benchmark), reads the child's /proc status every 200 ms and
    /// prints its peak RSS (VmHWM) at start, after 1M SETs and at the end, and a reading per
    /// million. Sends nothing after --time-budget-secs.
    #[arg(long, conflicts_with = "against_redis_benchmark")]
    observe_rss: bool,
    /// Instead of one run: what TLS costs. Starts a redis-server of our own listening on a
    /// plain port and a TLS port (a throwaway CA and certificate made for it), and runs
    /// --count SETs sequentially and pipelined 16 and --batch deep over each, in rounds that
    /// rotate who goes first. Prints per depth the median TLS / plain throughput ratio with its
    /// 95 % interval. Each round on stderr.
    #[arg(long, conflicts_with_all = ["against_redis_benchmark", "observe_overhead", "observe_rss"])]
    tls_cost: bool,
    /// Starts a redis-server and a three-master cluster of its own and runs --count SETs
    /// sequentially and pipelined 16 and --batch deep on each (on the cluster each batch split
    /// per master), in rounds that rotate who goes first. Prints per depth the median cluster /
    /// single throughput ratio with its 95 % interval. Each round on stderr.
    #[arg(long, conflicts_with_all = ["against_redis_benchmark", "observe_overhead", "observe_rss", "tls_cost"])]
    cluster_cost: bool,
    /// With --observe-rss: SETs to send through the observer.
    #[arg(long, default_value_t = 10_000_000)]
    rss_sets: u64,
    /// With --against-redis-benchmark or --observe-overhead: rounds per comparison at least
    /// (more while the time budget lasts, at most 101). Medians are reported.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// With --against-redis-benchmark, --observe-overhead or --observe-rss: no new round
    /// starts (no SET is sent, for --observe-rss) after this many seconds (each comparison
    /// gets its share).
    #[arg(long, default_value_t = pipescope::versus::DEFAULT_TIME_BUDGET.as_secs())]
    time_budget_secs: u64,
    /// With --mode sweep: the largest batch (batches 1, 2, 5, 10, 20, 50, … up to it).
    #[arg(long, default_value_t = 1000)]
    max_batch: u32,
    /// Also write the runs, with their timelines, to this recording file (one versioned JSON
    /// file; `pipescope replay FILE` or the page shows it later with no Redis).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["against_redis_benchmark", "observe_overhead", "observe_rss"])]
    record: Option<std::path::PathBuf>,
    /// Don't keep per-request timings (only the latency histogram), e.g. to measure their cost.
    #[arg(long)]
    no_spans: bool,
    /// Don't measure at all (only wall time and throughput), e.g. to count what measuring
    /// costs under `valgrind --tool=callgrind`.
    #[arg(long)]
    no_instrument: bool,
    /// Busy-poll for replies for up to this many µs before sleeping (default: sleep, as client
    /// libraries do). Takes the client's own wake-up out of every round trip, for a CPU.
    #[arg(long, value_name = "US")]
    busy_poll_us: Option<u32>,
    /// Atomicity, measured: the pipelined and MULTI/EXEC runs INCR one shared counter while a
    /// second client INCRs it too (straight to Redis, one at a time); the counter's values say
    /// how many of its INCRs Redis ran inside the runs' batches. Makes the command INCR.
    #[arg(long)]
    other_client: bool,
    #[command(flatten)]
    network: NetworkArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchMode {
    Sequential,
    /// Pipelined at --batch, written as --flush says.
    Pipelined,
    /// Sequential, then pipelined (same count).
    Compare,
    /// Pipelined at batch 1, 2, 4, … up to --max-batch: where the round trip stops dominating.
    Sweep,
    /// --batch concurrent callers auto-pipelined on one connection.
    Multiplexed,
    /// MULTI, --batch commands, EXEC.
    Transaction,
    /// One MSET (MGET for GET) of --batch keys.
    Mset,
    /// Sequential, pipelined with a write per command, pipelined with one write per batch:
    /// which write policy explains which speed-up.
    Flush,
    /// A pool of --connections connections (default 8), each sending its share one command at
    /// a time, then one connection pipelined at --batch: what C connections buy and cost.
    Connections,
    /// The latency proxy against its promise: round trips through --delay-us (or 100 µs,
    /// 250 µs, 1 ms and 5 ms) against 2·D + the direct round trip, --rounds alternating pairs
    /// of sequential runs of --count (at most 1,000) SETs.
    Accuracy,
}

#[derive(Clone, Copy, ValueEnum)]
enum FlushArg {
    Batch,
    Each,
    Every,
}

fn parse_keys(s: &str) -> Result<KeyLayout, String> {
    KeyLayout::parse(s).ok_or_else(|| format!("unknown key layout {s:?}: spread or one-tag"))
}

fn parse_command(s: &str) -> Result<Command, String> {
    Command::parse(s).ok_or_else(|| format!("unknown command {s:?}: SET, GET or INCR"))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "pipescope=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pipescope: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    // A replay needs no Redis: none is started, none is reached.
    if let Some(Cmd::Replay(args)) = cli.command {
        return replay(args).await;
    }
    // Nor does reading a capture.
    if let Some(Cmd::Observe(args)) = &cli.command
        && let Some(path) = &args.pcap
    {
        return observe_pcap(args, path);
    }
    // Started on the main thread, which lives as long as the process: redis-server is tied to
    // the thread that spawned it (see local_redis::die_with_parent).
    let tls = pipescope::target::TlsOptions {
        ca: cli.tls_ca.clone(),
        insecure: cli.tls_insecure,
    };
    let mut local_cluster = None;
    let (target, local) = match &cli.redis_url {
        Some(url) if cli.cluster => (RedisTarget::parse_with(url, &tls)?.as_cluster(), None),
        Some(url) => (RedisTarget::parse_with(url, &tls)?, None),
        None if cli.tls_ca.is_some() || cli.tls_insecure => {
            anyhow::bail!("--tls-ca and --tls-insecure need a rediss:// --redis-url")
        }
        None if cli.cluster => {
            let cluster = pipescope::cluster::LocalCluster::start(3)
                .context("starting the embedded three-master cluster")?;
            tracing::info!(ports = ?cluster.ports(), "started embedded cluster");
            let target = RedisTarget::parse(&cluster.url())?.as_cluster();
            local_cluster = Some(cluster);
            (target, None)
        }
        None => {
            let local = LocalRedis::supervised().context("starting the embedded redis-server")?;
            tracing::info!(port = local.port(), "started embedded redis-server");
            (RedisTarget::parse(&local.url())?, Some(local))
        }
    };
    if target.tls_trust() == Some(&pipescope::tls::Trust::Insecure) {
        eprintln!(
            "pipescope: WARNING: --tls-insecure: the Redis server's certificate is NOT verified; \
             anyone between here and {} can read and change this traffic. Use --tls-ca FILE instead.",
            target.addr()
        );
    }
    let redis_version = target.server_version().await?;
    if target.is_cluster() {
        // Said now, before anything runs: not a cluster, or slots no master serves.
        let mut admin = target.admin_connection().await?;
        let map = pipescope::cluster::SlotMap::discover(&mut admin, &target.addr()).await?;
        let masters: Vec<String> = map.masters().iter().map(|m| m.addr()).collect();
        eprintln!(
            "pipescope: Redis Cluster, {} masters: {}",
            masters.len(),
            masters.join(", ")
        );
    }
    let result = match cli.command.unwrap_or(Cmd::Serve(cli.serve)) {
        Cmd::Serve(args) => serve(args, target, redis_version).await,
        Cmd::Bench(args) => bench(args, target, redis_version, cli.redis_url.is_none()).await,
        Cmd::Observe(args) => observe(args, target).await,
        Cmd::Replay(_) => unreachable!("handled before Redis is started"),
    };
    drop(local);
    drop(local_cluster);
    result
}

async fn serve(args: ServeArgs, target: RedisTarget, redis_version: String) -> anyhow::Result<()> {
    let listener = listen(args.listen, args.port).await?;
    let local = listener.local_addr()?;
    let shown = if local.ip().is_unspecified() {
        SocketAddr::new([127, 0, 0, 1].into(), local.port())
    } else {
        local
    };
    let shutdown = shutdown_signal()?;
    // The hub first (it sweeps old keys and starts the default network's proxy): the address
    // is announced once everything behind it is ready, so nobody races its start-up.
    // The network is the page's initial choice; each run crosses the one its own spec names.
    let network = args.network.network();
    let hub = Hub::with_network(target.clone(), redis_version.clone(), network)
        .await?
        .observe_on(args.observe_listen);
    say(format_args!(
        "pipescope {} — Redis {} at {}",
        env!("CARGO_PKG_VERSION"),
        redis_version,
        target.shown()
    ));
    let token = presenter_token(args.listen, args.token);
    let hub = match &token {
        Some(t) => hub.require_token(t.clone()),
        None => hub,
    };
    match &token {
        Some(t) => {
            say(format_args!(
                "presenter (can start runs): http://{shown}/?token={t}"
            ));
            say(format_args!("viewers (watch only):       http://{shown}/"));
        }
        None => say(format_args!("open http://{shown}/")),
    }
    if !network.is_loopback() {
        say(format_args!("default network: {}", network.label()));
    }
    pipescope::server::serve(listener, hub, shutdown).await?;
    say(format_args!("pipescope stopped"));
    Ok(())
}

/// Binds `listen:port`; if that is the default port and it is taken, a free port instead.
async fn listen(listen: IpAddr, port: u16) -> anyhow::Result<TcpListener> {
    let addr = SocketAddr::new(listen, port);
    match TcpListener::bind(addr).await {
        Ok(l) => Ok(l),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && port == 8080 => {
            tracing::warn!("port 8080 is taken; using a free port instead");
            Ok(TcpListener::bind(SocketAddr::new(listen, 0)).await?)
        }
        Err(e) => Err(e).with_context(|| format!("cannot listen on {addr}")),
    }
}

/// The token that controls runs: the one given, else a fresh one when listening beyond
/// loopback, else none. On loopback only this machine can connect; beyond it, a room can:
/// then control needs the token and everyone else watches.
fn presenter_token(listen: IpAddr, given: Option<String>) -> Option<String> {
    match (listen.is_loopback(), given) {
        (_, Some(t)) => Some(t),
        (false, None) => Some(
            (0..24)
                .map(|_| fastrand::alphanumeric())
                .collect::<String>(),
        ),
        (true, None) => None,
    }
}

/// A line on stdout for the person who started us. Unlike println!, a closed stdout (e.g. the
/// reader went away) is not a reason to crash while shutting down cleanly.
fn say(line: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// One JSON object a line.
fn say_json_lines<T: serde::Serialize>(items: &[T]) -> anyhow::Result<()> {
    for item in items {
        say(format_args!("{}", serde_json::to_string(item)?));
    }
    Ok(())
}

async fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    // Read before listening: a broken or newer file is a message and an exit, not a blank page.
    let recording = pipescope::replay::read(&args.file)?;
    let file = args.file.file_name().map_or_else(
        || args.file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let listener = listen(args.listen, args.port).await?;
    let local = listener.local_addr()?;
    let shown = if local.ip().is_unspecified() {
        SocketAddr::new([127, 0, 0, 1].into(), local.port())
    } else {
        local
    };
    let shutdown = shutdown_signal()?;
    say(format_args!(
        "pipescope {} — replaying {file}: {} runs saved {} by pipescope {}, measured against Redis {} at {}; no Redis is used now",
        env!("CARGO_PKG_VERSION"),
        recording.runs.len(),
        recording.saved_at,
        recording.server_version,
        recording.redis_version,
        recording.target,
    ));
    say(format_args!("open http://{shown}/"));
    pipescope::replay::serve(listener, recording, &file, shutdown).await?;
    say(format_args!("pipescope stopped"));
    Ok(())
}

/// Where `--record` writes: checked before the runs (a temporary file beside it is created
/// now), written atomically after them (the temporary file renamed over it).
struct RecordTo {
    path: std::path::PathBuf,
    temp: std::path::PathBuf,
}

impl RecordTo {
    fn prepare(path: &std::path::Path) -> anyhow::Result<RecordTo> {
        let name = path
            .file_name()
            .with_context(|| format!("--record {}: not a file name", path.display()))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp_name);
        std::fs::File::create(&temp)
            .with_context(|| format!("--record: cannot write beside {}", path.display()))?;
        Ok(RecordTo {
            path: path.to_path_buf(),
            temp,
        })
    }

    fn write(&self, recording: &shared::Recording) -> anyhow::Result<()> {
        std::fs::write(&self.temp, recording.to_json())
            .and_then(|()| std::fs::rename(&self.temp, &self.path))
            .with_context(|| format!("--record: cannot write {}", self.path.display()))
    }
}

impl Drop for RecordTo {
    /// Gone once renamed; left over only when the runs failed.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.temp);
    }
}

/// `own`: `target` is a server or cluster pipescope started (no --redis-url).
async fn bench(
    args: BenchArgs,
    target: RedisTarget,
    redis_version: String,
    own: bool,
) -> anyhow::Result<()> {
    if args.against_redis_benchmark && target.is_cluster() {
        return versus_on_cluster(args, target, own).await;
    }
    if args.against_redis_benchmark {
        return versus(args).await;
    }
    if args.observe_overhead {
        return observe_overhead(args).await;
    }
    if args.observe_rss {
        return observe_rss(args).await;
    }
    if args.cluster_cost {
        return cluster_cost(args).await;
    }
    if args.tls_cost {
        return tls_cost(args).await;
    }
    let flush = match args.flush {
        FlushArg::Batch => Flush::Batch,
        FlushArg::Each => Flush::EachCommand,
        FlushArg::Every => Flush::Buffered {
            commands: args.flush_every,
        },
    };
    let pipelined = |batch, flush| Mode::Pipelined { batch, flush };
    let modes = match args.mode {
        BenchMode::Sequential => vec![Mode::Sequential],
        BenchMode::Pipelined => vec![pipelined(args.batch, flush)],
        BenchMode::Compare => vec![Mode::Sequential, pipelined(args.batch, flush)],
        BenchMode::Sweep => shared::sweep::up_to(args.max_batch)
            .into_iter()
            .map(Mode::pipelined)
            .collect(),
        BenchMode::Multiplexed => vec![Mode::Multiplexed {
            in_flight: args.batch,
        }],
        BenchMode::Transaction => vec![Mode::Transaction { batch: args.batch }],
        BenchMode::Mset => vec![Mode::Mset { batch: args.batch }],
        BenchMode::Flush => vec![
            Mode::Sequential,
            pipelined(args.batch, Flush::EachCommand),
            Mode::pipelined(args.batch),
        ],
        BenchMode::Connections => {
            let connections = match args.connections[..] {
                [] => 8,
                [c] => c,
                _ => anyhow::bail!("--mode connections takes one --connections C"),
            };
            vec![
                Mode::Connections { connections },
                pipelined(args.batch, flush),
            ]
        }
        // Not a list of runs: pairs of them, compared.
        BenchMode::Accuracy if args.record.is_some() => {
            anyhow::bail!(
                "--record saves runs; --mode accuracy prints a comparison of pairs instead"
            )
        }
        BenchMode::Accuracy => return accuracy(args, target).await,
    };
    let network = args.network.network();
    let specs = modes
        .into_iter()
        .map(|mode| RunSpec {
            command: if args.other_client {
                Command::Incr
            } else {
                args.command
            },
            other_client: args.other_client
                && matches!(mode, Mode::Pipelined { .. } | Mode::Transaction { .. }),
            value_bytes: args.value_bytes,
            keys: args.keys,
            wait: match args.busy_poll_us {
                Some(us) => Wait::BusyPoll { us },
                None => Wait::Sleep,
            },
            ..RunSpec::set(args.count, mode).with_network(network)
        })
        .collect();
    let options = BenchOptions {
        format: if args.json { Format::Json } else { args.format },
        no_spans: args.no_spans,
        no_instrument: args.no_instrument,
    };
    let before = args
        .rss
        .then(|| pipescope::observe_rss::memory(std::process::id()))
        .transpose()?;
    let record = args.record.as_deref().map(RecordTo::prepare).transpose()?;
    let runs = pipescope::bench::run(&target, specs, options).await?;
    if let Some(record) = record {
        let saved_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let n = runs.len();
        record.write(&shared::Recording::new(
            shared::recording::rfc3339_utc(saved_at),
            env!("CARGO_PKG_VERSION").to_string(),
            redis_version,
            target.redacted(),
            network,
            runs,
        ))?;
        eprintln!(
            "recorded {n} runs to {} (pipescope replay {} shows them)",
            record.path.display(),
            record.path.display()
        );
    }
    if let Some(before) = before {
        use pipescope::observe_rss::mb;
        let after = pipescope::observe_rss::memory(std::process::id())?;
        say(format_args!(
            "this process's memory (/proc/self/status): {} resident before the runs, peak {} (VmHWM), {} resident after",
            mb(before.rss_kb),
            mb(after.hwm_kb),
            mb(after.rss_kb)
        ));
    }
    Ok(())
}

async fn accuracy(args: BenchArgs, target: RedisTarget) -> anyhow::Result<()> {
    let network = args.network.network();
    let delays = if network.is_loopback() {
        pipescope::bench::ACCURACY_DELAYS.to_vec()
    } else {
        vec![network.delay_out_us]
    };
    let count = args.count.min(1_000);
    let rows = pipescope::bench::accuracy(&target, &delays, count, args.rounds).await?;
    if args.json || args.format == Format::Json {
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

async fn versus(args: BenchArgs) -> anyhow::Result<()> {
    if args.tls {
        return versus_over_tls(args).await;
    }
    // Our own server, whatever --redis-url says: redis-benchmark leaves keys behind.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let target = RedisTarget::parse(&local.url())?;
    if !args.connections.is_empty() {
        let rows = pipescope::versus::compare_connections(
            &target,
            local.port(),
            args.count,
            &args.connections,
            args.batch,
            args.rounds.clamp(1, pipescope::versus::MAX_ROUNDS),
            std::time::Duration::from_secs(args.time_budget_secs),
        )
        .await?;
        if args.json || args.format == Format::Json {
            return say_json_lines(&rows);
        }
        print_pools(args.count, &rows);
        return Ok(());
    }
    let ks = [1, 16, 1000];
    let rounds = args.rounds.clamp(1, pipescope::versus::MAX_ROUNDS);
    let (rows, overheads) = pipescope::versus::compare(
        &target,
        local.port(),
        args.count,
        &ks,
        rounds,
        std::time::Duration::from_secs(args.time_budget_secs),
        None,
    )
    .await?;
    if args.json || args.format == Format::Json {
        say_json_lines(&rows)?;
        return say_json_lines(&overheads);
    }
    print_versus(args.count, &rows, &overheads, "");
    Ok(())
}

/// `--against-redis-benchmark --tls`: the same comparison over TLS, on a redis-server of our
/// own with a TLS port.
async fn versus_over_tls(args: BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.connections.is_empty(),
        "--against-redis-benchmark --tls compares one connection pipelined; --connections is not over TLS yet"
    );
    if !pipescope::versus::redis_benchmark_supports_tls().await? {
        anyhow::bail!(
            "this redis-benchmark was built without TLS (`redis-benchmark --help` lists no --tls): \
             --against-redis-benchmark --tls cannot run here"
        );
    }
    let own = TlsServer::start()?;
    let rounds = args.rounds.clamp(1, pipescope::versus::MAX_ROUNDS);
    let (rows, overheads) = pipescope::versus::compare(
        &own.tls,
        own.tls_port,
        args.count,
        &[1, 16, 1000],
        rounds,
        std::time::Duration::from_secs(args.time_budget_secs),
        Some(&own.certs.ca),
    )
    .await?;
    if args.json || args.format == Format::Json {
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

/// `--against-redis-benchmark --cluster`: on the embedded cluster, or on --redis-url's if
/// every master is empty (each is emptied before every run).
async fn versus_on_cluster(args: BenchArgs, target: RedisTarget, own: bool) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.connections.is_empty() && !args.tls,
        "--against-redis-benchmark --cluster compares pipelined runs over plain TCP; not with --connections or --tls yet"
    );
    if target.tls_trust().is_some() {
        anyhow::bail!("--against-redis-benchmark --cluster over rediss:// is not supported yet");
    }
    if !own {
        let mut admin = target.admin_connection().await?;
        let map = pipescope::cluster::SlotMap::discover(&mut admin, &target.addr()).await?;
        for m in map.masters() {
            let mut con = target.at(&m.host, m.port)?.admin_connection().await?;
            let keys: u64 = redis::cmd("DBSIZE").query_async(&mut con).await?;
            anyhow::ensure!(
                keys == 0,
                "master {} holds {keys} keys: --against-redis-benchmark --cluster empties every master \
                 before every run, so it runs only on a cluster whose masters are all empty (or on its own: drop --redis-url)",
                m.addr()
            );
        }
    }
    let rows = pipescope::versus::compare_on_cluster(
        &target,
        args.count,
        &[1, 16, 1000],
        args.rounds.clamp(1, pipescope::versus::MAX_ROUNDS),
        std::time::Duration::from_secs(args.time_budget_secs),
        None,
    )
    .await?;
    if args.json || args.format == Format::Json {
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

/// A redis-server of our own listening on a plain port and a TLS port, with a throwaway CA
/// and certificate made for it (removed on drop, after the server).
struct TlsServer {
    local: LocalRedis,
    tls_port: u16,
    plain: RedisTarget,
    tls: RedisTarget,
    certs: pipescope::tls::throwaway::Throwaway,
}

impl TlsServer {
    fn start() -> anyhow::Result<TlsServer> {
        use pipescope::target::TlsOptions;
        let certs = pipescope::tls::throwaway::Throwaway::new()
            .map_err(|e| anyhow::anyhow!("making a throwaway certificate: {e}"))?;
        let tls_port = pipescope::local_redis::free_port()?;
        let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
        let (cert, key, ca) = (path(&certs.cert), path(&certs.key), path(&certs.ca));
        let local = LocalRedis::start_with_args(&[
            "--tls-port",
            &tls_port.to_string(),
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            "no",
        ])
        .context("starting a redis-server with a TLS port for the comparison")?;
        let plain = RedisTarget::parse(&local.url())?;
        let trust = TlsOptions {
            ca: Some(certs.ca.clone()),
            insecure: false,
        };
        let tls = RedisTarget::parse_with(&format!("rediss://127.0.0.1:{tls_port}/0"), &trust)?;
        Ok(TlsServer {
            local,
            tls_port,
            plain,
            tls,
            certs,
        })
    }
}

async fn cluster_cost(args: BenchArgs) -> anyhow::Result<()> {
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
        args.rounds.clamp(1, pipescope::versus::MAX_ROUNDS),
        std::time::Duration::from_secs(args.time_budget_secs),
    )
    .await?;
    if args.json || args.format == Format::Json {
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

async fn tls_cost(args: BenchArgs) -> anyhow::Result<()> {
    // Our own server, whatever --redis-url says: one server on both ports, so only TLS differs.
    let own = TlsServer::start()?;
    let (plain, tls) = (&own.plain, &own.tls);
    let mut ks = vec![1, 16, args.batch.max(1)];
    ks.dedup();
    let rows = pipescope::versus::tls_cost(
        plain,
        tls,
        own.local.port(),
        args.count,
        &ks,
        args.rounds.clamp(1, pipescope::versus::MAX_ROUNDS),
        std::time::Duration::from_secs(args.time_budget_secs),
    )
    .await?;
    if args.json || args.format == Format::Json {
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

/// Targets from issue #11, printed beside the measurements.
const TARGET_RATIO_AT_1000: f64 = 0.9;
const TARGET_ADDED_P50_US_AT_1: f64 = 30.0;

async fn observe_overhead(args: BenchArgs) -> anyhow::Result<()> {
    // Our own server, whatever --redis-url says: redis-benchmark leaves keys behind.
    let local = LocalRedis::start().context("starting a redis-server for the comparison")?;
    let target = RedisTarget::parse(&local.url())?;
    let cost = pipescope::versus::observe_overhead(
        &target,
        local.port(),
        args.count,
        &[1, 16, 1000],
        args.rounds.clamp(1, pipescope::versus::MAX_ROUNDS),
        std::time::Duration::from_secs(args.time_budget_secs),
    )
    .await?;
    if args.json || args.format == Format::Json {
        return say_json_lines(&[&cost]);
    }
    let rows = &cost.rows;
    say(format_args!(
        "redis-benchmark -c 1 -P K -n {} SETs, direct, through the proxy with no hooks (a \
         plain relay) and through an in-process observing proxy (no delay dialled); an empty \
         database before every run; medians of rounds that rotate who goes first, 95 % \
         confidence intervals in brackets",
        args.count
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
    let p = &cost.probe;
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
    Ok(())
}

fn met(yes: bool) -> &'static str {
    if yes { "met" } else { "missed" }
}

async fn observe_rss(args: BenchArgs) -> anyhow::Result<()> {
    use pipescope::observe_rss::mb;
    let exe = std::env::current_exe().context("finding pipescope's own binary")?;
    let r = pipescope::observe_rss::measure(
        &exe,
        args.rss_sets,
        std::time::Duration::from_secs(args.time_budget_secs),
    )
    .await?;
    if args.json || args.format == Format::Json {
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

async fn observe(args: ObserveArgs, target: RedisTarget) -> anyhow::Result<()> {
    use pipescope::observe::{Observer, equivalent, report};
    let network = args.network.network();
    let shutdown = shutdown_signal()?;
    let observer = Observer::start(args.listen, &target, network).await?;
    eprintln!(
        "observing: point your application at {} (Redis at {}{}); {}",
        observer.connect_url(),
        target.redacted(),
        if network.is_loopback() {
            String::new()
        } else {
            format!(", over {}", network.label())
        },
        match args.duration {
            Some(d) => format!("for {}", shared::observe::duration(d.as_secs_f64() * 1e6)),
            None => "until Ctrl-C".into(),
        }
    );
    // Machine-readable: the address, on stdout's first line, for scripts and tests.
    say(format_args!("listening {}", observer.addr()));
    let deadline = async {
        match args.duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let progress = async {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
        tick.tick().await;
        loop {
            tick.tick().await;
            let all = observer.connections().snapshot();
            let commands: u64 = all.iter().map(|c| c.counts.commands).sum();
            eprintln!(
                "observing: {} connections ({} open), {} commands",
                all.len(),
                observer.connections().open(),
                shared::observe::group(commands)
            );
        }
    };
    tokio::select! {
        _ = deadline => {},
        _ = shutdown => eprintln!("observing: stopped by signal"),
        _ = progress => {},
    }
    let mut conns = observer.connections().snapshot();
    // The proxy closes here: the application's connections through it end.
    drop(observer);
    if !args.no_equivalent {
        let proxies = pipescope::net::Proxies::default();
        let measured: Vec<_> = conns.iter().filter(|c| c.counts.commands > 1).collect();
        let n = measured.len();
        let mut equivalents = Vec::new();
        for (k, c) in measured.into_iter().enumerate() {
            let spec = match equivalent::spec_for(c, network) {
                Ok(spec) => spec,
                Err(why) => {
                    eprintln!("connection {}: {why}", c.id);
                    continue;
                }
            };
            eprintln!(
                "measuring the pipelined equivalent of connection {} ({}/{n}): {} {}s in batches of {}",
                c.id,
                k + 1,
                shared::observe::group(spec.count),
                spec.command.name(),
                shared::observe::group(u64::from(equivalent::BATCH))
            );
            let run_id = pipescope::engine::keys::first_run_id();
            equivalents.push((
                c.id,
                equivalent::measure(&target, &proxies, spec, run_id).await,
            ));
        }
        for (id, e) in equivalents {
            match e {
                Ok(e) => {
                    if let Some(c) = conns.iter_mut().find(|c| c.id == id) {
                        c.equivalent = Some(e);
                    }
                }
                Err(e) => eprintln!("connection {id}: the pipelined equivalent failed: {e}"),
            }
        }
    }
    let format = if args.json {
        ObserveFormat::Json
    } else {
        args.format
    };
    let out = match format {
        ObserveFormat::Table => report::table(&conns),
        ObserveFormat::Json => report::json(&conns),
        ObserveFormat::Markdown => report::markdown(&conns),
    };
    say(format_args!("{}", out.trim_end()));
    Ok(())
}

/// `observe --pcap FILE`: the report from a capture; notes (resynchronisations, gaps) on
/// stderr, and what the figures are on the report's first line (stderr with --json).
fn observe_pcap(args: &ObserveArgs, path: &std::path::Path) -> anyhow::Result<()> {
    use pipescope::observe::{captured, report};
    let ports = match args.redis_port.as_slice() {
        [] => vec![6379],
        ports => ports.to_vec(),
    };
    let seen = captured::observe_file(path, &ports)?;
    let label = captured::label(path, &seen.facts);
    for note in &seen.notes {
        eprintln!("pipescope: {note}");
    }
    let conns = &seen.connections;
    let out = match if args.json {
        ObserveFormat::Json
    } else {
        args.format
    } {
        ObserveFormat::Table => format!("{label}\n{}", report::table(conns)),
        ObserveFormat::Json => {
            eprintln!("{label}");
            report::json(conns)
        }
        ObserveFormat::Markdown => format!("{label}\n\n{}", report::markdown(conns)),
    };
    say(format_args!("{}", out.trim_end()));
    Ok(())
}

/// Ctrl-C or SIGTERM. The handlers are installed now, not when the future is first polled,
/// so a signal that arrives right after start-up is a clean shutdown, not a kill.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {},
            _ = term.recv() => {},
        }
        tracing::info!("shutting down");
    })
}
