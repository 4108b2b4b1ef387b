//! A real capture for the tests that open one as the page does (`POST /capture`): tcpdump on
//! loopback while redis-cli sends INCRs one at a time and SETs by `--pipe` to a real
//! redis-server, with Redis's own counts read around it and what `pipescope observe --pcap
//! FILE --json` reports for the same file.

use std::process::Command;
use std::time::{Duration, Instant};

use pipescope::local_redis::LocalRedis;
use shared::observe::ObservedConnection;

use super::commandstats::Counted;
use super::tcpdump::Tcpdump;

pub struct Demo {
    /// The capture file, as tcpdump wrote it (kept while `Demo` lives).
    pub capture: Tcpdump,
    /// Redis's port, which the reader must be told.
    pub port: u16,
    /// What `observe --pcap --redis-port PORT --json` printed, and the label it said on stderr.
    pub cli: Vec<ObservedConnection>,
    pub cli_label: String,
    /// Redis's counters before the traffic and after the capture stopped.
    pub before: Counted,
    pub after: Counted,
    _redis: LocalRedis,
}

impl Demo {
    /// `incrs` INCRs one at a time, then `sets` SETs by `redis-cli --pipe`, captured. `None`
    /// where redis-cli or tcpdump cannot run (a failure under CI=true).
    pub fn take(incrs: usize, sets: usize) -> Option<Demo> {
        super::clients::redis_cli()?;
        let (redis, _) = super::redis();
        let port = redis.port();
        let before = Counted::parse(&cli(port, &["INFO", "stats", "commandstats"], None));
        let mut capture = Tcpdump::start(port)?;
        cli(port, &[], Some("INCR counter\n".repeat(incrs).as_bytes()));
        let piped: Vec<u8> = (0..sets).flat_map(set).collect();
        let said = cli(port, &["--pipe"], Some(&piped));
        assert!(said.contains(&format!("replies: {sets}")), "{said}");
        let summary = capture.stop();
        let after = Counted::parse(&cli(port, &["INFO", "stats", "commandstats"], None));

        let mut observe = Command::new(env!("CARGO_BIN_EXE_pipescope"));
        observe
            .args(["observe", "--pcap"])
            .arg(&capture.file)
            .args(["--redis-port", &port.to_string(), "--json"]);
        let out = super::clients::output_within(observe, "pipescope observe --pcap");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "tcpdump: {summary}; {stderr}");
        let cli: Vec<ObservedConnection> = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not the JSON report ({e}): {stderr}"));
        let cli_label = stderr
            .lines()
            .find(|l| l.starts_with("from the capture "))
            .unwrap_or_else(|| panic!("no label on stderr: {stderr}"))
            .to_string();
        Some(Demo {
            capture,
            port,
            cli,
            cli_label,
            before,
            after,
            _redis: redis,
        })
    }

    /// The CLI's label as it names a file the page sent as `name` (the page sends no path).
    pub fn label_for(&self, name: &str) -> String {
        self.cli_label
            .replace(&self.capture.file.display().to_string(), name)
    }

    /// The capture's bytes.
    /// `take` on a blocking thread, for an async test (it waits on tcpdump and redis-cli).
    pub async fn take_blocking(incrs: usize, sets: usize) -> Option<Demo> {
        tokio::task::spawn_blocking(move || Demo::take(incrs, sets))
            .await
            .unwrap()
    }

    pub fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.capture.file).unwrap()
    }
}

/// `redis-cli -p PORT ARGS` with `stdin`, to its end (within a minute); its stdout.
fn cli(port: u16, args: &[&str], stdin: Option<&[u8]>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("stdin"), dir.path().join("stdout"));
    std::fs::write(&input, stdin.unwrap_or_default()).unwrap();
    let mut child = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .spawn()
        .expect("redis-cli (scripts/setup test installs redis-tools)");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("redis-cli {args:?} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "redis-cli {args:?} failed: {status}");
    std::fs::read_to_string(&output).unwrap()
}

/// `SET key:i value:i` in RESP.
pub fn set(i: usize) -> Vec<u8> {
    let (k, v) = (format!("key:{i}"), format!("value:{i}"));
    format!(
        "*3\r\n$3\r\nSET\r\n${}\r\n{k}\r\n${}\r\n{v}\r\n",
        k.len(),
        v.len()
    )
    .into_bytes()
}
