//! The command line: one job per subcommand, each with only its own flags, as cargo's and
//! git's are. `pipescope` alone serves the page.
//!
//! # Layout
//!
//! - `args`: argument groups several jobs share, defined once (where Redis is, the network,
//!   rounds, `--json`); `target` turns the first into a Redis to use.
//! - `legacy`: the previous release's spellings, rewritten to today's with a note.
//! - `output`: stdout for people, or JSON lines; notes go to stderr.
//! - A file per job: `serve`, `bench` (runs), `versus` (beside redis-benchmark), `cost`
//!   (what TLS, a cluster, the observer and the delay line cost), `observe`, `replay`.

mod args;
mod bench;
mod cost;
mod legacy;
mod observe;
mod output;
mod record_to;
mod replay;
mod serve;
mod target;
mod versus;

use clap::{Parser, Subcommand};

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
    /// What one thing costs: TLS, a cluster, observe mode's proxy or its memory, and how
    /// close the delay line comes to its promise.
    #[command(subcommand)]
    Cost(cost::Cost),
    /// Listen for your application's Redis connections, forward them to Redis unchanged, and
    /// say per connection whether, and how, it pipelines.
    Observe(observe::ObserveArgs),
    /// Serve the page from a recording (`bench --record FILE`, or the page's "Save session"):
    /// its runs, timelines and charts, with no Redis at all. Nothing can run.
    Replay(replay::ReplayArgs),
}

/// The command line, with the previous release's spellings rewritten (a note for each).
pub fn parse() -> Cli {
    let args: Option<Vec<String>> = std::env::args_os()
        .map(|a| a.into_string().ok())
        .collect();
    let Some(args) = args else {
        // Not UTF-8: nothing to rewrite; clap says what it makes of it.
        return Cli::parse();
    };
    let (args, notes) = legacy::rewrite(args);
    for note in notes {
        eprintln!("pipescope: note: {note}");
    }
    Cli::parse_from(args)
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command.unwrap_or(Cmd::Serve(cli.serve)) {
        Cmd::Serve(args) => serve::serve(args).await,
        Cmd::Bench(args) => bench::bench(args).await,
        Cmd::Versus(job) => versus::versus(job).await,
        Cmd::Cost(job) => cost::cost(job).await,
        Cmd::Observe(args) => observe::observe(args).await,
        Cmd::Replay(args) => replay::replay(args).await,
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
