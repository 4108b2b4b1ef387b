//! Finished runs as files to take away: JSON (everything, for tools), CSV (for a spreadsheet)
//! and a Markdown table (for slides, notes and the guided tour's handout). Pure: summaries in,
//! text out; the page's download and copy buttons live in `components/files/`.
//!
//! Every format has the same columns, in the same order (`HEADERS`), computed once by `rows`:
//! mode label, commands done, network, wall time, ops/s, p50, p99, round trips, writes, and
//! the speed-up over the first complete sequential run (ops/s ratio, so runs of different
//! counts compare fairly; empty when there is no sequential run).

use serde::Serialize;
use shared::{Mode, RunSummary, csv_field};

use crate::format;

/// Column names, in order, shared by CSV and Markdown.
pub const HEADERS: [&str; 10] = [
    "mode",
    "commands",
    "network",
    "wall time",
    "ops/s",
    "p50",
    "p99",
    "round trips",
    "writes",
    "speed-up",
];

/// One run as every export shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportRow {
    /// The command and the mode's label: `"SET · pipelined (batch 100)"`, with the value size
    /// when it is not the classic `v{i}`.
    pub label: String,
    pub done: u64,
    pub network: String,
    pub wall_us: u64,
    pub ops_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub round_trips: u64,
    pub writes: u64,
    /// ops/s over the first sequential run's ops/s.
    pub speedup: Option<f64>,
}

/// `"SET · pipelined (batch 100)"`, `"GET · sequential · 1024 B values"`.
pub fn run_label(s: &RunSummary) -> String {
    let mut label = format!(
        "{} · {}{}",
        s.spec.command.name(),
        s.spec.mode.label(),
        s.spec.keys.suffix()
    );
    if let Some(bytes) = s.spec.value_bytes {
        label += &format!(" · {bytes} B values");
    }
    if let Some(wait) = s.spec.wait.label() {
        label += &format!(" · {wait}");
    }
    label
}

/// The baseline of the speed-up column: the first sequential run that got at least one reply.
pub fn baseline(runs: &[RunSummary]) -> Option<&RunSummary> {
    runs.iter()
        .find(|s| s.spec.mode == Mode::Sequential && s.done > 0 && s.ops_per_sec > 0.0)
}

pub fn rows(runs: &[RunSummary]) -> Vec<ExportRow> {
    let base = baseline(runs);
    runs.iter()
        .map(|s| ExportRow {
            label: run_label(s),
            done: s.done,
            network: s.spec.network.label(),
            wall_us: s.wall_us,
            ops_per_sec: s.ops_per_sec,
            p50_us: s.latency.p50_us,
            p99_us: s.latency.p99_us,
            round_trips: s.round_trips,
            writes: s.writes,
            speedup: base.map(|b| s.speedup_over(b)).filter(|x| x.is_finite()),
        })
        .collect()
}

/// One run in the JSON export: the derived columns, then its `RunSummary` verbatim.
#[derive(Serialize)]
struct JsonRun<'a> {
    label: &'a str,
    commands: u64,
    network: &'a str,
    wall_us: u64,
    ops_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    round_trips: u64,
    writes: u64,
    wire_commands: u64,
    speedup: Option<f64>,
    summary: &'a RunSummary,
}

/// `{"runs": [{label, commands, network, wall_us, ops_per_sec, p50_us, p99_us, round_trips,
/// writes, wire_commands, speedup, summary}]}`: the derived columns plus each `RunSummary`
/// verbatim (so nothing measured is lost), compact. The page's download indents it with the
/// browser's own `JSON.stringify`: the serialiser here is the one recordings use, so the WASM
/// carries one copy of it.
pub fn json(runs: &[RunSummary]) -> String {
    #[derive(Serialize)]
    struct Runs<'a> {
        runs: Vec<JsonRun<'a>>,
    }
    let rows = rows(runs);
    let out = Runs {
        runs: rows
            .iter()
            .zip(runs)
            .map(|(r, s)| JsonRun {
                label: &r.label,
                commands: r.done,
                network: &r.network,
                wall_us: r.wall_us,
                ops_per_sec: r.ops_per_sec,
                p50_us: r.p50_us,
                p99_us: r.p99_us,
                round_trips: r.round_trips,
                writes: r.writes,
                wire_commands: s.wire_commands,
                speedup: r.speedup,
                summary: s,
            })
            .collect(),
    };
    serde_json::to_string(&out).expect("plain JSON values serialise")
}

/// Machine-readable numbers (no grouping, µs and ops/s as measured), one line per run, CRLF.
/// Writes a server did not report (0) are left empty.
pub fn csv(runs: &[RunSummary]) -> String {
    let header = [
        "mode",
        "commands",
        "network",
        "wall_us",
        "ops_per_sec",
        "p50_us",
        "p99_us",
        "round_trips",
        "writes",
        "speedup",
    ];
    let mut out = header.join(",") + "\r\n";
    for r in rows(runs) {
        let fields = [
            csv_field(&r.label),
            r.done.to_string(),
            csv_field(&r.network),
            r.wall_us.to_string(),
            format!("{:.1}", r.ops_per_sec),
            format!("{:.1}", r.p50_us),
            format!("{:.1}", r.p99_us),
            r.round_trips.to_string(),
            if r.writes > 0 {
                r.writes.to_string()
            } else {
                String::new()
            },
            r.speedup.map(|x| format!("{x:.2}")).unwrap_or_default(),
        ];
        out += &fields.join(",");
        out += "\r\n";
    }
    out
}

