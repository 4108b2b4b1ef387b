//! The guided tour (`/tour`) in headless Chromium against the real backend and a real
//! redis-server: walked with the keyboard from the first step to the handout, every step a real
//! run (Redis counts the SETs), every number in the prose equal to the run's summary. And
//! `/tour/3` serves the page and opens step 3.

mod support;

use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, Locator};
use serde_json::Value;
use support::browser::Browser;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Runs per step (roles), as in `frontend/src/tour.rs`.
const STEPS: [(&str, &[&str], Option<u64>); 7] = [
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
        &["b1", "b10", "b100", "b1000", "b10000"],
        None,
    ),
    (
        "Multiplexing: many clients, one connection",
        &["m1", "m10", "m100"],
        None,
    ),
];

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

/// `1234567` → `1,234,567`.
fn grouped(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, ch) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn batch_of(s: &Value) -> f64 {
    let mode = &s["spec"]["mode"];
    mode["batch"]
        .as_f64()
        .or_else(|| mode["in_flight"].as_f64())
        .unwrap_or(1.0)
}

/// The runs the sweep's `best` and `knee` name, recomputed here from the summaries.
fn best_and_knee(runs: &serde_json::Map<String, Value>) -> (Value, Value) {
    let ops = |s: &Value| s["ops_per_sec"].as_f64().unwrap();
    let best = runs
        .values()
        .max_by(|a, b| ops(a).total_cmp(&ops(b)))
        .unwrap()
        .clone();
    let knee = runs
        .values()
        .filter(|s| ops(s) >= 0.8 * ops(&best))
        .min_by(|a, b| batch_of(a).total_cmp(&batch_of(b)))
        .unwrap()
        .clone();
    (best, knee)
}

fn run_named(state: &Value, step: usize, name: &str) -> Value {
    let steps = &state["steps"];
    if let Some((s, role)) = name.strip_prefix('s').and_then(|r| r.split_once('.'))
        && let Ok(n) = s.parse::<usize>()
    {
        return steps[n.to_string()][role].clone();
    }
    let runs = steps[step.to_string()].as_object().unwrap();
    match name {
        "best" => best_and_knee(runs).0,
        "knee" => best_and_knee(runs).1,
        role => runs[role].clone(),
    }
}

/// What a placeholder must show, computed from the summaries the page received.
fn expected(state: &Value, step: usize, key: &str) -> f64 {
    if let Some(rest) = key.strip_prefix("speedup:") {
        let (a, b) = rest.split_once(':').unwrap();
        let ops = |n| run_named(state, step, n)["ops_per_sec"].as_f64().unwrap();
        return ops(b) / ops(a);
    }
    let (run, field) = key.rsplit_once('.').unwrap();
    let s = run_named(state, step, run);
    assert!(!s.is_null(), "{key}: no run {run} in {state}");
    let f = |k: &str| s[k].as_f64().unwrap();
    match field {
        "count" => f("done"),
        "round_trips" => f("round_trips"),
        "writes" => f("writes"),
        "wall" => f("wall_us"),
        "ops" => f("ops_per_sec"),
        "rtt" => s["latency"]["p50_us"].as_f64().unwrap(),
        "per_rt" => f("wall_us") / f("round_trips").max(1.0),
        "batch" => batch_of(&s),
        "delay" => s["spec"]["network"]["delay_out_us"].as_f64().unwrap(),
        "out" => s["split"]["out_us"].as_f64().unwrap(),
        "server" => s["split"]["server_us"].as_f64().unwrap(),
        "back" => s["split"]["back_us"].as_f64().unwrap(),
        other => panic!("unknown field {other} in {key}"),
    }
}

