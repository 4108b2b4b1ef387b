//! An oracle independent of pipescope for what a client did: its own syscalls under `strace`.
//! From the calls on its socket to Redis's (or the proxy's) port, how many writes it made and
//! how many times a writing thread blocked for replies before writing again (`trace`: what
//! counts as a wait, and what it cannot see).

mod trace;

use std::process::Command;

use shared::observe::ObservedConnection;
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

/// Runs `client` to its end under `strace -f`, and reads its calls on the socket it connected
/// to `port` (on loopback, or across a test's network: `client` may run `ip netns exec`). `None` where strace is missing or may not trace (a failure under
/// CI=true, as `cannot_check` says).
pub fn syscalls(client: Command, port: u16) -> Option<Syscalls> {
    if Command::new("strace").arg("-V").output().is_err() {
        super::cannot_check("strace is not installed (scripts/setup test installs it)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let program = client.get_program().to_owned();
    let args: Vec<_> = client.get_args().map(|a| a.to_owned()).collect();
    let mut traced = Command::new("strace");
    traced
        .args([
            "-f",
            "-qq",
            // Whole strings and arrays: a writev's iovec lengths tell a partial write.
            "-s",
            "65536",
            "-e",
        ])
        .arg(format!("trace={}", trace::TRACED))
        .arg("-o")
        .arg(&trace)
        .arg(program)
        .args(args);
    for (k, v) in client.get_envs() {
        match v {
            Some(v) => traced.env(k, v),
            None => traced.env_remove(k),
        };
    }
    let out = super::clients::output_within(traced, "the client under strace");
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
    let text = std::fs::read_to_string(&trace).unwrap();
    Some(trace::read(&text, port))
}
