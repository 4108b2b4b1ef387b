//! The Observe view opening a capture, in headless Chromium against the real backend: a real
//! tcpdump capture of redis-cli talking to a real redis-server (INCRs one at a time, SETs by
//! `--pipe`) picked in the file input, then dropped on the view. The table must list what
//! `pipescope observe --pcap FILE --json` reports for the same file, headed by its label; it
//! opens on its costliest connection, drawn; a chosen connection is drawn on the timeline from
//! the requests that came with it, its figures are the capture's, and no pipelined equivalent
//! is offered. A file that is not a capture is
//! refused in words, the table unchanged. The capture shown downloads as one HTML file, its
//! client addresses replaced by numbers, that opens from disk on the same verdicts.
//! Screenshots: target/screenshots/observe-capture.png, observe-capture-file.png.

use crate::support;

use std::time::Duration;

use super::html_file::{downloaded, nothing_requested_or_thrown, open_blocked, unpacked};
use super::html_observed::opens_on_the_costliest;
use fantoccini::Locator;
use serde::Deserialize;
use support::browser::{Browser, cdp, click, shown, text_of, tick, until_js};
use support::capture_demo::Demo;

const INCRS: usize = 50;
const SETS: usize = 2_000;

#[derive(Debug, Deserialize)]
struct Row {
    id: u64,
    verdict: String,
    word: String,
    commands: u64,
}

const ROWS: &str = "return [...document.querySelectorAll('#observed-table tr.observed-row')].map(r => ({ \
    id: Number(r.id.replace('observed-', '')), verdict: r.dataset.verdict, \
    word: r.querySelector('.verdict-word').textContent, commands: Number(r.dataset.commands) }))";

