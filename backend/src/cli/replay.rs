//! `pipescope replay FILE`: the page served from a recording, with no Redis at all.

use std::net::IpAddr;

use anyhow::Context;

use super::output::say;
use super::record_to::{RecordTo, shown_name, write_html};
use super::serve::{listen, shown};

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The recording to show (a .pipescope.json file).
    pub file: std::path::PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", env = "PIPESCOPE_LISTEN")]
    pub listen: IpAddr,
    /// Port to listen on; 0 picks a free one. If the default is taken, a free one is used.
    #[arg(long, default_value_t = 8080, env = "PIPESCOPE_PORT")]
    pub port: u16,
    /// Instead of serving, write the recording as one HTML file: the page with the runs
    /// inside, which opens from disk in a browser with no server and no network.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
}

pub async fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    // Read before listening: a broken or newer file is a message and an exit, not a blank page.
    let recording = pipescope::server::replay::read(&args.file)?;
    if let Some(path) = &args.html {
        let to = RecordTo::prepare(path, "--html")?;
        let page = pipescope::html_file::Page::built().context("--html")?;
        return write_html(&to, &page, recording);
    }
    let file = shown_name(&args.file);
    let listener = listen(args.listen, args.port).await?;
    let shown = shown(listener.local_addr()?);
    let shutdown = super::shutdown_signal()?;
    say(format_args!(
        "pipescope {} — replaying {file}: {} runs saved {} by pipescope {}, measured against Redis {} at {}; no Redis is used now",
        env!("CARGO_PKG_VERSION"),
        recording.runs.len(),
        recording.saved_at,
        recording.server_version,
        recording.redis_version,
        recording.target,
    ));
    // Where it was recorded: a tour's runs open on the tour, step by step.
    let path = if recording.tour.is_empty() {
        ""
    } else {
        "tour"
    };
    say(format_args!("open http://{shown}/{path}"));
    pipescope::server::replay::serve(listener, recording, &file, shutdown).await?;
    say(format_args!("pipescope stopped"));
    Ok(())
}
