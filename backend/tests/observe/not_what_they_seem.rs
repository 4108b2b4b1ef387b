//! Files and streams that are not what they seem: compressed captures read as they are; an
//! empty file, a directory, a recording and a capture whose clock goes back (captures joined
//! end to end) each said in their own sentence; a capture where a recording is expected named
//! as one; and connections whose traffic is not Redis's protocol (HTTP and TLS sent to the
//! proxy, sides swapped by a wrong --redis-port) reported as not Redis traffic, not analysed.

use std::io::{Read, Write};
use std::process::{Command, Output};
use std::time::Duration;

use shared::observe::ObservedConnection;

use super::capture::write::{Conv, ETHERNET, OK, pcap, set};
use crate::support;

/// One client's 20 SETs one at a time, then 10 pipelined, between `client` and Redis on
/// 6379, starting at `ns`.
fn conversation(client: &str, ns: u64) -> Conv {
    let mut c = Conv::new(client, "10.0.0.2:6379", ETHERNET);
    c.ns = ns;
    c.open();
    c.one_at_a_time(20);
    let batch: Vec<u8> = (0..10).flat_map(set).collect();
    c.send(&batch);
    c.reply(&OK.repeat(10));
    c.close(true);
    c
}

fn capture() -> Vec<u8> {
    pcap(
        ETHERNET,
        262_144,
        &conversation("10.0.0.1:50000", 1_700_000_000_000_000_000).frames,
    )
}

fn observe_pcap(file: &std::path::Path, args: &[&str]) -> Output {
    support::pipescope("pipescope=warn")
        .args(["observe", "--pcap"])
        .arg(file)
        .args(args)
        .output()
        .unwrap()
}

/// The JSON report of `observe --pcap FILE --json`, and its stderr; it must succeed.
fn report(file: &std::path::Path, args: &[&str]) -> (Vec<ObservedConnection>, String) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = observe_pcap(file, &all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let conns = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not the JSON report ({e}): {stderr}"));
    (conns, stderr)
}

/// The one-line error of a failed `observe --pcap FILE`.
fn refusal(file: &std::path::Path) -> String {
    let out = observe_pcap(file, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "{stderr}");
    stderr.lines().last().unwrap_or_default().to_string()
}

#[test]
fn gzip_and_zstd_captures_are_read_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("redis.pcap");
    std::fs::write(&plain, capture()).unwrap();
    let (expected, _) = report(&plain, &[]);
    assert_eq!(expected[0].counts.commands, 30);
    for (tool, suffix) in [("gzip", "gz"), ("zstd", "zst")] {
        let packed = dir.path().join(format!("redis.pcap.{suffix}"));
        let made = Command::new(tool).args(["-k", "-q"]).arg(&plain).status();
        match made {
            Ok(s) if s.success() && packed.exists() => {}
            other => {
                support::cannot_check(&format!("{tool} could not compress a capture: {other:?}"));
                continue;
            }
        }
        let (conns, stderr) = report(&packed, &[]);
        assert_eq!(conns.len(), 1, "{tool}: {stderr}");
        assert_eq!(conns[0].counts, expected[0].counts, "{tool}");
        assert_eq!(conns[0].verdict, expected[0].verdict, "{tool}");
        std::fs::remove_file(&packed).unwrap();
    }
}

#[test]
fn an_empty_file_a_directory_and_a_recording_each_have_their_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        refusal(&empty),
        format!(
            "pipescope: {} is empty (0 bytes): a capture holds at least its header. Was tcpdump stopped before it wrote anything (stop it with Ctrl-C, not kill -9), or did -w name another file?",
            empty.display()
        )
    );
    assert_eq!(
        refusal(dir.path()),
        format!(
            "pipescope: {} is a directory: give the capture file in it (written by tcpdump -w FILE)",
            dir.path().display()
        )
    );
    let recording = dir.path().join("talk.pipescope.json");
    std::fs::write(
        &recording,
        br#"{"format":"pipescope-recording","version":1,"runs":[]}"#,
    )
    .unwrap();
    assert_eq!(
        refusal(&recording),
        format!(
            "pipescope: {0} is a pipescope recording, not a capture: show it with pipescope replay {0}, or open it on the page's runs view (/)",
            recording.display()
        )
    );
    // A gzip of nothing is empty too, once unpacked.
    let gz = dir.path().join("empty.pcap.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b"").unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let said = refusal(&gz);
    assert!(said.contains("is empty (nothing once unpacked)"), "{said}");
}

#[test]
fn captures_joined_end_to_end_are_read_part_by_part_and_said() {
    // Three captures, the later ones taken earlier (their clocks hours apart), joined as
    // `cat` of their bodies after the first header (what mergecap -a writes in one file).
    let hour = 3_600_000_000_000u64;
    let base = 1_700_000_000_000_000_000u64;
    let parts = [
        conversation("10.0.0.1:50001", base + 2 * hour),
        conversation("10.0.0.1:50002", base + hour),
        conversation("10.0.0.1:50003", base),
    ];
    let mut joined = Vec::new();
    for (i, c) in parts.iter().enumerate() {
        let bytes = pcap(ETHERNET, 262_144, &c.frames);
        joined.extend_from_slice(if i == 0 { &bytes } else { &bytes[24..] });
    }
    let first_of_second = parts[0].frames.len() + 1;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("joined.pcap");
    std::fs::write(&file, joined).unwrap();
    let (conns, stderr) = report(&file, &[]);
    assert_eq!(conns.len(), 3, "{stderr}");
    let alone = {
        let one = dir.path().join("one.pcap");
        std::fs::write(&one, pcap(ETHERNET, 262_144, &parts[0].frames)).unwrap();
        report(&one, &[]).0.remove(0)
    };
    for c in &conns {
        // Each as it reads alone: the same counts and times, never "wall 0 µs".
        assert_eq!(c.counts, alone.counts, "{}", c.client);
        assert_eq!(c.times.wall_us, alone.times.wall_us, "{}", c.client);
        assert!(c.times.wall_us > 0.0);
    }
    assert!(
        stderr.contains(&format!(
            "pipescope: the capture's clock goes back 2 times (first at packet {first_of_second}): it looks like captures joined end to end (mergecap -a, or cat)"
        )),
        "{stderr}"
    );
}

