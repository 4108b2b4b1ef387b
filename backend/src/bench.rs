//! `pipescope bench`: the same engine, headless. A progress bar on a terminal, then a table,
//! or one JSON object per run with `--json`.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use shared::{
    Latency, Limits, Network, RoundTripSplit, RunRecord, RunSpec, RunSummary, validate_runs,
};

use crate::cancel::{Interrupted, Removed};
use crate::engine::{self, RunContext, RunError, keys};
use crate::net::Proxies;
use crate::recorder::Progress;
use crate::target::RedisTarget;

/// One line of `--json` output.
#[derive(Debug, Serialize)]
pub struct JsonRun {
    pub mode: &'static str,
    pub batch: u32,
    pub count: u64,
    pub done: u64,
    pub wall_ms: f64,
    pub ops_per_sec: f64,
    pub round_trips: u64,
    /// Write calls the engine made, and commands Redis executed (MULTI/EXEC included).
    pub writes: u64,
    pub wire_commands: u64,
    pub command: &'static str,
    pub label: String,
    /// How the engine waited for replies (sleeping, or busy-polling).
    pub wait: shared::Wait,
    /// Wall time divided by the keys answered (an MSET/MGET of n keys counts n): what one
    /// command cost in this mode.
    pub per_command_us: f64,
    #[serde(flatten)]
    pub latency: Latency,
    /// The network dialled in (all zero: loopback, no proxy).
    pub network: Network,
    /// Through the latency proxy: where a round trip went (wire-tap medians), with how much
    /// earlier than dialled the proxy released each leg's chunks (`early_out_us`,
    /// `early_back_us`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<RoundTripSplit>,
    /// Redis's own time per call of `redis_counted`, from `INFO commandstats` across the run.
    pub redis_usec_per_call: Option<f64>,
    /// For MSET/MGET runs (one call for a batch of keys): that time per key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_usec_per_key: Option<f64>,
    /// The command whose calls carry the run's requests (EXEC for a transaction).
    pub redis_counted: String,
    /// Connections the engine opened for the run (a pool's size, else one).
    pub connections: u32,
    /// Redis's CPU time, connections accepted and commands processed across the run (`INFO
    /// cpu`, `INFO stats`), its set-up (a GET run's seeding, the other client's connection)
    /// left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_load: Option<shared::RedisLoad>,
    /// For MSET/MGET runs: Redis's CPU per key (`redis_load.cpu_us_per_command` is per
    /// MSET/MGET there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_cpu_us_per_key: Option<f64>,
    /// Redis's memory while the run was in flight: its connection's peak `CLIENT LIST`
    /// tot-mem, omem and qbuf, and `INFO memory` used_memory before and at its peak.
    pub redis_memory: Option<shared::RedisMemory>,
    /// How the keys were named (`--keys`), when not spread.
    #[serde(skip_serializing_if = "shared::KeyLayout::is_spread")]
    pub keys: shared::KeyLayout,
}

impl From<&RunSummary> for JsonRun {
    fn from(s: &RunSummary) -> Self {
        JsonRun {
            mode: s.spec.mode.kind(),
            batch: s.spec.mode.batch(),
            count: s.spec.count,
            done: s.done,
            wall_ms: s.wall_ms(),
            ops_per_sec: s.ops_per_sec,
            round_trips: s.round_trips,
            writes: s.writes,
            wire_commands: s.wire_commands,
            command: s.spec.command.name(),
            label: s.spec.mode.label(),
            wait: s.spec.wait,
            per_command_us: s.wall_us as f64 / s.done.max(1) as f64,
            latency: s.latency,
            network: s.spec.network,
            split: s.split,
            redis_usec_per_call: s.redis_usec_per_call,
            redis_usec_per_key: s.redis_usec_per_call.and_then(|us| s.per_key(us)),
            redis_counted: engine::redis_time::counted_command(&s.spec).to_ascii_uppercase(),
            connections: s.spec.mode.connections(),
            redis_load: s.redis_load,
            redis_cpu_us_per_key: s.redis_load.and_then(|l| s.per_key(l.cpu_us_per_command)),
            redis_memory: s.redis_memory,
            keys: s.spec.keys,
        }
    }
}

/// How results are printed: a table for people, or JSON lines, CSV or a Markdown table
/// (ready to paste into slides) for other tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
    Markdown,
}

/// How `pipescope bench` runs and reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct BenchOptions {
    pub format: Format,
    /// Skip per-request timings (to measure what they cost).
    pub no_spans: bool,
    /// Don't measure at all (no histogram, timings or progress; wall time and throughput
    /// only): the other side of measuring what measuring costs.
    pub no_instrument: bool,
}

