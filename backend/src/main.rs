//! `pipescope`: one job per subcommand (`cli`). Without one it serves the page.

mod cli;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "pipescope=info".into()),
        )
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal: a log written to a file or a pipe stays
        // plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = cli::Cli::parse();
    // Before anything is written: from here a signal stops runs and removes their keys.
    let stop = match cli.on_signal() {
        None => None,
        Some(on) => match pipescope::cancel::Stop::install(on, cli.clean_command()) {
            Ok(stop) => Some(stop),
            Err(e) => {
                eprintln!("pipescope: cannot handle Ctrl-C: {e}");
                return std::process::ExitCode::FAILURE;
            }
        },
    };
    let result = cli::run(cli, stop.clone()).await;
    pipescope::cancel::exit(result, stop.as_ref(), cli::said_once)
}
