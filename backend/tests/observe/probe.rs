//! `pipescope observe --probe`: the proxy holds a few replies back and sees whether the client
//! sends while one is held. Checked against clients whose way of waiting is known by
//! construction (patterns.py, with 200 µs of their own work per command so every reply is
//! back before the next command on loopback: the wire's timing alone cannot tell them apart)
//! and redis-py, each under strace, whose calls are the truth: how many times the sending
//! thread blocked in a receive between two of its sends.
//!
//! A client that never waited must have every decided hold "sent while held"; one that waited
//! before every send, every decided hold "waited for the release". How many holds are decided
//! depends on the machine (a busy client that reacts late to a released reply leaves its hold
//! undecided), so the tests assert that none is decided wrong, never how many are decided:
//! `pipescope cost probe` measures that share, with its interval. The client checks every
//! reply it got (so the holds changed nothing of them), and the held total is said on stderr
//! and within its share of the connection's time.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use shared::observe::{ObservedConnection, ProbeEvidence};
use support::clients::{output_within, patterns, redis_py_work};
use support::observe::Observe;

const REPORT_LIMIT: Duration = Duration::from_secs(60);
/// Commands per client: enough time for a few holds within 1 % of it.
const N: u64 = 5000;
/// Beside CPU hogs the client's gaps stretch, and so do the holds: more time for a few.
const N_BESIDE_HOGS: u64 = 8000;
const WORK_US: &str = "200";
/// The share of a connection's time the probe may hold its replies (`holding::SHARE`).
const SHARE: f64 = 0.01;
const MAX_HOLDS: u64 = 20;
/// Holds made whatever the share (`holding::FEW`).
const FEW: u64 = 3;

/// What the client's own syscalls show of its socket to the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Truth {
    /// Sends that sent bytes, in all its threads.
    sends: u64,
    /// Times its sending thread (the one with the most sends) made a blocking receive (no
    /// MSG_DONTWAIT) between two of its sends: it waited for a reply before sending again.
    waits: u64,
}

/// Runs `client` to its end under `strace -f -ff` (a file per thread, so no call is split
/// across lines) and reads its calls on the socket it connected to `port`. `None`: strace is
/// missing or may not trace here (a failure under CI=true).
fn traced(client: Command, port: u16) -> Option<Truth> {
    if Command::new("strace").arg("-V").output().is_err() {
        support::cannot_check("strace is not installed (scripts/setup test installs it)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut strace = Command::new("strace");
    strace
        .args([
            "-f",
            "-ff",
            "-qq",
            "-e",
            "trace=connect,close,sendto,sendmsg,write,writev,recvfrom,recvmsg,read,readv",
            "-o",
        ])
        .arg(dir.path().join("t"))
        .arg(client.get_program())
        .args(client.get_args());
    let out = output_within(strace, "the client under strace");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("ptrace") {
        support::cannot_check(&format!(
            "strace may not trace here (ptrace denied): {stderr}"
        ));
        return None;
    }
    // The client checked every reply it got: a reply held back arrived, whole and in order.
    assert!(
        out.status.success(),
        "the client failed (a reply wrong or missing?): {stderr}"
    );
    Some(read_truth(dir.path(), port))
}

/// One traced call: its name, first argument and result, and whether it asked not to block.
struct Call<'a> {
    name: &'a str,
    fd: &'a str,
    result: i64,
    dontwait: bool,
    line: &'a str,
}

fn call(line: &str) -> Option<Call<'_>> {
    let (name, rest) = line.split_once('(')?;
    Some(Call {
        name,
        fd: rest.split([',', ')']).next().unwrap_or("").trim(),
        result: line
            .rsplit_once(" = ")
            .and_then(|(_, r)| r.split_whitespace().next()?.parse().ok())
            .unwrap_or(-1),
        dontwait: line.contains("MSG_DONTWAIT"),
        line,
    })
}

/// The truth from a directory of per-thread traces. The thread that connected counts its
/// calls on the socket from its connect (its descriptor may have been a file's before);
/// threads started later count all of theirs.
fn read_truth(dir: &Path, port: u16) -> Truth {
    let to_port = format!("sin_port=htons({port})");
    let traces: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let fd = traces
        .iter()
        .flat_map(|t| t.lines())
        .filter_map(call)
        .find(|c| c.name == "connect" && c.line.contains(&to_port))
        .map(|c| c.fd.to_string())
        .expect("the client connected to the proxy (strace saw it)");
    let mut sends = 0;
    let mut sender = (0, 0);
    for trace in &traces {
        let connects_here = trace.lines().any(|l| l.contains(&to_port));
        let mut counting = !connects_here;
        let (mut mine, mut waits, mut blocked) = (0, 0, false);
        for c in trace.lines().filter_map(call) {
            if c.name == "connect" && c.line.contains(&to_port) {
                counting = true;
                continue;
            }
            if !counting || c.fd != fd {
                continue;
            }
            match c.name {
                "close" => counting = false,
                "sendto" | "sendmsg" | "write" | "writev" if c.result > 0 => {
                    if blocked {
                        waits += 1;
                    }
                    blocked = false;
                    mine += 1;
                }
                "recvfrom" | "recvmsg" | "read" | "readv" if !c.dontwait && mine > 0 => {
                    blocked = true
                }
                _ => {}
            }
        }
        sends += mine;
        if mine > sender.0 {
            sender = (mine, waits);
        }
    }
    Truth {
        sends,
        waits: sender.1,
    }
}