#[test]
fn a_capture_where_a_recording_is_expected_is_pointed_to_observe() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("redis.pcap");
    std::fs::write(&file, capture()).unwrap();
    let out = support::pipescope("pipescope=warn")
        .args(["replay", "--port", "0"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "pipescope: {}: this is a packet capture (pcap), not a pipescope recording: open it on the observe page (/observe, \"Open a capture…\"), or read it with pipescope observe --pcap FILE",
            file.display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_dropped_on_the_runs_page_is_pointed_to_observe() {
    use axum::body::Body;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let request =
        axum::http::Request::post(format!("http://{}/recording?file=redis.pcap", server.addr))
            .body(Body::from(capture()))
            .unwrap();
    let response = support::within(
        Duration::from_secs(60),
        "POST /recording answers",
        client.request(request),
    )
    .await
    .unwrap();
    assert_eq!(response.status().as_u16(), 422);
    let body = axum::body::to_bytes(Body::new(response.into_body()), usize::MAX)
        .await
        .unwrap();
    match shared::ServerMsg::from_json(&String::from_utf8_lossy(&body)).unwrap() {
        shared::ServerMsg::Rejected { reason } => assert!(
            reason.contains("this is a packet capture (pcap), not a pipescope recording: open it on the observe page (/observe"),
            "{reason}"
        ),
        other => panic!("not refused: {other:?}"),
    }
}

/// The connections `observe` saw when `send` was written to it by a raw client, once Redis's
/// answer came back through the proxy (the proxy's hooks see the client's bytes before it
/// hands the answer on, so the report holds them).
fn through_the_proxy(send: &[u8]) -> (Vec<ObservedConnection>, String) {
    let (redis, _) = support::redis();
    let mut observe =
        support::observe::Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
    let mut raw = std::net::TcpStream::connect(&observe.addr).unwrap();
    raw.write_all(send).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut back = [0u8; 256];
    let n = raw
        .read(&mut back)
        .expect("Redis's answer through the proxy within 30 s");
    assert!(n > 0, "Redis closed without answering");
    let conns = observe.report(Duration::from_secs(60));
    drop(raw);
    // The report's words too: no advice on a stream that is not Redis's.
    let table = shared::observe_report::markdown(&conns);
    (conns, table)
}

#[test]
fn http_and_tls_sent_to_the_proxy_are_not_redis_traffic() {
    // No Host line: Redis answers it (a Host line it drops unanswered, as an attack), and
    // the answer is what the test waits for.
    let (conns, table) =
        through_the_proxy(b"GET / HTTP/1.1\r\nAccept: */*\r\nUser-Agent: curl/8\r\n\r\n");
    assert_eq!(conns.len(), 1, "{conns:#?}");
    assert_eq!(
        conns[0].verdict.text,
        "not Redis traffic: the client sent HTTP (\"GET / HTTP/1.1\"); nothing of it is read as commands",
        "{conns:#?}"
    );
    assert_eq!(conns[0].counts.commands, 0);
    assert!(conns[0].counts.bytes_from_client > 0);
    assert!(shared::observe::advice(&conns[0]).is_none(), "{table}");
    assert!(!table.contains("ACCEPT"), "{table}");

    // A TLS ClientHello's first bytes (a handshake record of 517 bytes, TLS 1.0 framing),
    // then a line end for Redis to answer (it reads a line up to a NUL, so none here).
    let hello = [0x16, 0x03, 0x01, 0x02, 0x05, 0x01, b'\r', b'\n'];
    let (conns, _) = through_the_proxy(&hello);
    assert!(
        conns[0]
            .verdict
            .text
            .starts_with("not Redis traffic: the client sent TLS"),
        "{:?}",
        conns[0].verdict
    );
    assert_eq!(conns[0].counts.commands, 0);
}

#[test]
fn a_wrong_redis_port_that_swaps_the_sides_is_not_redis_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("redis.pcap");
    std::fs::write(&file, capture()).unwrap();
    // The client's port named as Redis's: replies on the "client" side.
    let (conns, stderr) = report(&file, &["--redis-port", "50000"]);
    assert_eq!(conns.len(), 1, "{stderr}");
    assert!(
        conns[0].verdict.text.starts_with(
            "not Redis traffic: the client sent Redis replies where commands should be (\"+OK\")"
        ),
        "{:?}",
        conns[0].verdict
    );
    assert_eq!(conns[0].counts.commands, 0);
    assert!(shared::observe::advice(&conns[0]).is_none());
}
