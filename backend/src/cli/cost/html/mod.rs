//! `pipescope cost html`: what one HTML file costs. The file is made as a user makes it, by
//! the binary as a child process on a redis-server of our own: the seed's experiment (`bench
//! --mode compare`: --count SETs sequentially and pipelined at --batch), a batch sweep, or an
//! observation of several connections (`observe --html`). Then its size, part by part,
//! against the target, and the time from navigation until what a person came for is drawn
//! (the timeline with the runs; the observed connections' table), opened from disk
//! (`file://`) in headless Chromium, --loads times, each in a fresh profile. Beside it, the
//! same browser's time to run a blank page's first script: the part of the load that is the
//! browser's own.
//!
//! - `runs`: the runs' file, written by `bench --html` as a child process.
//! - `load`: a file opened from disk in a fresh headless Chromium, timed.

mod load;
mod runs;

use std::path::PathBuf;

use anyhow::Context;

use pipescope::median::median;

use super::super::args::JsonArg;
use super::super::output::{met, say};

/// The size the issue asks of the seed's experiment as one file.
const TARGET_BYTES: u64 = 1_000_000;
/// The time to interactive from disk it asks for (headless Chromium, this machine).
const TARGET_MS: f64 = 1_500.0;

#[derive(clap::Args)]
pub struct HtmlArgs {
    /// SETs per run (with --observed, across all the connections).
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// The pipelined run's batch (with --sweep, the largest batch).
    #[arg(long, default_value_t = 1000)]
    pub batch: u32,
    /// A batch sweep (`bench --mode sweep`: batches 1, 2, 5, … up to --batch, --count SETs
    /// each) instead of the seed's comparison.
    #[arg(long, conflicts_with = "observed")]
    pub sweep: bool,
    /// An observation instead: this many connections through `observe --html` (half one at
    /// a time, half pipelined 100 deep, by redis-benchmark), timed until its table shows them.
    #[arg(long, value_name = "CONNECTIONS", value_parser = clap::value_parser!(u32).range(1..=200))]
    pub observed: Option<u32>,
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
    /// `compare` (sequential, then pipelined at `batch`), `sweep` (batches up to `batch`) or
    /// `observed` (`connections` through the proxy).
    mode: &'static str,
    count: u64,
    batch: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    connections: Option<usize>,
    bytes: u64,
    /// The packed WASM's and data's base64 text, and everything else (CSS, JS, markup).
    wasm_bytes: usize,
    data_bytes: usize,
    rest_bytes: usize,
    target_bytes: u64,
    loads: usize,
    /// Median ms from navigation until the timeline was first drawn with the runs (the
    /// table showed every connection, for an observation).
    interactive_ms: f64,
    interactive_ms_each: Vec<f64>,
    /// Median ms from navigation until a blank page's first script ran.
    blank_ms: f64,
    target_ms: f64,
}

const BLANK: &str = "<!doctype html><meta charset=\"utf-8\"><title>blank</title>\
<script>console.log('pipescope-interactive '+performance.now())</script>";

pub async fn html(args: HtmlArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("a temporary directory")?;
    let file = args
        .out
        .clone()
        .unwrap_or_else(|| dir.path().join("file.html"));
    let (mode, connections, drawn) = match args.observed {
        Some(n) => {
            let exe = std::env::current_exe()?;
            let seen = pipescope::cost::observed_file::make(&exe, &file, args.count, n).await?;
            ("observed", Some(seen), load::table_shown(seen))
        }
        None => {
            runs::make(&file, args.count, args.batch, args.sweep)?;
            let mode = if args.sweep { "sweep" } else { "compare" };
            (mode, None, load::RUNS_DRAWN.to_string())
        }
    };

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
        html.replacen("<head>", &format!("<head>{drawn}"), 1),
    )?;
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, BLANK)?;

    let mut each = Vec::new();
    let mut blank_each = Vec::new();
    for load in 0..args.loads {
        let ms = load::first_drawn(&probed)
            .await
            .with_context(|| format!("load {}", load + 1))?;
        let floor = load::first_drawn(&blank).await.context("the blank page")?;
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
        connections,
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
        "{} as one HTML file: {} bytes ({}): the WASM {} bytes, the data {} bytes (gzip, base64), the rest {} bytes",
        match (cost.connections, args.sweep) {
            (Some(n), _) => format!(
                "An observation of {n} connections ({} SETs through the proxy)",
                cost.count
            ),
            (None, true) => format!("{} SETs at each batch up to {}", cost.count, cost.batch),
            (None, false) => format!(
                "{} SETs sequentially and pipelined at batch {}",
                cost.count, cost.batch
            ),
        },
        cost.bytes,
        // The target is the seed's experiment's; the others' sizes are for comparison.
        match mode {
            "compare" => format!(
                "{} the target of {TARGET_BYTES} bytes",
                met(cost.bytes <= TARGET_BYTES)
            ),
            _ => format!("the target of {TARGET_BYTES} bytes is the seed's experiment's"),
        },
        cost.wasm_bytes,
        cost.data_bytes,
        cost.rest_bytes,
    ));
    say(format_args!(
        "opened from disk in headless Chromium, from navigation to {}: median {:.0} ms of {} loads, each in a fresh profile ({} the target of {:.0} ms); a blank page's first script: {:.0} ms",
        match cost.connections {
            Some(n) => format!("the table showing all {n} connections"),
            None => "the timeline first drawn with the runs".to_string(),
        },
        cost.interactive_ms,
        cost.loads,
        met(cost.interactive_ms <= TARGET_MS),
        TARGET_MS,
        cost.blank_ms,
    ));
    Ok(())
}
