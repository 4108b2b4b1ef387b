//! Debian's `tcpdump` capturing traffic to a port (on loopback, or on an interface of a test's
//! own network) into a pcap file, for the tests that read real captures with
//! `pipescope observe --pcap`.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub struct Tcpdump {
    child: Child,
    lines: Receiver<String>,
    pub file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tcpdump {
    /// Starts capturing `tcp port PORT` on `lo` and waits until tcpdump says it is live.
    /// `None` where tcpdump is missing or may not capture (a failure under CI=true).
    pub fn start(port: u16) -> Option<Tcpdump> {
        Self::on(Command::new("tcpdump"), "lo", &format!("tcp port {port}"))
    }

    /// The same with `tcpdump` (the program, or a command that runs it, e.g. inside a
    /// network namespace) on `interface`, capturing what `filter` selects.
    pub fn on(mut tcpdump: Command, interface: &str, filter: &str) -> Option<Tcpdump> {
        if Command::new("tcpdump").arg("--version").output().is_err() {
            super::cannot_check("tcpdump is not installed (scripts/setup test installs it)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("redis.pcap");
        // Whole packets, written as they come, with room for bursts (BUILD-NOTES: without
        // these a burst of small segments is dropped). In immediate mode the kernel's ring
        // holds a whole-packet frame (256 KiB at -s 0) per packet: 64 MiB held 256 of them,
        // and a burst of 1,000 segments while tcpdump waited for a busy CPU was dropped ("653
        // packets dropped by kernel", 1 run in 6 with two busy loops beside two captures);
        // 256 MiB kept every packet in 30 such runs.
        let mut child = tcpdump
            .args([
                "-i",
                interface,
                "-s",
                "0",
                "-B",
                "262144",
                "-U",
                "--immediate-mode",
                "-w",
            ])
            .arg(&file)
            .arg(filter)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let capture = Tcpdump {
            child,
            lines,
            file,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut said = Vec::new();
        loop {
            match capture
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) if line.contains("listening on") => return Some(capture),
                Ok(line) => said.push(line),
                Err(_) => {
                    let why = said.join(" / ");
                    if why.contains("permitted") || why.contains("ermission") {
                        super::cannot_check(&format!(
                            "tcpdump cannot capture here (needs CAP_NET_RAW): {why}"
                        ));
                        return None;
                    }
                    panic!("tcpdump did not start capturing within 20 s: {why}");
                }
            }
        }
    }

    /// Stops the capture once what it holds is written, and returns tcpdump's summary
    /// ("N packets captured / M received by filter / K dropped by kernel").
    pub fn stop(&mut self) -> String {
        // A SIGINT right after the traffic drops what tcpdump still holds (BUILD-NOTES).
        std::thread::sleep(Duration::from_secs(1));
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "tcpdump did not stop within 20 s of SIGINT"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut summary = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            summary.push(line);
        }
        summary.join(" / ")
    }

    /// Stops the capture and reads it with `pipescope observe --pcap --json`: its connections
    /// to `port`.
    pub fn observe(&mut self, port: u16) -> Vec<shared::observe::ObservedConnection> {
        let summary = self.stop();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pipescope"));
        cmd.args(["observe", "--pcap"]).arg(&self.file).args([
            "--redis-port",
            &port.to_string(),
            "--json",
        ]);
        let out = super::clients::output_within(cmd, "pipescope observe --pcap");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "tcpdump: {summary}; pipescope: {stderr}"
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not the JSON report ({e}): {stderr}; tcpdump: {summary}"))
    }
}

impl Drop for Tcpdump {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