/// `client(port)` through `pipescope observe --probe` in front of a real redis-server, under
/// strace: its connection (the last one: redis-py may open none before), the truth, and
/// what observe said on stderr. `None`: a visible skip.
fn probed(
    client: impl Fn(u16) -> Option<Command>,
) -> Option<(ObservedConnection, Truth, Vec<String>)> {
    let (redis, _) = support::redis();
    let mut observe = Observe::start(&redis.url(), &["--json", "--no-equivalent", "--probe"]);
    let truth = traced(client(observe.port())?, observe.port())?;
    let conns = observe.report(REPORT_LIMIT);
    let c = conns
        .into_iter()
        .max_by_key(|c| c.counts.commands)
        .expect("the client's connection was observed");
    let mut notes = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !notes.iter().any(|l: &String| l.starts_with("probe: held")) {
        match observe
            .notes
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(line) => notes.push(line),
            Err(_) => panic!("observe --probe said what it held on stderr: {notes:#?}"),
        }
    }
    Some((c, truth, notes))
}

/// The probe's evidence of `c`, checked for what holds in every case: some replies held, no
/// more than `MAX_HOLDS`, the held total within its share and said on stderr.
fn evidence(what: &str, c: &ObservedConnection, notes: &[String]) -> ProbeEvidence {
    let p = c
        .probe
        .clone()
        .unwrap_or_else(|| panic!("{what}: no probe evidence: {c:#?}"));
    eprintln!(
        "{what}: held {}, sent while held {}, waited for the release {}, held {:.0} µs ({:.0} µs late) of {:.0} µs ({:.3} %)",
        p.held,
        p.sent_while_held,
        p.waited_for_release,
        p.held_us,
        p.late_us,
        c.times.wall_us,
        100.0 * p.share_of(c.times.wall_us)
    );
    assert!(
        (1..=MAX_HOLDS).contains(&p.held),
        "{what}: between 1 and {MAX_HOLDS} replies held: {p:?}"
    );
    assert!(
        p.sent_while_held + p.waited_for_release <= p.held,
        "{what}: more holds decided than made: {p:?}"
    );
    // What the probe planned stays within its share, but for its first few holds (made
    // whatever the share, each at most the 50 ms cap); a thread woken late on a busy machine
    // holds longer than planned, and says by how much.
    assert!(
        p.held_us - p.late_us <= SHARE * c.times.wall_us + FEW as f64 * 50_000.0,
        "{what}: held {} µs ({} µs of it late), more than {} % of its {} µs: {p:?}",
        p.held_us,
        p.late_us,
        SHARE * 100.0,
        c.times.wall_us
    );
    let line = format!("connection {}: {}", c.id, p.line(c.times.wall_us));
    assert!(
        notes.contains(&line),
        "{what}: stderr says what was held ({line:?}): {notes:#?}"
    );
    p
}

/// A client that never waited: every decided hold saw it send.
fn assert_never_waited(what: &str, c: &ObservedConnection, truth: Truth, notes: &[String]) {
    assert_eq!(truth.waits, 0, "{what}: strace shows waits: {truth:?}");
    let p = evidence(what, c, notes);
    assert_eq!(
        p.waited_for_release, 0,
        "{what}: never waited (strace: {truth:?}), yet the probe says it waited: {p:?}"
    );
}

/// A client that waited before every send: every decided hold saw it wait.
fn assert_waited_each_time(what: &str, c: &ObservedConnection, truth: Truth, notes: &[String]) {
    assert_eq!(
        truth.waits + 1,
        truth.sends,
        "{what}: strace shows a wait before each send but the first: {truth:?}"
    );
    let p = evidence(what, c, notes);
    assert_eq!(
        p.sent_while_held, 0,
        "{what}: waited before every send (strace: {truth:?}), yet the probe saw it send while a reply was held: {p:?}"
    );
}

fn pattern(mode: &'static str, n: u64) -> impl Fn(u16) -> Option<Command> {
    move |port| {
        let mut c = patterns()?;
        c.args([&port.to_string(), mode, &n.to_string(), WORK_US]);
        Some(c)
    }
}

fn pattern_probed(mode: &'static str) -> Option<(ObservedConnection, Truth, Vec<String>)> {
    pattern_probed_n(mode, N)
}

fn pattern_probed_n(
    mode: &'static str,
    n: u64,
) -> Option<(ObservedConnection, Truth, Vec<String>)> {
    let (c, truth, notes) = probed(pattern(mode, n))?;
    assert_eq!(truth.sends, n, "{mode}: a send per command (strace)");
    assert_eq!(
        (c.counts.commands, c.counts.replies),
        (n, n),
        "{mode}: every command and reply went through"
    );
    Some((c, truth, notes))
}

