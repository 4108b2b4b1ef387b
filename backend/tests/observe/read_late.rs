//! A proxy late to read. On a busy machine the proxy once took raw_writer.py's 1,000 sends
//! (a SET each, one wait at the end) in 2 reads and called it "pipelined", unmarked. Here
//! that lateness is made certain: `pipescope observe` is stopped (SIGSTOP, its own pid)
//! while the client writes, so its reads can only take the sends merged. The verdict must
//! then be a write per command, or carry the timing-dependent mark: never plain pipelined.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use shared::observe::VerdictKind;
use support::observe::{Observe, calls};

const N: u64 = 1_000;
const REPORT_LIMIT: Duration = Duration::from_secs(60);
/// How long the kernel may take to settle what it holds for the stopped proxy. Seen here: a
/// few small segments (354 bytes), the rest dropped while its buffer was full of them, then
/// all 35,780 bytes once the client retransmitted them merged (~200 ms later, on loopback).
const QUEUE_LIMIT: Duration = Duration::from_secs(10);

/// `pid` stopped until dropped (a failing test leaves no stopped process behind).
struct Stopped(i32);

impl Stopped {
    fn new(pid: u32) -> Stopped {
        let pid = pid as i32;
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0, "SIGSTOP");
        let stopped = Stopped(pid);
        // The signal is sent, not yet taken: wait until each of its threads has stopped.
        let all_stopped = || {
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
            tasks.flatten().all(|t| {
                let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
                // "pid (name) S …": the state follows the name's closing parenthesis.
                stat.rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('T'))
            })
        };
        let began = Instant::now();
        while !all_stopped() {
            assert!(began.elapsed() < QUEUE_LIMIT, "pipescope never stopped");
            std::thread::sleep(Duration::from_millis(5));
        }
        stopped
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

fn set(i: u64) -> Vec<u8> {
    let (key, value) = (format!("late:{i}"), i.to_string());
    format!(
        "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${}\r\n{value}\r\n",
        key.len(),
        value.len()
    )
    .into_bytes()
}

/// Bytes waiting in the receive queue of the proxy's socket from the client (from the client's
/// port `client` to the proxy's `proxy`), as /proc/net/tcp lists it.
fn queued(proxy: u16, client: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let port = |addr: &str| u16::from_str_radix(addr.rsplit(':').next()?, 16).ok();
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (port(f.get(1)?)? == proxy && port(f.get(2)?)? == client)
            .then(|| u64::from_str_radix(f.get(4)?.split(':').nth(1)?, 16).ok())?
    })
}

/// What `queued` says every 50 ms until it has held still (and not empty) for 150 ms, or
/// `QUEUE_LIMIT` passed.
fn settled(proxy: u16, client: u16) -> Vec<u64> {
    let began = Instant::now();
    let mut seen = Vec::new();
    while began.elapsed() < QUEUE_LIMIT {
        seen.push(queued(proxy, client).unwrap_or(0));
        if let [.., a, b, c, d] = seen[..]
            && d > 0
            && [a, b, c].iter().all(|&q| q == d)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    seen
}

/// Reads until `want` bytes came.
fn read_replies(stream: &mut TcpStream, want: &[u8]) {
    let mut got = vec![0u8; want.len()];
    stream.read_exact(&mut got).expect("every reply");
    assert_eq!(got, want);
}

#[test]
fn a_write_per_command_the_proxy_read_late_is_not_called_pipelined() {
    let (redis, _) = support::redis();
    let mut observe = Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
    let mut client = TcpStream::connect(("127.0.0.1", observe.port())).unwrap();
    client.set_nodelay(true).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // A PING answered: the proxy has accepted the connection and reached Redis.
    client.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    read_replies(&mut client, b"+PONG\r\n");

    let stopped = Stopped::new(observe.child.id());
    // A send per SET (each returns once the client's own buffer has it), then the proxy is let
    // go once what waits for it has stopped growing: its next read takes all of that.
    for i in 0..N {
        client.write_all(&set(i)).unwrap();
    }
    let seen = settled(observe.port(), client.local_addr().unwrap().port());
    drop(stopped);
    read_replies(&mut client, &b"+OK\r\n".repeat(N as usize));
    drop(client);

    let conns = observe.report(REPORT_LIMIT);
    let c = conns
        .iter()
        .find(|c| calls(c, "SET") == N)
        .unwrap_or_else(|| panic!("no connection sent {N} SETs: {conns:#?}"));
    eprintln!(
        "held for the stopped proxy: {seen:?} bytes; {:?}\n{}",
        c.counts, c.verdict.text
    );
    // The proxy read late: the SETs in a few reads (and the PING in its own).
    assert!(c.counts.writes <= 4, "{:?}", c.counts);
    assert!(
        c.verdict.allows(VerdictKind::WritePerCommand),
        "{N} sends, a SET each, read late: {}",
        c.verdict.text
    );
    // And the kernel's counts on the proxy's socket showed its reads merged the sends, whatever
    // else the mark could have said.
    assert!(
        c.verdict
            .timing_dependent
            .as_deref()
            .is_some_and(|why| why.contains("the proxy read late")),
        "{}",
        c.verdict.text
    );
}
