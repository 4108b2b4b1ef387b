//! Atomicity on the page, in headless Chromium against the real backend and a real
//! redis-server: a pipelined run and a MULTI/EXEC run, each with the other client, draw the
//! other client's lane and state the measured result; the page's numbers are the backend's.

use crate::support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use futures_util::StreamExt;
use shared::ServerMsg;
use shared::interleave::Interleaving;
use support::browser::Browser;
use tokio_tungstenite::tungstenite::Message;

/// Every finished run's measured interleaving, seen by a websocket of the test's own.
#[derive(Clone, Default)]
struct Finished(Arc<Mutex<HashMap<u64, Interleaving>>>);

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
                    && let Some(i) = summary.interleaving
                {
                    into.0.lock().unwrap().insert(run, i);
                }
            }
        });
        seen
    }

    async fn get(&self, run: u64) -> Interleaving {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(i) = self.0.lock().unwrap().get(&run) {
                return i.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no Finished message with an interleaving for run {run}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Runs the form as it stands and returns the atomicity line's run id, other-client INCRs and
/// INCRs inside batches, with the lane as drawn (INCRs, of which inside a batch).
async fn run_and_read(c: &Client, mode: &str) -> (u64, u64, u64, (u64, u64)) {
    support::browser::wait_enabled(c, "#run", Duration::from_secs(30)).await;
    support::browser::click(c, "#run").await;
    let line: Vec<String> = support::browser::until_js(
        c,
        &format!(
            "const p = document.querySelector(\"#atomicity .atomicity[data-mode='{mode}']\"); \
             return p ? [p.dataset.run, p.dataset.other, p.dataset.inside, p.textContent] : []"
        ),
        Duration::from_secs(60),
        &format!("the {mode} run's atomicity line"),
        |v: &Vec<String>| !v.is_empty(),
    )
    .await;
    assert!(
        line[3].contains("measured: INCR replies give Redis's order"),
        "{line:?}"
    );
    let lane: Vec<f64> = support::browser::until_js(
        c,
        "const r = (window.__pipescope || {runs: []}).runs.find(r => r.other_lane !== undefined); \
         return r ? [r.other_lane, r.other_lane_inside] : []",
        Duration::from_secs(10),
        "the other client's lane on the timeline",
        |v: &Vec<f64>| !v.is_empty(),
    )
    .await;
    let n = |k: usize| line[k].parse::<u64>().unwrap();
    (n(0), n(1), n(2), (lane[0] as u64, lane[1] as u64))
}

/// Screenshots of the timeline (`name`) and of the results' atomicity lines (`name-line`).
async fn shoot(browser: &Browser, name: &str) {
    for (selector, shot) in [
        ("#timeline", name.to_string()),
        ("#atomicity", format!("{name}-line")),
    ] {
        browser
            .client
            .execute(
                &format!(
                    "document.querySelector('{selector}').scrollIntoView({{block: 'center'}})"
                ),
                vec![],
            )
            .await
            .unwrap();
        // Two animation frames: the scroll is painted, and the canvas redrawn at its size.
        browser
            .client
            .execute_async(
                "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done()))",
                vec![],
            )
            .await
            .unwrap();
        let path = browser.screenshot(&shot).await;
        eprintln!("screenshot: {}", path.display());
    }
}

#[tokio::test]
async fn the_other_clients_lane_and_the_measured_result_for_both_modes() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let finished = Finished::watch(&server).await;
    // Batches of 10,000 INCRs: Redis reads them 16 KB at a time and serves the other client
    // between reads, unless the batch is a transaction.
    let browser = Browser::open(&format!(
        "{}?count=100000&mode=pipelined&batch=10000&cmd=incr&other=1",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    let checked = c
        .find(Locator::Css("#other-client"))
        .await
        .unwrap()
        .prop("checked")
        .await
        .unwrap();
    assert_eq!(checked.as_deref(), Some("true"), "?other=1 checks the box");

    let (run, other, inside, lane) = run_and_read(c, "pipelined").await;
    let measured = finished.get(run).await;
    assert_eq!(
        (other, inside),
        (measured.other_commands, measured.other_inside)
    );
    assert!(
        inside > 0,
        "no INCR of the other client inside a pipeline: {measured:?}"
    );
    assert!(lane.0 > 0, "the lane draws the other client's INCRs");
    assert!(lane.1 > 0, "and highlights those inside a batch: {lane:?}");
    shoot(&browser, "atomicity").await;

    c.find(Locator::Css("#mode"))
        .await
        .unwrap()
        .select_by_value("transaction")
        .await
        .unwrap();
    let (run, other, inside, lane) = run_and_read(c, "transaction").await;
    let measured = finished.get(run).await;
    assert_eq!(
        (other, inside),
        (measured.other_commands, measured.other_inside)
    );
    assert_eq!(inside, 0, "{measured:?}");
    assert!(lane.0 > 0, "the lane draws the other client's INCRs");
    assert_eq!(lane.1, 0, "none inside a MULTI/EXEC");
    shoot(&browser, "atomicity-transaction").await;
    drop(browser);
    server.shutdown().await.unwrap();
}