/// Runs `specs` in order against `target`, each over the network its spec names (through a
/// delay-line proxy unless loopback), printing as it goes; stops at the first failure.
/// Returns the runs with their timelines (what `--record` saves). Raising `cancel` (Ctrl-C)
/// stops the run in flight; its keys are removed and the error is `cancel::Interrupted`.
pub async fn run(
    target: &RedisTarget,
    specs: Vec<RunSpec>,
    options: BenchOptions,
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<Vec<RunRecord>> {
    validate_runs(&specs, &Limits::DEFAULT)?;
    let BenchOptions {
        format,
        no_spans,
        no_instrument,
    } = options;
    print_header(format);
    let record_spans = !no_spans;
    // Kept for the whole bench, so runs over the same network share a proxy.
    let proxies = Proxies::default();
    let mut run_id = keys::first_run_id();
    let show_bar = std::io::stderr().is_terminal();
    let mut records: Vec<RunRecord> = Vec::new();
    for spec in specs {
        run_id += 1;
        let route = proxies.route(target, spec.network).await?;
        let progress = Arc::new(Progress::default());
        let (bar, ticker) = progress_bar(&spec, &progress, show_bar);
        let ctx = RunContext {
            record_spans,
            instrument: !no_instrument,
            ..RunContext::new(run_id, progress.clone(), cancel.clone())
        };
        let outcome = route.run(spec, ctx).await;
        ticker.abort();
        bar.finish_and_clear();
        if let Err(e) = &outcome
            && let Some(removed) = Removed::of(run_id, e)
        {
            return Err(Interrupted(vec![removed]).into());
        }
        let (summary, timeline) = match outcome {
            Ok(o) => (o.summary, o.timeline),
            Err(e @ RunError::Stopped { .. }) => anyhow::bail!(
                "{} run failed after {} of {} commands: {e}",
                spec.mode.label(),
                e.partial().map_or(0, |p| p.done),
                spec.count,
            ),
            Err(e) => return Err(e.into()),
        };
        print_row(format, &summary, records.first().map(|r| &r.summary));
        records.push(RunRecord {
            run: run_id,
            summary,
            timeline,
        });
    }
    Ok(records)
}

/// A progress bar for `spec`'s run (hidden when `show` is false, e.g. not on a terminal), and
/// the task that moves it from `progress` ten times a second until aborted.
fn progress_bar(
    spec: &RunSpec,
    progress: &Arc<Progress>,
    show: bool,
) -> (ProgressBar, tokio::task::JoinHandle<()>) {
    let bar = if show {
        ProgressBar::new(spec.count)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>24} [{bar:40}] {human_pos}/{human_len} {per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_prefix(spec.mode.label());
    let ticker = {
        let (bar, progress) = (bar.clone(), progress.clone());
        tokio::spawn(async move {
            loop {
                bar.set_position(progress.read().0);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    (bar, ticker)
}

/// The columns of CSV and Markdown. The last three are Redis's memory during the run
/// (`shared::RedisMemory`): the run's connection's peak `CLIENT LIST` tot-mem and omem, and the
/// `INFO memory` used_memory peak, sampled every few ms; empty where not sampled.
const COLUMNS: [&str; 15] = [
    "mode",
    "batch",
    "count",
    "wall_ms",
    "ops_per_sec",
    "per_command_us",
    "round_trips",
    "writes",
    "p50_us",
    "p99_us",
    "max_us",
    "speedup",
    "redis_client_peak_kb",
    "redis_omem_peak_kb",
    "redis_used_memory_peak_mb",
];

fn print_header(format: Format) {
    match format {
        Format::Table | Format::Json => {}
        Format::Csv => println!("{}", COLUMNS.join(",")),
        Format::Markdown => {
            println!("| {} |", COLUMNS.join(" | "));
            println!("|{}", "---|".repeat(COLUMNS.len()));
        }
    }
}

/// Prints one run; `baseline` (the first run) gives the speed-up column.
fn print_row(format: Format, s: &RunSummary, baseline: Option<&RunSummary>) {
    let l = s.latency;
    let speedup = baseline.map_or(1.0, |b| s.speedup_over(b));
    let per_command_us = s.wall_us as f64 / s.done.max(1) as f64;
    // The mode's label ("pipelined (batch 1000, flush each command)") in CSV and Markdown
    // alike, as the page's exports name it.
    let mode = match format {
        Format::Csv => shared::csv_field(&s.spec.mode.label()),
        _ => s.spec.mode.label(),
    };
    let cells = [
        mode,
        s.spec.mode.batch().to_string(),
        s.done.to_string(),
        format!("{:.3}", s.wall_ms()),
        format!("{:.0}", s.ops_per_sec),
        format!("{per_command_us:.3}"),
        s.round_trips.to_string(),
        s.writes.to_string(),
        format!("{:.1}", l.p50_us),
        format!("{:.1}", l.p99_us),
        format!("{:.1}", l.max_us),
        format!("{speedup:.2}"),
        memory_cell(s, |m| m.client_tot_mem_peak as f64 / 1e3),
        memory_cell(s, |m| m.client_omem_peak as f64 / 1e3),
        memory_cell(s, |m| m.used_memory_peak as f64 / 1e6),
    ];
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string(&JsonRun::from(s)).expect("serialisable")
        ),
        Format::Csv => println!("{}", cells.join(",")),
        Format::Markdown => println!("| {} |", cells.join(" | ")),
        Format::Table => println!(
            "{:<44} {:>10} cmds {:>10.1} ms {:>12.0} ops/s  p50 {:>8.1} µs  p99 {:>8.1} µs  max {:>9.1} µs  {} round trips  {} writes{}{}{}{}{}{}",
            s.spec.mode.label(),
            s.done,
            s.wall_ms(),
            s.ops_per_sec,
            l.p50_us,
            l.p99_us,
            l.max_us,
            s.round_trips,
            s.writes,
            baseline
                .map(|_| format!("  {speedup:.1}× the first run"))
                .unwrap_or_default(),
            s.spec
                .wait
                .label()
                .map(|w| format!("  ({w})"))
                .unwrap_or_default(),
            s.split
                .map(|p| split_note(&p, s.spec.network))
                .unwrap_or_default(),
            s.redis_usec_per_call
                .map(|us| format!(
                    "  (Redis's own time: {}, INFO commandstats)",
                    per_command_and_key(s, us)
                ))
                .unwrap_or_default(),
            s.redis_load.map(|l| load_note(s, &l)).unwrap_or_default(),
            s.redis_memory.map(memory_note).unwrap_or_default()
        ),
    }
    if let (Format::Table, Some(c)) = (format, &s.cluster) {
        let masters: Vec<String> = c
            .masters
            .iter()
            .map(|m| {
                format!(
                    "{} {} cmds in {} round trips",
                    m.addr, m.commands, m.round_trips
                )
            })
            .collect();
        println!(
            "    per master: {}; {} MOVED, {} ASK, slot map read again {} time{} (counted by the engine)",
            masters.join(" · "),
            c.moved,
            c.ask,
            c.map_refreshes,
            if c.map_refreshes == 1 { "" } else { "s" }
        );
    }
    if let (Format::Table, Some(i)) = (format, &s.interleaving) {
        let batches = match s.spec.mode {
            shared::Mode::Transaction { .. } => "transactions",
            _ => "pipelines",
        };
        println!(
            "    {}; counter ended at {} (measured: INCR replies give Redis's order)",
            i.sentence(batches, |n| n.to_string()),
            i.final_value.map_or("?".to_string(), |v| v.to_string())
        );
    }
}

/// "1.20 µs per SET", or for MSET/MGET "978.26 µs per MGET (0.98 µs per key)": a figure per
/// command on the wire, and per key where one command carries a batch of keys.
fn per_command_and_key(s: &RunSummary, us: f64) -> String {
    let command = engine::redis_time::counted_command(&s.spec).to_ascii_uppercase();
    match s.per_key(us) {
        Some(key) => format!("{us:.2} µs per {command} ({key:.2} µs per key)"),
        None => format!("{us:.2} µs per {command}"),
    }
}

/// Redis's CPU and connections for the table, saying how they were measured and what else the
/// window held (the other client's INCRs run beside the run's and cannot be left out).
fn load_note(s: &RunSummary, l: &shared::RedisLoad) -> String {
    let cpu = match s.per_key(l.cpu_us_per_command) {
        Some(_) => per_command_and_key(s, l.cpu_us_per_command),
        None => format!("{:.2} µs per command", l.cpu_us_per_command),
    };
    let other = s
        .interleaving
        .as_ref()
        .map(|i| {
            format!(
                ", {} INCRs from the other client included",
                i.other_commands
            )
        })
        .unwrap_or_default();
    format!(
        "  (Redis's CPU: {cpu}, INFO cpu{other}; {} connection{} accepted, INFO stats; set-up before the run not counted)",
        l.connections_received,
        if l.connections_received == 1 { "" } else { "s" }
    )
}

/// A memory figure in the unit `f` gives, one decimal; empty where Redis was not sampled.
fn memory_cell(s: &RunSummary, f: impl Fn(&shared::RedisMemory) -> f64) -> String {
    s.redis_memory
        .map(|m| format!("{:.1}", f(&m)))
        .unwrap_or_default()
}

/// Redis's memory during the run, for the table, saying how it was measured.
fn memory_note(m: shared::RedisMemory) -> String {
    format!(
        "  (Redis for this connection: peak tot-mem {:.1} KB, omem {:.1} KB, CLIENT LIST, {} samples every {} ms; used_memory {:.1} → peak {:.1} MB)",
        m.client_tot_mem_peak as f64 / 1e3,
        m.client_omem_peak as f64 / 1e3,
        m.samples,
        m.interval_us as f64 / 1e3,
        m.used_memory_before as f64 / 1e6,
        m.used_memory_peak as f64 / 1e6,
    )
}

/// The wire tap's split beside what was dialled in and what the proxy took off each leg.
fn split_note(p: &RoundTripSplit, n: Network) -> String {
    if p.encrypted {
        return "  (wire tap: encrypted (TLS), cannot read it: no split at the wire)".into();
    }
    format!(
        "  (round trip at the wire, medians: out {:.0} µs of {} µs dialled, {:.0} µs released early; proxy → Redis → proxy {:.0} µs; back {:.0} µs of {} µs dialled, {:.0} µs released early)",
        p.out_us,
        n.delay_out_us,
        p.early_out_us,
        p.server_us,
        p.back_us,
        n.delay_back_us,
        p.early_back_us
    )
}
