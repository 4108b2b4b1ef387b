//! `pipescope observe`: your application's own connections, forwarded to Redis unchanged
//! through an observing proxy, and per connection whether, and how, it pipelines.

use std::net::SocketAddr;

use clap::ValueEnum;

use pipescope::cancel::{OnSignal, Stop};

use anyhow::Context;

use super::args::{NetworkArgs, TargetArgs};
use super::output::say;

#[derive(clap::Args)]
#[command(
    mut_arg("redis_url", |a| a.help(
        "Redis to forward to, e.g. redis://:password@host:6379/0. Without it, 127.0.0.1:6379 if something answers there (--own-redis for a throwaway one)"
    )),
    mut_arg("cluster", |a| a.help(
        "Not for observe: its proxy stands in front of one Redis. Observe a cluster from a capture instead (--capture IFACE or --pcap FILE, with a --redis-port for each master)"
    )),
)]
#[command(group(clap::ArgGroup::new("ports_for").args(["pcap", "capture", "no_proxy", "pid", "command"]).multiple(true)))]
#[command(group(clap::ArgGroup::new("traced").args(["pid", "command"]).multiple(true)))]
pub struct ObserveArgs {
    /// Where your application connects instead of Redis [default: 127.0.0.1:6380].
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// How long to observe ("30s", "5m", "1h", or seconds); until Ctrl-C without it.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// Output: table, json (one array of connections) or markdown.
    #[arg(long, value_enum, default_value_t = ObserveFormat::Table)]
    pub format: ObserveFormat,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Don't measure what each connection's commands cost pipescope's engine pipelined in
    /// batches of 1,000 (it runs that many SETs, GETs or INCRs on its own keys, then removes them).
    #[arg(long)]
    pub no_equivalent: bool,
    /// Hold a few of each connection's replies back (at most 20, each a few of its round
    /// trips; beyond the first 3, within 1 % of its time) to see whether the client waits for
    /// them: decides what the wire's timing cannot when every reply is back before the next
    /// command. Through the proxy only.
    #[arg(long)]
    pub probe: bool,
    /// Read a capture file instead of listening (pcap or pcapng, e.g. from
    /// `tcpdump -i any -s 0 -w redis.pcap 'tcp port 6379'`): each connection to Redis in it,
    /// reported as if observed. No proxy, and no Redis is started or reached.
    #[arg(long, value_name = "FILE", group = "from_capture", conflicts_with_all = ["listen", "duration", "no_equivalent", "delay_us", "jitter_us", "bandwidth", "redis_url", "cluster", "tls_ca", "tls_insecure"])]
    pub pcap: Option<std::path::PathBuf>,
    /// Capture live on this interface instead of listening (e.g. lo, eth0, any), through
    /// libpcap: every connection to Redis it sees, until --duration or Ctrl-C, reported as
    /// --pcap reports a file. No proxy; needs CAP_NET_RAW (root, or setcap).
    #[arg(long, value_name = "IFACE", group = "from_capture", conflicts_with_all = ["listen", "no_equivalent", "delay_us", "jitter_us", "bandwidth", "redis_url", "cluster", "tls_ca", "tls_insecure"])]
    pub capture: Option<String>,
    /// Forward to a throwaway redis-server of pipescope's own (empty, gone when observe ends)
    /// instead of your Redis: your application's data is not there.
    #[arg(long, conflicts_with_all = ["redis_url", "pcap", "capture"])]
    pub own_redis: bool,
    /// With --pcap or --capture: the port Redis listens on (repeat for several). Without
    /// it, Redis is found in the capture: the side of each connection that answers RESP
    /// replies to RESP commands. With --pid or a command read alone (--no-proxy): the port
    /// of the sockets reported (6379 unless told).
    #[arg(long = "redis-port", value_name = "PORT", requires = "ports_for")]
    pub redis_port: Vec<u16>,
    /// Also read this client process's own syscalls on this host (repeat for several): per
    /// socket its sends, receives and waits, given to its connection (matched by the client's
    /// address). Needs root (eBPF programs on the kernel's tracepoints; no tracefs).
    #[arg(long = "pid", value_name = "PID", conflicts_with = "pcap")]
    pub pid: Vec<u32>,
    /// With --pid or a command: no proxy, only the syscalls, a report per socket to Redis's
    /// port (--redis-port, 6379 unless told). The default for --pid or a command unless
    /// --listen, --redis-url, --own-redis, --probe or --html asks for the proxy.
    #[arg(long, requires = "traced", conflicts_with_all = ["from_capture", "listen"])]
    pub no_proxy: bool,
    /// A command to start under observation, after `--` (e.g. `-- python app.py`): its
    /// syscalls are read as with --pid, and observing ends when it exits.
    #[arg(last = true, value_name = "COMMAND", conflicts_with_all = ["pid", "pcap"])]
    pub command: Vec<String>,
    /// Also write what was observed as one HTML file: the page's observe view with the
    /// connections inside (their verdicts, time split, what would help, equivalents, the latest
    /// ones' requests), which opens from disk in a browser with no server and no network.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Replace the client addresses and connection names by numbers (`client 3`, `name 1`) in
    /// the report and the HTML file, to hand them over.
    #[arg(long)]
    pub redact: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ObserveFormat {
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

impl ObserveArgs {
    /// The process (or command) whose syscalls to trace, if the flags name one.
    pub fn traced(&self) -> Option<pipescope::syscalls::Target> {
        use pipescope::syscalls::Target;
        if !self.command.is_empty() {
            Some(Target::Command(self.command.clone()))
        } else if !self.pid.is_empty() {
            Some(Target::Pids(self.pid.clone()))
        } else {
            None
        }
    }

    /// Whether only the traced process's syscalls are read, with no proxy: `--no-proxy`, or
    /// `--pid`/a command with nothing that asks for the proxy (the application talks to its
    /// own Redis; a proxy nobody connects to would only fail to find one).
    pub fn syscalls_alone(&self) -> bool {
        let wants_proxy = self.listen.is_some()
            || self.target.redis_url.is_some()
            || self.own_redis
            || self.probe
            || self.html.is_some();
        self.no_proxy || (self.traced().is_some() && !wants_proxy)
    }

    /// Whether the report is to be JSON (`--json`, or `--format json`).
    pub fn wants_json(&self) -> bool {
        self.json || self.format == ObserveFormat::Json
    }

    /// `pipescope clean` against the Redis the proxy forwards to (its equivalents' keys).
    pub fn clean_command(&self) -> pipescope::clean::Command {
        match (&self.target.redis_url, self.own_redis) {
            (None, false) => super::args::TargetArgs {
                redis_url: Some(format!("redis://{DEFAULT_REDIS}")),
                ..self.target.clone()
            }
            .clean_command(),
            _ => self.target.clean_command(),
        }
    }
}

/// Where observe forwards when no `--redis-url` names a Redis: the usual local one.
pub const DEFAULT_REDIS: &str = "127.0.0.1:6379";
/// Where the proxy listens unless `--listen` says.
const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::LOCALHOST,
    6380,
));

