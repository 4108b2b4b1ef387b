//! `pipescope observe`'s flags, and what they say: which process is traced, whether the
//! proxy runs, the report's format.

use std::net::SocketAddr;

use clap::ValueEnum;

use super::super::args::{NetworkArgs, TargetArgs};

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
    pub(super) fn traced(&self) -> Option<pipescope::syscalls::Target> {
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
    pub(super) fn syscalls_alone(&self) -> bool {
        let wants_proxy = self.listen.is_some()
            || self.target.redis_url.is_some()
            || self.own_redis
            || self.probe
            || self.html.is_some();
        self.no_proxy || (self.traced().is_some() && !wants_proxy)
    }

    /// The report's format: `--format`, or JSON with `--json`.
    pub(super) fn chosen_format(&self) -> ObserveFormat {
        if self.json {
            ObserveFormat::Json
        } else {
            self.format
        }
    }

    /// The ports Redis listens on, as --redis-port says; none: Redis is found in the capture
    /// (or, for the syscalls alone, 6379).
    pub(super) fn redis_ports(&self) -> &[u16] {
        &self.redis_port
    }

    /// `pipescope clean` against the Redis the proxy forwards to (its equivalents' keys).
    pub fn clean_command(&self) -> pipescope::clean::Command {
        match (&self.target.redis_url, self.own_redis) {
            (None, false) => TargetArgs {
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

/// `--probe` holds replies in the observing proxy: a capture, file or live, cannot.
pub(super) fn refuse_probe(args: &ObserveArgs) -> anyhow::Result<()> {
    if args.probe {
        anyhow::bail!(
            "--probe holds replies back in pipescope's observing proxy, and a capture cannot hold replies: drop --probe to read the capture, or point your application at the proxy (observe without --pcap or --capture) to probe it"
        );
    }
    Ok(())
}
