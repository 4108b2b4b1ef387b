//! `pipescope observe --pcap FILE`: captures built here byte by byte (pcap and pcapng, the
//! headers by etherparse) for each edge of TCP reassembly, and a real capture taken by
//! tcpdump of redis-cli talking to a real redis-server. Each test runs the binary and asserts
//! what a user sees: the connections, their command counts, the message.

use crate::support;
pub mod write;

use std::process::{Command, Output};

use shared::observe::{ObservedConnection, VerdictKind};
use write::{Conv, ETHERNET, Frame, NULL, OK, RAW, SLL2, cmd, pcap, pcapng, set};

/// `pipescope observe --pcap` on `bytes` with `args`.
fn observe(bytes: &[u8], args: &[&str]) -> Output {
    let file = tempfile::Builder::new().suffix(".pcap").tempfile().unwrap();
    std::fs::write(file.path(), bytes).unwrap();
    Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--pcap"])
        .arg(file.path())
        .args(args)
        .output()
        .unwrap()
}

/// The connections `observe --json` reported, and its stderr; fails if it failed.
fn report(bytes: &[u8], args: &[&str]) -> (Vec<ObservedConnection>, String) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = observe(bytes, &all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "observe --pcap failed: {stderr}");
    let conns = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not the JSON report ({e}): {stderr}"));
    (conns, stderr)
}

fn commands(c: &ObservedConnection) -> (u64, u64, u64) {
    (c.counts.commands, c.counts.replies, c.counts.round_trips)
}

#[test]
fn in_order_one_at_a_time_then_pipelined_with_the_labels() {
    let mut c = Conv::new("10.0.0.1:50000", "10.0.0.2:6379", ETHERNET);
    c.open();
    c.one_at_a_time(3);
    let batch: Vec<u8> = (0..10).flat_map(set).collect();
    c.send(&batch);
    c.reply(&OK.repeat(10));
    c.close(true);
    let (conns, stderr) = report(&pcap(ETHERNET, 262_144, &c.frames), &[]);
    assert_eq!(conns.len(), 1, "{stderr}");
    let conn = &conns[0];
    assert_eq!(commands(conn), (13, 13, 4));
    assert_eq!(conn.counts.writes, 4);
    assert_eq!(conn.client, "10.0.0.1:50000");
    assert_eq!(
        conn.ended.as_deref(),
        Some("closed by the client (FIN, as captured)")
    );
    // 20 µs between packets: each trip is the request's segment to the reply's.
    assert_eq!(conn.times.waiting_us, 80.0, "{:?}", conn.times);
    assert!(
        stderr.contains("times are the capture host's clock"),
        "{stderr}"
    );
    assert!(
        stderr.contains("a \"write\" is a TCP segment as captured"),
        "{stderr}"
    );

    // A file cut inside its last packet (tcpdump stopped while writing it) is read up to it.
    let mut cut = pcap(ETHERNET, 262_144, &c.frames);
    cut.truncate(cut.len() - 3);
    let (conns, stderr) = report(&cut, &[]);
    assert_eq!(commands(&conns[0]), (13, 13, 4));
    assert!(stderr.contains("the file ends inside a packet"), "{stderr}");

    // The table says the same, under the label.
    let out = observe(&pcap(ETHERNET, 262_144, &c.frames), &[]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("from the capture "), "{table}");
    assert!(table.contains("Ethernet"), "{table}");
}

#[test]
fn out_of_order_segments_are_read_in_stream_order() {
    let mut c = Conv::new("10.0.0.1:50001", "10.0.0.2:6379", ETHERNET);
    c.open();
    // Three pipelined commands in three segments; the capture holds the third before the
    // second. The replies, in two segments, also arrive swapped.
    let segs: Vec<Vec<u8>> = (0..3).map(|i| c.client_segment(&set(i))).collect();
    c.push(segs[0].clone());
    c.push(segs[2].clone());
    c.push(segs[1].clone());
    let r1 = c.redis_segment(&OK.repeat(2));
    let r2 = c.redis_segment(OK);
    c.push(r2);
    c.push(r1);
    c.close(true);
    let (conns, stderr) = report(&pcap(ETHERNET, 262_144, &c.frames), &[]);
    assert_eq!(conns.len(), 1, "{stderr}");
    assert_eq!(commands(&conns[0]), (3, 3, 1), "{stderr}");
    assert_eq!(conns[0].counts.max_depth, 3);
    assert!(!stderr.contains("not in the capture"), "{stderr}");
}

