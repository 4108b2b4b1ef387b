//! The `pipescope` binary itself: the embedded redis-server's life cycle, `bench --json`, and
//! the password never being printed.

use crate::support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use pipescope::local_redis::LocalRedis;

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "pipescope did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `pipescope serve` with no Redis URL; returns it, the URL it prints, and the pid of
/// the redis-server it started.
fn serve() -> (Child, String, Vec<u32>) {
    let mut child = support::pipescope("pipescope=info")
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = support::stdout_line(
        child.stdout.take().unwrap(),
        Duration::from_secs(60),
        "pipescope prints the URL to open",
        |l| l.strip_prefix("open ").map(str::to_string),
    );
    let redis = support::children_named(child.id(), "redis-server");
    assert_eq!(redis.len(), 1, "exactly one embedded redis-server");
    (child, url, redis)
}

#[test]
fn serve_starts_its_own_redis_and_stops_it_on_ctrl_c_and_sigterm() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (mut child, url, redis) = serve();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");

        // The page is served at that URL.
        let addr = url.trim_start_matches("http://").trim_end_matches('/');
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        std::io::Write::write_all(&mut stream, b"GET /healthz HTTP/1.0\r\n\r\n").unwrap();
        let mut reply = String::new();
        std::io::Read::read_to_string(&mut stream, &mut reply).unwrap();
        assert!(
            reply.starts_with("HTTP/1.0 200") || reply.starts_with("HTTP/1.1 200"),
            "{reply}"
        );

        unsafe { libc::kill(child.id() as i32, signal) };
        let status = wait_exit(&mut child, Duration::from_secs(10));
        assert!(status.success(), "clean exit on signal {signal}: {status}");
        assert!(
            !alive(redis[0]),
            "the embedded redis-server is stopped with pipescope (signal {signal})"
        );
    }
}

