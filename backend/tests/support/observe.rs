//! `pipescope observe` as a child process: started against a Redis, read line by line, stopped
//! with its report (on time, or on Ctrl-C).

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use shared::observe::ObservedConnection;

pub struct Observe {
    pub child: Child,
    /// Every stdout line (the report), read on a thread of its own.
    pub rx: Receiver<String>,
    /// Where it listens, e.g. 127.0.0.1:40123 (its "listening ADDR" line, on stderr).
    pub addr: String,
    /// Its stderr lines after that one, as they come.
    pub notes: Receiver<String>,
}

impl Observe {
    /// Starts `pipescope observe` with `args` against `redis_url`, on a free port.
    pub fn start(redis_url: &str, args: &[&str]) -> Observe {
        Self::spawn(Self::command(redis_url, "127.0.0.1:0", args))
    }

    /// The command `start` runs, listening on `listen`: to be run as it is, or wrapped (e.g.
    /// run inside a network namespace) and handed to `spawn`.
    pub fn command(redis_url: &str, listen: &str, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pipescope"));
        c.args(["observe", "--redis-url", redis_url, "--listen", listen])
            .args(args)
            .env("RUST_LOG", "pipescope=warn");
        c
    }

    /// Starts `cmd` (`pipescope observe`, its pid the process's own) and waits until it says
    /// where it listens.
    pub fn spawn(mut cmd: Command) -> Observe {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pipescope runs");
        let rx = lines(child.stdout.take().unwrap(), false);
        let notes = lines(child.stderr.take().unwrap(), true);
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = loop {
            let line = notes
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("pipescope observe says where it listens (on stderr) within 30 s");
            if let Some(addr) = line.strip_prefix("listening ") {
                break addr.to_string();
            }
        };
        Observe {
            child,
            rx,
            addr,
            notes,
        }
    }

    /// The first stderr line from now on that starts with `prefix`, within `limit`.
    pub fn note(&self, prefix: &str, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            match self
                .notes
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(_) => {}
                Err(e) => panic!("pipescope observe said no \"{prefix}…\" within {limit:?}: {e}"),
            }
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Ctrl-C (SIGINT), then the rest of stdout.
    pub fn interrupt(&mut self, limit: Duration) -> String {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        self.rest(limit)
    }

    /// Ctrl-C, then the `--json` report.
    pub fn report(&mut self, limit: Duration) -> Vec<ObservedConnection> {
        let out = self.interrupt(limit);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    /// The rest of stdout once the process has ended (deadline `limit`); it must succeed.
    pub fn rest(&mut self, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        let mut out = String::new();
        loop {
            match self
                .rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => {
                    out += &line;
                    out.push('\n');
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!(
                        "pipescope observe did not finish within {limit:?}; printed so far:\n{out}"
                    )
                }
            }
        }
        let status = self.child.wait().unwrap();
        assert!(
            status.success(),
            "pipescope observe failed: {status}\n{out}"
        );
        out
    }
}

impl Drop for Observe {
    fn drop(&mut self) {
        // A test that failed midway leaves no proxy behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `from`'s lines on a channel, read on a thread of their own; `echo`: also on this test's
/// stderr, so a failing test shows what pipescope said.
fn lines(from: impl std::io::Read + Send + 'static, echo: bool) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(from).lines().map_while(Result::ok) {
            if echo {
                eprintln!("{line}");
            }
            let _ = tx.send(line);
        }
    });
    rx
}

/// The connection the client named `name` (CLIENT SETNAME).
pub fn named<'a>(conns: &'a [ObservedConnection], name: &str) -> &'a ObservedConnection {
    conns
        .iter()
        .find(|c| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no connection named {name}: {conns:#?}"))
}

/// How many of `command` the connection sent.
/// The calls of `command` over all of `conns`.
pub fn calls_in(conns: &[ObservedConnection], command: &str) -> u64 {
    conns.iter().map(|c| calls(c, command)).sum()
}

pub fn calls(c: &ObservedConnection, command: &str) -> u64 {
    c.top_commands
        .iter()
        .find(|(n, _)| n == command)
        .map_or(0, |(_, n)| *n)
}

/// Whether this host lets pipescope trace (root, eBPF): a run of `-- true`.
pub fn can_trace() -> bool {
    if Command::new("strace").arg("-V").output().is_err() {
        super::cannot_check("strace is not installed (scripts/setup test installs it)");
        return false;
    }
    let out = super::clients::output_within(
        {
            let mut c = super::pipescope("pipescope=warn");
            c.args(["observe", "--no-proxy", "--redis-port", "1", "--", "true"]);
            c
        },
        "pipescope observe -- true",
    );
    if !out.status.success() {
        super::cannot_check(&format!(
            "pipescope cannot trace syscalls here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return false;
    }
    true
}