#[test]
fn a_client_that_waits_for_each_reply_is_seen_waiting_for_the_release() {
    let Some((c, truth, notes)) = pattern_probed("waits") else {
        return;
    };
    assert_waited_each_time("waits", &c, truth, &notes);
}

#[test]
fn a_client_that_sends_everything_then_reads_is_seen_sending_while_held() {
    let Some((c, truth, notes)) = pattern_probed("send-all") else {
        return;
    };
    assert_never_waited("send-all", &c, truth, &notes);
}

#[test]
fn a_client_that_reads_without_blocking_is_seen_sending_while_held() {
    let Some((c, truth, notes)) = pattern_probed("nonblocking") else {
        return;
    };
    assert_never_waited("nonblocking", &c, truth, &notes);
}

#[test]
fn a_sending_thread_beside_a_reading_thread_is_seen_sending_while_held() {
    let Some((c, truth, notes)) = pattern_probed("threads") else {
        return;
    };
    assert_never_waited("threads", &c, truth, &notes);
}

/// A thread per core spinning until dropped (two minutes at most): a shared CPU, where the
/// client's gaps and reactions stretch and jump.
struct Hogs {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Hogs {
    fn start() -> Hogs {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let until = Instant::now() + Duration::from_secs(120);
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                        }
                    }
                })
            })
            .collect();
        Hogs { stop, threads }
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn beside_cpu_hogs_a_waiting_client_is_still_seen_waiting() {
    let _hogs = Hogs::start();
    let Some((c, truth, notes)) = pattern_probed_n("waits", N_BESIDE_HOGS) else {
        return;
    };
    assert_waited_each_time("waits beside hogs", &c, truth, &notes);
}

#[test]
fn beside_cpu_hogs_a_nonblocking_reader_is_still_seen_sending_while_held() {
    let _hogs = Hogs::start();
    let Some((c, truth, notes)) = pattern_probed_n("nonblocking", N_BESIDE_HOGS) else {
        return;
    };
    assert_never_waited("nonblocking beside hogs", &c, truth, &notes);
}

fn redis_py(mode: &'static str, n: u64) -> impl Fn(u16) -> Option<Command> {
    move |port| {
        let mut c = redis_py_work()?;
        c.args([&port.to_string(), mode, &n.to_string(), WORK_US]);
        Some(c)
    }
}

#[test]
fn redis_py_one_at_a_time_is_seen_waiting_for_the_release() {
    let Some((c, truth, notes)) = probed(redis_py("loop", N)) else {
        return;
    };
    assert_waited_each_time("redis-py loop", &c, truth, &notes);
}

/// A pipeline executed every few commands waits for each batch's replies before the next:
/// a hold (made only once every reply is back) finds it waiting, as strace does.
#[test]
fn redis_py_pipelines_in_batches_are_seen_waiting_for_the_release() {
    let Some((c, truth, notes)) = probed(redis_py("batches", 2 * N)) else {
        return;
    };
    assert_waited_each_time("redis-py batches", &c, truth, &notes);
    assert!(
        c.counts.writes < c.counts.commands,
        "redis-py batches: a write per batch, not per command: {:?}",
        c.counts
    );
}

/// A loop of 100 SETs lasts a few ms, and 1 % of it is less than one hold: the probe still
/// holds a few of its replies, and whatever it decides is right (redis-py's loop waits for
/// each reply, by its code and by strace). How often it decides is `cost probe`'s to say.
#[test]
fn a_short_loop_is_still_probed_and_never_read_wrong() {
    let Some((c, truth, notes)) = probed(redis_py("loop", 100)) else {
        return;
    };
    assert_eq!(truth.waits + 1, truth.sends, "strace: {truth:?}");
    let p = c.probe.clone().expect("probe evidence");
    eprintln!(
        "short loop: held {}, sent while held {}, waited for the release {}, held {:.0} µs of {:.0} µs; {}",
        p.held,
        p.sent_while_held,
        p.waited_for_release,
        p.held_us,
        c.times.wall_us,
        c.verdict.headline
    );
    assert!((1..=FEW).contains(&p.held), "a few holds: {p:?}");
    assert_eq!(
        p.sent_while_held, 0,
        "it never sent while a reply was held: {p:?}"
    );
    assert!(
        c.verdict.allows(shared::observe::VerdictKind::OneAtATime),
        "{}",
        c.verdict.text
    );
    let line = format!("connection {}: {}", c.id, p.line(c.times.wall_us));
    assert!(
        notes.contains(&line),
        "stderr says what was held: {notes:#?}"
    );
}

/// A capture cannot hold replies: `--probe` with one is refused, saying so.
#[test]
fn probe_with_a_capture_is_refused_with_a_sentence() {
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--probe", "--pcap", "/nonexistent.pcap"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("a capture cannot hold replies"),
        "the refusal says why: {stderr}"
    );
}
