//! `pipescope observe` as a child process, exactly as a user runs it, for the costs that
//! measure it from outside: started in front of a Redis on a free loopback port, its notes
//! drained, stopped by a signal, its report read.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncReadExt, BufReader};

use crate::child_line;

pub struct ObserveChild {
    child: tokio::process::Child,
    pub pid: u32,
    stdout: BufReader<tokio::process::ChildStdout>,
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    /// Its notes after that line (stderr), read on so that it never blocks on a full pipe.
    notes: tokio::task::JoinHandle<String>,
}

/// How it ended.
pub struct Ended {
    /// What it printed on stdout.
    pub report: String,
    pub status: std::process::ExitStatus,
    /// What it said on stderr after where it listens.
    pub notes: String,
}

impl ObserveChild {
    /// Starts `exe observe --json --no-equivalent` with `args` in front of `url`, and waits
    /// for it to say where it listens.
    pub async fn start(exe: &Path, url: &str, args: &[&str]) -> anyhow::Result<ObserveChild> {
        let mut child = tokio::process::Command::new(exe)
            .args(["observe", "--redis-url", url, "--listen", "127.0.0.1:0"])
            .args(["--json", "--no-equivalent"])
            .args(args)
            .env("RUST_LOG", "pipescope=warn")
            .env_remove("REDIS_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting pipescope observe")?;
        let pid = child.id().context("pipescope observe's pid")?;
        let stdout = BufReader::new(child.stdout.take().context("its stdout")?);
        // Where it listens is on stderr, on the line "listening ADDR".
        let mut notes = BufReader::new(child.stderr.take().context("its stderr")?);
        let addr: std::net::SocketAddr =
            child_line::first(&mut notes, Duration::from_secs(30), |l| {
                l.strip_prefix("listening ").map(str::to_string)
            })
            .await
            .context("pipescope observe did not say where it listens")?
            .parse()
            .context("pipescope observe's listening line")?;
        let notes = tokio::spawn(async move {
            let mut rest = String::new();
            let _ = notes.read_to_string(&mut rest).await;
            rest
        });
        Ok(ObserveChild {
            child,
            pid,
            stdout,
            addr,
            notes,
        })
    }

    /// Stops it with `signal` (SIGINT is Ctrl-C) and waits, within `limit`, for it to end.
    pub async fn stop(mut self, signal: libc::c_int, limit: Duration) -> anyhow::Result<Ended> {
        // SAFETY: kill(2) on our own child's pid, which we have not reaped yet.
        unsafe {
            libc::kill(self.pid as libc::pid_t, signal);
        }
        let ended = tokio::time::timeout(limit, async {
            let mut report = String::new();
            self.stdout.read_to_string(&mut report).await?;
            let status = self.child.wait().await?;
            let notes = self.notes.await.unwrap_or_default();
            anyhow::Ok(Ended {
                report,
                status,
                notes,
            })
        })
        .await;
        ended.with_context(|| {
            format!(
                "pipescope observe did not end within {} s of the signal",
                limit.as_secs()
            )
        })?
    }
}
