//! An oracle independent of pipescope for what a client did: its own syscalls under `strace`.
//! From the calls on its socket to Redis's (or the proxy's) port, how many writes it made and
//! how many times it stopped sending to read replies (a run of reads between writes: a wait).

use std::process::Command;

use shared::observe::ObservedConnection;

/// What a client's syscalls show of its connection to one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syscalls {
    /// send/sendto/sendmsg/write/writev calls that sent bytes.
    pub writes: u64,
    /// Runs of reads (recv/recvfrom/recvmsg/read/readv) after a write, before the next write.
    pub waits: u64,
    /// The most pieces those writes can reach the other end in: each write's bytes cut into
    /// TCP segments of at least `SMALLEST_SEGMENT`. A reader (the proxy) may read a write in
    /// pieces, and where a piece ends on a command's end, the next reads as a write of its
    /// own: no reader can tell it from two writes.
    pub pieces_at_most: u64,
}

/// TCP's default MSS (RFC 9293), below any path's here: loopback's is ~65,000 bytes, a veth's
/// 1,448.
const SMALLEST_SEGMENT: u64 = 536;

/// The client's waits (`seen`) lie within what pipescope reported of its connection `c`: the
/// wire shows replies back before the next command, not whether the client waited for them,
/// so pipescope marks the round trips it cannot confirm, and the truth must lie between:
/// confirmed round trips ≤ the client's waits ≤ round trips.
pub fn assert_waits_within(what: &str, c: &ObservedConnection, seen: Syscalls) {
    let k = &c.counts;
    let confirmed = k.round_trips - k.unconfirmed_trips;
    assert!(
        confirmed <= seen.waits && seen.waits <= k.round_trips,
        "{what}: the client waited {} times (strace), pipescope says {} round trips of which {} confirmed: {}",
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
            "-e",
            "trace=connect,close,sendto,sendmsg,write,writev,recvfrom,recvmsg,read,readv",
            "-o",
        ])
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
    Some(read(&text, port))
}

/// The calls in a trace on the socket connected to `port`.
fn read(trace: &str, port: u16) -> Syscalls {
    let to_port = format!("sin_port=htons({port})");
    let mut fd: Option<String> = None;
    let (mut writes, mut waits, mut reading, mut wrote) = (0, 0, false, false);
    let mut pieces_at_most = 0;
    for line in trace.lines() {
        // "PID name(FD, …) = RESULT"
        let call = line
            .split_once(' ')
            .map_or(line, |(_, rest)| rest)
            .trim_start();
        let Some((name, rest)) = call.split_once('(') else {
            continue;
        };
        let this_fd = rest.split([',', ')']).next().unwrap_or("").trim();
        let result: i64 = call
            .rsplit_once(" = ")
            .and_then(|(_, r)| r.split_whitespace().next()?.parse().ok())
            .unwrap_or(-1);
        if name == "connect" && rest.contains(&to_port) {
            fd = Some(this_fd.to_string());
            continue;
        }
        if fd.as_deref() != Some(this_fd) {
            continue;
        }
        match name {
            "close" => fd = None,
            "sendto" | "sendmsg" | "write" | "writev" if result > 0 => {
                writes += 1;
                pieces_at_most += (result as u64).div_ceil(SMALLEST_SEGMENT);
                wrote = true;
                reading = false;
            }
            "recvfrom" | "recvmsg" | "read" | "readv" if wrote && !reading => {
                waits += 1;
                reading = true;
            }
            _ => {}
        }
    }
    Syscalls {
        writes,
        waits,
        pieces_at_most,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_and_runs_of_reads_on_the_one_socket() {
        let trace = r#"7 connect(3, {sa_family=AF_INET, sin_port=htons(7000), sin_addr=inet_addr("127.0.0.1")}, 16) = 0
7 sendto(3, "*1\r\n$4\r\nPING\r\n", 14, 0, NULL, 0) = 14
7 recvfrom(3, "+PONG\r\n", 65536, 0, NULL, NULL) = 7
7 sendto(3, "*3..."..., 30, 0, NULL, 0) = 30
7 sendto(3, "*3..."..., 30, 0, NULL, 0) = 30
7 write(1, "x", 1) = 1
7 recvfrom(3, "+OK\r\n", 65536, 0, NULL, NULL) = 5
7 recvfrom(3, "+OK\r\n", 65536, 0, NULL, NULL) = 5
7 close(3) = 0"#;
        assert_eq!(
            super::read(trace, 7000),
            super::Syscalls {
                writes: 3,
                waits: 2,
                pieces_at_most: 3,
            }
        );
    }
}