/// Where the proxy forwards the application's connections.
#[derive(Debug, PartialEq, Eq)]
enum Forward {
    /// The Redis `--redis-url` (or REDIS_URL) names.
    Named,
    /// `DEFAULT_REDIS`, which answered.
    Default,
    /// A throwaway redis-server of pipescope's own (`--own-redis`).
    Own,
}

/// The user's Redis, named or the usual local one if it answers (asked only when needed);
/// pipescope's own only when asked for, since the application's data is not in it.
fn forward_to(
    named: bool,
    own: bool,
    default_answers: impl FnOnce() -> bool,
) -> anyhow::Result<Forward> {
    Ok(match (named, own) {
        (true, _) => Forward::Named,
        (false, true) => Forward::Own,
        (false, false) if default_answers() => Forward::Default,
        (false, false) => anyhow::bail!(
            "no Redis to forward to: nothing answers at {DEFAULT_REDIS}. Name yours with \
             --redis-url redis://HOST:PORT, or give --own-redis to forward to a throwaway \
             redis-server of pipescope's own (empty, gone when observe ends)"
        ),
    })
}

/// Whether something accepts a connection at `DEFAULT_REDIS` (whether it is Redis is then
/// asked by the version check, which says so if not).
fn default_answers() -> bool {
    let addr: SocketAddr = DEFAULT_REDIS.parse().expect("a socket address");
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(1)).is_ok()
}

