//! The client's receive window in a real capture as evidence of replies lying unread: a
//! client that sends 5,000 SETs before reading any reply (backend/tests/clients/patterns.py,
//! send-all, its receive buffer set small so that unread replies fill it, and its segments
//! 1,000 bytes as across a network: loopback's ~64 KB segments leave a window too little room
//! to show more than the lag every receiver has) is seen sending with its window down; one
//! that reads each reply before its next command never is, with the same buffer and segments
//! (with them, its window lags by a reply's 5 bytes on every command: not taken as unread).
//! What each client did is read from its own syscalls under strace.

use std::process::Command;

use shared::observe::ObservedConnection;

use crate::support;
use crate::support::oracle::{Syscalls, syscalls};

/// Runs patterns.py `mode` with `n` SETs under strace while tcpdump captures Redis's port,
/// then reads the capture: the client's connection as observed, and its syscalls.
fn captured(mode: &str, n: u64) -> Option<(ObservedConnection, Syscalls, String)> {
    let (redis, _) = support::redis();
    let mut client = support::clients::patterns()?;
    client
        .args([&redis.port().to_string(), mode, &n.to_string()])
        .env("PATTERNS_RCVBUF", "8192")
        .env("PATTERNS_MSS", "1000");
    let mut tcpdump = support::tcpdump::Tcpdump::start(redis.port())?;
    let seen = syscalls(client, redis.port())?;
    let summary = tcpdump.stop();
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--pcap"])
        .arg(&tcpdump.file)
        .args(["--redis-port", &redis.port().to_string(), "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let conns: Vec<ObservedConnection> = serde_json::from_slice(&out.stdout).unwrap();
    let conn = conns
        .into_iter()
        .find(|c| c.counts.commands == n)
        .unwrap_or_else(|| panic!("no connection of {n} commands; tcpdump: {summary}; {stderr}"));
    Some((
        conn,
        seen,
        format!("tcpdump: {summary}; pipescope: {stderr}"),
    ))
}

// Ignored: in one fresh clone's run on a loaded machine the client did not finish within
// 120 s. Its replies overflowed the tiny receive buffer and Redis's retransmissions backed
// off; it passed in every other run. The window's claim is held to the unit tests in
// observe/window.rs, and its soundness (no claim for a client that reads each reply) to the
// test below, until a client that fills its window without stalling replaces this one.
#[test]
#[ignore = "a tiny receive buffer can stall Redis's retransmissions past the client's deadline"]
fn a_client_that_sends_everything_before_reading_is_seen_sending_with_replies_unread() {
    const N: u64 = 5_000;
    let Some((conn, seen, context)) = captured("send-all", N) else {
        return;
    };
    // The oracle: every send came before the first read.
    assert_eq!((seen.writes, seen.waits), (N, 1), "strace; {context}");
    let w = conn
        .window
        .clone()
        .expect("a capture weighs the client's window");
    assert!(w.scaled, "the handshake was captured: {w:?}");
    assert!(
        w.sent_with_replies_unread > 0 && w.most_unread > 0,
        "{w:?}; {context}"
    );
    assert!(w.sent_with_replies_unread <= w.segments, "{w:?}");
}

#[test]
fn a_client_that_reads_each_reply_before_its_next_command_is_never_seen_so() {
    const N: u64 = 300;
    let Some((conn, seen, context)) = captured("waits", N) else {
        return;
    };
    assert_eq!((seen.writes, seen.waits), (N, N), "strace; {context}");
    let w = conn
        .window
        .clone()
        .expect("a capture weighs the client's window");
    assert_eq!(w.sent_with_replies_unread, 0, "{w:?}; {context}");
    assert_eq!(w.segments, N, "{w:?}; {context}");
}
