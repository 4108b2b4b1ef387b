//! The page's "round trips paid" against the engine's own count, in headless Chromium against
//! the real backend and a real redis-server: for every mode, playback taken to the end of a small
//! run shows exactly `RunSummary::round_trips` (read from the results table, which renders the
//! run's summary as the server sent it). Also screenshots of a flush-each-command and a
//! multiplexed run's timeline through a 250 µs network (and a MULTI/EXEC one's), and a long run drawn as its first
//! requests and then its strided sample, saying so.

use crate::support;

use std::time::Duration;

use fantoccini::Client;
use serde_json::Value;
use shared::digits::group;
use support::browser::{Browser, css, page_state, text, until_state};

/// Small enough to be quick, large enough for many round trips in every mode.
const COUNT: u64 = 300;

/// One run per mode: (query, the mode's label as the results table shows it).
const MODES: [(&str, &str); 7] = [
    ("mode=sequential", "sequential"),
    (
        "mode=pipelined&batch=20&flush=batch",
        "pipelined (batch 20)",
    ),
    (
        "mode=pipelined&batch=20&flush=each",
        "pipelined (batch 20, flush each command)",
    ),
    (
        "mode=pipelined&batch=20&flush=buffered&every=5",
        "pipelined (batch 20, flush every 5)",
    ),
    ("mode=multiplexed&batch=20", "multiplexed (20 in flight)"),
    ("mode=transaction&batch=20", "MULTI/EXEC (batch 20)"),
    ("mode=mset&batch=20", "MSET/MGET (batch 20)"),
];

async fn open(c: &Client, url: &str) {
    c.goto(url).await.unwrap();
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(css("#status[data-state='open']"))
        .await
        .expect("the page connects to /ws");
}

/// The number at the start of `s` ("1,234 reads" → 1234).
fn leading_count(s: &str) -> u64 {
    let digits: String = s
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no count in {s:?}"))
}

/// Opens the page prepared for `query`, runs it, and waits for its row in the results table.
/// Returns the row's selector.
async fn run(c: &Client, base: &str, query: &str, label: &str) -> String {
    open(c, &format!("{base}?count={COUNT}&cmd=set&{query}")).await;
    support::browser::wait_enabled(c, "#run", Duration::from_secs(30)).await;
    support::browser::click(c, "#run").await;
    // The label tells this run's row from the previous run's (a reloaded page shows the latest
    // results until a new plan starts).
    let row = format!("#results tr.result-row[data-label='{label}']");
    c.wait()
        .at_most(Duration::from_secs(120))
        .for_element(css(&row))
        .await
        .unwrap_or_else(|e| panic!("the {label} run finishes: {e}"));
    row
}

/// Takes playback to the end of the drawn runs and waits until the timeline has drawn there.
async fn to_the_end(c: &Client) -> Value {
    until_state(c, "the finished run drawn", Duration::from_secs(30), |s| {
        s["runs"][0]["spans"].as_u64() == Some(COUNT) && s["playback"]["live"] == false
    })
    .await;
    c.execute(
        "const el = document.getElementById('scrub'); el.value = el.max; \
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![],
    )
    .await
    .unwrap();
    until_state(c, "playback at the end", Duration::from_secs(10), |s| {
        let p = &s["playback"];
        p["position_us"].as_f64().is_some_and(|pos| {
            p["extent_us"]
                .as_f64()
                .is_some_and(|end| pos >= end && end > 0.0)
        })
    })
    .await
}

/// The window shows the whole run (the zoom's widest window equals the extent, up to rounding).
fn whole_run_in_window(s: &Value) -> bool {
    let p = &s["playback"];
    match (p["window_us"].as_f64(), p["extent_us"].as_f64()) {
        (Some(w), Some(e)) => w >= e * (1.0 - 1e-9),
        _ => false,
    }
}

#[tokio::test]
async fn round_trips_paid_at_the_end_are_the_run_summarys_in_every_mode() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&server.http_url()).await;
    let c = &browser.client;
    for (query, label) in MODES {
        let row = run(c, &server.http_url(), query, label).await;
        let cell = text(c, &format!("{row} td.round-trips")).await;
        let summary = leading_count(&cell);
        to_the_end(c).await;
        let shown = text(c, ".counter-row .counter.rt").await;
        let paid = leading_count(&shown);
        println!("{label}: page {paid} ({shown:?}), summary {summary} ({cell:?})");
        assert_eq!(
            paid, summary,
            "{label}: the page's round trips ({shown:?}) against the run summary's ({cell:?})"
        );
        // What the mode pays, by its definition (a multiplexed run's reads vary with timing).
        if !label.starts_with("multiplexed") {
            let batch = if label == "sequential" { 1 } else { 20 };
            assert_eq!(summary, COUNT.div_ceil(batch), "{label}");
        } else {
            assert!(
                shown.contains("reads that brought replies") && cell.contains("reads"),
                "a multiplexed run's round trips say they are reads: {shown:?}, {cell:?}"
            );
            assert!((1..=COUNT).contains(&summary), "{label}: {summary}");
        }
    }
    let _ = browser.client.clone().close().await;
}

