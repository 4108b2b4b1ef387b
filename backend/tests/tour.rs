//! The guided tour (`/tour`) in headless Chromium against the real backend and a real
//! redis-server: walked with the keyboard from the first step to the handout, every step a real
//! run (Redis counts the SETs), every number in the prose checked against what the backend sent
//! (the `Finished` messages, caught by a websocket of the test's own) and every claim about the
//! sweep's knee checked against those numbers. And `/tour/3` serves the page and opens step 3.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, Locator};
use futures_util::StreamExt;
use serde_json::Value;
use shared::ServerMsg;
use support::browser::Browser;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

/// The tour's sweep: batches 1 … 10,000, the series three times (`frontend/src/tour.rs`).
const SWEEP_ROLES: [&str; 15] = [
    "b1", "b10", "b100", "b1000", "b10000", "b1_2", "b10_2", "b100_2", "b1000_2", "b10000_2",
    "b1_3", "b10_3", "b100_3", "b1000_3", "b10000_3",
];
/// The knee's rule, as the page states it: a step pays when it multiplies throughput by at
/// least 1.5× per doubling of the batch.
const KNEE_GAIN: f64 = 1.5;

/// Runs per step (roles), as in `frontend/src/tour.rs`.
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

/// Every run's summary as the backend sent it in `Finished`, seen by a websocket of the test's
/// own (every connection is told about every run), by run id.
#[derive(Clone, Default)]
struct Finished(Arc<Mutex<HashMap<u64, Value>>>);

impl Finished {
    async fn watch(server: &support::Server) -> Finished {
        let (mut ws, _) = tokio_tungstenite::connect_async(server.ws_url())
            .await
            .unwrap();
        let seen = Finished::default();
        let into = seen.clone();
        tokio::spawn(async move {
            while let Some(Ok(frame)) = ws.next().await {
                let Message::Text(t) = frame else { continue };
                if let Ok(ServerMsg::Finished { run, summary, .. }) =
                    ServerMsg::from_json(t.as_str())
                {
                    let v = serde_json::to_value(summary).unwrap();
                    into.0.lock().unwrap().insert(run, v);
                }
            }
        });
        seen
    }

