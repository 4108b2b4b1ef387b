//! `pipescope versus redis-benchmark` on a cluster (`--cluster`) and over TLS
//! (`--tls`), run as the binary against real redis-servers and a real redis-benchmark.

use crate::support;

use std::collections::HashMap;
use std::process::{Command, Output};

use pipescope::cluster::LocalCluster;

/// redis-benchmark's `--help`, or `None` (with a visible SKIP, or a failure under CI=true)
/// when it cannot run here.
fn redis_benchmark_help() -> Option<String> {
    match Command::new("redis-benchmark").arg("--help").output() {
        Ok(out) => Some(
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        ),
        Err(e) => {
            support::cannot_check(&format!(
                "redis-benchmark cannot run ({e}): apt-get install redis-tools"
            ));
            None
        }
    }
}

fn conn(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

/// Each master's `cmdstat_set` calls and keys, by address.
fn masters(cluster: &LocalCluster) -> HashMap<String, (u64, u64)> {
    cluster
        .ports()
        .iter()
        .enumerate()
        .map(|(i, port)| {
            let counts = support::set_calls_and_keys(&cluster.node_url(i));
            (format!("127.0.0.1:{port}"), counts)
        })
        .collect()
}

/// `pipescope versus redis-benchmark --cluster` on `cluster`.
fn versus_on(cluster: &LocalCluster) -> Command {
    let mut cmd = support::pipescope("pipescope=info");
    cmd.args(["versus", "redis-benchmark", "--cluster", "--redis-url"])
        .arg(cluster.url());
    cmd
}

fn succeeded(out: &Output) -> String {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

/// `addr=N` pairs of one side of a landing line.
fn landed(side: &str) -> HashMap<String, u64> {
    side.split_whitespace()
        .filter_map(|t| {
            let (addr, n) = t.split_once('=')?;
            Some((addr.to_string(), n.parse().ok()?))
        })
        .collect()
}

#[test]
fn on_a_cluster_redis_benchmark_and_ours_are_compared_and_their_sets_land_where_the_output_says() {
    if redis_benchmark_help().is_none() {
        return;
    }
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let count = 2000;
    let out = versus_on(&cluster)
        .args(["--count", &count.to_string()])
        .args(["--rounds", "2", "--time-budget-secs", "0"])
        .output()
        .unwrap();
    let stdout = succeeded(&out);

    // The table: per K, -c 1 beside ours K deep, -c 3 beside ours 3·K deep.
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| K "))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let shape: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[1], r[4])).collect();
    assert_eq!(
        shape,
        [
            (
                "1",
                "--cluster -c 1 -P 1: one client, one master",
                "sequential, on every master"
            ),
            (
                "1",
                "--cluster -c 3 -P 1: a client per master",
                "pipelined 3, each batch split per master"
            ),
            (
                "16",
                "--cluster -c 1 -P 16: one client, one master",
                "pipelined 16, each batch split per master"
            ),
            (
                "16",
                "--cluster -c 3 -P 16: a client per master",
                "pipelined 48, each batch split per master"
            ),
            (
                "1000",
                "--cluster -c 1 -P 1000: one client, one master",
                "pipelined 1000, each batch split per master"
            ),
            (
                "1000",
                "--cluster -c 3 -P 1000: a client per master",
                "pipelined 3000, each batch split per master"
            ),
        ],
        "{stdout}"
    );
    for r in &rows {
        // The budget is spent at once: exactly the rounds asked for.
        assert_eq!(r[2], "2", "{r:?}");
        for ops in [r[3], r[5]] {
            assert!(ops.parse::<f64>().unwrap() > 0.0, "{r:?}");
        }
        // "0.45 [0.25–0.64]": the median within its interval.
        let (median, interval) = r[6].split_once(" [").unwrap();
        let (lo, hi) = interval.trim_end_matches(']').split_once('–').unwrap();
        let [median, lo, hi] = [median, lo, hi].map(|v| v.parse::<f64>().unwrap());
        assert!(lo <= median && median <= hi && median > 0.0, "{r:?}");
    }

    // Where the SETs landed, as the output says, against each master's own count.
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("K=")).collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    let mut claimed: HashMap<String, u64> = HashMap::new();
    // A warm-up run and two rounds per side.
    let runs = 3 * count;
    for line in &lines {
        let (label, sides) = line.split_once(": redis-benchmark ").unwrap();
        let (theirs, ours) = sides.split_once(" | pipescope ").unwrap();
        let (theirs, ours) = (landed(theirs), landed(ours));
        assert_eq!((theirs.len(), ours.len()), (3, 3), "{line}");
        // Ours: exactly its SETs, on every master.
        assert_eq!(ours.values().sum::<u64>(), runs, "{line}");
        assert!(ours.values().all(|&n| n > 0), "{line}");
        // Theirs: at least its SETs (-n is a floor when batches overshoot it); -c 1 on one
        // master only, -c 3 on all of them.
        assert!(theirs.values().sum::<u64>() >= runs, "{line}");
        let on = theirs.values().filter(|&&n| n > 0).count();
        let k: u64 = label["K=".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        if label.ends_with("-c 1") {
            assert_eq!(on, 1, "{line}");
        } else if 3 * k <= count {
            assert_eq!(on, 3, "{line}");
        } else {
            // Fewer batches of K in a run than clients: some clients get none.
            assert!(on >= (count / k) as usize, "{line}");
        }
        for (addr, n) in theirs.into_iter().chain(ours) {
            *claimed.entry(addr).or_default() += n;
        }
    }
    let now = masters(&cluster);
    for (addr, (sets, keys)) in &now {
        assert_eq!(claimed.get(addr), Some(sets), "master {addr}: {stdout}");
        assert_eq!(*keys, 0, "master {addr} keeps keys after the comparison");
    }
}

#[test]
fn on_a_cluster_whose_masters_hold_keys_the_comparison_refuses_and_touches_nothing() {
    if redis_benchmark_help().is_none() {
        return;
    }
    let cluster = LocalCluster::start(3).expect("a local cluster");
    // On whichever master serves its slot (the others answer MOVED).
    let stored = (0..3)
        .filter(|&i| {
            redis::cmd("SET")
                .arg("precious")
                .arg("1")
                .exec(&mut conn(&cluster.node_url(i)))
                .is_ok()
        })
        .count();
    assert_eq!(stored, 1);
    let before = masters(&cluster);
    let kept: u64 = before.values().map(|(_, keys)| keys).sum();
    assert_eq!(kept, 1, "one key on whichever master takes it: {before:?}");
    let out = versus_on(&cluster)
        .args(["--count", "100"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("holds 1 keys"), "{stderr}");
    assert!(stderr.contains("drop --redis-url"), "{stderr}");
    assert_eq!(
        masters(&cluster),
        before,
        "nothing written, nothing emptied"
    );
}

#[test]
fn over_tls_redis_benchmark_and_ours_are_compared_sleeping_only() {
    let Some(help) = redis_benchmark_help() else {
        return;
    };
    if !help.lines().any(|l| l.trim_start().starts_with("--tls ")) {
        support::cannot_check("this redis-benchmark was built without TLS (no --tls in --help)");
        return;
    }
    let out = support::pipescope("pipescope=info")
        .args(["versus", "redis-benchmark", "--tls", "--json"])
        .args([
            "--count",
            "2000",
            "--rounds",
            "2",
            "--time-budget-secs",
            "0",
        ])
        .output()
        .unwrap();
    let stdout = succeeded(&out);
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Rows per K, and no instrumentation overhead (it is measured busy-polling).
    let ks: Vec<u64> = rows.iter().map(|r| r["k"].as_u64().unwrap()).collect();
    assert_eq!(ks, [1, 16, 1000], "{stdout}");
    for r in &rows {
        assert_eq!(r["rounds"], 2, "{r}");
        assert!(r["theirs_ops_per_sec"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["sleeping_ops_per_sec"].as_f64().unwrap() > 0.0, "{r}");
        let m = &r["sleeping_ratio"];
        let [lo, mid, hi] = ["low", "median", "high"].map(|f| m[f].as_f64().unwrap());
        assert!(lo <= mid && mid <= hi && mid > 0.0, "{r}");
        // Busy-polling reads the socket below TLS: not run.
        assert!(r.get("busy_poll_ratio").is_none(), "{r}");
    }
    // The table says it ran over TLS.
    let table = support::pipescope("pipescope=info")
        .args(["versus", "redis-benchmark", "--tls"])
        .args(["--count", "200", "--rounds", "1", "--time-budget-secs", "0"])
        .output()
        .unwrap();
    let table = succeeded(&table);
    assert!(
        table.contains("one connection over TLS (redis-benchmark --tls --cacert"),
        "{table}"
    );
    assert_eq!(table.matches("— (not over TLS)").count(), 3, "{table}");
}
