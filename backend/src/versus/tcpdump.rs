//! tcpdump capturing the benchmark's port beside a run: the reference for the live capture's
//! column. A whole-packet capture costs the traffic mostly in the kernel: each packet that
//! passes the filter is stamped and copied into the capture's ring by the process sending it.
//! tcpdump pays that and analyses nothing (it writes to /dev/null), so a capture by pipescope
//! that costs the traffic what tcpdump's does adds nothing of its own.
//!
//! Set up as pipescope's capture is: whole packets (`-s 0`), a 64 MiB ring (`-B 65536`, KiB),
//! libpcap's block mode. On `lo` tcpdump gets each packet twice (sent and received) where
//! pipescope asks the kernel for the received copy only (`capture::live`).

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;

use crate::child_line;
use tokio::io::{AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr};

/// How long tcpdump may take to start capturing, or to stop and report.
const DEADLINE: Duration = Duration::from_secs(10);

/// A tcpdump child that has said it is capturing.
pub(crate) struct Tcpdump {
    child: Child,
    stderr: BufReader<ChildStderr>,
}

impl Tcpdump {
    /// Starts tcpdump on `interface` for TCP to or from `port`; returns once it says it is
    /// listening (packets from then on are captured), within `DEADLINE`.
    pub(crate) async fn start(interface: &str, port: u16) -> anyhow::Result<Tcpdump> {
        let mut child = tokio::process::Command::new("tcpdump")
            .args(["-i", interface, "-s", "0", "-B", "65536", "-w", "/dev/null"])
            .arg(format!("tcp port {port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting tcpdump (Debian: apt-get install tcpdump)")?;
        let mut stderr = BufReader::new(child.stderr.take().context("tcpdump's stderr")?);
        child_line::first(&mut stderr, DEADLINE, |l| {
            l.contains("listening on").then_some(())
        })
        .await
        .context("tcpdump did not say it was capturing")?;
        Ok(Tcpdump { child, stderr })
    }

    /// Stops it as Ctrl-C does and waits for its report (within `DEADLINE`): the packets the
    /// kernel dropped ("N packets dropped by kernel").
    pub(crate) async fn stop(mut self) -> anyhow::Result<u64> {
        let pid = self.child.id().context("tcpdump already exited")?;
        // SAFETY: a signal to our own child, which has not been reaped (`child.id()` is Some).
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        let mut report = String::new();
        tokio::time::timeout(DEADLINE, async {
            self.stderr.read_to_string(&mut report).await?;
            self.child.wait().await
        })
        .await
        .context("tcpdump did not stop within 10 s of SIGINT")?
        .context("waiting for tcpdump")?;
        dropped_by_kernel(&report)
            .with_context(|| format!("no \"dropped by kernel\" in tcpdump's report: {report}"))
    }
}

/// The count in tcpdump's "N packets dropped by kernel" line.
fn dropped_by_kernel(report: &str) -> Option<u64> {
    report
        .lines()
        .find_map(|l| l.trim().strip_suffix(" packets dropped by kernel"))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_kernels_drops_from_tcpdumps_report() {
        let report = "tcpdump: listening on lo, link-type EN10MB (Ethernet), snapshot length 262144 bytes\n\
                      1858 packets captured\n1858 packets received by filter\n3 packets dropped by kernel\n";
        assert_eq!(super::dropped_by_kernel(report), Some(3));
        assert_eq!(super::dropped_by_kernel("1 packet captured\n"), None);
    }
}
