//! `observe --pid` with two processes whose ids fall in one slot of the eBPF programs' filter
//! of traced processes (pid % 4096, asked by every syscall on the host before the full set):
//! both are traced. Each is redis-benchmark, one SET per send by construction, and Redis's
//! own count of SETs is the oracle that both ran in full.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::observe::can_trace;

/// The filter's slots (trace.bpf.c's SLOTS).
const SLOTS: u32 = 4096;
const SETS: u64 = 300;

#[test]
fn two_processes_in_one_slot_of_the_filter_are_both_traced() {
    if !can_trace() {
        return;
    }
    if Command::new("redis-benchmark")
        .arg("--version")
        .output()
        .is_err()
    {
        support::cannot_check("redis-benchmark is missing (Debian's redis-tools)");
        return;
    }
    let (redis, _) = support::redis();
    let waiting = || {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "read go; exec redis-benchmark -p {} -c 1 -P 1 -n {SETS} -t set -q",
                redis.port()
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting sh")
    };
    // Process ids are handed out in turn (wrapping at pid_max): within a few thousand
    // short-lived shells one lands in the first one's slot.
    let first = waiting();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut tries = 0;
    let second = loop {
        let mut c = waiting();
        if c.id() % SLOTS == first.id() % SLOTS {
            break c;
        }
        c.kill().unwrap();
        c.wait().unwrap();
        tries += 1;
        assert!(
            tries < 40_000 && Instant::now() < deadline,
            "no process id in slot {} after {tries} shells",
            first.id() % SLOTS
        );
    };
    eprintln!(
        "processes {} and {} share slot {} (after {tries} shells)",
        first.id(),
        second.id(),
        first.id() % SLOTS
    );
    let before = stats(redis.port());
    let mut observe = support::pipescope("pipescope=warn")
        .args(["observe", "--json", "--no-proxy", "--redis-port"])
        .arg(redis.port().to_string())
        .args(["--pid", &first.id().to_string()])
        .args(["--pid", &second.id().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let notes = observe.stderr.take().unwrap();
    let (tx, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(notes).lines().map_while(Result::ok) {
            eprintln!("{line}");
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while !said
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .expect("pipescope observe --pid says it is tracing within 30 s")
        .starts_with("tracing the syscalls of process")
    {}
    let pids = [first.id(), second.id()];
    for mut c in [first, second] {
        writeln!(c.stdin.take().unwrap(), "go").unwrap();
        let status = wait(&mut c, Duration::from_secs(120), "redis-benchmark");
        assert!(status.success(), "redis-benchmark failed: {status}");
    }
    assert_eq!(
        stats(redis.port()).since(&before, "set"),
        2 * SETS,
        "Redis's count of SETs"
    );
    unsafe { libc::kill(observe.id() as i32, libc::SIGINT) };
    let mut out = String::new();
    let mut stdout = observe.stdout.take().unwrap();
    let reading = std::thread::spawn(move || stdout.read_to_string(&mut out).map(|_| out));
    let status = wait(
        &mut observe,
        Duration::from_secs(60),
        "pipescope observe --pid",
    );
    assert!(status.success(), "pipescope observe --pid failed: {status}");
    let out = reading.join().unwrap().unwrap();
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    // Each process's busiest socket (redis-benchmark first reads Redis's config on another).
    let busiest = |pid: u32| {
        rows.iter()
            .filter(|r| r["pid"].as_u64() == Some(pid as u64))
            .filter_map(|r| r["syscalls"]["sends"].as_u64())
            .max()
    };
    assert_eq!(
        (busiest(pids[0]), busiest(pids[1])),
        (Some(SETS), Some(SETS)),
        "each process's SETs, one send each: {out}"
    );
}

/// Redis's counts of commands served.
fn stats(port: u16) -> support::commandstats::Counted {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut c = client.get_connection().unwrap();
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .arg("commandstats")
        .query(&mut c)
        .unwrap();
    support::commandstats::Counted::parse(&info)
}

fn wait(c: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = c.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
