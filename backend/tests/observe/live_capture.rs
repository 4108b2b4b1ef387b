//! `pipescope observe --capture lo`: a live capture of real clients (redis-cli one command per
//! invocation, redis-cli --pipe, the redis crate) talking to a real redis-server, whose
//! counts must be Redis's own; a connection still open when the capture stops; and what it
//! says without CAP_NET_RAW, or for an interface that does not exist.
//!
//! Where live capture cannot run here (no CAP_NET_RAW, libpcap missing), each test fails
//! under `CI=true` saying why, and prints a visible SKIPPED otherwise.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shared::observe::{ObservedConnection, VerdictKind};

use crate::support;

/// How long the child may take to say it is capturing, and to stop and report.
const START: Duration = Duration::from_secs(30);
const REPORT: Duration = Duration::from_secs(30);

/// `pipescope observe --capture lo` as a child: its stderr read line by line (kept, and
/// passed on until it says it is capturing), its stdout read to the end on a thread.
struct Capturing {
    child: Option<Child>,
    stderr: Arc<Mutex<Vec<String>>>,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl Capturing {
    /// Starts capturing on `lo` with `args`, and waits until it says so. `None` (after
    /// `support::cannot_check`) where live capture cannot run here.
    fn start(args: &[&str]) -> Option<Capturing> {
        let spawned = Command::new(env!("CARGO_BIN_EXE_pipescope"))
            .args(["observe", "--capture", "lo"])
            .args(args)
            .env("RUST_LOG", "pipescope=warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = spawned.expect("pipescope runs");
        let stdout = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = std::io::Read::read_to_end(&mut { stdout }, &mut all);
            all
        });
        let (stderr, lines) = kept_lines(child.stderr.take().unwrap());
        let mut me = Capturing {
            child: Some(child),
            stderr,
            stdout: Some(stdout),
        };
        let deadline = Instant::now() + START;
        loop {
            match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if line.starts_with("capturing on lo ") => return Some(me),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!(
                    "pipescope observe --capture lo did not say it was capturing within {START:?}: {}",
                    me.said()
                ),
                // stderr ended: the child exited before capturing.
                Err(RecvTimeoutError::Disconnected) => {
                    let (status, _, said) = me.finish(REPORT);
                    return cannot_capture(status, &said);
                }
            }
        }
    }

    /// What it said on stderr so far.
    fn said(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Ctrl-C (SIGINT).
    fn interrupt(&self) {
        let pid = self.child.as_ref().unwrap().id() as i32;
        unsafe { libc::kill(pid, libc::SIGINT) };
    }

    /// Waits (at most `limit`) for it to exit: its status, stdout and stderr.
    fn finish(&mut self, limit: Duration) -> (ExitStatus, Vec<u8>, String) {
        let child = self.child.as_mut().unwrap();
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "pipescope observe --capture did not exit within {limit:?}: {}",
                self.said()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        self.child = None;
        let stdout = self.stdout.take().unwrap().join().unwrap();
        // The stderr thread ends with the child's stderr; give it a moment to keep the rest.
        let end = Instant::now() + Duration::from_secs(5);
        while Arc::strong_count(&self.stderr) > 1 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        (status, stdout, self.said())
    }

    /// Exits (at most `limit`) successfully with a `--json` report: its connections and stderr.
    fn report(&mut self, limit: Duration) -> (Vec<ObservedConnection>, String) {
        let (status, stdout, said) = self.finish(limit);
        assert!(
            status.success(),
            "observe --capture failed ({status}): {said}"
        );
        let conns = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not the JSON report alone ({e}): {:?}; stderr: {said}",
                String::from_utf8_lossy(&stdout)
            )
        });
        (conns, said)
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Each line of `stderr`, kept and sent on, on a thread of its own (to the end).
fn kept_lines(stderr: std::process::ChildStderr) -> (Arc<Mutex<Vec<String>>>, Receiver<String>) {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let keep = kept.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            keep.lock().unwrap().push(line.clone());
            let _ = tx.send(line);
        }
    });
    (kept, rx)
}

