//! `pipescope cost html`: what one HTML file costs. The seed's experiment (`bench --mode
//! compare`: --count SETs sequentially and pipelined at --batch) on a redis-server of our own,
//! written with `bench --html` as a child process, exactly as a user would; then its size,
//! part by part, against the target, and the time from navigation until its timeline is first
//! drawn with the runs, opened from disk (`file://`) in headless Chromium, --loads times,
//! each in a fresh profile. Beside it, the same browser's time to run a blank page's first
//! script: the part of the load that is the browser's own.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::io::BufReader;

use pipescope::local_redis::LocalRedis;
use pipescope::median::median;

use super::super::args::JsonArg;
use super::super::output::{met, say};

/// The size the issue asks of the seed's experiment as one file.
const TARGET_BYTES: u64 = 1_000_000;
/// The time to interactive from disk it asks for (headless Chromium, this machine).
const TARGET_MS: f64 = 1_500.0;

#[derive(clap::Args)]
pub struct HtmlArgs {
    /// SETs per run.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// The pipelined run's batch (with --sweep, the largest batch).
    #[arg(long, default_value_t = 1000)]
    pub batch: u32,
    /// A batch sweep (`bench --mode sweep`: batches 1, 2, 5, … up to --batch, --count SETs
    /// each) instead of the seed's comparison.
    #[arg(long)]
    pub sweep: bool,
    /// Loads timed, each in a fresh browser profile.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub loads: u32,
    /// Keep the file here (default: a temporary directory, removed after).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub output: JsonArg,
}

/// What was measured.
#[derive(Debug, serde::Serialize)]
struct HtmlCost {
    /// `compare` (sequential, then pipelined at `batch`) or `sweep` (batches up to `batch`).
    mode: &'static str,
    count: u64,
    batch: u32,
    bytes: u64,
    /// The packed WASM's and data's base64 text, and everything else (CSS, JS, markup).
    wasm_bytes: usize,
    data_bytes: usize,
    rest_bytes: usize,
    target_bytes: u64,
    loads: usize,
    /// Median ms from navigation until the timeline was first drawn with the runs.
    interactive_ms: f64,
    interactive_ms_each: Vec<f64>,
    /// Median ms from navigation until a blank page's first script ran.
    blank_ms: f64,
    target_ms: f64,
}

/// Logs the moment the timeline publishes its first frame with runs (`window.__pipescope`).
const PROBE: &str = "<script>{let v;Object.defineProperty(window,'__pipescope',{configurable:true,\
get(){return v},set(x){v=x;if(!window.__shown&&x&&x.runs&&x.runs.length){window.__shown=1;\
console.log('pipescope-interactive '+performance.now())}}})}</script>";

const BLANK: &str = "<!doctype html><meta charset=\"utf-8\"><title>blank</title>\
<script>console.log('pipescope-interactive '+performance.now())</script>";

