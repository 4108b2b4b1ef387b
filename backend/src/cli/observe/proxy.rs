//! `pipescope observe` through the proxy (the default vantage): your application's own
//! connections, forwarded to Redis unchanged through an observing proxy, and per connection
//! whether, and how, it pipelines; with `--probe`, replies held back to see whether it waits,
//! and after observing, what each connection's commands cost pipelined (its equivalent).

use std::net::SocketAddr;

use pipescope::cancel::{OnSignal, Stop};
use pipescope::observe::{Observer, report};
use pipescope::syscalls::Tracer;
use pipescope::target::RedisTarget;
use shared::observe::ObservedConnection;

use super::super::output::say;
use super::super::target::Connected;
use super::args::{DEFAULT_REDIS, ObserveArgs, ObserveFormat};
use super::html::{html_to, wrote_html};

/// `observe` as a proxy in front of Redis, until --duration, Ctrl-C or the traced command's
/// exit; then the report, the equivalents measured first (unless --no-equivalent).
pub(super) async fn observe(args: ObserveArgs, stop: Stop) -> anyhow::Result<()> {
    let html = html_to(&args)?;
    let redis = connect(&args).await?;
    let target = redis.target.clone();
    let network = args.network.network();
    let observer = start_observer(&args, &target, network).await?;
    let tracer = super::syscalls::start(args.traced())?;
    watch(&observer, tracer.as_ref(), args.duration, &stop).await;
    let mut conns = observer.connections().snapshot();
    if let Some(t) = tracer {
        let redis_port = target
            .addr()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok());
        super::syscalls::finish_into(t, &mut conns, &Vec::from_iter(redis_port))?;
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
    let out = match args.chosen_format() {
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

/// The Redis the proxy forwards to, connected, and said on stderr with its version and keys:
/// a cluster refused (its clients would go around the proxy).
async fn connect(args: &ObserveArgs) -> anyhow::Result<Connected> {
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
    let target = &redis.target;
    let keys = match key_count(target).await {
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
    Ok(redis)
}

/// The observing proxy, started in front of `target` and said on stderr: what the probe may
/// hold, what the observer's hops cost, where to point the application and for how long.
async fn start_observer(
    args: &ObserveArgs,
    target: &RedisTarget,
    network: shared::Network,
) -> anyhow::Result<Observer> {
    let listen = args.listen.unwrap_or(DEFAULT_LISTEN);
    let observer = Observer::start_probing(listen, target, network, args.probe).await?;
    if args.probe {
        eprintln!("{}", probe_bounds());
    }
    say_hops(&observer);
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
    Ok(observer)
}

/// What the observer's hops cost, measured at start, on stderr.
fn say_hops(observer: &Observer) {
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
}

/// Observes until `duration` passes, a signal comes (`Stop` passes Ctrl-C over to here:
/// `Cli::on_signal`) or the traced command exits (its last bytes through the proxy, and its
/// connections' ends, awaited a second); the counts so far on stderr every 5 s.
async fn watch(
    observer: &Observer,
    tracer: Option<&Tracer>,
    duration: Option<std::time::Duration>,
    stop: &Stop,
) {
    let deadline = async {
        match duration {
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
        match tracer {
            Some(t) => {
                t.command_exited().await;
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
        _ = stop.passed_over() => eprintln!("observing: stopped by signal"),
        _ = progress => {},
        _ = command_exited => {},
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
fn say_probed(conns: &[ObservedConnection]) {
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

/// Measures the pipelined equivalent of each connection that sent more than one command, and
/// sets it on the connection; a failure is said on stderr. Returns the keys an interrupted
/// equivalent removed.
async fn measure_equivalents(
    conns: &mut [ObservedConnection],
    target: &RedisTarget,
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
async fn key_count(target: &RedisTarget) -> Option<u64> {
    let mut con = target.admin_connection().await.ok()?;
    redis::cmd("DBSIZE").query_async(&mut con).await.ok()
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
