//! What Redis counts for a run holds the run alone: a GET run's seeding (SETs on a connection
//! of its own) and the other client's connection happen before the window Redis's counters are
//! read over (`engine::redis_time::open_window`). Checked against a real redis-server two
//! ways: this test reads Redis's own `INFO` at the engine's hand-over and after the run, and
//! `pipescope bench --json` reports the same figures.

use crate::support;

use std::collections::HashMap;
use std::process::Command as Process;

use pipescope::engine::{self, RunContext, keys};
use pipescope::target::RedisTarget;
use shared::{Command, Mode, RunSpec, RunSummary};
use tokio::sync::oneshot;

/// Commands of pipescope's own inside a window besides the memory sampler's two per sample:
/// the INFO that opened it, the run connection's CLIENT ID, the reading connection's set-up
/// (redis-rs's CLIENT SETINFO), with room for one more; and the two of the sample that found
/// the run's connection gone, which ends the sampling (before it did, 58 and 60 commands were
/// processed for 20 on the wire and 15 and 13 samples, four tests at a time on two cores).
const OWN_READINGS: u64 = 8;

/// Redis's counters as this test reads them: every command's calls, the commands processed and
/// the connections accepted.
#[derive(Debug)]
struct Info {
    calls: HashMap<String, u64>,
    commands: u64,
    connections: u64,
}

async fn info(con: &mut redis::aio::MultiplexedConnection) -> Info {
    let text: String = redis::cmd("INFO")
        .arg("stats")
        .arg("commandstats")
        .query_async(con)
        .await
        .unwrap();
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("INFO has {name}: {text}"))
    };
    let calls = text
        .lines()
        .filter_map(|line| {
            let (name, fields) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = fields.split(',').find_map(|f| f.strip_prefix("calls="))?;
            Some((name.to_string(), calls.parse().ok()?))
        })
        .collect();
    Info {
        calls,
        commands: field("total_commands_processed"),
        connections: field("total_connections_received"),
    }
}

/// Runs `spec` with this test listening at the engine's hand-over: reads `INFO` there (on one
/// connection opened beforehand, so its own opening is not counted), lets the run go on, and
/// reads it again after the last reply. Returns the run and the two readings.
async fn run_watched(target: &RedisTarget, run_id: u64, spec: RunSpec) -> (RunSummary, Info, Info) {
    let mut con = support::admin(target).await;
    let (window, opens) = oneshot::channel();
    let ctx = RunContext {
        window: Some(window),
        ..RunContext::new(run_id, Default::default(), Default::default())
    };
    let run = engine::run(target, spec, ctx);
    tokio::pin!(run);
    let opened: oneshot::Sender<()> = tokio::select! {
        _ = &mut run => panic!("the run ended without opening its window"),
        opened = opens => opened.expect("the engine opens the window"),
    };
    let before = info(&mut con).await;
    opened.send(()).unwrap();
    let outcome = run.await.expect("the run finishes");
    let after = info(&mut con).await;
    keys::remove_run_keys(target, run_id, outcome.written)
        .await
        .unwrap();
    (outcome.summary, before, after)
}

fn delta(before: &Info, after: &Info, command: &str) -> u64 {
    let calls = |i: &Info| i.calls.get(command).copied().unwrap_or(0);
    calls(after) - calls(before)
}

/// Between the hand-over and the last reply Redis executed no SET for a GET run (its 20,000
/// seeded keys came before), accepted one connection (the run's), and processed the run's
/// commands on the wire plus pipescope's own few readings.
#[tokio::test]
async fn a_get_runs_window_holds_no_seeding_and_one_connection() {
    let (_redis, target) = support::redis();
    let get = |mode| RunSpec {
        command: Command::Get,
        ..RunSpec::set(20_000, mode)
    };
    for (run_id, spec, counted) in [
        (1, get(Mode::pipelined(1_000)), "get"),
        (2, get(Mode::Mset { batch: 1_000 }), "mget"),
        (3, get(Mode::Sequential), "get"),
    ] {
        let (s, before, after) = run_watched(&target, run_id, spec).await;
        let label = spec.mode.label();
        let samples = s.redis_memory.map_or(0, |m| m.samples as u64);
        let processed = after.commands - before.commands;
        println!(
            "{label}: SET {}, {counted} {}, processed {processed} for {} on the wire ({samples} memory samples), connections {}",
            delta(&before, &after, "set"),
            delta(&before, &after, counted),
            s.wire_commands,
            after.connections - before.connections,
        );
        assert_eq!(delta(&before, &after, "set"), 0, "{label}: no seeding SET");
        assert_eq!(delta(&before, &after, counted), s.wire_commands, "{label}");
        assert_eq!(
            after.connections - before.connections,
            1,
            "{label}: the run's own connection only"
        );
        assert!(
            processed >= s.wire_commands
                && processed <= s.wire_commands + 2 * samples + OWN_READINGS,
            "{label}: {processed} processed for {} on the wire",
            s.wire_commands
        );
    }
}

