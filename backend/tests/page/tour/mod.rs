//! The guided tour (`/tour`) in headless Chromium against the real backend and a real
//! redis-server: walked with the keyboard from the first step to the handout, every step a real
//! run (Redis counts the SETs), every number in the prose checked against what the backend sent
//! (the `Finished` messages, caught by a websocket of the test's own) and every claim about the
//! sweep's knee checked against those numbers. And `/tour/3` serves the page and opens step 3.

use crate::support;

mod numbers;
use numbers::{Finished, check_numbers, one_trip_figure, reported, sets};

use std::collections::HashMap;
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, Locator};
use serde_json::Value;
use support::browser::Browser;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The tour's sweep: batches 1 … 10,000, the series three times (`frontend/src/tour.rs`).
const SWEEP_ROLES: [&str; 15] = [
    "b1", "b10", "b100", "b1000", "b10000", "b1_2", "b10_2", "b100_2", "b1000_2", "b10000_2",
    "b1_3", "b10_3", "b100_3", "b1000_3", "b10000_3",
];
/// The knee's rule, as the page states it: a step pays when it multiplies throughput by at
/// least 1.5× per doubling of the batch.
const KNEE_GAIN: f64 = 1.5;

/// Runs per step (roles), as in `frontend/src/tour/script.rs`, and its count: fixed, or the
/// `?count=` asked (`None`), never below the step's largest batch (`FLOORS`).
const STEPS: [(&str, &[&str], Option<u64>); 8] = [
    ("One SET, one round trip", &["one"], Some(1)),
    ("Ten SETs, one at a time", &["seq"], Some(10)),
    ("The same ten, pipelined", &["seq", "pipe"], Some(10)),
    (
        "The blog's experiment: 100,000 SETs",
        &["seq", "pipe"],
        None,
    ),
    (
        "The blog's 3.6×: a write per command?",
        &["each", "pipe"],
        None,
    ),
    (
        "How big a batch? The sweep and its knee",
        &SWEEP_ROLES,
        None,
    ),
    (
        "Multiplexing: many clients, one connection",
        &["m1", "m10", "m100"],
        None,
    ),
    ("Is a pipeline atomic?", &["pipe", "tx"], Some(ATOMIC_COUNT)),
];

/// The fewest commands each step runs: one whole batch of its largest (a run labelled
/// "batch 10,000" runs at least 10,000 commands).
const FLOORS: [u64; 8] = [1, 1, 10, 1_000, 1_000, 10_000, 1, 10_000];

/// The commands step `k` (0-based) runs with `?count={COUNT}`.
fn step_count(k: usize) -> u64 {
    STEPS[k].2.unwrap_or(COUNT.max(FLOORS[k]))
}

/// The atomicity step's INCRs per run (fixed: batches of 10,000 are what let the other
/// client in between a pipeline's reads).
const ATOMIC_COUNT: u64 = 100_000;

/// `?count=` for the steps whose count may change, and `?delay=` (µs one way): seconds, not minutes.
const COUNT: u64 = 60;
const DELAY_US: u64 = 100;

async fn tour_state(c: &Client) -> Value {
    c.execute("return window.__pipescope_tour || null", vec![])
        .await
        .unwrap()
}

async fn until(c: &Client, what: &str, secs: u64, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = tour_state(c).await;
        if check(&s) {
            return s;
        }
        let error = c
            .execute(
                "const e = document.getElementById('error'); return e && e.textContent",
                vec![],
            )
            .await
            .unwrap();
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {s} (banner: {error})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A key pressed with nothing focused (what a presenter's clicker or keyboard does).
async fn press(c: &Client, key: char) {
    c.execute(
        "if (document.activeElement) document.activeElement.blur()",
        vec![],
    )
    .await
    .unwrap();
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key })
        .then(KeyAction::Up { value: key });
    c.perform_actions(keys).await.unwrap();
}