#[test]
fn retransmissions_and_overlaps_count_each_byte_once() {
    let mut c = Conv::new("10.0.0.1:50002", "10.0.0.2:6379", ETHERNET);
    c.open();
    // A SET retransmitted whole, and its reply twice.
    let s0 = c.client_segment(&set(0));
    c.push(s0.clone());
    c.push(s0);
    let r0 = c.redis_segment(OK);
    c.push(r0.clone());
    c.push(r0);
    // Two commands sent in two segments, the first lost to the receiver: retransmitted as
    // one segment holding both (overlapping the second, already captured).
    let (a, b) = (set(1), set(2));
    let start = c.cseq;
    let _lost = c.client_segment(&a);
    let second = c.client_segment(&b);
    c.push(second);
    let both = c.packet(true, start, "P", &[a.clone(), b.clone()].concat());
    c.push(both);
    c.reply(&OK.repeat(2));
    // Overlapping segments ahead of a hole: bytes [10, 40) and [30, end) of a batch, then
    // [0, 20): every byte of the 5 commands arrives, some twice.
    let batch: Vec<u8> = (3..8).flat_map(set).collect();
    let base = c.cseq;
    let at = |off: usize| base.wrapping_add(off as u32);
    let p1 = c.packet(true, at(10), "P", &batch[10..40]);
    let p2 = c.packet(true, at(30), "P", &batch[30..]);
    let p3 = c.packet(true, at(0), "P", &batch[..20]);
    c.cseq = at(batch.len());
    for p in [p1, p2, p3] {
        c.push(p);
    }
    c.reply(&OK.repeat(5));
    c.close(false);
    let (conns, stderr) = report(&pcap(ETHERNET, 262_144, &c.frames), &[]);
    assert_eq!(conns.len(), 1, "{stderr}");
    assert_eq!(commands(&conns[0]), (8, 8, 3), "{stderr}");
    assert_eq!(
        conns[0].counts.bytes_from_client,
        (0..8).map(|i| set(i).len() as u64).sum::<u64>()
    );
    assert_eq!(
        conns[0].ended.as_deref(),
        Some("closed by Redis (FIN, as captured)")
    );
}