#[test]
fn the_embedded_redis_dies_with_a_killed_pipescope() {
    let (mut child, _url, redis) = serve();
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(redis[0])
        && !std::fs::read_to_string(format!("/proc/{}/stat", redis[0]))
            .unwrap_or_default()
            .contains(") Z")
    {
        assert!(
            Instant::now() < deadline,
            "redis-server outlived a SIGKILLed pipescope"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn bench_json_prints_one_object_per_run_and_never_the_password() {
    let redis = LocalRedis::start_with_args(&["--requirepass", "hunter2"]).unwrap();
    let url = format!("redis://:hunter2@127.0.0.1:{}/1", redis.port());
    let out = support::pipescope("pipescope=info")
        .args([
            "bench", "--count", "2000", "--mode", "compare", "--batch", "100", "--json",
        ])
        .env("REDIS_URL", &url)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stdout.contains("hunter2") && !stderr.contains("hunter2"),
        "the password leaked:\n{stdout}\n{stderr}"
    );
    let runs: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["mode"], "sequential");
    assert_eq!(runs[1]["mode"], "pipelined");
    assert_eq!(runs[1]["batch"], 100);
    for run in &runs {
        assert_eq!(run["count"], 2000);
        assert_eq!(run["done"], 2000);
        for field in ["wall_ms", "ops_per_sec", "p50_us", "p99_us"] {
            assert!(run[field].as_f64().unwrap() > 0.0, "{field} in {run}");
        }
    }
    assert_eq!(runs[1]["round_trips"], 20);
    let target = pipescope::target::RedisTarget::parse(&url).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    assert_eq!(rt.block_on(support::command_calls(&target))["set"], 4000);
    assert!(rt.block_on(support::pipescope_keys(&target)).is_empty());
}

#[test]
fn an_unreachable_redis_url_is_a_clear_cli_error() {
    let port = pipescope::local_redis::free_port().unwrap();
    let out = support::pipescope("pipescope=info")
        .args(["bench", "--count", "10"])
        .env("REDIS_URL", format!("redis://:pw@127.0.0.1:{port}/"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
    assert!(!stderr.contains(":pw@"), "{stderr}");
}

#[test]
fn sweep_prints_a_markdown_row_per_batch_size() {
    let redis = LocalRedis::start().unwrap();
    let out = support::pipescope("pipescope=info")
        .args([
            "bench",
            "--count",
            "512",
            "--mode",
            "sweep",
            "--max-batch",
            "64",
            "--format",
            "markdown",
        ])
        .env("REDIS_URL", redis.url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows[0][0], "mode");
    assert!(rows[1].iter().all(|c| c.chars().all(|ch| ch == '-')));
    let batches: Vec<&str> = rows[2..].iter().map(|r| r[1]).collect();
    assert_eq!(batches, ["1", "2", "5", "10", "20", "50"]);
    let round_trips: Vec<u64> = rows[2..].iter().map(|r| r[6].parse().unwrap()).collect();
    assert_eq!(round_trips, [512, 256, 103, 52, 26, 11]);
    // Beside ops/s: p99 per command and Redis's memory for the run's connection, sampled.
    assert_eq!(rows[0][9], "p99_us");
    assert_eq!(
        rows[0][12..],
        [
            "redis_client_peak_kb",
            "redis_omem_peak_kb",
            "redis_used_memory_peak_mb"
        ]
    );
    for r in &rows[2..] {
        let number = |k: usize| r[k].parse::<f64>().unwrap_or_else(|_| panic!("{r:?}"));
        assert!(
            number(9) > 0.0 && number(12) > 0.0 && number(14) > 0.0,
            "{r:?}"
        );
    }
}

/// Runs `pipescope bench <args> --json` (on its own redis-server), which must succeed, and
/// returns its JSON lines.
fn bench_json(args: &[&str]) -> Vec<serde_json::Value> {
    job_json(&["bench"], args)
}

/// `pipescope JOB… ARGS… --json`'s lines, each parsed.
fn job_json(job: &[&str], args: &[&str]) -> Vec<serde_json::Value> {
    let out = support::pipescope("pipescope=info")
        .args(job)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn against_redis_benchmark_reports_a_ratio_per_depth_and_the_overhead() {
    let lines = job_json(
        &["versus", "redis-benchmark"],
        &[
            "--count",
            "2000",
            "--rounds",
            "3",
            "--time-budget-secs",
            "0",
        ],
    );
    let ks: Vec<u64> = lines[..3]
        .iter()
        .map(|r| r["k"].as_u64().unwrap())
        .collect();
    assert_eq!(ks, [1, 16, 1000]);
    // A median lies within its interval, and with 3 rounds the interval is their whole range.
    let median = |m: &serde_json::Value| {
        let (lo, mid, hi) = (
            m["low"].as_f64().unwrap(),
            m["median"].as_f64().unwrap(),
            m["high"].as_f64().unwrap(),
        );
        assert!(lo <= mid && mid <= hi, "{m}");
        mid
    };
    for r in &lines[..3] {
        // The budget is spent at once: exactly the rounds asked for.
        assert_eq!(r["rounds"], 3);
        assert!(r["theirs_ops_per_sec"].as_f64().unwrap() > 0.0);
        for side in ["sleeping", "busy_poll"] {
            assert!(r[format!("{side}_ops_per_sec")].as_f64().unwrap() > 0.0);
            assert!(median(&r[format!("{side}_ratio")]) > 0.0);
        }
    }
    // The instrumentation's cost at K = 1 and at the largest K.
    let batches: Vec<u64> = lines[3..]
        .iter()
        .map(|o| o["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(batches, [1, 1000]);
    for o in &lines[3..] {
        assert_eq!(o["rounds"], 3);
        median(&o["overhead_percent"]);
        assert!(o["bare_ops_per_sec"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn connections_mode_runs_a_pool_beside_one_pipelined_connection() {
    let runs = bench_json(&[
        "--mode",
        "connections",
        "--connections",
        "5",
        "--count",
        "3000",
        "--batch",
        "100",
    ]);
    assert_eq!(runs.len(), 2);
    let (pool, pipe) = (&runs[0], &runs[1]);
    assert_eq!(pool["mode"], "connections");
    assert_eq!(pool["connections"], 5);
    assert_eq!(
        (pool["round_trips"].as_u64(), pool["done"].as_u64()),
        (Some(3000), Some(3000))
    );
    // Redis's own count of the connections the run opened: 5, then 1.
    assert_eq!(pool["redis_load"]["connections_received"], 5);
    assert_eq!(pipe["redis_load"]["connections_received"], 1);
    assert_eq!(pipe["round_trips"], 30);
    for r in &runs {
        let load = &r["redis_load"];
        let (cpu, per) = (
            load["cpu_us"].as_f64().unwrap(),
            load["cpu_us_per_command"].as_f64().unwrap(),
        );
        let want = cpu / r["wire_commands"].as_f64().unwrap();
        assert!((per - want).abs() <= want * 1e-12, "{r}");
    }
}

#[test]
fn against_redis_benchmark_with_connections_compares_pools_and_a_pipeline() {
    let rows = job_json(
        &["versus", "redis-benchmark"],
        &[
            "--connections",
            "1,4",
            "--batch",
            "100",
            "--count",
            "2000",
            "--rounds",
            "2",
            "--time-budget-secs",
            "0",
        ],
    );
    let shape: Vec<(u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["connections"].as_u64().unwrap(),
                r["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shape, [(1, 1), (4, 1), (1, 100)]);
    for r in &rows {
        assert_eq!(r["rounds"], 2);
        for side in ["theirs", "ours"] {
            assert!(
                r[format!("{side}_ops_per_sec")].as_f64().unwrap() > 0.0,
                "{r}"
            );
            // Redis used some CPU for the SETs it executed, whoever sent them.
            assert!(
                r[format!("{side}_redis_cpu_us_per_set")].as_f64().unwrap() > 0.0,
                "{r}"
            );
        }
    }
}

#[test]
fn accuracy_compares_the_delay_line_with_twice_the_delay_plus_loopback() {
    let rows = job_json(
        &["cost", "accuracy"],
        // No time beyond the one pair asked for: none starts once the budget is spent.
        &[
            "--count",
            "50",
            "--rounds",
            "1",
            "--time-budget-secs",
            "0",
            "--delay-us",
            "200",
        ],
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(
        (r["delay_us"].as_u64(), r["rounds"].as_u64()),
        (Some(200), Some(1))
    );
    let (direct, expected, measured) = (
        r["loopback_p50_us"].as_f64().unwrap(),
        r["expected_us"].as_f64().unwrap(),
        r["measured_p50_us"].as_f64().unwrap(),
    );
    // 2·D plus the loopback round trip, as computed by the bench (in floating point: the JSON
    // may carry 432.14300000000003 for 400 + 32.143).
    assert!((expected - (400.0 + direct)).abs() < 1e-6, "{r}");
    // The delay line never delivers earlier than the compensation for its own cost allows
    // (how close it comes is the benchmark's to say; the histogram keeps 3 digits).
    let early = r["compensation_us"].as_f64().unwrap();
    assert!((0.0..=400.0).contains(&early), "{r}");
    assert!(measured >= (400.0 - early) * 0.999, "{r}");
    let deviation = r["deviation_percent"].as_f64().unwrap();
    assert!((deviation - (measured - expected) / expected * 100.0).abs() < 1e-9);
}

#[test]
fn a_crashed_embedded_redis_is_started_again() {
    let (mut child, _url, redis) = serve();
    unsafe { libc::kill(redis[0] as i32, libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(10);
    let fresh = loop {
        let now = support::children_named(child.id(), "redis-server");
        if let Some(&pid) = now.iter().find(|&&p| p != redis[0]) {
            break pid;
        }
        assert!(Instant::now() < deadline, "no new redis-server within 10 s");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(alive(fresh));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(wait_exit(&mut child, Duration::from_secs(10)).success());
    assert!(
        !alive(fresh),
        "the restarted server is stopped with pipescope too"
    );
}

#[test]
fn serving_is_the_default_and_takes_its_options_without_the_subcommand() {
    let mut child = support::pipescope("pipescope=info")
        .args(["--port", "0", "--delay-us", "100"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    support::stdout_line(
        child.stdout.take().unwrap(),
        Duration::from_secs(60),
        "pipescope names its default network",
        |l| {
            l.contains("default network: one-way delay 100 µs")
                .then_some(())
        },
    );
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(wait_exit(&mut child, Duration::from_secs(10)).success());
}

#[test]
fn observe_overhead_prints_a_ratio_line_per_depth() {
    let out = support::pipescope("pipescope=info")
        .args([
            "cost",
            "observer",
            "--count",
            "2000",
            "--rounds",
            "1",
            "--time-budget-secs",
            "0",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // "| K | rounds | direct ops/s | observed ops/s | observed / direct | … | target |"
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let (probe, rows): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| r[0].ends_with(" µs"));
    // The captured column's table: "| K | rounds | direct ops/s | captured ops/s | captured /
    // direct | tcpdump / direct | captured / tcpdump | … | SETs Redis executed per run | SETs
    // the capture counted per run | libpcap drops | target |", its target the capture's.
    let (captured, rows): (Vec<_>, Vec<_>) = rows
        .into_iter()
        .partition(|r| r.last().is_some_and(|t| t.starts_with("≥ 0.95×")));
    if captured.is_empty() {
        support::cannot_check(&format!("no captured column (CAP_NET_RAW?): {stdout}"));
    } else {
        let ks: Vec<&str> = captured.iter().map(|r| r[0]).collect();
        assert_eq!(ks, ["1", "16", "1000"], "{stdout}");
        let tcpdump = !stdout.contains("tcpdump: not measured");
        if !tcpdump {
            support::cannot_check(&format!("no tcpdump reference: {stdout}"));
        }
        for r in &captured {
            assert_eq!(r.len(), 14, "{r:?}");
            // Captured / direct, and where tcpdump ran, tcpdump / direct and captured /
            // tcpdump: a ratio each, whatever the values; of one round, with no interval.
            let ratios = if tcpdump { &r[4..7] } else { &r[4..5] };
            for ratio in ratios {
                let median = ratio.strip_suffix('×').expect(ratio);
                assert!(median.parse::<f64>().unwrap() > 0.0, "{r:?}");
            }
            // Redis executed every SET of the run, and the capture counted each; or libpcap
            // dropped packets on a busy machine, and the row says the capture missed some.
            assert_eq!(r[10], "2000", "{r:?}");
            match r[12] {
                "0" => assert_eq!(r[11], "2000 (all)", "{r:?}"),
                _ => assert!(r[11] == "2000 (all)" || r[11].contains("(NOT all"), "{r:?}"),
            }
            assert!(r[13].starts_with("≥ 0.95×: "), "{r:?}");
        }
    }
    let ks: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(ks, ["1", "16", "1000"], "{stdout}");
    for r in &rows {
        assert_eq!(r.len(), 13, "{r:?}");
        assert_eq!(r[1], "1", "one round each: {r:?}");
        // Observed, relayed and observed over relayed: "0.93×", a ratio whatever the values;
        // of one round, with no interval ("0.93× [0.93–0.93]" would claim a spread).
        for ratio in &r[4..7] {
            let median = ratio.strip_suffix('×').expect(ratio);
            assert!(median.parse::<f64>().unwrap() > 0.0, "{ratio}");
        }
        assert!(
            r[9].ends_with(" µs") && !r[9].contains('['),
            "added p50: {r:?}"
        );
        // Every SET went through the proxy.
        assert_eq!(r[11], "2000 (all)", "{r:?}");
    }
    assert!(
        rows[0][12].starts_with("< 30 µs added p50: "),
        "{:?}",
        rows[0]
    );
    assert!(rows[2][12].starts_with("≥ 0.9×: "), "{:?}", rows[2]);
    // The probe: p50 direct, relayed and observed, then what relaying, observing and
    // recording add, each with its interval, and the target.
    let [probe] = &probe[..] else {
        panic!("one probe row: {stdout}")
    };
    assert_eq!(probe.len(), 7, "{probe:?}");
    for p50 in &probe[..3] {
        let us: f64 = p50.trim_end_matches(" µs").parse().expect(p50);
        assert!(us > 0.0, "{probe:?}");
    }
    for added in &probe[3..6] {
        assert!(
            added.ends_with(" µs") && !added.contains('['),
            "one round: {probe:?}"
        );
    }
    assert!(probe[6].starts_with("< 30 µs added p50: "), "{probe:?}");
    // Progress, a line per round, on stderr.
    assert!(stderr.contains("K=1000 round 1: direct "), "{stderr}");
    assert!(stderr.contains("probe round 1: direct p50 "), "{stderr}");
}

/// A log written to a file or a pipe is plain text: no terminal colour codes in it.
#[test]
fn a_log_to_a_pipe_has_no_colour_codes() {
    let out = support::pipescope("pipescope=info")
        .args(["bench", "--count", "100", "--mode", "sequential"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("INFO"),
        "the log says something at info: {stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes in a piped log: {stderr:?}"
    );
}