pub async fn html(args: HtmlArgs) -> anyhow::Result<()> {
    let redis = LocalRedis::start().context("starting a redis-server for the experiment")?;
    let dir = tempfile::tempdir().context("a temporary directory")?;
    let file = args
        .out
        .clone()
        .unwrap_or_else(|| dir.path().join("runs.html"));
    let (mode, batch_flag) = match args.sweep {
        true => ("sweep", "--max-batch"),
        false => ("compare", "--batch"),
    };
    eprintln!(
        "bench --mode {mode} --count {} {batch_flag} {} --html {}",
        args.count,
        args.batch,
        file.display()
    );
    // Its table goes to our stderr: stdout is this job's.
    let table = std::io::stderr().as_fd().try_clone_to_owned()?;
    let status = std::process::Command::new(std::env::current_exe()?)
        .args(["bench", "--mode", mode, "--count", &args.count.to_string()])
        .args([
            batch_flag,
            &args.batch.to_string(),
            "--redis-url",
            &redis.url(),
        ])
        .arg("--html")
        .arg(&file)
        .env_remove("REDIS_URL")
        .stdout(Stdio::from(table))
        .status()
        .context("running pipescope bench")?;
    anyhow::ensure!(status.success(), "pipescope bench --html failed ({status})");
    drop(redis);

    let html = std::fs::read_to_string(&file)?;
    let bytes = html.len() as u64;
    let packed = |id: &str| -> usize {
        let at = html.find(&format!("id=\"{id}\"")).unwrap_or(0);
        let start = at + html[at..].find('>').map_or(0, |e| e + 1);
        html[start..].find("</script>").unwrap_or(0)
    };
    let (wasm_bytes, data_bytes) = (packed("pipescope-wasm"), packed("pipescope-data"));
    let probed = dir.path().join("probed.html");
    std::fs::write(
        &probed,
        html.replacen("<head>", &format!("<head>{PROBE}"), 1),
    )?;
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, BLANK)?;

    let mut each = Vec::new();
    let mut blank_each = Vec::new();
    for load in 0..args.loads {
        let ms = first_drawn(&probed)
            .await
            .with_context(|| format!("load {}", load + 1))?;
        let floor = first_drawn(&blank).await.context("the blank page")?;
        eprintln!(
            "load {}: {ms:.0} ms (a blank page: {floor:.0} ms)",
            load + 1
        );
        each.push(ms);
        blank_each.push(floor);
    }
    let cost = HtmlCost {
        mode,
        count: args.count,
        batch: args.batch,
        bytes,
        wasm_bytes,
        data_bytes,
        rest_bytes: html.len() - wasm_bytes - data_bytes,
        target_bytes: TARGET_BYTES,
        loads: each.len(),
        interactive_ms: median(each.clone()).unwrap_or(f64::NAN),
        interactive_ms_each: each,
        blank_ms: median(blank_each).unwrap_or(f64::NAN),
        target_ms: TARGET_MS,
    };
    if args.output.json {
        say(format_args!("{}", serde_json::to_string(&cost)?));
        return Ok(());
    }
    say(format_args!(
        "{} as one HTML file: {} bytes ({} the target of {} bytes): the WASM {} bytes, the data {} bytes (gzip, base64), the rest {} bytes",
        match args.sweep {
            true => format!("{} SETs at each batch up to {}", cost.count, cost.batch),
            false => format!(
                "{} SETs sequentially and pipelined at batch {}",
                cost.count, cost.batch
            ),
        },
        cost.bytes,
        met(cost.bytes <= TARGET_BYTES),
        TARGET_BYTES,
        cost.wasm_bytes,
        cost.data_bytes,
        cost.rest_bytes,
    ));
    say(format_args!(
        "opened from disk in headless Chromium, from navigation to the timeline first drawn with the runs: median {:.0} ms of {} loads, each in a fresh profile ({} the target of {:.0} ms); a blank page's first script: {:.0} ms",
        cost.interactive_ms,
        cost.loads,
        met(cost.interactive_ms <= TARGET_MS),
        TARGET_MS,
        cost.blank_ms,
    ));
    Ok(())
}

/// Opens `page` from disk in a fresh headless Chromium; the ms it logged (`pipescope-interactive
/// <ms>`), read from the browser's log.
async fn first_drawn(page: &Path) -> anyhow::Result<f64> {
    let profile = tempfile::tempdir()?;
    let mut child = tokio::process::Command::new(chromium())
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("starting chromium (apt-get install chromium)")?;
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let said = pipescope::child_line::first(&mut stderr, Duration::from_secs(60), |line| {
        let at = line.find("\"pipescope-interactive ")?;
        line[at + 23..].split('"').next()?.parse::<f64>().ok()
    })
    .await;
    // The whole group: Chromium's renderer and helpers too.
    if let Some(pid) = child.id() {
        unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
    }
    let _ = child.wait().await;
    said.map_err(|e| {
        let e = e.to_string();
        let tail = &e[e.floor_char_boundary(e.len().saturating_sub(600))..];
        anyhow::anyhow!("chromium never drew the page: …{tail}")
    })
}

fn chromium() -> &'static str {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("chromium")
}