#[test]
fn a_snap_length_capture_is_refused_with_the_fix() {
    let mut c = Conv::new("10.0.0.1:50003", "10.0.0.2:6379", ETHERNET);
    c.open();
    c.send(&cmd(&["SET", "k", &"v".repeat(200)]));
    c.reply(OK);
    let out = observe(&pcap(ETHERNET, 96, &c.frames), &["--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a cut capture must be refused: {stderr}"
    );
    assert!(out.stdout.is_empty(), "no report on stdout");
    assert!(stderr.contains("snap length of 96 bytes"), "{stderr}");
    assert!(stderr.contains("tcpdump -s 0"), "{stderr}");
    assert!(
        stderr.contains("packet 4 "),
        "the first cut packet is named: {stderr}"
    );

    // A file that is no capture at all is named as such.
    let out = observe(b"SET k v\r\n", &["--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("is not a pcap or pcapng capture"),
        "{stderr}"
    );
}

#[test]
fn a_capture_begun_mid_connection_resynchronises_at_a_command() {
    let mut c = Conv::new("10.0.0.1:50004", "10.0.0.2:6379", ETHERNET);
    // No handshake: the capture starts with the end of a reply, then the tail of a SET whose
    // start it missed, then two whole commands one at a time.
    c.reply(b"lue\r\n");
    let tail = cmd(&["SET", "k", "a-long-value"]);
    c.send(&tail[tail.len() - 9..]);
    c.reply(OK);
    c.one_at_a_time(2);
    c.close(true);
    let (conns, stderr) = report(&pcap(ETHERNET, 262_144, &c.frames), &[]);
    assert_eq!(conns.len(), 1, "{stderr}");
    assert_eq!(commands(&conns[0]), (2, 2, 2), "{stderr}");
    assert!(
        stderr.contains("the capture began mid-connection"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "resynchronised at a command boundary (9 bytes of commands and 10 of replies skipped"
        ),
        "{stderr}"
    );
    let ended = conns[0].ended.as_deref().unwrap();
    assert!(ended.contains("began mid-connection"), "{ended}");
}

#[test]
fn a_segment_the_capture_missed_is_a_gap_and_counts_go_on_after_it() {
    let mut c = Conv::new("10.0.0.1:50005", "10.0.0.2:6379", ETHERNET);
    c.open();
    c.one_at_a_time(2);
    // A SET the capture dropped (Redis got it: it answers and acknowledges it).
    let _dropped = c.client_segment(&set(9));
    c.reply(OK);
    c.one_at_a_time(3);
    c.close(true);
    let (conns, stderr) = report(&pcap(ETHERNET, 262_144, &c.frames), &[]);
    assert_eq!(conns.len(), 1, "{stderr}");
    assert_eq!(commands(&conns[0]), (5, 5, 5), "{stderr}");
    assert_eq!(
        conns[0].counts.pushes, 0,
        "the dropped SET's reply is skipped, not a push"
    );
    assert!(
        stderr.contains(&format!(
            "{} bytes from the client are not in the capture",
            set(9).len()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("resynchronised"), "{stderr}");
}

#[test]
fn ipv6_on_linux_cooked_v2() {
    let mut c = Conv::new("[::1]:50006", "[::1]:7000", SLL2);
    c.open();
    c.one_at_a_time(4);
    c.close(true);
    let (conns, stderr) = report(&pcap(SLL2, 262_144, &c.frames), &["--redis-port", "7000"]);
    assert_eq!(conns.len(), 1, "{stderr}");
    assert_eq!(conns[0].client, "[::1]:50006");
    assert_eq!(commands(&conns[0]), (4, 4, 4));
    // Four round trips are too few to confirm as waits: one at a time, or undetermined with it.
    assert!(
        conns[0].verdict.allows(VerdictKind::OneAtATime),
        "{}",
        conns[0].verdict.text
    );
    assert!(stderr.contains("SLL2"), "{stderr}");

    // With no port named, Redis is found on 7000.
    let (conns, stderr) = report(&pcap(SLL2, 262_144, &c.frames), &[]);
    assert_eq!(commands(&conns[0]), (4, 4, 4), "{stderr}");
    assert!(stderr.contains("Redis found on port 7000"), "{stderr}");

    // Another port named: nothing, and the note says what to do.
    let (conns, stderr) = report(&pcap(SLL2, 262_144, &c.frames), &["--redis-port", "6379"]);
    assert!(conns.is_empty());
    assert!(
        stderr.contains("no TCP connection to port 6379") && stderr.contains("--redis-port"),
        "{stderr}"
    );
}

#[test]
fn pcapng_with_interfaces_of_different_link_types_and_several_ports() {
    // Interface 0: Ethernet, µs stamps; 1: BSD loopback, ns; 2: raw IP, ns.
    let mut a = Conv::new("10.0.0.1:50007", "10.0.0.2:6379", ETHERNET);
    let mut b = Conv::new("127.0.0.1:50008", "127.0.0.1:6380", NULL);
    let mut r = Conv::new("[fe80::1]:50009", "[fe80::2]:6379", RAW);
    (b.interface, r.interface) = (1, 2);
    b.ns += 5_000;
    r.ns += 7_000;
    for c in [&mut a, &mut b, &mut r] {
        c.open();
    }
    a.one_at_a_time(2);
    b.send(&(0..50).flat_map(set).collect::<Vec<u8>>());
    b.reply(&OK.repeat(50));
    r.one_at_a_time(1);
    a.close(true);
    b.close(true);
    r.reset(true);
    let mut frames: Vec<Frame> = [a.frames, b.frames, r.frames]
        .into_iter()
        .flatten()
        .collect();
    frames.sort_by_key(|f| f.ns);
    let file = pcapng(&[(ETHERNET, 6), (NULL, 9), (RAW, 9)], &frames);
    let (conns, stderr) = report(&file, &["--redis-port", "6379", "--redis-port", "6380"]);
    // Three Redis servers: each connection named with the one it went to.
    let by_client = |addr: &str| {
        conns
            .iter()
            .find(|c| c.client == addr)
            .unwrap_or_else(|| panic!("no connection {addr}: {stderr}"))
    };
    assert_eq!(conns.len(), 3, "{stderr}");
    assert_eq!(
        commands(by_client("10.0.0.1:50007 → 10.0.0.2:6379")),
        (2, 2, 2)
    );
    let piped = by_client("127.0.0.1:50008 → 127.0.0.1:6380");
    assert_eq!(commands(piped), (50, 50, 1));
    assert_eq!(piped.verdict.kind, VerdictKind::Pipelined);
    assert_eq!(
        commands(by_client("[fe80::1]:50009 → [fe80::2]:6379")),
        (1, 1, 1)
    );
    assert!(
        stderr.contains("connections to 3 Redis servers (a cluster's masters?), read as one application's: 10.0.0.2:6379: 1 connection, 2 commands; 127.0.0.1:6380: 1 connection, 50 commands; [fe80::2]:6379: 1 connection, 1 command"),
        "{stderr}"
    );
    assert!(
        stderr.contains("pcapng, Ethernet, BSD loopback (NULL), raw IP"),
        "{stderr}"
    );
}

#[test]
fn fin_and_rst_end_connections_and_say_who() {
    let mut quit = Conv::new("10.0.0.1:50010", "10.0.0.2:6379", ETHERNET);
    quit.open();
    quit.send(&cmd(&["QUIT"]));
    quit.reply(OK);
    quit.close(false);
    let mut reset = Conv::new("10.0.0.1:50011", "10.0.0.2:6379", ETHERNET);
    reset.open();
    reset.one_at_a_time(1);
    reset.reset(true);
    let mut open = Conv::new("10.0.0.1:50012", "10.0.0.2:6379", ETHERNET);
    open.open();
    open.one_at_a_time(1);
    let frames: Vec<Frame> = [quit.frames, reset.frames, open.frames]
        .into_iter()
        .flatten()
        .collect();
    let (conns, stderr) = report(&pcap(ETHERNET, 262_144, &frames), &[]);
    assert_eq!(conns.len(), 3, "{stderr}");
    let ended: Vec<&str> = conns.iter().map(|c| c.ended.as_deref().unwrap()).collect();
    assert_eq!(
        ended,
        [
            "closed by Redis (FIN, as captured)",
            "reset by the client (RST, as captured)",
            "still open when the capture ended"
        ]
    );
    assert!(conns.iter().all(|c| c.counts.commands == 1));
}

/// A real capture: tcpdump on loopback while redis-cli sends INCRs one at a time and SETs
/// with --pipe to a real redis-server; the capture's counts must be Redis's own.
#[test]
fn a_tcpdump_capture_of_redis_cli_counts_what_redis_counted() {
    use std::io::Write;
    const INCRS: usize = 200;
    const SETS: usize = 10_000;

    let (redis, _) = support::redis();
    let port = redis.port().to_string();
    let cli = |args: &[&str], stdin: Option<&[u8]>| -> String {
        let mut child = Command::new("redis-cli")
            .args(["-p", &port])
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("redis-cli (scripts/setup test installs redis-tools)");
        let mut input = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            input.write_all(bytes).unwrap();
        }
        drop(input);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "redis-cli {args:?} failed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let calls = |info: &str| -> std::collections::HashMap<String, u64> {
        info.lines()
            .filter_map(|l| {
                let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
                let n = rest.split(',').find_map(|f| f.strip_prefix("calls="))?;
                Some((name.to_string(), n.trim().parse().ok()?))
            })
            .collect()
    };
    let before = calls(&cli(&["INFO", "commandstats"], None));

    let Some(mut tcpdump) = support::tcpdump::Tcpdump::start(redis.port()) else {
        return;
    };
    let incrs = "INCR counter\n".repeat(INCRS);
    cli(&[], Some(incrs.as_bytes()));
    let sets: Vec<u8> = (0..SETS).flat_map(set).collect();
    let piped = cli(&["--pipe"], Some(&sets));
    assert!(piped.contains(&format!("replies: {SETS}")), "{piped}");
    let summary = tcpdump.stop();
    let after = calls(&cli(&["INFO", "commandstats"], None));

    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--pcap"])
        .arg(&tcpdump.file)
        .args(["--redis-port", &port, "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let conns: Vec<ObservedConnection> = serde_json::from_slice(&out.stdout).unwrap();
    let delta =
        |name: &str| after.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
    let captured = |name: &str| crate::support::observe::calls_in(&conns, name);
    let context = format!("tcpdump: {summary}; pipescope: {stderr}");
    assert_eq!(conns.len(), 2, "redis-cli's two connections; {context}");
    assert_eq!(
        (delta("incr"), captured("INCR")),
        (INCRS as u64, INCRS as u64),
        "{context}"
    );
    assert_eq!(
        (delta("set"), captured("SET")),
        (SETS as u64, SETS as u64),
        "{context}"
    );
    // Every command Redis ran since the first reading, but that reading's own INFO (counted
    // once it had answered), is in the capture.
    let ran: u64 = after.keys().map(|k| delta(k)).sum::<u64>() - 1;
    let seen: u64 = conns.iter().map(|c| c.counts.commands).sum();
    assert_eq!(seen, ran, "{context}");
    let one_by_one = conns
        .iter()
        .find(|c| c.top_commands.iter().any(|(n, _)| n == "INCR"))
        .unwrap();
    assert_eq!(
        one_by_one.counts.round_trips, one_by_one.counts.commands,
        "each INCR waited: {context}"
    );
    // On Redis's host each reply is back before redis-cli's next command: one at a time, or
    // undetermined with it (the capture cannot show the client waited), never another kind.
    assert!(
        one_by_one.verdict.allows(VerdictKind::OneAtATime),
        "{}: {context}",
        one_by_one.verdict.text
    );
}

/// Read from memory as `POST /capture` reads a page's file, a capture's ended connections keep
/// their requests for the page's timeline as the proxy keeps them: the latest 32, each whole.
#[test]
fn the_latest_32_ended_connections_keep_their_requests() {
    let frames: Vec<Frame> = (0..40)
        .flat_map(|i| {
            let mut c = Conv::new(
                &format!("10.0.0.1:{}", 51_000 + i),
                "10.0.0.2:6379",
                ETHERNET,
            );
            c.open();
            c.one_at_a_time(i + 1);
            c.close(true);
            c.frames
        })
        .collect();
    let bytes = pcap(ETHERNET, 262_144, &frames);
    let source = pipescope::capture::Source::Bytes {
        name: std::path::Path::new("many.pcap"),
        bytes: &bytes,
    };
    let seen = pipescope::observe::captured::observe(source, &[6379]).unwrap();
    assert_eq!(seen.connections.len(), 40, "{:?}", seen.notes);
    let ids: Vec<u64> = seen.timelines.iter().map(|t| t.id).collect();
    assert_eq!(ids, (9..=40).collect::<Vec<u64>>());
    // Connection n sent n commands, one at a time: every one drawn.
    for t in &seen.timelines {
        assert_eq!(t.timeline.first.len() as u64, t.id);
    }
    assert!(
        pipescope::observe::captured::label(&seen.facts)
            .starts_with("from the capture many.pcap (pcap, Ethernet; ")
    );
}

/// Connections are listed in the order they began, whatever order they ended in; and a
/// capture, which never gets a pipelined equivalent, does not say why a connection of other
/// commands has none.
#[test]
fn connections_are_listed_as_they_began_and_a_capture_names_no_missing_equivalent() {
    let mut first = Conv::new("10.0.0.1:50100", "10.0.0.2:6379", ETHERNET);
    let mut second = Conv::new("10.0.0.1:50101", "10.0.0.2:6379", ETHERNET);
    first.open();
    first.one_at_a_time(2);
    // The second begins after the first and ends before it; it sends CONFIG GETs only.
    second.ns = first.ns;
    second.open();
    for _ in 0..2 {
        second.send(&cmd(&["CONFIG", "GET", "maxmemory"]));
        second.reply(b"*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");
    }
    second.close(true);
    first.ns = second.ns;
    first.one_at_a_time(1);
    first.close(true);
    let mut frames: Vec<Frame> = first.frames.into_iter().chain(second.frames).collect();
    frames.sort_by_key(|f| f.ns);
    let bytes = pcap(ETHERNET, 262_144, &frames);

    let (conns, stderr) = report(&bytes, &[]);
    let clients: Vec<&str> = conns.iter().map(|c| c.client.as_str()).collect();
    assert_eq!(clients, ["10.0.0.1:50100", "10.0.0.1:50101"], "{stderr}");
    assert!(conns[0].id < conns[1].id, "{conns:#?}");

    let table = observe(&bytes, &[]);
    let out = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    let at = |client: &str| {
        out.find(client)
            .unwrap_or_else(|| panic!("{client}: {out}"))
    };
    assert!(at("10.0.0.1:50100") < at("10.0.0.1:50101"), "{out}");
    assert!(!out.contains("no pipelined equivalent"), "{out}");
}
