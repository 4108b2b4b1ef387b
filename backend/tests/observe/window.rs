//! The client's receive window in a real capture as evidence of replies lying unread: a
//! client that sends its GETs of a 1.5 KB value before reading any reply, across the test's
//! veth network (backend/tests/clients/patterns.py, get-all; a normal MSS and receive
//! buffer), is seen sending with its window down, and its verdict is decided by it; one
//! that reads each reply before its next command never is, on the same network, and on
//! loopback with a small receive buffer and 1,000-byte segments (with them, its window lags by
//! a reply's 5 bytes on every command: not taken as unread). What each client did is read from its own syscalls under
//! strace.

use std::process::Command;

use shared::observe::ObservedConnection;

use shared::observe::{DecidedBy, VerdictKind};

use crate::support;
use crate::support::oracle::{Syscalls, allowed, assert_right_or_undetermined, syscalls};
use crate::support::wire::{BASE_PORT, Wire};

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

/// patterns.py get-all across the test network: the SET of a value, then `N` GETs of it,
/// one every `WORK_US` (longer than the network's round trip, so the wire sees each reply
/// back before the next GET and cannot tell whether it was waited for), every reply read
/// only after the last GET. Its values pile up unread in its receive buffer, past what Linux
/// hides behind a steady window, but short of filling it (a full buffer would hold Redis's
/// replies back, and the wire would then show GETs sent while replies were awaited).
const N: u64 = 40;
const VALUE: u64 = 1_500;
const WORK_US: &str = "5000";

/// patterns.py `mode` (get-all or get-each) across the test network under strace, captured
/// on the client's side of the veth and read with `observe --pcap`: its connection, and its
/// syscalls.
fn across_the_network(mode: &str) -> Option<(ObservedConnection, Syscalls)> {
    let wire = Wire::new(&[(BASE_PORT, 0)])?;
    let mut client = support::clients::patterns()?;
    client
        .args([&BASE_PORT.to_string(), mode, &N.to_string(), WORK_US])
        .arg(&wire.pair.server_addr)
        .env("PATTERNS_VALUE", VALUE.to_string());
    let mut capture = wire.capture(BASE_PORT)?;
    let seen = syscalls(wire.pair.client.wrap(&client), BASE_PORT)?;
    let conns = capture.observe(BASE_PORT);
    let conn = conns
        .into_iter()
        .find(|c| c.counts.commands == N + 1)
        .unwrap_or_else(|| panic!("{mode}: no connection of {} commands", N + 1));
    eprintln!(
        "{mode}: window {:?}; strace {seen:?}; verdict: {} — {}",
        conn.window, conn.verdict.headline, conn.verdict.text
    );
    Some((conn, seen))
}

/// A GET's reply: the value and its bulk string's header and ends.
fn reply_bytes() -> u64 {
    VALUE + format!("${VALUE}\r\n\r\n").len() as u64
}

#[test]
fn a_client_that_sends_its_gets_before_reading_any_is_decided_by_its_window() {
    let Some((conn, seen)) = across_the_network("get-all") else {
        return;
    };
    let commands = N + 1;
    let v = &conn.verdict;
    let w = conn
        .window
        .clone()
        .expect("a capture weighs the client's window");
    // The oracle: the SET's reply read, then every GET sent before any other read.
    assert_eq!(
        (seen.writes, seen.waits, seen.read_before_last_write),
        (commands, 2, 5),
        "strace"
    );
    // The window's claim, against it: the commands it saw leave over unread replies are
    // GETs, sent after the SET's reply was read and before any GET's; what lay unread is
    // at most the GETs' replies.
    assert!(w.scaled, "the handshake was captured: {w:?}");
    assert!(
        w.commands_sent_with_replies_unread <= N && w.most_unread <= N * reply_bytes(),
        "{w:?}"
    );
    // It moved under more than a tenth of the commands, and decided: unless the wire itself
    // decided first, which it does when a busy machine (strace, other tests) delays replies
    // past the client's next GET, so that GETs leave while replies are visibly awaited.
    assert!(w.commands_sent_with_replies_unread * 10 > commands, "{w:?}");
    match v.decided_by {
        Some(DecidedBy::Window) => assert!(
            v.headline.ends_with(" — from the receive window"),
            "{}",
            v.headline
        ),
        None => assert!(
            conn.counts.round_trips < commands && v.kind != VerdictKind::Undetermined,
            "decided by neither the window nor the wire: {:?} {}",
            conn.counts,
            v.text
        ),
        other => panic!("decided by {other:?}: {}", v.text),
    }
    assert_right_or_undetermined("get-all", &conn, allowed(seen, commands));
}

/// The same GETs and values, each reply read before the next GET: the window, on the same
/// network with the same buffers, never shows a reply unread, and decides nothing.
#[test]
fn a_client_that_reads_each_get_before_the_next_is_never_seen_so_across_the_network() {
    let Some((conn, seen)) = across_the_network("get-each") else {
        return;
    };
    let commands = N + 1;
    assert_eq!(
        (seen.writes, seen.waits, seen.read_before_last_write),
        (commands, commands, 5 + (N - 1) * reply_bytes()),
        "strace"
    );
    let w = conn
        .window
        .clone()
        .expect("a capture weighs the client's window");
    assert!(w.scaled, "the handshake was captured: {w:?}");
    assert_eq!(w.sent_with_replies_unread, 0, "{w:?}");
    assert_eq!(conn.verdict.decided_by, None, "{}", conn.verdict.text);
    assert_right_or_undetermined("get-each", &conn, allowed(seen, commands));
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
