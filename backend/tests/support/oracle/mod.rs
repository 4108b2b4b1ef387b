//! Oracles independent of pipescope for what a client did:
//! - `held`: by cause. A relay of the tests' own holds every reply for a few milliseconds
//!   and records whether each command arrived while an earlier reply was held: a client that
//!   waits never sends meanwhile. It does not slow the client, so it judges waits.
//! - `trace`: the client's own syscalls under `strace`: how many writes it made, and how many
//!   times a writing thread blocked for replies before writing again. strace slows the
//!   client about 18×, so its reads find replies already there: it counts writes well and
//!   waits only for clients that block in their reads (see `trace` for what it cannot see).

pub mod held;
mod trace;

use std::process::Command;

use shared::observe::{ObservedConnection, VerdictKind};
pub use trace::Syscalls;

/// The client's waits (`seen`) lie within what pipescope reported of its connection `c`: the
/// wire shows replies back before the next command, not whether the client waited for them,
/// so pipescope marks the round trips it cannot confirm, and the truth must lie between:
/// confirmed round trips ≤ the client's waits ≤ round trips. The last round trip is
/// confirmed by nothing after it (no next command shows whether the client waited for its
/// replies or found them already there: a non-blocking reader does), so it is not counted
/// among the confirmed.
pub fn assert_waits_within(what: &str, c: &ObservedConnection, seen: Syscalls) {
    let k = &c.counts;
    let confirmed = (k.round_trips - k.unconfirmed_trips).saturating_sub(1);
    assert!(
        confirmed <= seen.waits && seen.waits <= k.round_trips,
        "{what}: the client waited {} times (strace), pipescope says {} round trips of which {} confirmed before a next command: {}",
        seen.waits,
        k.round_trips,
        confirmed,
        c.verdict.text
    );
}

/// The verdict's kinds a client's syscalls allow, given the commands it sent: a wait for
/// (nearly) every command is one at a time; a write per command with fewer waits, a write per
/// command; fewer writes than commands, batched (pipelined or auto-pipelined: whether a later
/// piece of a batch left while an earlier piece's replies were on their way is timing the
/// syscalls do not show).
pub fn allowed(seen: Syscalls, commands: u64) -> &'static [VerdictKind] {
    if seen.waits * 10 >= commands * 9 {
        &[VerdictKind::OneAtATime]
    } else if seen.writes as f64 * 1.5 >= commands as f64 {
        &[VerdictKind::WritePerCommand]
    } else {
        &[VerdictKind::Pipelined, VerdictKind::AutoPipelined]
    }
}

/// Right or undetermined, never wrong: the verdict's kind is one `allowed`; or it is
/// undetermined and the kinds it names include one.
pub fn assert_right_or_undetermined(what: &str, c: &ObservedConnection, allowed: &[VerdictKind]) {
    let v = &c.verdict;
    let right = if v.kind == VerdictKind::Undetermined {
        v.candidates.iter().any(|k| allowed.contains(k))
    } else {
        allowed.contains(&v.kind)
    };
    assert!(
        right,
        "{what}: the syscalls allow {allowed:?}; pipescope says {:?} (candidates {:?}): {} — {}",
        v.kind, v.candidates, v.headline, v.text
    );
}

/// Where the headline states its waits as one number (none unconfirmed), it agrees with the
/// client's: the same, or one more (the last round trip, which no next command shows the
/// client waited for rather than found its replies already there).
pub fn assert_headline_waits(what: &str, c: &ObservedConnection, seen: Syscalls) {
    let k = &c.counts;
    if k.unconfirmed_trips > 0 || c.verdict.decided_by.is_some() {
        return;
    }
    let stated = k.round_trips + k.blocking;
    assert!(
        stated == seen.waits || stated == seen.waits + 1,
        "{what}: the headline states {stated} waits, strace saw {}: {}",
        seen.waits,
        c.verdict.headline
    );
}

/// Runs `client` to its end under `strace -f`, and reads its calls on the socket it connected
/// to `port` (on loopback, or across a test's network: `client` may run `ip netns exec`).
/// `None` where strace is missing or may not trace (a failure under CI=true, as
/// `cannot_check` says).
pub fn syscalls(client: Command, port: u16) -> Option<Syscalls> {
    let strace = Strace::of(&client)?;
    let out = super::clients::output_within(strace.command(), "the client under strace");
    strace.ended(&out)?;
    Some(strace.read(port))
}

/// A client to be run under `strace -f`, its trace written to a file of its own: run by the
/// caller (to its end, or started by something else, e.g. held for `observe --pid`), then
/// read.
pub struct Strace {
    client: Command,
    trace: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Strace {
    /// `client` (program, arguments and environment) under strace; `None` where strace is
    /// not installed (a failure under CI=true).
    pub fn of(client: &Command) -> Option<Strace> {
        if Command::new("strace").arg("-V").output().is_err() {
            super::cannot_check("strace is not installed (scripts/setup test installs it)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        Some(Strace {
            client: super::clients::copy(client),
            trace: dir.path().join("trace"),
            _dir: dir,
        })
    }

    /// The command that runs the client under strace.
    pub fn command(&self) -> Command {
        let mut traced = Command::new("strace");
        // Every thread; whole strings and arrays (a writev's iovec lengths tell a partial
        // write).
        traced
            .args(["-f", "-qq", "-s", "65536", "-e"])
            .arg(format!("trace={}", trace::TRACED))
            .arg("-o")
            .arg(&self.trace)
            .arg(self.client.get_program())
            .args(self.client.get_args());
        super::clients::same_env(&mut traced, &self.client);
        traced
    }

    /// Checks how the client under strace ended, given its stderr: `None` where strace may
    /// not trace here (ptrace denied: a failure under CI=true); a failed client fails.
    pub fn ended(&self, out: &std::process::Output) -> Option<()> {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() && stderr.contains("ptrace") {
            super::cannot_check(&format!(
                "strace may not trace here (ptrace denied): {stderr}"
            ));
            return None;
        }
        assert!(
            out.status.success(),
            "the client under strace failed: {stderr}"
        );
        Some(())
    }

    /// Its calls on the socket it connected to `port`, once it has ended.
    pub fn read(&self, port: u16) -> Syscalls {
        let text = std::fs::read_to_string(&self.trace).unwrap();
        trace::read(&text, port)
    }
}
