//! The command line: one job per subcommand, each with only its own flags, as cargo's and
//! git's are. `pipescope` alone serves the page.
//!
//! # Layout
//!
//! A file (or a directory) per job, each parsing its flags, calling its room in the library
//! (`pipescope::server`, `bench`, `versus`, `cost`, `observe`, `clean`) and printing what it
//! returns:
//!
//! - `serve`: the page (the default).
//! - `lab`: `serve --lab`'s part: the lab beside the page, and the links it prints.
//! - `bench`: runs, headless.
//! - `versus`: our engine beside redis-benchmark.
//! - `cost`: a directory, a file per cost that needs more than the shared flags.
//! - `observe`: a directory, its arguments and dispatch in `mod.rs`, a file per vantage: the
//!   proxy, a capture (`--pcap`, `--capture`), a client's own syscalls (`--pid`, `-- COMMAND`).
//! - `replay`: the page from a recording.
//! - `clean`: what runs left in Redis, removed.
//!
//! And what the jobs share:
//!
//! - `args`: argument groups several jobs share, defined once (where Redis is, the network,
//!   rounds, `--json`).
//! - `target`: where Redis is, turned into a Redis to use: the user's, or one of pipescope's
//!   own, stopped when the job ends.
//! - `record_to`: where `bench --record`, `--html` and `replay --html` write: checked before
//!   the runs, written whole after them.
//! - `output`: stdout for people, or JSON lines; notes go to stderr.

mod args;
mod bench;
mod clean;
mod cost;
mod lab;
mod observe;
mod output;
mod record_to;
mod replay;
mod serve;
mod target;
mod versus;

use clap::{Parser, Subcommand};

use pipescope::cancel::{OnSignal, Stop};

pub use output::said_once;

#[derive(Parser)]
#[command(
    version,
    about = "Makes Redis pipelining visible: real runs, measured, streamed to a page"
)]
pub struct Cli {
    /// Serving is the default, so its options work without `serve` too
    /// (`pipescope --delay-us 250`).
    #[command(flatten)]
    serve: serve::ServeArgs,
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the page (the default).
    Serve(serve::ServeArgs),
    /// Run the engine headless and print the results.
    Bench(bench::BenchArgs),
    /// Our engine beside another tool on the same server, shaped alike.
    #[command(subcommand)]
    Versus(versus::Versus),
    /// What one thing costs: TLS, a cluster, observe mode's proxy, a live capture or its
    /// memory, the probe's held replies, tracing a client's syscalls (--pid), reading a
    /// capture file (beside tshark), one HTML file's size and load time, and how close the
    /// delay line comes to its promise.
    #[command(subcommand)]
    Cost(cost::Cost),
    /// Listen for your application's Redis connections, forward them to Redis unchanged, and
    /// say per connection whether, and how, it pipelines (or read them from a capture file,
    /// --pcap, or a live capture, --capture).
    Observe(observe::ObserveArgs),
    /// Serve the page from a recording (`bench --record FILE`, or the page's "Save session"):
    /// its runs, timelines and charts, with no Redis at all. Nothing can run.
    Replay(replay::ReplayArgs),
    /// Remove the keys pipescope's runs left in Redis (after a second Ctrl-C, or a crash):
    /// one run's, or every `pipescope:<run>:…` key; on a cluster, from every master.
    Clean(clean::CleanArgs),
}

impl Cli {
    /// What a first Ctrl-C or SIGTERM does, for the jobs that write keys into the user's
    /// Redis; `None` leaves the default (the process ends; a redis-server of its own dies
    /// with it).
    pub fn on_signal(&self) -> Option<OnSignal> {
        match &self.command {
            None | Some(Cmd::Serve(_)) => Some(OnSignal::ShutDown),
            // Until it stops observing (capturing live, reading a capture), its own handler
            // owns Ctrl-C.
            Some(Cmd::Observe(_)) => Some(OnSignal::Ignore),
            Some(Cmd::Bench(_) | Cmd::Cost(cost::Cost::Accuracy(_))) => Some(OnSignal::CancelRuns),
            Some(Cmd::Versus(_) | Cmd::Cost(_) | Cmd::Replay(_) | Cmd::Clean(_)) => None,
        }
    }

    /// `pipescope clean` against the job's Redis, for the message of a second Ctrl-C.
    pub fn clean_command(&self) -> pipescope::clean::Command {
        let target = match &self.command {
            None => &self.serve.target,
            Some(Cmd::Serve(a)) => &a.target,
            Some(Cmd::Bench(a)) => &a.target,
            Some(Cmd::Observe(a)) => return a.clean_command(),
            Some(Cmd::Cost(cost::Cost::Accuracy(a))) => &a.target,
            Some(Cmd::Clean(a)) => &a.target,
            Some(Cmd::Versus(_) | Cmd::Cost(_) | Cmd::Replay(_)) => {
                return pipescope::clean::Command::default();
            }
        };
        target.clean_command()
    }
}

/// Runs the job. `stop`: the signal handlers `Cli::on_signal` asked for.
pub async fn run(cli: Cli, stop: Option<Stop>) -> anyhow::Result<()> {
    let handlers = || stop.clone().expect("handlers installed for this job");
    let cancel = || stop.as_ref().map(Stop::flag).unwrap_or_default();
    match cli.command.unwrap_or(Cmd::Serve(cli.serve)) {
        Cmd::Serve(args) => serve::serve(args, handlers()).await,
        Cmd::Bench(args) => bench::bench(args, cancel()).await,
        Cmd::Versus(job) => versus::versus(job).await,
        Cmd::Cost(job) => cost::cost(job, cancel()).await,
        Cmd::Observe(args) => observe::observe(args, handlers()).await,
        Cmd::Replay(args) => replay::replay(args).await,
        Cmd::Clean(args) => clean::clean(args).await,
    }
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