#[tokio::test]
async fn flush_each_command_and_multiplexed_timelines_through_a_network() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&server.http_url()).await;
    let c = &browser.client;
    c.set_window_size(1600, 1000).await.unwrap();
    for (query, label, name) in [
        (
            "mode=pipelined&batch=50&flush=each&delay=250",
            "pipelined (batch 50, flush each command)",
            "timeline-flush-each",
        ),
        (
            "mode=multiplexed&batch=50&delay=250",
            "multiplexed (50 in flight)",
            "timeline-multiplexed",
        ),
        (
            "mode=transaction&batch=50&delay=250",
            "MULTI/EXEC (batch 50)",
            "timeline-transaction",
        ),
    ] {
        let row = run(c, &server.http_url(), query, label).await;
        let summary = leading_count(&text(c, &format!("{row} td.round-trips")).await);
        to_the_end(c).await;
        let paid = leading_count(&text(c, ".counter-row .counter.rt").await);
        assert_eq!(paid, summary, "{label} through the network");
        // The whole run on screen, so every band shows.
        support::browser::click(c, "#zoom-fit").await;
        until_state(
            c,
            "the whole run in the window",
            Duration::from_secs(10),
            whole_run_in_window,
        )
        .await;
        c.execute(
            "document.getElementById('timeline').scrollIntoView({ block: 'center' })",
            vec![],
        )
        .await
        .unwrap();
        let shot = browser.screenshot(name).await;
        // Requests the wire tap did not stamp are drawn at the midpoint, and the lane says so.
        let unstamped = &page_state(c).await["runs"][0]["unstamped"];
        println!(
            "{label}: {paid} round trips, {unstamped} requests without the tap's stamps; screenshot {}",
            shot.display()
        );
    }
    let _ = browser.client.clone().close().await;
}

#[tokio::test]
async fn a_long_run_draws_its_sample_beyond_the_first_requests_and_says_so() {
    const LONG: u64 = 20_000;
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&server.http_url()).await;
    let c = &browser.client;
    open(
        c,
        &format!(
            "{}?count={LONG}&mode=pipelined&batch=100",
            server.http_url()
        ),
    )
    .await;
    support::browser::wait_enabled(c, "#run", Duration::from_secs(30)).await;
    support::browser::click(c, "#run").await;
    c.wait()
        .at_most(Duration::from_secs(120))
        .for_element(css(
            "#results tr.result-row[data-label='pipelined (batch 100)']",
        ))
        .await
        .expect("the long run finishes");
    support::browser::click(c, "#zoom-fit").await;
    c.execute(
        "const el = document.getElementById('scrub'); el.value = el.max; \
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![],
    )
    .await
    .unwrap();
    // The state can show the sample's spans a frame before they are painted: wait for the
    // frame that draws them.
    let s = until_state(c, "the sample drawn", Duration::from_secs(30), |s| {
        let run = &s["runs"][0];
        let (first, sampled) = (
            run["spans"].as_u64().unwrap_or(0),
            run["sampled"].as_u64().unwrap_or(0),
        );
        sampled > 0
            && s["playback"]["live"] == false
            && whole_run_in_window(s)
            && run["arrows_drawn"].as_u64() == Some(2 * (first + sampled))
    })
    .await;
    let run = &s["runs"][0];
    let (first, sampled, drawn) = (
        run["spans"].as_u64().unwrap(),
        run["sampled"].as_u64().unwrap(),
        run["arrows_drawn"].as_u64().unwrap(),
    );
    assert!(first < LONG, "only the first requests in full: {run}");
    // Every request and reply of the first ones and of the sample beyond them is on screen.
    assert_eq!(drawn, 2 * (first + sampled), "{run}");
    let note = text(c, "#drawn-note").await;
    println!("{note}; {first} in full, {sampled} sampled, {drawn} arrows");
    assert_eq!(first, pipescope::spans::FULL_SPANS);
    let expected = format!(
        "first {} of {} requests drawn, then every ",
        group(first),
        group(LONG)
    );
    assert!(
        note.contains(&expected) && note.contains("(sampled, lighter)"),
        "the heading says what is drawn: {note:?}"
    );
    let shot = browser.screenshot("timeline-sampled").await;
    println!("screenshot {}", shot.display());
    let _ = browser.client.clone().close().await;
}