/// Every number in the step's result text, checked against the summaries. Returns how many.
async fn check_numbers(c: &Client, state: &Value, step: usize) -> usize {
    let nums = c
        .execute(
            "return [...document.querySelectorAll('#tour-result .tour-num')].map(e => \
             [e.dataset.key, e.dataset.value, e.textContent])",
            vec![],
        )
        .await
        .unwrap();
    let nums = nums.as_array().unwrap();
    for n in nums {
        let (key, value, text) = (
            n[0].as_str().unwrap(),
            n[1].as_str().unwrap().parse::<f64>().unwrap(),
            n[2].as_str().unwrap(),
        );
        let want = expected(state, step, key);
        assert!(
            (value - want).abs() <= 1e-9 * want.abs().max(1.0),
            "step {step}: {key} shows {value} ({text}), the summary says {want}"
        );
        assert!(!text.trim().is_empty(), "{key} has no text");
        if ["count", "round_trips", "writes", "batch"]
            .iter()
            .any(|f| key.ends_with(&format!(".{f}")))
        {
            assert_eq!(text, grouped(want as u64), "step {step}: {key}");
        }
    }
    nums.len()
}

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

    for (k, (title, roles, fixed)) in STEPS.iter().enumerate() {
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
        let sets_before = support::command_calls(&target)
            .await
            .get("set")
            .copied()
            .unwrap_or(0);
        // The Run button takes a moment to enable after a page change.
        support::browser::wait_enabled(c, "#tour-run", Duration::from_secs(10)).await;

        press(c, if step % 2 == 0 { ' ' } else { ENTER }).await;
        let state = until(c, &format!("step {step}'s run"), 60, |s| {
            s["step"] == step && s["state"] == "done"
        })
        .await;

        // A real run: every role has a summary with every command done, and Redis saw them.
        let runs = state["steps"][step.to_string()]
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(runs.len(), roles.len(), "step {step}: {runs:?}");
        let count = fixed.unwrap_or(COUNT);
        for role in *roles {
            let s = &runs[*role];
            assert_eq!(s["done"], count, "step {step} {role}");
            assert!(s["wall_us"].as_u64().unwrap() > 0);
            assert_eq!(s["spec"]["network"]["delay_out_us"], DELAY_US);
        }
        let sets_after = support::command_calls(&target)
            .await
            .get("set")
            .copied()
            .unwrap_or(0);
        // At least: a network's delay line is calibrated with SETs of its own when first used.
        assert!(
            sets_after - sets_before >= count * roles.len() as u64,
            "step {step}: Redis counted {} SETs, fewer than the runs made",
            sets_after - sets_before
        );
        let rows = c
            .find_all(Locator::Css("#tour-runs tbody tr"))
            .await
            .unwrap()
            .len();
        assert_eq!(rows, roles.len(), "step {step}: the runs table");

        // The prose's numbers are the summaries'.
        let checked = check_numbers(c, &state, step).await;
        assert!(checked >= 2, "step {step} shows only {checked} numbers");
        if step == 1 {
            let svg = c.find(Locator::Css("#one-trip")).await.unwrap();
            let rtt: f64 = svg
                .attr("data-rtt-us")
                .await
                .unwrap()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(rtt, runs["one"]["latency"]["p50_us"].as_f64().unwrap());
            // With a network dialled in, the wire tap measured the parts.
            assert_eq!(
                svg.attr("data-source").await.unwrap().as_deref(),
                Some("measured")
            );
            let t3: f64 = svg
                .attr("data-t3-us")
                .await
                .unwrap()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(t3, runs["one"]["split"]["server_us"].as_f64().unwrap());
            let keys = c
                .execute(
                    "return [...document.querySelectorAll('#tour-result .tour-num')].map(e => e.dataset.key)",
                    vec![],
                )
                .await
                .unwrap();
            assert!(
                keys.as_array().unwrap().iter().any(|k| k == "one.server"),
                "the wire tap's numbers are in the text: {keys}"
            );
            top(c).await;
            browser.screenshot("tour-step-1").await;
        }
        if step == 5 {
            // Step 4 was measured, so the comparison with it is there too.
            let sentences = c
                .find_all(Locator::Css("#tour-result .tour-sentence"))
                .await
                .unwrap()
                .len();
            assert_eq!(sentences, 3);
            top(c).await;
            browser.screenshot("tour-step-5").await;
        }
        if step == 4 {
            top(c).await;
            browser.screenshot("tour-step-4").await;
        }
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
        md.contains(&format!("| SET · sequential | {COUNT} |")),
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
    until(c, "step 7 again", 10, |s| {
        s["step"] == 7 && s["state"] == "done"
    })
    .await;
    for _ in 0..3 {
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

/// Step 4 at the tour's own network (0.5 ms each way) with 2,000 SETs: a screenshot at a scale a
/// room would see (`cargo test --test tour -- --ignored`; about ten seconds).
#[tokio::test]
#[ignore]
async fn step_4_at_the_tours_own_delay() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!("{}tour/4?count=2000", server.http_url())).await;
    let c = &browser.client;
    until(c, "step 4", 10, |s| s["step"] == 4 && s["state"] == "idle").await;
    support::browser::wait_enabled(c, "#tour-run", Duration::from_secs(10)).await;
    press(c, ENTER).await;
    let state = until(c, "step 4's run", 120, |s| s["state"] == "done").await;
    assert_eq!(
        state["steps"]["4"]["seq"]["spec"]["network"]["delay_out_us"],
        500
    );
    assert!(check_numbers(c, &state, 4).await >= 5);
    top(c).await;
    let shot = browser.screenshot("tour-step-4-2000").await;
    eprintln!("screenshot: {}", shot.display());
    drop(browser);
    server.shutdown().await.unwrap();
}
