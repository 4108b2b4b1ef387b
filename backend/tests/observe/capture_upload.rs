//! `POST /capture`, as the page sends a capture it opened: a real tcpdump capture of redis-cli
//! (INCRs one at a time, SETs by `--pipe`) posted to a running pipescope server, whose answer
//! must be what `pipescope observe --pcap FILE --json` prints for the same file and hold the
//! commands Redis's INFO commandstats counted; and files that are not captures, or cut by a
//! snap length, refused in the capture error's own words.

use crate::support;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use axum::body::Body;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use shared::ServerMsg;
use shared::observe::VerdictKind;
use support::capture_demo::Demo;

const INCRS: usize = 50;
const SETS: usize = 2_000;

/// `body` to `POST /capture?QUERY` on `server`: the HTTP status and the message it answered.
async fn post(server: &support::Server, query: &str, body: Vec<u8>) -> (u16, ServerMsg) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let request = axum::http::Request::post(format!("http://{}/capture?{query}", server.addr))
        .body(Body::from(body))
        .unwrap();
    let response = support::within(
        Duration::from_secs(60),
        "POST /capture answers",
        client.request(request),
    )
    .await
    .unwrap();
    let status = response.status().as_u16();
    let bytes = support::within(
        Duration::from_secs(60),
        "POST /capture's answer arrives whole",
        axum::body::to_bytes(Body::new(response.into_body()), usize::MAX),
    )
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let msg = ServerMsg::from_json(&text)
        .unwrap_or_else(|e| panic!("status {status}: not a ServerMsg ({e}): {text}"));
    (status, msg)
}

/// The refusal's reason; fails if the answer was anything else.
fn refused((status, msg): (u16, ServerMsg)) -> String {
    match msg {
        ServerMsg::Rejected { reason } => {
            assert_eq!(status, 422, "{reason}");
            reason
        }
        other => panic!("not refused ({status}): {other:?}"),
    }
}