/// Drops `bytes` on the view as the file `name`, as a user dragging it there would.
pub(crate) async fn drop_file(c: &fantoccini::Client, name: &str, bytes: &[u8]) {
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

/// Types `port` in the view's Redis port field, as a user would.
pub(crate) async fn redis_port(c: &fantoccini::Client, port: u16) {
    c.execute(
        "const [port] = arguments;
         const i = document.querySelector('#capture-ports');
         i.value = port; i.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![port.to_string().into()],
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observe_view_opens_a_capture_and_shows_what_observe_pcap_reports() {
    let Some(demo) = Demo::take_blocking(INCRS, SETS).await else {
        return;
    };
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!("{}observe", server.http_url())).await;
    // The file that is no capture is refused by the server (422), which Chromium logs.
    browser.expect_console("status of 422");
    let c = &browser.client;

    // Redis listened on the test's own port: say so, then pick the file. Every text the
    // progress line shows is kept, however briefly it shows it.
    redis_port(c, demo.port).await;
    c.execute(
        "window.__reading = [];
         const p = document.querySelector('#capture-reading');
         new MutationObserver(() => p.textContent && window.__reading.push(p.textContent))
           .observe(p, { childList: true, characterData: true, subtree: true });",
        vec![],
    )
    .await
    .unwrap();
    c.find(Locator::Css("#open-capture"))
        .await
        .unwrap()
        .send_keys(&demo.capture.file.display().to_string())
        .await
        .unwrap();

    // The table lists the CLI's connections: each one's commands and verdict.
    let rows: Vec<Row> = until_js(
        c,
        ROWS,
        Duration::from_secs(60),
        "the capture's connections in the table",
        |rows: &Vec<Row>| rows.len() == demo.cli.len(),
    )
    .await;
    for (row, cli) in rows.iter().zip(&demo.cli) {
        assert_eq!(row.id, cli.id, "{rows:?}");
        assert_eq!(row.commands, cli.counts.commands, "{row:?}");
        assert_eq!(row.verdict, format!("{:?}", cli.verdict.kind), "{row:?}");
        assert_eq!(row.word, cli.verdict.kind.words(), "{row:?}");
    }
    let label = text_of(c, "#capture-label").await;
    assert_eq!(label, Some(demo.label_for("redis.pcap")));
    let reading: Vec<String> =
        serde_json::from_value(c.execute("return window.__reading", vec![]).await.unwrap())
            .unwrap();
    let mb = format!("{:.1} MB", demo.bytes().len() as f64 / 1e6);
    assert_eq!(reading, [format!("Reading redis.pcap ({mb})…")]);
    assert_eq!(
        text_of(c, "#capture-reading").await.as_deref(),
        Some(""),
        "said only while the server read"
    );
    let head = text_of(c, "#observed-table thead").await.unwrap();
    assert!(head.contains("segments"), "{head}");

    // It opens on its costliest connection, drawn; ticked, each other is drawn too from the
    // requests that came with it (no request to the server), every command a span.
    opens_on_the_costliest(c, &demo.cli).await;
    for row in &rows {
        tick(c, &format!("#choose-{}", row.id)).await;
    }
    let drawn: serde_json::Value = until_js(
        c,
        "return window.__pipescope || null",
        Duration::from_secs(30),
        "both connections drawn on the timeline",
        |s: &serde_json::Value| {
            s["runs"].as_array().is_some_and(|runs| {
                runs.len() == rows.len()
                    && runs.iter().all(|r| r["arrows_drawn"].as_f64() > Some(0.0))
            })
        },
    )
    .await;
    let mut spans: Vec<u64> = drawn["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["spans"].as_u64().unwrap())
        .collect();
    let mut commands: Vec<u64> = rows.iter().map(|r| r.commands).collect();
    spans.sort_unstable();
    commands.sort_unstable();
    assert_eq!(spans, commands, "{drawn}");
    assert_eq!(text_of(c, "#timeline-refresh").await, None);

    // Its figures are the capture host's, and there is nothing to measure an equivalent on.
    for row in &rows {
        let figures = c
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(Locator::Css(&format!("#figures-{}", row.id)))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(figures.contains("by the capture"), "{figures}");
        assert!(!figures.contains("by the proxy"), "{figures}");
        assert!(!figures.contains("observing proxy"), "{figures}");
        assert_eq!(text_of(c, &format!("#equivalent-{}", row.id)).await, None);
        let result = text_of(c, &format!("#equivalent-result-{}", row.id)).await;
        assert!(
            result
                .as_deref()
                .is_some_and(|r| r.starts_with("No pipelined equivalent for a capture")),
            "{result:?}"
        );
        let lane = text_of(c, &format!("#observed-rtt-{} .lane-name", row.id)).await;
        assert_eq!(lane.as_deref(), Some("Capture"));
    }

    // Tall enough for the label, the table, the timeline and both connections' figures.
    c.set_window_size(1400, 3200).await.unwrap();
    c.execute("window.scrollTo(0, 0)", vec![]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let shot = browser.screenshot("observe-capture").await;
    eprintln!("screenshot: {}", shot.display());

    // Dropped on the view, the same capture under another name replaces it.
    drop_file(c, "again.pcap", &demo.bytes()).await;
    until_js(
        c,
        "const e = document.querySelector('#capture-label'); return e ? e.textContent : ''",
        Duration::from_secs(60),
        "the dropped capture's label",
        |l: &String| *l == demo.label_for("again.pcap"),
    )
    .await;

    // A file that is not a capture is refused in words; the table still shows the capture.
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
    let still: Vec<Row> = until_js(c, ROWS, Duration::from_secs(5), "the rows", |_| true).await;
    assert_eq!(still.len(), rows.len());
    assert_eq!(
        text_of(c, "#capture-label").await,
        Some(demo.label_for("again.pcap"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_shown_downloads_as_one_redacted_file_that_opens_from_disk() {
    let Some(demo) = Demo::take_blocking(INCRS, SETS).await else {
        return;
    };
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!("{}observe", server.http_url())).await;
    let c = &browser.client;
    redis_port(c, demo.port).await;
    drop_file(c, "redis.pcap", &demo.bytes()).await;
    until_js(
        c,
        ROWS,
        Duration::from_secs(60),
        "the capture's connections in the table",
        |rows: &Vec<Row>| rows.len() == demo.cli.len(),
    )
    .await;

    let downloads = tempfile::tempdir().unwrap();
    cdp(
        c,
        "Page.setDownloadBehavior",
        serde_json::json!({ "behavior": "allow", "downloadPath": downloads.path().display().to_string() }),
    )
    .await;
    click(c, "#observe-html-redact").await;
    click(c, "#observe-html").await;
    let file = downloaded(downloads.path()).await;
    drop(browser);

    // No client address is left, in the file or in the data inside it; each is its number.
    let html = std::fs::read_to_string(&file).unwrap();
    let data = String::from_utf8(unpacked(&html, "pipescope-data")).unwrap();
    for cli in &demo.cli {
        for (what, text) in [("the file", html.as_str()), ("the data inside", &data)] {
            assert!(!text.contains(&cli.client), "{what} holds {}", cli.client);
        }
        assert!(data.contains(&format!("\"client {}\"", cli.id)), "{data}");
    }

    // From disk, every request blocked: the CLI's connections and verdicts, worded for the
    // numbers, and the capture's label.
    let browser = open_blocked(&format!("file://{}", file.display())).await;
    let c = &browser.client;
    let rows: Vec<Row> = until_js(
        c,
        ROWS,
        Duration::from_secs(30),
        "the capture's connections in the file's table",
        |rows: &Vec<Row>| rows.len() == demo.cli.len(),
    )
    .await;
    for (row, cli) in rows.iter().zip(&demo.cli) {
        assert_eq!(row.id, cli.id, "{rows:?}");
        assert_eq!(row.commands, cli.counts.commands, "{row:?}");
        assert_eq!(row.verdict, format!("{:?}", cli.verdict.kind), "{row:?}");
    }
    let table = text_of(c, "#observed-table").await.unwrap();
    assert!(
        table.contains(&format!("client {}", demo.cli[0].id)) && !table.contains("127.0.0.1"),
        "{table}"
    );
    assert_eq!(
        text_of(c, "#capture-label").await,
        Some(demo.label_for("redis.pcap"))
    );
    assert!(
        !shown(c, "#observe-html").await,
        "a file has no server to write another file"
    );
    nothing_requested_or_thrown(c).await;
    let shot = browser.screenshot("observe-capture-file").await;
    eprintln!("screenshot: {}", shot.display());
}