/// The child exited before capturing: a skip (a failure under CI) where this machine cannot
/// capture, a failure otherwise.
fn cannot_capture<T>(status: ExitStatus, said: &str) -> Option<T> {
    if said.contains("needs CAP_NET_RAW") {
        support::cannot_check(&format!(
            "live capture needs CAP_NET_RAW, which the tests lack (run them as root): {said}"
        ));
        return None;
    }
    if said.contains("libpcap") && said.contains("shared librar") {
        support::cannot_check(&format!(
            "libpcap is missing (scripts/setup test installs libpcap-dev): {said}"
        ));
        return None;
    }
    panic!("pipescope observe --capture lo exited ({status}) before capturing: {said}");
}

/// `redis-cli -p PORT ARGS`, `stdin` fed to it; its stdout.
fn cli(port: u16, args: &[&str], stdin: &[u8]) -> String {
    let mut child = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("redis-cli (scripts/setup test installs redis-tools)");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "redis-cli {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Redis's INFO commandstats: each command's calls.
fn calls(port: u16) -> HashMap<String, u64> {
    cli(port, &["INFO", "commandstats"], b"")
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let n = rest.split(',').find_map(|f| f.strip_prefix("calls="))?;
            Some((name.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

/// A redis crate connection that sends only the test's commands: not its CLIENT SETINFO,
/// which a Redis before 7.2 rejects as unknown, and so counts in no commandstats line.
fn crate_connection(url: &str) -> redis::Connection {
    use redis::IntoConnectionInfo;
    let info = url.into_connection_info().unwrap();
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    let client = redis::Client::open(info.set_redis_settings(settings)).unwrap();
    client.get_connection().unwrap()
}

/// 200 redis-cli invocations of one INCR each, 10,000 SETs by `redis-cli --pipe`, and the
/// redis crate's GETs one at a time, captured live on lo until Ctrl-C: every command Redis
/// counted is in the report, on the connections it ran on.
#[test]
fn a_live_capture_of_real_clients_counts_what_redis_counted() {
    const INCRS: usize = 200;
    const SETS: usize = 10_000;
    const GETS: usize = 50;
    let (redis, _) = support::redis();
    let port = redis.port();
    // Read before capturing: this INFO is counted by Redis, not captured.
    let before = calls(port);
    let Some(mut capture) = Capturing::start(&[
        "--redis-port",
        &port.to_string(),
        "--duration",
        "300s",
        "--json",
    ]) else {
        return;
    };

    for _ in 0..INCRS {
        cli(port, &["INCR", "counter"], b"");
    }
    let sets: Vec<u8> = (0..SETS).flat_map(support::capture_demo::set).collect();
    let piped = cli(port, &["--pipe"], &sets);
    assert!(piped.contains(&format!("replies: {SETS}")), "{piped}");
    {
        let mut con = crate_connection(&redis.url());
        for i in 0..GETS {
            let _: Option<String> = redis::cmd("GET")
                .arg(format!("key:{i}"))
                .query(&mut con)
                .unwrap();
        }
    }
    // The last packets (FINs) are on lo by now; what is buffered is read after the stop.
    std::thread::sleep(Duration::from_millis(300));
    capture.interrupt();
    let (conns, said) = capture.report(REPORT);
    let after = calls(port);

    let delta =
        |name: &str| after.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
    let context = format!("pipescope: {said}");
    assert!(said.contains("capturing: stopped by signal"), "{context}");
    assert!(
        said.contains("from a live capture on lo (Ethernet; "),
        "{context}"
    );
    assert!(
        said.contains("a \"write\" is a TCP segment as captured"),
        "{context}"
    );
    assert_eq!(
        conns.len(),
        INCRS + 2,
        "a connection per redis-cli invocation, --pipe's, the redis crate's; {context}"
    );
    assert_eq!(
        (delta("incr"), support::observe::calls_in(&conns, "INCR")),
        (INCRS as u64, INCRS as u64),
        "{context}"
    );
    assert_eq!(
        (delta("set"), support::observe::calls_in(&conns, "SET")),
        (SETS as u64, SETS as u64),
        "{context}"
    );
    assert_eq!(
        (delta("get"), support::observe::calls_in(&conns, "GET")),
        (GETS as u64, GETS as u64),
        "{context}"
    );
    // Every command Redis ran since the first reading, but that reading's own INFO (counted
    // once it had answered), is in the capture.
    let ran: u64 = after.keys().map(|k| delta(k)).sum::<u64>() - 1;
    let seen: u64 = conns.iter().map(|c| c.counts.commands).sum();
    assert_eq!(seen, ran, "{context}");

    let incr_only: Vec<&ObservedConnection> = conns
        .iter()
        .filter(|c| c.top_commands.iter().any(|(n, _)| n == "INCR"))
        .collect();
    assert_eq!(incr_only.len(), INCRS, "{context}");
    for c in &incr_only {
        assert_eq!((c.counts.commands, c.counts.round_trips), (1, 1), "{c:?}");
        assert_eq!(c.verdict.kind, VerdictKind::OneAtATime, "{c:?}");
        assert_eq!(
            c.ended.as_deref(),
            Some("closed by the client (FIN, as captured)"),
            "{c:?}"
        );
    }
    let piped = conns
        .iter()
        .find(|c| c.top_commands.iter().any(|(n, _)| n == "SET"))
        .unwrap();
    assert!(piped.counts.max_depth > 1, "--pipe pipelines: {piped:?}");
    let gets = conns
        .iter()
        .find(|c| c.top_commands.iter().any(|(n, _)| n == "GET"))
        .unwrap();
    assert_eq!(gets.counts.round_trips, gets.counts.commands, "{gets:?}");
    // On Redis's host a capture cannot confirm the waits: one at a time or undetermined
    // with it.
    assert!(gets.verdict.allows(VerdictKind::OneAtATime), "{gets:?}");
}

/// A capture that ends by its --duration while a connection is open reports it "still open
/// when the capture stopped", with what it sent so far.
#[test]
fn a_connection_open_when_the_duration_ends_is_still_open_when_the_capture_stopped() {
    let (redis, _) = support::redis();
    let port = redis.port();
    let Some(mut capture) = Capturing::start(&[
        "--redis-port",
        &port.to_string(),
        "--duration",
        "5s",
        "--json",
    ]) else {
        return;
    };
    let mut con = crate_connection(&redis.url());
    let mut pipe = redis::pipe();
    for i in 0..20 {
        pipe.cmd("SET").arg(format!("open:{i}")).arg(i).ignore();
    }
    let () = pipe.query(&mut con).unwrap();
    // Held open past the capture's end.
    let (conns, said) = capture.report(REPORT);
    drop(con);
    assert_eq!(conns.len(), 1, "{said}");
    let c = &conns[0];
    assert_eq!(support::observe::calls_in(&conns, "SET"), 20, "{said}");
    assert_eq!(
        c.ended.as_deref(),
        Some("still open when the capture stopped"),
        "{said}"
    );
    assert!(c.counts.max_depth >= 20, "one pipeline of 20: {c:?}");
    assert!(!said.contains("stopped by signal"), "{said}");
}

/// Without CAP_NET_RAW (dropped for the child with setpriv), it says what to do and exits
/// non-zero: no bare permission error, no panic, nothing on stdout.
#[test]
fn without_cap_net_raw_it_says_how_to_get_it() {
    if Command::new("setpriv").arg("--version").output().is_err() {
        return support::cannot_check("setpriv (util-linux) is not installed");
    }
    let out = Command::new("setpriv")
        .args([
            "--inh-caps=-all",
            "--bounding-set=-net_raw,-net_admin",
            "--",
        ])
        .arg(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--capture", "lo", "--duration", "5s", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("setpriv:") {
        return support::cannot_check(&format!(
            "setpriv cannot drop capabilities here (not root?): {stderr}"
        ));
    }
    assert!(!out.status.success(), "it must fail: {stderr}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "an error, not a crash: {stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for needed in [
        "live capture needs CAP_NET_RAW",
        "run pipescope as root",
        "sudo setcap cap_net_raw,cap_net_admin=eip ",
        "tcpdump",
        "--pcap",
    ] {
        assert!(stderr.contains(needed), "{needed:?} not in: {stderr}");
    }
}

/// An interface that does not exist is named, with the ones that do.
#[test]
fn an_unknown_interface_is_named_with_the_ones_there_are() {
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--capture", "nosuch0", "--duration", "5s"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("libpcap") && stderr.contains("shared librar") {
        return support::cannot_check(&format!("libpcap is missing: {stderr}"));
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("there is no interface \"nosuch0\" to capture on"),
        "{stderr}"
    );
    let listed = stderr
        .split("the interfaces here are ")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of interfaces: {stderr}"));
    assert!(listed.split([',', ' ']).any(|n| n == "lo"), "{stderr}");
}

/// The wall clock in ns since the epoch: the clock the kernel stamps captured packets with.
fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// The kernel hands packets over a block at a time (when a block is full, or on the block
/// timeout), but each keeps the stamp the kernel gave it when captured: ten requests 20 ms
/// apart, each answered before the next, are stamped within their `write`s (in ns, on the wall
/// clock), however many were handed over together. And the last, written once the ninth was
/// handed over and just before the stop (the reader held until then, so it sees the stop at
/// once), is still read: the block it is in, not handed over yet, is waited out.
#[test]
fn each_packet_keeps_its_capture_stamp_and_the_last_before_the_stop_is_read() {
    use pipescope::capture::{Event, Live, Side, Source};
    use std::io::Read;
    const REQUESTS: usize = 10;
    const PING: &[u8] = b"*1\r\n$4\r\nPING\r\n";
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut live = match Live::open("lo", &[port]) {
        Ok(live) => live,
        Err(e) => return support::cannot_check(&format!("cannot capture on lo: {e}")),
    };
    let stopper = live.stopper();
    // The ninth request handed over; the last written and the capture stopped.
    let (handed, ninth) = std::sync::mpsc::channel();
    let (stopped_tx, stopped_rx) = std::sync::mpsc::channel();
    // Each request segment as read: its stamp, its length, and when it was handed over.
    let reading = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let facts = pipescope::capture::read(Source::Live(&mut live), &[port], |e| {
            if let Event::Data {
                side: Side::Client,
                at,
                bytes,
                ..
            } = e
            {
                seen.push((at, bytes.len(), wall_ns()));
                if seen.len() == REQUESTS - 1 {
                    handed.send(()).unwrap();
                    stopped_rx.recv().unwrap();
                }
            }
        })
        .unwrap();
        (seen, facts)
    });
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut request = [0; PING.len()];
        while s.read_exact(&mut request).is_ok() {
            s.write_all(b"+PONG\r\n").unwrap();
        }
    });
    let mut client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    client.set_nodelay(true).unwrap();
    // Wall clock before and after each write.
    let mut written = Vec::new();
    for i in 0..REQUESTS {
        if i == REQUESTS - 1 {
            ninth.recv_timeout(Duration::from_secs(10)).unwrap();
        } else if i > 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        let before = wall_ns();
        client.write_all(PING).unwrap();
        written.push((before, wall_ns()));
        client.read_exact(&mut [0; 7]).unwrap();
    }
    // Stopped at once: the last request is in a block the kernel has not handed over yet.
    let stopped = Instant::now();
    stopper.store(true, std::sync::atomic::Ordering::SeqCst);
    stopped_tx.send(()).unwrap();
    let (seen, facts) = reading.join().unwrap();
    let drained = stopped.elapsed();
    drop(client);
    server.join().unwrap();

    let context = format!("written {written:?}, read (stamp, bytes, handed over) {seen:?}");
    assert_eq!(
        seen.len(),
        REQUESTS,
        "every request, the last included: {context}"
    );
    assert_eq!(facts.dropped, 0, "{context}");
    assert!(drained < Duration::from_secs(2), "drained in {drained:?}");
    for (&(at, len, _), &(before, after)) in seen.iter().zip(&written) {
        assert_eq!(len, PING.len(), "{context}");
        // The kernel stamps a packet on lo within its write (5 ms allowed for a busy machine).
        assert!(
            at + 1_000_000 >= before && at <= after + 5_000_000,
            "stamp {at} outside its write {before}..{after}: {context}"
        );
    }
    assert!(
        seen.iter().any(|(at, ..)| at % 1_000 != 0),
        "stamps in ns, not µs: {context}"
    );
    // Handed over together (within 5 ms), stamped 20 ms apart: the stamps are not when the
    // block came.
    assert!(
        seen.windows(2)
            .any(|w| w[1].2 - w[0].2 < 5_000_000 && w[1].0 - w[0].0 >= 19_000_000),
        "no two requests handed over together: {context}"
    );
    let late = seen
        .iter()
        .map(|(at, _, handed)| handed - at)
        .max()
        .unwrap();
    eprintln!(
        "handed over up to {:.1} ms after capture; drained {drained:?} after the stop",
        late as f64 / 1e6
    );
}

/// A live capture handed over: `--redact --html FILE` numbers the clients in the report and
/// writes one HTML file in which the client's address appears nowhere.
#[test]
fn a_live_capture_is_written_as_one_html_file_with_its_clients_numbered() {
    let (redis, _) = support::redis();
    let port = redis.port();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.html");
    let Some(mut capture) = Capturing::start(&[
        "--redis-port",
        &port.to_string(),
        "--duration",
        "4s",
        "--json",
        "--redact",
        "--html",
        file.to_str().unwrap(),
    ]) else {
        return;
    };
    let mut con = crate_connection(&redis.url());
    let mut pipe = redis::pipe();
    for i in 0..20 {
        pipe.cmd("SET").arg(format!("handed:{i}")).arg(i).ignore();
    }
    let () = pipe.query(&mut con).unwrap();
    let client = con_local_port(&redis);
    drop(con);
    let (conns, said) = capture.report(REPORT);
    assert_eq!(support::observe::calls_in(&conns, "SET"), 20, "{said}");
    assert!(
        conns.iter().all(|c| c.client.starts_with("client ")),
        "numbered: {:?}; {said}",
        conns.iter().map(|c| &c.client).collect::<Vec<_>>()
    );
    assert!(said.contains("wrote "), "{said}");
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(
        html.to_ascii_lowercase().starts_with("<!doctype html>"),
        "{}",
        &html[..80.min(html.len())]
    );
    let client = client.expect("the test's connection in CLIENT LIST");
    assert!(!html.contains(&client), "{client} is in the file");
    // The data is packed: looked for where it is, unpacked, where it must be found too.
    let data = support::html_file::data(&html);
    assert!(
        data.contains("\"SET\""),
        "the data holds the report's connections: {}",
        &data[..300.min(data.len())]
    );
    assert!(!data.contains(&client), "{client} is in the file's data");
}

/// This test's connections' own address as the report would name it, from Redis's CLIENT LIST.
fn con_local_port(redis: &pipescope::local_redis::LocalRedis) -> Option<String> {
    let list = cli(redis.port(), &["CLIENT", "LIST"], b"");
    // Every connection but redis-cli's own, which is asking.
    list.lines()
        .filter(|l| !l.contains("cmd=client|list"))
        .filter_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("addr=")))
        .find(|a| !a.is_empty())
        .map(str::to_string)
}