/// `capture` with every packet cut to `snaplen` bytes, as `tcpdump -s SNAPLEN` writes it
/// (legacy pcap: a 24-byte header, then a 16-byte header per packet).
fn cut_to(capture: &[u8], snaplen: u32) -> Vec<u8> {
    let le = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap());
    assert_eq!(
        le(&capture[..4]),
        0xa1b2_c3d4,
        "tcpdump writes little-endian pcap here"
    );
    let mut out = capture[..24].to_vec();
    out[16..20].copy_from_slice(&snaplen.to_le_bytes());
    let mut at = 24;
    while at + 16 <= capture.len() {
        let kept = le(&capture[at + 8..at + 12]) as usize;
        let data = &capture[at + 16..at + 16 + kept];
        let cut = kept.min(snaplen as usize);
        out.extend_from_slice(&capture[at..at + 8]);
        out.extend_from_slice(&(cut as u32).to_le_bytes());
        out.extend_from_slice(&capture[at + 12..at + 16]);
        out.extend_from_slice(&data[..cut]);
        at += 16 + kept;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_posted_capture_is_read_as_observe_pcap_reads_it_and_bad_files_are_refused() {
    let Some(demo) = Demo::take_blocking(INCRS, SETS).await else {
        return;
    };
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let bytes = demo.bytes();

    let answer = post(
        &server,
        &format!("file=redis.pcap&ports={}", demo.port),
        bytes.clone(),
    )
    .await;
    let ServerMsg::CaptureRead {
        label,
        notes,
        connections,
        timelines,
    } = answer.1
    else {
        panic!("not a capture read ({}): {:?}", answer.0, answer.1)
    };
    assert_eq!(answer.0, 200);
    // The same connections, to the last figure, as the CLI reports for the same file; the
    // page's come worded (`words`), from those figures.
    let worded: Vec<_> = demo.cli.iter().cloned().map(|c| c.with_words()).collect();
    assert_eq!(connections, worded, "notes: {notes:?}");
    assert!(connections.iter().all(|c| c.words.is_some()));
    assert_eq!(label, demo.label_for("redis.pcap"));
    assert!(
        label.starts_with("from the capture redis.pcap (pcap, "),
        "{label}"
    );
    assert!(notes.is_empty(), "a whole capture: {notes:?}");

    // And Redis's own counts: every command it ran in the capture, per command and in all.
    let (before, after) = (&demo.before, &demo.after);
    assert_eq!(connections.len(), 2, "redis-cli's two connections");
    assert_eq!(
        (
            after.since(before, "incr"),
            support::observe::calls_in(&connections, "INCR")
        ),
        (INCRS as u64, INCRS as u64)
    );
    assert_eq!(
        (
            after.since(before, "set"),
            support::observe::calls_in(&connections, "SET")
        ),
        (SETS as u64, SETS as u64)
    );
    let seen: u64 = connections.iter().map(|c| c.counts.commands).sum();
    assert_eq!(seen, after.received_since(before));
    let one_by_one = connections
        .iter()
        .find(|c| c.top_commands.iter().any(|(n, _)| n == "INCR"))
        .unwrap();
    // One at a time, or undetermined with it: a capture on loopback cannot confirm the waits.
    assert!(
        one_by_one.verdict.allows(VerdictKind::OneAtATime),
        "{}",
        one_by_one.verdict.text
    );
    assert!(
        connections
            .iter()
            .all(|c| c.vantage == shared::observe::Vantage::Capture)
    );

    // Each connection's requests came with it, every reply's request drawn.
    assert_eq!(timelines.len(), connections.len());
    for c in &connections {
        let t = timelines.iter().find(|t| t.id == c.id).unwrap();
        assert_eq!(t.timeline.first.len() as u64, c.counts.commands, "{}", c.id);
    }

    // No Redis port named: Redis found in the capture, said in the page's words.
    let (status, msg) = post(&server, "file=redis.pcap", bytes.clone()).await;
    let ServerMsg::CaptureRead {
        notes,
        connections: found,
        ..
    } = msg
    else {
        panic!("{status}: {msg:?}")
    };
    assert_eq!(found.len(), connections.len(), "{notes:?}");
    assert!(
        notes.iter().any(
            |n| n.starts_with(&format!("Redis found on port {}:", demo.port))
                && n.contains("in the Redis port field")
        ),
        "{notes:?}"
    );

    // Another port named: nothing there, and the note says what to do, in the page's words.
    let (status, msg) = post(&server, "file=redis.pcap&ports=1", bytes.clone()).await;
    let ServerMsg::CaptureRead {
        notes, connections, ..
    } = msg
    else {
        panic!("{status}: {msg:?}")
    };
    assert!(connections.is_empty());
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("no TCP connection to port 1 in ")
                && n.contains("in the Redis port field")),
        "{notes:?}"
    );

    // Random bytes are not a capture; a snap length cuts the commands off (with the fix); a
    // port that is none is named.
    let mut random = vec![0u8; 4096];
    random.iter_mut().for_each(|b| *b = fastrand::u8(..));
    let reason = refused(post(&server, "file=notes.pcap", random).await);
    assert!(
        reason.starts_with(
            "Could not open notes.pcap: it is not a pcap or pcapng capture (write one with tcpdump -w FILE"
        ),
        "{reason}"
    );
    let reason = refused(
        post(
            &server,
            &format!("file=cut.pcap&ports={}", demo.port),
            cut_to(&bytes, 96),
        )
        .await,
    );
    assert!(
        reason.contains("the capture was taken with a snap length of 96 bytes"),
        "{reason}"
    );
    assert!(reason.contains("tcpdump -s 0 -w FILE"), "{reason}");
    let reason = refused(post(&server, "file=redis.pcap&ports=6379,99999", bytes).await);
    assert!(reason.contains("\"99999\" is not a TCP port"), "{reason}");

    // A body announced beyond the limit is refused before any of it is sent.
    let mut http = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let over = pipescope::server::capture_upload::MAX_CAPTURE_BYTES + 1;
    http.write_all(
        format!(
            "POST /capture?file=big.pcap HTTP/1.1\r\nHost: x\r\nContent-Length: {over}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // Answered, and closed, with none of it sent.
    let mut answer = String::new();
    support::within(
        Duration::from_secs(30),
        "the over-long body refused unsent",
        http.read_to_string(&mut answer),
    )
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // Said in words, as the page shows them (the page refuses such a file before sending it).
    assert!(
        answer.contains("it is larger than the 256 MiB the page may send; read it with pipescope observe --pcap big.pcap"),
        "{answer}"
    );
}