/// The number of keys in the target's database (`DBSIZE`), if Redis says.
async fn key_count(target: &pipescope::target::RedisTarget) -> Option<u64> {
    let mut con = target.admin_connection().await.ok()?;
    redis::cmd("DBSIZE").query_async(&mut con).await.ok()
}

/// `observe` as a proxy in front of Redis (a capture file is `observe_pcap`'s, a live capture
/// `observe_live`'s).
pub async fn observe(args: ObserveArgs, stop: Stop) -> anyhow::Result<()> {
    let html = html_to(&args)?;
    if args.target.cluster {
        anyhow::bail!(
            "observe's proxy stands in front of one Redis: a cluster's clients follow MOVED and ASK to the other masters, around it, and that traffic would be counted nowhere. Observe a cluster from a capture instead, with a --redis-port for each master: pipescope observe --capture IFACE --redis-port 7000 --redis-port 7001 --redis-port 7002 (or tcpdump it, and read the file with --pcap)"
        );
    }
    let forward = forward_to(
        args.target.redis_url.is_some(),
        args.own_redis,
        default_answers,
    )?;
    let mut target_args = args.target.clone();
    if forward == Forward::Default {
        target_args.redis_url = Some(format!("redis://{DEFAULT_REDIS}"));
    }
    let redis = target_args
        .connect_or("give --own-redis to forward to a throwaway redis-server of pipescope's own")
        .await?;
    let target = redis.target.clone();
    let keys = match key_count(&target).await {
        Some(0) => "empty".to_string(),
        Some(1) => "1 key".to_string(),
        Some(n) => format!("{} keys", shared::digits::group(n)),
        None => "keys not counted".to_string(),
    };
    match forward {
        Forward::Own => eprintln!(
            "pipescope: forwarding to a THROWAWAY redis-server of pipescope's own at {} (Redis {}, {keys}), as --own-redis asks: your application's data is NOT there, and what it writes is gone when observe ends",
            target.redacted(),
            redis.redis_version
        ),
        Forward::Named | Forward::Default => eprintln!(
            "forwarding to {} (Redis {}, {keys})",
            target.redacted(),
            redis.redis_version
        ),
    }
    use pipescope::observe::{Observer, report};
    let network = args.network.network();
    // Ctrl-C ends the observing: `Stop` passes it over to here (`Cli::on_signal`).
    let shutdown = stop.passed_over();
    let listen = args.listen.unwrap_or(DEFAULT_LISTEN);
    let observer = Observer::start_probing(listen, &target, network, args.probe).await?;
    if args.probe {
        eprintln!("{}", probe_bounds());
    }
    match observer.hops() {
        Some((hop, spread)) => eprintln!(
            "observing: the observer's two hops (client → proxy → client) cost ~{} a round trip{}, measured at start and again every {} s while a connection is open; reported as their own part, not the client's time, unless they vary more than a connection's waits",
            shared::observe::duration(hop),
            spread.map_or_else(String::new, |s| format!(
                " ({} to {}, 10th to 90th percentile of {})",
                shared::observe::duration(s.low_us),
                shared::observe::duration(s.high_us),
                shared::observe::count(s.pings, "PING")
            )),
            shared::observe::HOP_REMEASURE_SECS,
        ),
        None => eprintln!(
            "observing: the observer's two hops could not be measured at start: the client's own time includes them"
        ),
    }
    eprintln!(
        "observing: point your application at {}{}; {}",
        observer.connect_url(),
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
    // Machine-readable: the address, on a line of its own for scripts and tests. On stderr:
    // stdout holds the report alone (JSON only, with --json).
    eprintln!("listening {}", observer.addr());
    let tracer = super::observe_syscalls::start(args.traced())?;
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
                shared::digits::group(commands)
            );
        }
    };
    let command_exited = async {
        match &tracer {
            Some(t) => {
                t.command_exited().await;
                // Its last bytes through the proxy, and its connections' ends.
                let until = tokio::time::Instant::now() + std::time::Duration::from_secs(1);
                while observer.connections().open() > 0 && tokio::time::Instant::now() < until {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = deadline => {},
        _ = shutdown => eprintln!("observing: stopped by signal"),
        _ = progress => {},
        _ = command_exited => {},
    }
    let mut conns = observer.connections().snapshot();
    if let Some(t) = tracer {
        let traced = super::observe_syscalls::finish(t)?;
        let redis_port = target
            .addr()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok());
        super::observe_syscalls::attach(&mut conns, &traced, &Vec::from_iter(redis_port));
    }
    // The requests the proxy kept, for the file's timelines.
    let timelines: Vec<_> = match html {
        Some(_) => conns
            .iter()
            .filter_map(|c| observer.connections().timeline(c.id))
            .collect(),
        None => Vec::new(),
    };
    // The proxy closes here: the application's connections through it end.
    drop(observer);
    if args.probe {
        say_probed(&conns);
    }
    if args.redact {
        pipescope::redact::redact(&mut conns, &mut []);
    }
    // From here a signal stops the equivalents (removing their keys); the report still prints.
    stop.set(OnSignal::ShutDown);
    let interrupted = if args.no_equivalent {
        Vec::new()
    } else {
        measure_equivalents(&mut conns, &target, network, &stop).await
    };
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
    if let Some((to, page)) = html {
        let observed = pipescope::html_file::Observed {
            conns,
            timelines,
            redis_version: redis.redis_version.clone(),
            target: target.redacted(),
            network,
        };
        let text = pipescope::html_file::of_proxy(&page, observed, &to.file_name());
        to.write_text(&text)?;
        wrote_html(&to, text.len());
    }
    match stop.signal() {
        Some(_) => Err(pipescope::cancel::Interrupted(interrupted).into()),
        None => Ok(()),
    }
}

/// What `--probe` may hold, said before anything is.
fn probe_bounds() -> String {
    use pipescope::observe::holding::{FEW, HARD_CAP, MAX_HOLDS, SHARE};
    format!(
        "observing: --probe holds a few replies back to see whether each client waits for them: at most {MAX_HOLDS} a connection, each {} at most and ended as soon as the client sends; the first {FEW} whatever they cost (a short connection is decided too), the rest within {} % of the connection's time; replies are never reordered, dropped or altered",
        shared::observe::duration(HARD_CAP.as_secs_f64() * 1e6),
        SHARE * 100.0
    )
}

/// What the probe held, per connection and in all, on stderr.
fn say_probed(conns: &[shared::observe::ObservedConnection]) {
    let (mut held, mut held_us, mut wall_us) = (0, 0.0, 0.0);
    for c in conns {
        if let Some(p) = &c.probe {
            eprintln!("connection {}: {}", c.id, p.line(c.times.wall_us));
            held += p.held;
            held_us += p.held_us;
            wall_us += c.times.wall_us;
        }
    }
    eprintln!(
        "probe: held {} replies for {} in all, {:.2} % of the connections' {} of time",
        shared::digits::group(held),
        shared::observe::duration(held_us),
        if wall_us > 0.0 {
            100.0 * held_us / wall_us
        } else {
            0.0
        },
        shared::observe::duration(wall_us)
    );
}

/// `--probe` holds replies in the observing proxy: a capture, file or live, cannot.
pub(super) fn refuse_probe(args: &ObserveArgs) -> anyhow::Result<()> {
    if args.probe {
        anyhow::bail!(
            "--probe holds replies back in pipescope's observing proxy, and a capture cannot hold replies: drop --probe to read the capture, or point your application at the proxy (observe without --pcap or --capture) to probe it"
        );
    }
    Ok(())
}

/// Measures the pipelined equivalent of each connection that sent more than one command, and
/// sets it on the connection; a failure is said on stderr. Returns the keys an interrupted
/// equivalent removed.
async fn measure_equivalents(
    conns: &mut [shared::observe::ObservedConnection],
    target: &pipescope::target::RedisTarget,
    network: shared::Network,
    stop: &Stop,
) -> Vec<pipescope::cancel::Removed> {
    use pipescope::observe::equivalent;
    let proxies = pipescope::net::Proxies::default();
    let measured: Vec<_> = conns.iter().filter(|c| c.counts.commands > 1).collect();
    let n = measured.len();
    let mut equivalents = Vec::new();
    for (k, c) in measured.into_iter().enumerate() {
        if stop.signal().is_some() {
            break;
        }
        let plan = match equivalent::plan(c, network) {
            Ok(plan) => plan,
            Err(why) => {
                eprintln!("connection {}: {why}", c.id);
                continue;
            }
        };
        eprintln!(
            "measuring the pipelined equivalent of connection {} ({}/{n}): {} {}s in batches of {}",
            c.id,
            k + 1,
            shared::digits::group(plan.spec.count),
            plan.spec.command.name(),
            shared::digits::group(u64::from(equivalent::BATCH))
        );
        let run_id = pipescope::engine::keys::first_run_id();
        equivalents.push((
            c.id,
            run_id,
            equivalent::measure(target, &proxies, plan, run_id, stop.flag()).await,
        ));
    }
    let mut interrupted = Vec::new();
    for (id, run_id, e) in equivalents {
        match e {
            Ok(e) => {
                if let Some(c) = conns.iter_mut().find(|c| c.id == id) {
                    c.equivalent = Some(e);
                }
            }
            Err(e) => match pipescope::cancel::Removed::of(run_id, &e) {
                Some(removed) => interrupted.push(removed),
                None => eprintln!("connection {id}: the pipelined equivalent failed: {e}"),
            },
        }
    }
    interrupted
}

/// Where `--html` writes, and the page it writes, checked before anything is observed.
pub(super) fn html_to(
    args: &ObserveArgs,
) -> anyhow::Result<Option<(super::record_to::RecordTo, pipescope::html_file::Page)>> {
    let Some(to) = &args.html else {
        return Ok(None);
    };
    Ok(Some((
        super::record_to::RecordTo::prepare(to, "--html")?,
        pipescope::html_file::Page::built().context("--html")?,
    )))
}

/// Says where the file went and how large it is.
pub(super) fn wrote_html(to: &super::record_to::RecordTo, bytes: usize) {
    eprintln!(
        "wrote {} ({}): one HTML file with the page and the connections inside; it opens from disk in a browser, with no server and no network",
        to.path.display(),
        super::record_to::kilobytes(bytes)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observe_forwards_to_the_named_redis_else_the_local_one_else_refuses() {
        let unasked =
            || panic!("the usual address is asked only without --redis-url or --own-redis");
        assert_eq!(forward_to(true, false, unasked).unwrap(), Forward::Named);
        assert_eq!(forward_to(false, true, unasked).unwrap(), Forward::Own);
        assert_eq!(forward_to(false, false, || true).unwrap(), Forward::Default);
        let err = forward_to(false, false, || false).unwrap_err().to_string();
        assert!(err.contains("nothing answers at 127.0.0.1:6379"), "{err}");
        assert!(
            err.contains("--redis-url") && err.contains("--own-redis"),
            "{err}"
        );
    }
}
