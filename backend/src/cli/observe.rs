//! `pipescope observe`: your application's own connections, forwarded to Redis unchanged
//! through an observing proxy, and per connection whether, and how, it pipelines.

use std::net::SocketAddr;

use clap::ValueEnum;

use pipescope::cancel::{OnSignal, Stop};

use anyhow::Context;

use super::args::{NetworkArgs, TargetArgs};
use super::output::say;

#[derive(clap::Args)]
pub struct ObserveArgs {
    /// Where your application connects instead of Redis (loopback unless told otherwise).
    #[arg(long, default_value = "127.0.0.1:6380")]
    pub listen: SocketAddr,
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
    /// With --pcap or --capture: the port Redis listens on (6379 unless told; repeat for
    /// several).
    #[arg(long = "redis-port", value_name = "PORT", requires = "from_capture")]
    pub redis_port: Vec<u16>,
    /// Also write what was observed as one HTML file: the page's observe view with the
    /// connections inside (their verdicts, time split, what would help, equivalents, the latest
    /// ones' requests), which opens from disk in a browser with no server and no network. Not
    /// with --capture.
    #[arg(long, value_name = "FILE", conflicts_with = "capture")]
    pub html: Option<std::path::PathBuf>,
    /// Replace the client addresses and connection names by numbers (`client 3`, `name 1`) in
    /// the report and the HTML file, to hand them over. Not with --capture.
    #[arg(long, conflicts_with = "capture")]
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

/// `observe` as a proxy in front of Redis (a capture file is `observe_pcap`'s, a live capture
/// `observe_live`'s).
pub async fn observe(args: ObserveArgs, stop: Stop) -> anyhow::Result<()> {
    let html = html_to(&args)?;
    let redis = args.target.connect().await?;
    let target = redis.target.clone();
    use pipescope::observe::{Observer, report};
    let network = args.network.network();
    // Ctrl-C ends the observing: `Stop` passes it over to here (`Cli::on_signal`).
    let shutdown = stop.passed_over();
    let observer = Observer::start(args.listen, &target, network).await?;
    match observer.hop_us() {
        Some(hop) => eprintln!(
            "observing: the observer's two hops (client → proxy → client) cost ~{} a round trip, measured at start; reported as their own part, not the client's time",
            shared::observe::duration(hop)
        ),
        None => eprintln!(
            "observing: the observer's two hops could not be measured at start: the client's own time includes them"
        ),
    }
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
    // Machine-readable: the address, on a line of its own for scripts and tests. On stderr:
    // stdout holds the report alone (JSON only, with --json).
    eprintln!("listening {}", observer.addr());
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
        let what = format!(
            "{} connections through the observing proxy in front of Redis {} at {}{}",
            conns.len(),
            redis.redis_version,
            target.redacted(),
            if network.is_loopback() {
                String::new()
            } else {
                format!(", over {}", network.label())
            },
        );
        let welcome = shared::ServerMsg::Welcome {
            protocol: shared::PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            redis_version: redis.redis_version.clone(),
            target: target.redacted(),
            limits: shared::Limits::DEFAULT,
            network,
            can_control: false,
            busy: false,
            recent: Vec::new(),
            observing: None,
            // Worded for the page, as the hub words them.
            observed: conns.into_iter().map(|c| c.with_words()).collect(),
            replay: None,
        };
        let timelines: Vec<_> = timelines
            .into_iter()
            .map(shared::ServerMsg::ObservedTimeline)
            .collect();
        let messages: Vec<_> = std::iter::once(&welcome).chain(&timelines).collect();
        let text = pipescope::html_file::of_observation(&page, &messages, &to.file_name(), &what);
        to.write_text(&text)?;
        wrote_html(&to, text.len());
    }
    match stop.signal() {
        Some(_) => Err(pipescope::cancel::Interrupted(interrupted).into()),
        None => Ok(()),
    }
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
            shared::observe::group(plan.spec.count),
            plan.spec.command.name(),
            shared::observe::group(u64::from(equivalent::BATCH))
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

/// `observe --pcap FILE`: the report from a capture; notes (resynchronisations, gaps) on
/// stderr, and what the figures are on the report's first line (stderr with --json).
pub(super) fn observe_pcap(args: &ObserveArgs, path: &std::path::Path) -> anyhow::Result<()> {
    use pipescope::capture::Source;
    let html = html_to(args)?;
    let mut seen = pipescope::observe::captured::observe(Source::File(path), &redis_ports(args))?;
    if args.redact {
        pipescope::redact::redact(&mut seen.connections, &mut seen.notes);
    }
    print_captured(args, &seen);
    if let Some((to, page)) = html {
        let read = pipescope::capture_upload::capture_read(seen);
        let text = pipescope::html_file::of_capture(&page, &read, &to.file_name());
        to.write_text(&text)?;
        wrote_html(&to, text.len());
    }
    Ok(())
}

/// Where `--html` writes, and the page it writes, checked before anything is observed.
fn html_to(
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
fn wrote_html(to: &super::record_to::RecordTo, bytes: usize) {
    eprintln!(
        "wrote {} ({}): one HTML file with the page and the connections inside; it opens from disk in a browser, with no server and no network",
        to.path.display(),
        super::record_to::kilobytes(bytes)
    );
}

/// `observe --capture IFACE`: a live capture until --duration or Ctrl-C, progress on stderr
/// every few seconds, then the report as `observe_pcap` prints it.
pub(super) async fn observe_live(
    args: &ObserveArgs,
    interface: &str,
    stop: Stop,
) -> anyhow::Result<()> {
    use pipescope::capture::{Live, Source};
    use std::sync::atomic::Ordering;
    let ports = redis_ports(args);
    let mut live = Live::open(interface, &ports)?;
    let (stopper, tally) = (live.stopper(), live.tally());
    // Machine-readable: scripts and tests wait for "capturing on" before sending traffic.
    eprintln!(
        "capturing on {interface} ({}); {}",
        live.filter(),
        match args.duration {
            Some(d) => format!("for {}", shared::observe::duration(d.as_secs_f64() * 1e6)),
            None => "until Ctrl-C".into(),
        }
    );
    let mut capture = tokio::task::spawn_blocking(move || {
        pipescope::observe::captured::observe(Source::Live(&mut live), &ports)
    });
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
            eprintln!(
                "capturing: {} packets, {} connections",
                shared::observe::group(tally.packets.load(Ordering::Relaxed)),
                shared::observe::group(tally.connections.load(Ordering::Relaxed)),
            );
        }
    };
    // Ctrl-C ends the capture: `Stop` passes it over to here (`Cli::on_signal`).
    let ended = tokio::select! {
        _ = deadline => None,
        _ = stop.passed_over() => {
            eprintln!("capturing: stopped by signal");
            None
        }
        _ = progress => None,
        ended = &mut capture => Some(ended),
    };
    stopper.store(true, Ordering::SeqCst);
    // A second Ctrl-C while the buffer is read exits at once: nothing is in Redis.
    stop.set(OnSignal::CancelRuns);
    let seen = match ended {
        Some(ended) => ended,
        None => capture.await,
    }??;
    print_captured(args, &seen);
    Ok(())
}

/// The ports Redis listens on, as --redis-port says (6379 without it).
fn redis_ports(args: &ObserveArgs) -> Vec<u16> {
    match args.redis_port.as_slice() {
        [] => vec![6379],
        ports => ports.to_vec(),
    }
}

/// A capture's report: notes on stderr, the report on stdout headed by what its figures are
/// (that line on stderr with --json, so stdout holds JSON only).
fn print_captured(args: &ObserveArgs, seen: &pipescope::observe::captured::FromCapture) {
    use pipescope::observe::{captured, report};
    let label = captured::label(&seen.facts);
    for note in &seen.notes {
        eprintln!("pipescope: {note}");
    }
    let conns = &seen.connections;
    let format = if args.json {
        ObserveFormat::Json
    } else {
        args.format
    };
    let out = match format {
        ObserveFormat::Table => format!("{label}\n{}", report::table(conns)),
        ObserveFormat::Json => {
            eprintln!("{label}");
            report::json(conns)
        }
        ObserveFormat::Markdown => format!("{label}\n\n{}", report::markdown(conns)),
    };
    say(format_args!("{}", out.trim_end()));
}
