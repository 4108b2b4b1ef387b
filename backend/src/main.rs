//! `pipescope`: one job per subcommand (`cli`). Without one it serves the page.

mod cli;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "pipescope=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli::run(cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pipescope: {}", cli::said_once(&e));
            std::process::ExitCode::FAILURE
        }
    }
}
