//! `pipescope serve` (the default): the page, and the runs it starts.

use std::net::{IpAddr, SocketAddr};

use anyhow::Context;
use tokio::net::TcpListener;

use pipescope::cancel::Stop;
use pipescope::server::hub::Hub;

use super::args::{NetworkArgs, TargetArgs};
use super::output::say;

#[derive(clap::Args, Clone)]
pub struct ServeArgs {
    /// Address to listen on. Loopback by default (the page controls real Redis runs); with
    /// --lab, every interface.
    #[arg(long, env = "PIPESCOPE_LISTEN")]
    pub listen: Option<IpAddr>,
    /// Port to listen on; 0 picks a free one. If the default is taken, a free one is used.
    #[arg(long, default_value_t = 8080, env = "PIPESCOPE_PORT")]
    pub port: u16,
    /// The page's initial network (each run crosses the one its own spec names).
    #[command(flatten)]
    pub network: NetworkArgs,
    /// The presenter token: needed to start or cancel runs when listening beyond loopback
    /// (viewers only watch). Generated and printed if not given.
    #[arg(long, env = "PIPESCOPE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Where the page's observe mode (/observe) listens for applications when the presenter
    /// starts it. If that port is taken, a free loopback port is used and the page says so.
    #[arg(long, default_value_t = pipescope::server::hub::DEFAULT_OBSERVE_LISTEN, env = "PIPESCOPE_OBSERVE_LISTEN")]
    pub observe_listen: SocketAddr,
    /// Run a lab: the room joins from their own browsers (a join link, no install) and
    /// queues their own runs on this Redis, one measured at a time; the presenter's page
    /// (its link printed, with the token) follows the room and pools its results.
    #[arg(long)]
    pub lab: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

impl ServeArgs {
    /// Where to listen: as given, else every interface for a lab and loopback otherwise.
    pub fn listen_on(&self) -> IpAddr {
        self.listen.unwrap_or(if self.lab {
            IpAddr::from([0, 0, 0, 0])
        } else {
            IpAddr::from([127, 0, 0, 1])
        })
    }
}

pub async fn serve(args: ServeArgs, stop: Stop) -> anyhow::Result<()> {
    let redis = args.target.connect().await?;
    redis.target.refuse_cluster_node().await?;
    let listen_on = args.listen_on();
    let listener = listen(listen_on, args.port).await?;
    let local = listener.local_addr()?;
    let shown = shown(local);
    // The hub first (it sweeps old keys and starts the default network's proxy): the address
    // is announced once everything behind it is ready, so nobody races its start-up.
    // The network is the page's initial choice; each run crosses the one its own spec names.
    let network = args.network.network();
    let hub = Hub::with_network(redis.target.clone(), redis.redis_version.clone(), network)
        .await?
        .observe_on(args.observe_listen)
        .redis_is_own(redis.own);
    say(format_args!(
        "pipescope {} — Redis {} at {}",
        env!("CARGO_PKG_VERSION"),
        redis.redis_version,
        redis.target.shown()
    ));
    // A lab always has a presenter's token, wherever it listens.
    let token = presenter_token(listen_on, args.token, args.lab);
    let hub = match &token {
        Some(t) => hub.require_token(t.clone()),
        None => hub,
    };
    let lab = match (&token, args.lab) {
        (Some(t), true) => Some(super::lab::start(
            hub.clone(),
            t.clone(),
            listen_on,
            local.port(),
            shown,
        )),
        _ => None,
    };
    match &token {
        Some(_) if lab.is_some() => {}
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
    let (shutdown, removed) = hub.shut_down_on(stop);
    match lab {
        Some(lab) => pipescope::server::serve_lab(listener, hub, lab, shutdown).await?,
        None => pipescope::server::serve(listener, hub, shutdown).await?,
    }
    say(format_args!("pipescope stopped"));
    pipescope::cancel::interrupted(removed.await.unwrap_or_default())
}

/// Binds `listen:port`; if that is the default port and it is taken, a free port instead.
pub async fn listen(listen: IpAddr, port: u16) -> anyhow::Result<TcpListener> {
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

/// The address to open in a browser: loopback when listening on every interface.
pub fn shown(local: SocketAddr) -> SocketAddr {
    if local.ip().is_unspecified() {
        SocketAddr::new([127, 0, 0, 1].into(), local.port())
    } else {
        local
    }
}

/// The token that controls runs: the one given, else a fresh one when listening beyond
/// loopback or running a lab, else none. On loopback only this machine can connect; beyond
/// it, a room can: then control needs the token and everyone else watches.
fn presenter_token(listen: IpAddr, given: Option<String>, lab: bool) -> Option<String> {
    match (listen.is_loopback() && !lab, given) {
        (_, Some(t)) => Some(t),
        (false, None) => Some(
            (0..24)
                .map(|_| fastrand::alphanumeric())
                .collect::<String>(),
        ),
        (true, None) => None,
    }
}