/// The other client connects before the window opens: the window sees one connection (the
/// run's), and INCRs from both sides.
#[tokio::test]
async fn the_other_clients_connection_is_set_up_not_the_run() {
    let (_redis, target) = support::redis();
    let spec = RunSpec::with_other_client(20_000, Mode::pipelined(100));
    let (s, before, after) = run_watched(&target, 1, spec).await;
    let other = s.interleaving.as_ref().expect("the other client ran");
    println!(
        "the other client's {} INCRs beside the run's {}; connections {}",
        other.other_commands,
        s.wire_commands,
        after.connections - before.connections
    );
    assert_eq!(after.connections - before.connections, 1);
    assert!(delta(&before, &after, "incr") >= s.wire_commands);
}

fn pipescope() -> Process {
    let mut cmd = Process::new(env!("CARGO_BIN_EXE_pipescope"));
    cmd.env_remove("REDIS_URL");
    cmd
}

/// `pipescope bench` against `url`, which must succeed; its stdout.
fn bench(url: &str, args: &[&str]) -> String {
    let out = pipescope()
        .args(["bench", "--redis-url", url])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `bench --json`: a GET run reports one connection, and the commands Redis processed are its
/// own; an MSET/MGET run's Redis figures come per key beside per MGET.
#[tokio::test]
async fn bench_reports_the_runs_own_connection_and_mgets_per_key() {
    let (redis, _target) = support::redis();
    let url = redis.url();
    for mode in ["pipelined", "mset"] {
        let out = bench(
            &url,
            &[
                "--count",
                "20000",
                "--mode",
                mode,
                "--command",
                "get",
                "--json",
            ],
        );
        let run: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        let load = &run["redis_load"];
        println!("{mode}: {load}");
        assert_eq!(load["connections_received"], 1, "{mode}: {run}");
        let wire = run["wire_commands"].as_u64().unwrap();
        let processed = load["commands_processed"].as_u64().unwrap();
        let samples = run["redis_memory"]["samples"].as_u64().unwrap_or(0);
        assert!(
            processed >= wire && processed <= wire + 2 * samples + OWN_READINGS,
            "{mode}: {processed} processed for {wire} on the wire: {run}"
        );
        let cpu = load["cpu_us_per_command"].as_f64().unwrap();
        match mode {
            "mset" => {
                assert_eq!(wire, 20, "one MGET per 1,000 keys");
                let per_key = run["redis_cpu_us_per_key"].as_f64().unwrap();
                assert!(
                    (per_key * 1_000.0 - cpu).abs() < 1e-6 * cpu.max(1.0),
                    "{run}"
                );
                let usec = run["redis_usec_per_call"].as_f64().unwrap();
                let usec_key = run["redis_usec_per_key"].as_f64().unwrap();
                assert!(
                    (usec_key * 1_000.0 - usec).abs() < 1e-6 * usec.max(1.0),
                    "{run}"
                );
            }
            _ => {
                assert!(run.get("redis_cpu_us_per_key").is_none(), "{run}");
                assert!(run.get("redis_usec_per_key").is_none(), "{run}");
            }
        }
    }
    // The table says per MGET and per key, and that set-up is left out.
    let table = bench(
        &url,
        &["--count", "20000", "--mode", "mset", "--command", "get"],
    );
    println!("{table}");
    assert!(table.contains("µs per MGET ("), "{table}");
    assert!(table.contains("µs per key)"), "{table}");
    assert!(table.contains("1 connection accepted"), "{table}");
    assert!(
        table.contains("set-up before the run not counted"),
        "{table}"
    );
}

/// CSV and Markdown name a mode alike: its label, quoted in CSV where it holds a comma.
#[tokio::test]
async fn csv_and_markdown_name_modes_alike() {
    let (redis, _target) = support::redis();
    let url = redis.url();
    let rows = |format: &str| -> Vec<String> {
        let out = bench(
            &url,
            &[
                "--count",
                "2000",
                "--mode",
                "pipelined",
                "--batch",
                "100",
                "--flush",
                "each",
                "--format",
                format,
            ],
        );
        out.lines().skip(1).map(str::to_string).collect()
    };
    let csv = rows("csv");
    let markdown = rows("markdown");
    println!("{csv:?}\n{markdown:?}");
    let label = "pipelined (batch 100, flush each command)";
    assert!(csv[0].starts_with(&format!("\"{label}\",100,")), "{csv:?}");
    assert!(
        markdown[1].starts_with(&format!("| {label} | 100 |")),
        "{markdown:?}"
    );
}