    /// The summary of `run`, waiting (up to 10 s) for its message.
    async fn get(&self, run: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(v) = self.0.lock().unwrap().get(&run) {
                return v.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no Finished message for run {run}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A step's runs as the backend reported them: role → summary, via the page's run ids (in the
/// order of the step's roles). Also checks the page holds the same summaries.
async fn reported(state: &Value, step: usize, finished: &Finished) -> HashMap<String, Value> {
    let ids = state["ids"][step.to_string()].as_array().unwrap();
    let roles = STEPS[step - 1].1;
    assert_eq!(ids.len(), roles.len(), "step {step}: {state}");
    let mut out = HashMap::new();
    for (id, role) in ids.iter().zip(roles) {
        let s = finished.get(id.as_u64().unwrap()).await;
        // Compared as summaries: the page's JSON writes 0.0 as 0.
        let summary = |v: &Value| serde_json::from_value::<shared::RunSummary>(v.clone()).unwrap();
        assert_eq!(
            summary(&state["steps"][step.to_string()][*role]),
            summary(&s),
            "step {step} {role}: the page's summary is the backend's"
        );
        out.insert(role.to_string(), s);
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

fn ops(s: &Value) -> f64 {
    s["ops_per_sec"].as_f64().unwrap()
}

/// The runs of `role` and its repeats (`b1`, `b1_2`, `b1_3`).
fn runs_of<'a>(runs: &'a HashMap<String, Value>, role: &str) -> Vec<&'a Value> {
    let mut v: Vec<&Value> = runs
        .iter()
        .filter(|(r, _)| {
            *r == role
                || r.strip_prefix(role)
                    .is_some_and(|rest| rest.starts_with('_'))
        })
        .map(|(_, s)| s)
        .collect();
    v.sort_by(|a, b| ops(a).total_cmp(&ops(b)));
    v
}

/// The median run by throughput (lower middle), as the page says it shows.
fn median<'a>(runs: &[&'a Value]) -> &'a Value {
    runs[(runs.len() - 1) / 2]
}

/// Median runs per batch size, ascending.
fn by_batch(runs: &HashMap<String, Value>) -> Vec<(f64, Value)> {
    let mut batches: Vec<f64> = runs.values().map(batch_of).collect();
    batches.sort_by(f64::total_cmp);
    batches.dedup();
    batches
        .into_iter()
        .map(|b| {
            let mut at: Vec<&Value> = runs.values().filter(|s| batch_of(s) == b).collect();
            at.sort_by(|a, b| ops(a).total_cmp(&ops(b)));
            (b, median(&at).clone())
        })
        .collect()
}

/// Per doubling of the batch, how much the step from `a` to `b` multiplied throughput.
fn gain(a: &(f64, Value), b: &(f64, Value)) -> f64 {
    (ops(&b.1) / ops(&a.1)).powf(1.0 / (b.0 / a.0).log2())
}

/// The run a sweep name (`knee`, `best`, `beyond`) stands for, checked against the claim the
/// prose makes of it: the knee was reached by a step that paid and no later step paid; the
/// best has the highest median; beyond is the last batch when every step paid.
fn sweep_run(runs: &HashMap<String, Value>, name: &str, batch_shown: f64) -> Value {
    let points = by_batch(runs);
    let k = points
        .iter()
        .position(|p| p.0 == batch_shown)
        .unwrap_or_else(|| panic!("{name} names batch {batch_shown}, which did not run"));
    let paid = |i: usize| gain(&points[i - 1], &points[i]) >= KNEE_GAIN;
    match name {
        "knee" => {
            assert!(k == 0 || paid(k), "the step into the knee paid");
            assert!(
                (k + 1..points.len()).all(|i| !paid(i)),
                "no step past the knee paid: {:?}",
                points.iter().map(|p| (p.0, ops(&p.1))).collect::<Vec<_>>()
            );
        }
        "best" => assert!(points.iter().all(|p| ops(&p.1) <= ops(&points[k].1))),
        "beyond" => assert!(k == points.len() - 1 && (1..points.len()).all(paid)),
        _ => unreachable!(),
    }
    points[k].1.clone()
}

/// What a placeholder must show, from the backend's summaries. `shown` is every number of the
/// step's prose by key (the knee's batch tells which run `knee.ops` must be).
fn expected(
    runs: &HashMap<String, Value>,
    earlier: &HashMap<usize, HashMap<String, Value>>,
    shown: &HashMap<String, f64>,
    key: &str,
) -> f64 {
    let run = |name: &str| -> Value {
        if let Some((s, role)) = name.strip_prefix('s').and_then(|r| r.split_once('.'))
            && let Ok(n) = s.parse::<usize>()
        {
            return earlier[&n][role].clone();
        }
        match name {
            "knee" | "best" | "beyond" => sweep_run(runs, name, shown[&format!("{name}.batch")]),
            role => median(&runs_of(runs, role)).clone(),
        }
    };
    if let Some(rest) = key.strip_prefix("speedup:") {
        let (a, b) = rest.split_once(':').unwrap();
        return ops(&run(b)) / ops(&run(a));
    }
    let (name, field) = key.rsplit_once('.').unwrap();
    match field {
        "runs" => return runs_of(runs, name).len() as f64,
        "ops_min" => return ops(runs_of(runs, name)[0]),
        "ops_max" => return ops(runs_of(runs, name).last().unwrap()),
        "rt_major" | "rt_minor" => {
            // Batch 1's time per round trip × the knee's round trips ÷ the knee's wall time.
            let first = &by_batch(runs)[0].1;
            let knee = run("knee");
            let per_rt =
                first["wall_us"].as_f64().unwrap() / first["round_trips"].as_f64().unwrap();
            let share = (per_rt * knee["round_trips"].as_f64().unwrap()
                / knee["wall_us"].as_f64().unwrap())
            .min(1.0);
            assert_eq!(share >= 0.5, field == "rt_major", "{key}: {share}");
            return share;
        }
        _ => {}
    }
    let s = run(name);
    assert!(!s.is_null(), "{key}: no run {name}");
    let f = |k: &str| s[k].as_f64().unwrap();
    match field {
        "count" => f("done"),
        "round_trips" => f("round_trips"),
        "writes" => f("writes"),
        "wall" => f("wall_us"),
        "ops" => f("ops_per_sec"),
        "rtt" => s["latency"]["mean_us"].as_f64().unwrap(),
        "per_rt" => f("wall_us") / f("round_trips").max(1.0),
        "batch" => batch_of(&s),
        "delay" => s["spec"]["network"]["delay_out_us"].as_f64().unwrap(),
        "out" => s["split"]["out_us"].as_f64().unwrap(),
        "server" => s["split"]["server_us"].as_f64().unwrap(),
        "back" => s["split"]["back_us"].as_f64().unwrap(),
        "early_out" => s["split"]["early_out_us"].as_f64().unwrap(),
        "early_back" => s["split"]["early_back_us"].as_f64().unwrap(),
        "redis" => f("redis_usec_per_call"),
        // The other client, measured by the counter's values.
        "other" => s["interleaving"]["other_commands"].as_f64().unwrap(),
        "inside" => s["interleaving"]["other_inside"].as_f64().unwrap(),
        "interleaved" => s["interleaving"]["batches_interleaved"].as_f64().unwrap(),
        "batches" => s["interleaving"]["batches"].as_f64().unwrap(),
        "final" => s["interleaving"]["final_value"].as_f64().unwrap(),
        "inside_some" => {
            let v = s["interleaving"]["other_inside"].as_f64().unwrap();
            assert!(
                v > 0.0,
                "{key}: the prose says some ran inside, the backend says none"
            );
            v
        }
        "inside_none" => {
            let v = s["interleaving"]["other_inside"].as_f64().unwrap();
            assert_eq!(v, 0.0, "{key}: the prose says none ran inside");
            v
        }
        other => panic!("unknown field {other} in {key}"),
    }
}

/// Every number in the step's result text, checked against the backend's summaries. Returns
/// the numbers by key.
async fn check_numbers(
    c: &Client,
    runs: &HashMap<String, Value>,
    earlier: &HashMap<usize, HashMap<String, Value>>,
    step: usize,
) -> HashMap<String, f64> {
    let nums = c
        .execute(
            "return [...document.querySelectorAll('#tour-result .tour-num')].map(e => \
             [e.dataset.key, e.dataset.value, e.textContent])",
            vec![],
        )
        .await
        .unwrap();
    let nums: Vec<(String, f64, String)> = nums
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n[0].as_str().unwrap().to_string(),
                n[1].as_str().unwrap().parse::<f64>().unwrap(),
                n[2].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let shown: HashMap<String, f64> = nums.iter().map(|(k, v, _)| (k.clone(), *v)).collect();
    for (key, value, text) in &nums {
        let want = expected(runs, earlier, &shown, key);
        assert!(
            (value - want).abs() <= 1e-9 * want.abs().max(1.0),
            "step {step}: {key} shows {value} ({text}), the backend says {want}"
        );
        assert!(!text.trim().is_empty(), "{key} has no text");
        if ["count", "round_trips", "writes", "batch", "runs"]
            .iter()
            .any(|f| key.ends_with(&format!(".{f}")))
        {
            assert_eq!(*text, grouped(want as u64), "step {step}: {key}");
        }
    }
    shown
}

/// SETs and INCRs Redis has executed so far (INFO commandstats): the tour's runs' commands.
async fn sets(target: &pipescope::target::RedisTarget) -> u64 {
    let calls = support::command_calls(target).await;
    calls.get("incr").copied().unwrap_or(0) + calls.get("set").copied().unwrap_or(0)
}

/// Step 1's figure: the engine's mean RTT, and every part the wire tap measured, each labelled
/// with its source in the bar and the legend.
async fn one_trip_figure(c: &Client, one: &Value) {
    let svg = c.find(Locator::Css("#one-trip")).await.unwrap();
    let attr = |name: &'static str| {
        let svg = svg.clone();
        async move {
            svg.attr(name)
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("#one-trip has no {name}"))
                .parse::<f64>()
                .unwrap()
        }
    };
    assert_eq!(
        attr("data-rtt-us").await,
        one["latency"]["mean_us"].as_f64().unwrap()
    );
    assert_eq!(
        svg.attr("data-measured").await.unwrap().as_deref(),
        Some("true"),
        "with a network dialled in, the wire tap measured the legs"
    );
    assert_eq!(
        attr("data-t3-us").await,
        one["split"]["server_us"].as_f64().unwrap()
    );
    let legend = legend_sources(c, "#one-trip-legend").await;
    for key in ["out", "tap", "back"] {
        let (source, text) = &legend[key];
        assert_eq!(source, "measured", "{key}");
        assert!(text.contains("measured by the wire tap"), "{key}: {text}");
    }
    let (source, text) = &legend["t1"];
    assert_eq!(source, "assumed");
    assert!(
        text.contains("assumed: ") && text.contains("10 Gbit/s"),
        "{text}"
    );
}