/// Standard base64 (the PNG's data URL).
fn base64(text: &str) -> Vec<u8> {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = ABC.iter().position(|a| *a == c).expect("base64") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Scrolls to the top, so a screenshot shows the step and the top of the stage.
async fn top(c: &Client) {
    c.execute("window.scrollTo(0, 0)", vec![]).await.unwrap();
}

const ENTER: char = '\u{E007}';
const RIGHT: char = '\u{E014}';
const LEFT: char = '\u{E012}';

#[tokio::test]
async fn the_whole_tour_walks_with_the_keyboard_on_real_runs() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!(
        "{}tour?count={COUNT}&delay={DELAY_US}",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    let finished = Finished::watch(&server).await;
    let mut earlier: HashMap<usize, HashMap<String, Value>> = HashMap::new();

    for (k, (title, roles, _)) in STEPS.iter().enumerate() {
        let step = k + 1;
        until(c, &format!("step {step}"), 10, |s| {
            s["step"] == step && s["state"] == "idle"
        })
        .await;
        let shown = c
            .find(Locator::Css("#tour-title"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(shown, *title);
        assert_eq!(
            c.current_url().await.unwrap().path(),
            format!("/tour/{step}")
        );
        // Before the run: what to expect, and no numbers.
        let before = c
            .find_all(Locator::Css("#tour .tour-num"))
            .await
            .unwrap()
            .len();
        assert_eq!(before, 0, "step {step} shows numbers before its run");
        let sets_before = sets(&target).await;
        // The Run button takes a moment to enable after a page change.
        support::browser::wait_enabled(c, "#tour-run", Duration::from_secs(10)).await;

        press(c, if step % 2 == 0 { ' ' } else { ENTER }).await;
        let state = until(c, &format!("step {step}'s run"), 120, |s| {
            s["step"] == step && s["state"] == "done"
        })
        .await;

        // A real run: every role has a summary with every command done, and Redis saw them.
        let runs = reported(&state, step, &finished).await;
        let count = step_count(k);
        for role in *roles {
            let s = &runs[*role];
            assert_eq!(s["done"], count, "step {step} {role}");
            assert!(s["wall_us"].as_u64().unwrap() > 0);
            assert_eq!(s["spec"]["network"]["delay_out_us"], DELAY_US);
        }
        let done: u64 = runs.values().map(|s| s["done"].as_u64().unwrap()).sum();
        let sets_after = sets(&target).await;
        // At least: a network's delay line is calibrated with SETs of its own when first used.
        assert!(
            sets_after - sets_before >= done,
            "step {step}: Redis counted {} SETs, fewer than the {done} the runs reported",
            sets_after - sets_before
        );
        let rows = c
            .find_all(Locator::Css("#tour-runs tbody tr"))
            .await
            .unwrap()
            .len();
        assert_eq!(rows, roles.len(), "step {step}: the runs table");

        // The prose's numbers are the backend's.
        let shown = check_numbers(c, &runs, &earlier, step).await;
        assert!(
            shown.len() >= 2,
            "step {step} shows only {} numbers",
            shown.len()
        );
        if step == 1 {
            one_trip_figure(c, &runs["one"]).await;
            top(c).await;
            browser.screenshot("tour-step-1").await;
        }
        if step == 6 {
            // The sweep: a median and a spread per batch, and a knee (or the word that it lies
            // beyond), each checked against the runs in `expected`.
            assert_eq!(shown["b1.runs"], 3.0);
            assert!(
                shown.contains_key("knee.batch") || shown.contains_key("beyond.batch"),
                "{shown:?}"
            );
            if shown.contains_key("knee.batch") {
                assert!(
                    shown.contains_key("knee.rt_major") || shown.contains_key("knee.rt_minor"),
                    "the knee's claim comes with the round trips' share: {shown:?}"
                );
            }
        }
        if step == 5 {
            // Step 4 was measured, so the comparison with it is there too, then the pointer to
            // observe mode.
            let sentences = c
                .find_all(Locator::Css("#tour-result .tour-sentence"))
                .await
                .unwrap()
                .len();
            assert_eq!(sentences, 4);
            top(c).await;
            browser.screenshot("tour-step-5").await;
        }
        if step == 4 {
            top(c).await;
            browser.screenshot("tour-step-4").await;
        }
        if step == 8 {
            // Atomicity: both runs' other client, measured; none inside a MULTI/EXEC.
            assert_eq!(shown["tx.inside"], 0.0, "{shown:?}");
            assert!(shown.contains_key("pipe.inside") && shown.contains_key("tx.other"));
            support::browser::until_js(
                c,
                "return document.querySelectorAll('#atomicity .atomicity').length",
                Duration::from_secs(10),
                "the stage's atomicity lines",
                |n: &u64| *n == 2,
            )
            .await;
            top(c).await;
            browser.screenshot("tour-atomicity").await;
        }
        earlier.insert(step, runs);
        press(c, RIGHT).await;
    }

    // The handout: every run in the Markdown table and a PNG of the chart.
    until(c, "the handout", 10, |s| s["page"] == "handout").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/tour/handout");
    let md = c
        .find(Locator::Css("#handout-md"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // A section per step: its title, a header row and a row per run.
    let table_rows = md.lines().filter(|l| l.starts_with("| ")).count();
    let runs: usize = STEPS.iter().map(|s| s.1.len()).sum();
    assert_eq!(table_rows, STEPS.len() + runs, "{md}");
    for (k, (title, _, _)) in STEPS.iter().enumerate() {
        assert!(md.contains(&format!("## Step {}: {title}", k + 1)), "{md}");
    }
    assert!(
        md.contains(&format!(
            "| SET · sequential | {} |",
            shared::digits::group(step_count(3))
        )),
        "{md}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let png = c.find(Locator::Css("#handout-png")).await.unwrap();
    while png.attr("data-ready").await.unwrap().as_deref() != Some("true") {
        assert!(Instant::now() < deadline, "the PNG was never made");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let href = png.attr("href").await.unwrap().unwrap();
    assert!(
        href.starts_with("data:image/png;base64,"),
        "{}",
        &href[..40]
    );
    assert!(href.len() > 5_000, "a chart, not an empty image");
    let png_bytes = base64(&href["data:image/png;base64,".len()..]);
    assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
    std::fs::write(dir.join("tour-handout-chart.png"), &png_bytes).unwrap();
    top(c).await;
    let shot = browser.screenshot("tour-handout").await;
    eprintln!("screenshot: {}", shot.display());

    // Back goes back, and a revisited step's stage shows that step's own runs again.
    press(c, LEFT).await;
    until(c, "step 8 again", 10, |s| {
        s["step"] == 8 && s["state"] == "done"
    })
    .await;
    for _ in 0..4 {
        press(c, LEFT).await;
    }
    let state = until(c, "step 4 again", 10, |s| {
        s["step"] == 4 && s["state"] == "done"
    })
    .await;
    let ids: Vec<String> = state["ids"]["4"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{state}");
    support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#results tr[data-run]')].map(e => e.dataset.run)",
        Duration::from_secs(10),
        &format!("step 4's stage must show its own runs {ids:?}, not"),
        |shown: &Vec<String>| *shown == ids,
    )
    .await;
    drop(browser);
    server.shutdown().await.unwrap();
}

/// A raw HTTP/1.0 GET: status line and body.
async fn get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.unwrap();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

#[tokio::test]
async fn tour_3_serves_the_page_and_opens_step_3() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let (status, body) = get(server.addr, "/tour/3").await;
    assert!(status.contains(" 200 "), "{status}");
    assert!(body.contains("<html"), "{body}");
    // Its assets are absolute paths, so they load from /tour/3 too.
    let js = body
        .split('"')
        .find(|s| s.starts_with("/pipescope-frontend-") && s.ends_with(".js"))
        .unwrap_or_else(|| panic!("no absolute script URL in {body}"))
        .to_string();
    let (status, _) = get(server.addr, &js).await;
    assert!(status.contains(" 200 "), "{js}: {status}");
    for path in ["/tour", "/tour/", "/tour/handout"] {
        let (status, _) = get(server.addr, path).await;
        assert!(status.contains(" 200 "), "{path}: {status}");
    }

    let browser = Browser::open(&format!("{}tour/3", server.http_url())).await;
    let c = &browser.client;
    let s = until(c, "step 3", 10, |s| s["step"] == 3).await;
    assert_eq!(s["state"], "idle");
    let title = c
        .find(Locator::Css("#tour[data-step='3'] #tour-title"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(title, STEPS[2].0);
    drop(browser);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_long_step_shows_progress_and_cancels_with_escape() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    // Step 4's sequential run with a count that takes far longer than this test waits.
    let browser = Browser::open(&format!(
        "{}tour/4?count=2000000&delay=500",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    until(c, "step 4", 10, |s| s["step"] == 4 && s["state"] == "idle").await;
    let count = c
        .find(Locator::Css("#tour-count"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(count.as_deref(), Some("2000000"), "?count= is the default");
    support::browser::wait_enabled(c, "#tour-run", Duration::from_secs(10)).await;
    press(c, ENTER).await;
    until(c, "the run", 10, |s| s["state"] == "running").await;
    // Progress shows while it runs.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let done: f64 = c
            .execute(
                "const p = document.querySelector('#tour .run-progress progress'); \
                 return p ? Number(p.value) : 0",
                vec![],
            )
            .await
            .unwrap()
            .as_f64()
            .unwrap_or(0.0);
        if done > 0.0 {
            break;
        }
        assert!(Instant::now() < deadline, "no progress shown");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    press(c, '\u{E00C}').await; // Escape
    until(c, "the cancel", 30, |s| s["state"] == "failed").await;
    let banner = c
        .find(Locator::Css("#error"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(banner.contains("cancelled"), "{banner}");
    assert!(
        c.find_all(Locator::Css("#tour-result .tour-num"))
            .await
            .unwrap()
            .is_empty(),
        "no numbers from a run that did not finish"
    );
    drop(browser);
    server.shutdown().await.unwrap();
}

/// Step 4 at the tour's own network (0.5 ms each way, no `?delay=`) with a small count: the
/// prose's figures against the backend's summaries and Redis's count of SETs, and a screenshot
/// at a scale a room would see.
#[tokio::test]
async fn step_4_at_the_tours_own_delay() {
    // Its pipelined run's batch: the fewest commands the step runs.
    const N: u64 = 1_000;
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let finished = Finished::watch(&server).await;
    let browser = Browser::open(&format!("{}tour/4?count={N}", server.http_url())).await;
    let c = &browser.client;
    until(c, "step 4", 10, |s| s["step"] == 4 && s["state"] == "idle").await;
    let sets_before = sets(&target).await;
    support::browser::wait_enabled(c, "#tour-run", Duration::from_secs(10)).await;
    press(c, ENTER).await;
    let state = until(c, "step 4's run", 120, |s| s["state"] == "done").await;
    let runs = reported(&state, 4, &finished).await;
    for role in ["seq", "pipe"] {
        assert_eq!(runs[role]["spec"]["network"]["delay_out_us"], 500, "{role}");
        assert_eq!(runs[role]["done"], N, "{role}");
    }
    assert!(
        sets(&target).await - sets_before >= 2 * N,
        "Redis executed every SET the prose counts"
    );
    // Sequential: one round trip per SET; pipelined in batches of 1,000: one.
    assert_eq!(runs["seq"]["round_trips"], N);
    assert_eq!(runs["pipe"]["round_trips"], 1);
    let shown = check_numbers(c, &runs, &HashMap::new(), 4).await;
    assert!(shown.len() >= 5, "{shown:?}");
    assert_eq!(shown["seq.round_trips"], N as f64);
    top(c).await;
    let shot = browser.screenshot("tour-step-4-small").await;
    eprintln!("screenshot: {}", shot.display());
    drop(browser);
    server.shutdown().await.unwrap();
}
