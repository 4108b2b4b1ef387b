//! What the tour's prose must say, worked out from the runs' summaries as the backend sent
//! them (a websocket of the test's own), and the checks of the page's numbers against them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use futures_util::StreamExt;
use serde_json::Value;
use shared::ServerMsg;
use shared::digits::group;
use tokio_tungstenite::tungstenite::Message;

use super::{KNEE_GAIN, STEPS};
use crate::support;

/// Every run's summary as the backend sent it in `Finished`, seen by a websocket of the test's
/// own (every connection is told about every run), by run id.
#[derive(Clone, Default)]
pub(super) struct Finished(Arc<Mutex<HashMap<u64, Value>>>);

impl Finished {
    pub(super) async fn watch(server: &support::Server) -> Finished {
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
    pub(super) async fn get(&self, run: u64) -> Value {
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
pub(super) async fn reported(
    state: &Value,
    step: usize,
    finished: &Finished,
) -> HashMap<String, Value> {
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

pub(super) fn batch_of(s: &Value) -> f64 {
    let mode = &s["spec"]["mode"];
    mode["batch"]
        .as_f64()
        .or_else(|| mode["in_flight"].as_f64())
        .unwrap_or(1.0)
}

pub(super) fn ops(s: &Value) -> f64 {
    s["ops_per_sec"].as_f64().unwrap()
}

/// The runs of `role` and its repeats (`b1`, `b1_2`, `b1_3`).
pub(super) fn runs_of<'a>(runs: &'a HashMap<String, Value>, role: &str) -> Vec<&'a Value> {
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
pub(super) fn median<'a>(runs: &[&'a Value]) -> &'a Value {
    runs[(runs.len() - 1) / 2]
}

/// Median runs per batch size, ascending.
pub(super) fn by_batch(runs: &HashMap<String, Value>) -> Vec<(f64, Value)> {
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
pub(super) fn gain(a: &(f64, Value), b: &(f64, Value)) -> f64 {
    (ops(&b.1) / ops(&a.1)).powf(1.0 / (b.0 / a.0).log2())
}

/// The run a sweep name (`knee`, `best`, `beyond`) stands for, checked against the claim the
/// prose makes of it: the knee was reached by a step that paid and no later step paid; the
/// best has the highest median; beyond is the last batch when the last step paid (an earlier
/// one may not have: the prose claims the last step only).
pub(super) fn sweep_run(runs: &HashMap<String, Value>, name: &str, batch_shown: f64) -> Value {
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
        "beyond" => assert!(
            k == points.len() - 1 && paid(k),
            "beyond is the last batch, reached by a step that paid: {:?}",
            points.iter().map(|p| (p.0, ops(&p.1))).collect::<Vec<_>>()
        ),
        _ => unreachable!(),
    }
    points[k].1.clone()
}

/// What a placeholder must show, from the backend's summaries. `shown` is every number of the
/// step's prose by key (the knee's batch tells which run `knee.ops` must be).
pub(super) fn expected(
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
pub(super) async fn check_numbers(
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
            assert_eq!(*text, group(want as u64), "step {step}: {key}");
        }
    }
    shown
}

/// SETs and INCRs Redis has executed so far (INFO commandstats): the tour's runs' commands.
pub(super) async fn sets(target: &pipescope::target::RedisTarget) -> u64 {
    let calls = support::command_calls(target).await;
    calls.get("incr").copied().unwrap_or(0) + calls.get("set").copied().unwrap_or(0)
}

/// Step 1's figure: the engine's mean RTT, and every part the wire tap measured, each labelled
/// with its source in the bar and the legend.
pub(super) async fn one_trip_figure(c: &Client, one: &Value) {
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
pub(super) async fn legend_sources(c: &Client, legend: &str) -> HashMap<String, (String, String)> {
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