/// A `|` in a cell would end it.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A GitHub-flavoured Markdown table with human units (`523,400` ops/s, `1.24 ms`), numbers
/// right-aligned. ops/s is `format::rate` of the summary's `ops_per_sec`, exactly as the
/// results table shows it.
pub fn markdown(runs: &[RunSummary]) -> String {
    let mut out = format!("| {} |\n", HEADERS.join(" | "));
    out += "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows(runs) {
        let cells = [
            md_cell(&r.label),
            format::group(r.done),
            md_cell(&r.network),
            format::wall(r.wall_us),
            format::rate(r.ops_per_sec),
            format::latency(r.p50_us),
            format::latency(r.p99_us),
            format::group(r.round_trips),
            format::known_count(r.writes),
            r.speedup.map(format::factor).unwrap_or_else(|| "—".into()),
        ];
        out += &format!("| {} |\n", cells.join(" | "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;
    use shared::{Flush, Latency, Network, RunSpec};

    fn summary(mode: Mode, count: u64, wall_us: u64) -> RunSummary {
        RunSummary {
            spec: RunSpec::set(count, mode),
            done: count,
            wall_us,
            ops_per_sec: shared::report::ops_per_sec(count, wall_us),
            round_trips: mode.round_trips(count),
            writes: mode.writes(count).unwrap_or(0),
            wire_commands: count,
            latency: Latency {
                p50_us: 42.0,
                p99_us: 1_240.0,
                ..Latency::default()
            },
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        }
    }

    fn runs() -> Vec<RunSummary> {
        let mut each = summary(
            Mode::Pipelined {
                batch: 100,
                flush: Flush::EachCommand,
            },
            1000,
            5_000,
        );
        each.spec.network = Network::symmetric(500);
        vec![
            summary(Mode::pipelined(100), 1000, 4_000),
            summary(Mode::Sequential, 1000, 100_000),
            each,
        ]
    }

    #[test]
    fn speedup_is_over_the_first_sequential_run() {
        let r = rows(&runs());
        assert_eq!(r.len(), 3);
        assert!((r[0].speedup.unwrap() - 25.0).abs() < 1e-9);
        assert_eq!(r[1].speedup, Some(1.0));
        assert!((r[2].speedup.unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(r[0].label, "SET · pipelined (batch 100)");
        assert_eq!(r[2].network, "one-way delay 500 µs");
        assert_eq!(r[2].writes, 1000);
        // No sequential run: no speed-up column values.
        let only = rows(&runs()[..1]);
        assert_eq!(only[0].speedup, None);
        assert!(rows(&[]).is_empty());
    }

    #[test]
    fn markdown_is_a_table_with_the_summaries_numbers() {
        let md = markdown(&runs());
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 2 + 3, "{md}");
        assert!(lines[0].starts_with("| mode | commands | network |"));
        assert_eq!(lines[2].matches('|').count(), HEADERS.len() + 1);
        assert_eq!(
            lines[2],
            "| SET · pipelined (batch 100) | 1,000 | loopback | 4.00 ms | 250,000 | 42 µs | 1.24 ms | 10 | 10 | 25.0× |"
        );
        assert!(lines[3].contains("| 10,000 |"), "{}", lines[3]);
        assert!(lines[3].ends_with("| 1.00× |"));
        assert!(lines[4].contains("flush each command"));
        // Every run's ops/s, as the results table shows it.
        for s in runs() {
            assert!(md.contains(&format!("| {} |", format::rate(s.ops_per_sec))));
        }
        assert_eq!(md_cell("a|b"), "a\\|b");
    }

    #[test]
    fn csv_quotes_labels_and_keeps_raw_numbers() {
        let csv = csv(&runs());
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines.len(), 1 + 3 + 1, "a trailing CRLF: {csv:?}");
        assert_eq!(lines[4], "");
        assert_eq!(
            lines[0],
            "mode,commands,network,wall_us,ops_per_sec,p50_us,p99_us,round_trips,writes,speedup"
        );
        assert_eq!(
            lines[1],
            "SET · pipelined (batch 100),1000,loopback,4000,250000.0,42.0,1240.0,10,10,25.00"
        );
        assert!(
            lines[3].starts_with("\"SET · pipelined (batch 100, flush each command)\",1000,"),
            "{}",
            lines[3]
        );
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        let solo = super::csv(&runs()[..1]);
        assert!(
            solo.trim_end().ends_with(",10,10,"),
            "empty speed-up: {solo}"
        );
    }

    #[test]
    fn json_keeps_every_summary_verbatim() {
        let runs = runs();
        let text = json(&runs);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let list = v["runs"].as_array().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0]["ops_per_sec"], 250_000.0);
        assert_eq!(list[0]["speedup"], 25.0);
        assert_eq!(list[1]["label"], "SET · sequential");
        assert_eq!(list[2]["network"], "one-way delay 500 µs");
        for (k, s) in runs.iter().enumerate() {
            let back: RunSummary = serde_json::from_value(list[k]["summary"].clone()).unwrap();
            assert_eq!(&back, s);
        }
        assert_eq!(json(&[]), r#"{"runs":[]}"#);
    }

    #[test]
    fn labels_carry_command_and_value_size() {
        let mut s = summary(Mode::Transaction { batch: 10 }, 100, 1000);
        s.spec.command = shared::Command::Get;
        s.spec.value_bytes = Some(1024);
        assert_eq!(run_label(&s), "GET · MULTI/EXEC (batch 10) · 1024 B values");
    }
}
