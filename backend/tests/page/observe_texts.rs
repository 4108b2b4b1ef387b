//! The Observe view's words where they used to mislead, in headless Chromium against the real
//! backend: what the empty table says before anything and after a capture with no Redis
//! connection; the tcpdump hint following the Redis port field; a refused file named once in
//! the banner; a replay's Observe view saying it has no Redis (not asking for a token); and a
//! capture dropped on the runs view pointed to the Observe view.

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use support::browser::{Browser, text_of, until_js};

// The observe tests' capture writer: only part of it is used here.
#[allow(dead_code)]
#[path = "../observe/capture/write.rs"]
mod write;

/// Waits until `selector`'s text is `expected` (30 s).
async fn until_text(c: &fantoccini::Client, selector: &str, expected: &str) {
    until_js(
        c,
        &format!("const e = document.querySelector({selector:?}); return e ? e.textContent : ''"),
        Duration::from_secs(30),
        &format!("{selector} says {expected:?}"),
        |t: &String| t == expected,
    )
    .await;
}

/// Types `ports` into the Redis port field, as a user would (an input event).
async fn set_ports(c: &fantoccini::Client, ports: &str) {
    c.execute(
        "const i = document.querySelector('#capture-ports');
         i.value = arguments[0]; i.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![ports.into()],
    )
    .await
    .unwrap();
}

/// Drops `bytes` on the view as the file `name`.
async fn drop_file(c: &fantoccini::Client, name: &str, bytes: &[u8]) {
    c.execute(
        "const [name, bytes] = arguments;
         const dt = new DataTransfer();
         dt.items.add(new File([new Uint8Array(bytes)], name));
         document.querySelector('main').dispatchEvent(
           new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));",
        vec![name.into(), serde_json::json!(bytes)],
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observe_view_says_what_is_empty_and_why_and_follows_the_port_field() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!("{}observe", server.http_url())).await;
    // The file that is no capture is refused by the server (422), which Chromium logs.
    browser.expect_console("status of 422");
    let c = &browser.client;

    until_text(
        c,
        "#observed-empty",
        "No connections yet: start observing, then run your application against the address above; or open a capture.",
    )
    .await;

    // The tcpdump hint follows the port field.
    until_text(
        c,
        "#capture-hint",
        "tcpdump -i any -s 0 -w redis.pcap 'tcp port 6379'",
    )
    .await;
    set_ports(c, "7000").await;
    until_text(
        c,
        "#capture-hint",
        "tcpdump -i any -s 0 -w redis.pcap 'tcp port 7000'",
    )
    .await;
    set_ports(c, "7000,7001").await;
    until_text(
        c,
        "#capture-hint",
        "tcpdump -i any -s 0 -w redis.pcap 'tcp port 7000 or tcp port 7001'",
    )
    .await;

    // A capture of Redis on 6379, read for port 7000: no Redis connection in it.
    let mut conv = write::Conv::new("10.0.0.1:50000", "10.0.0.2:6379", write::ETHERNET);
    conv.open();
    conv.one_at_a_time(5);
    conv.close(true);
    set_ports(c, "7000").await;
    drop_file(
        c,
        "redis.pcap",
        &write::pcap(write::ETHERNET, 262_144, &conv.frames),
    )
    .await;
    until_js(
        c,
        "const e = document.querySelector('#capture-label'); return e ? e.textContent : ''",
        Duration::from_secs(60),
        "the capture's label",
        |l: &String| l.contains("redis.pcap"),
    )
    .await;
    let empty = text_of(c, "#observed-empty").await.unwrap_or_default();
    assert_eq!(
        empty,
        "This capture holds no connection to Redis's port (see the note above): if Redis listened on another port, put it in the Redis port field and open the capture again."
    );
    let notes = text_of(c, "#capture-notes").await.unwrap_or_default();
    assert!(notes.contains("no TCP connection to port 7000"), "{notes}");

    // A file that is not a capture: the banner names it once.
    drop_file(c, "notes.pcap", b"SET k v\r\nnot a capture at all").await;
    let error: String = until_js(
        c,
        "const e = document.querySelector('#error'); return e ? e.textContent : ''",
        Duration::from_secs(30),
        "the refusal in the banner",
        |e: &String| !e.is_empty(),
    )
    .await;
    assert!(
        error.starts_with("Could not open notes.pcap: it is not a pcap or pcapng capture"),
        "{error}"
    );
    assert_eq!(error.matches("notes.pcap").count(), 1, "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replays_observe_view_says_it_has_no_redis() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("talk.pipescope.json");
    let recording = shared::recording::Recording::new(
        "2026-01-01T00:00:00Z".into(),
        "0.1.0".into(),
        "7.0.15".into(),
        "redis://127.0.0.1:6400/0".into(),
        shared::Network::LOOPBACK,
        Vec::new(),
    );
    std::fs::write(&file, recording.to_json()).unwrap();
    let mut child = support::pipescope("pipescope=warn")
        .args(["replay", "--port", "0"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let page = support::stdout_line(
        stdout,
        Duration::from_secs(30),
        "pipescope replay prints the URL to open",
        |l| l.strip_prefix("open ").map(str::to_string),
    );
    let browser = Browser::open(&format!("{page}observe")).await;
    let c = &browser.client;
    until_text(
        c,
        "#observe-replay",
        "This page replays a recording: there is no Redis behind it, so no application can be observed through it. Open a capture below, or start pipescope without replay (or pipescope observe) to observe one.",
    )
    .await;
    assert_eq!(text_of(c, "#observe-watch-only").await, None);
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_dropped_on_the_runs_view_is_pointed_to_observe() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&server.http_url()).await;
    // The capture is no recording: the server refuses it (422), which Chromium logs.
    browser.expect_console("status of 422");
    let c = &browser.client;
    let mut conv = write::Conv::new("10.0.0.1:50000", "10.0.0.2:6379", write::ETHERNET);
    conv.open();
    conv.one_at_a_time(3);
    conv.close(true);
    until_js(
        c,
        "return !!document.querySelector('main')",
        Duration::from_secs(30),
        "the runs view",
        |ready: &bool| *ready,
    )
    .await;
    drop_file(
        c,
        "redis.pcap",
        &write::pcap(write::ETHERNET, 262_144, &conv.frames),
    )
    .await;
    let error: String = until_js(
        c,
        "const e = document.querySelector('#error'); return e ? e.textContent : ''",
        Duration::from_secs(30),
        "the refusal in the banner",
        |e: &String| !e.is_empty(),
    )
    .await;
    assert_eq!(
        error,
        "Could not open redis.pcap: this is a packet capture (pcap), not a pipescope recording: open it on the observe page (/observe, \"Open a capture…\"), or read it with pipescope observe --pcap FILE. The page still shows what it showed before."
    );
}