/// A parts legend's items: part → (data-source, text). Every item's text names its source.
async fn legend_sources(c: &Client, legend: &str) -> HashMap<String, (String, String)> {
    let items = c
        .execute(
            &format!(
                "return [...document.querySelectorAll('{legend} li[data-part]')].map(e => \
                 [e.dataset.part, e.dataset.source, e.textContent])"
            ),
            vec![],
        )
        .await
        .unwrap();
    let mut out = HashMap::new();
    for item in items.as_array().unwrap() {
        let (part, source, text) = (
            item[0].as_str().unwrap().to_string(),
            item[1].as_str().unwrap().to_string(),
            item[2].as_str().unwrap().to_string(),
        );
        assert!(
            ["measured", "derived", "assumed"].contains(&source.as_str()),
            "{part}: {source}"
        );
        assert!(
            text.contains(&format!("— {source}")),
            "{legend} {part} must name its source ({source}): {text}"
        );
        out.insert(part, (source, text));
    }
    assert!(!out.is_empty(), "{legend} lists no parts");
    out
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
    let finished = Finished::watch(&server).await;
    let mut earlier: HashMap<usize, HashMap<String, Value>> = HashMap::new();

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
        let count = fixed.unwrap_or(COUNT);
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
    const N: u64 = 200;
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
