//! What if it pipelined, drawn, and the observation as one HTML file from the observe view, in
//! headless Chromium against the real backend, a real redis-server and redis-py. The presenter
//! observes through a network of 500 µs each way, so a round trip is long enough to measure;
//! redis-py sends SETs in a loop and in one pipeline. The loop's figures draw it as measured
//! beside the same commands in batches, each lane's total read off the page matching what its
//! measured round trip and own time (the hub's own JSON of it) give for that many waits, and
//! labelled derived; the pipeline has none. "Download as one HTML file", its redaction ticked,
//! gives a file that opens from disk with every request blocked, shows each verdict's headline
//! and the loop's what-if, and holds no client address, connection name or key.
//! Screenshots: target/screenshots/observe-what-if.png, observe-download.png,
//! observe-what-if-file.png.

use crate::support;

use std::time::Duration;

use fantoccini::Locator;
use pipescope::server::hub::Hub;
use shared::ServerMsg;
use shared::observe::ObservedConnection;
use support::browser::{Browser, cdp, click, shown, text_of, tick, until_js, wait_enabled};
use support::clients::{redis_py, redis_py_runs};

use super::html_file::{downloaded, nothing_requested_or_thrown, open_blocked, unpacked};

const LOOP_SETS: u64 = 150;
const PIPELINE_SETS: u64 = 1000;
/// Each way, between the proxy and Redis.
const DELAY_US: u32 = 500;

/// One lane as the page says it: its label ("measured", "batches of 10"), total, and how.
#[derive(Debug, serde::Deserialize)]
struct Lane {
    label: String,
    total: String,
    how: String,
}

impl Lane {
    /// The batch its label names; 0 for the measured lane.
    fn batch(&self) -> u64 {
        match self.label.strip_prefix("batches of ") {
            Some(n) => number(n),
            None => {
                assert_eq!(self.label, "measured");
                0
            }
        }
    }

    /// The waits its words start with ("16 waits of 1.3 ms …").
    fn waits(&self) -> u64 {
        number(self.how.split(' ').next().unwrap())
    }
}

fn number(s: &str) -> u64 {
    s.replace(',', "")
        .parse()
        .unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

const LANES: &str = "const f = document.querySelector(arguments[0]); if (!f) return null; \
    return { how: f.querySelector('figcaption').textContent, \
      lanes: [...f.querySelectorAll('table tr')].map(r => ({ label: r.querySelector('th').textContent, \
        total: r.querySelector('td.value').textContent, how: r.querySelector('td.how').textContent })), \
      bars: f.querySelectorAll('svg g.lane').length }";

#[derive(Debug, serde::Deserialize)]
struct Drawn {
    how: String,
    lanes: Vec<Lane>,
    bars: usize,
}

/// "~15.0 ms" → (15,000 µs, half its last digit in µs: what rounding may have moved it).
fn said_us(total: &str) -> (f64, f64) {
    let t = total.trim_start_matches('~');
    let (number, unit) = t.split_once(' ').unwrap_or_else(|| panic!("{total:?}"));
    let scale = match unit {
        "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => panic!("unit of {total:?}"),
    };
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    (
        number.parse::<f64>().unwrap() * scale,
        0.5 * 10f64.powi(-decimals) * scale,
    )
}

/// The connections the hub would welcome a page with, worded as pages get them.
fn observed(hub: &Hub) -> Vec<ObservedConnection> {
    match hub.subscribe().welcome {
        ServerMsg::Welcome { observed, .. } => observed,
        other => panic!("{other:?}"),
    }
}

/// What the page draws of `id`, once it does.
async fn drawn(c: &fantoccini::Client, id: u64) -> Drawn {
    until_js(
        c,
        &format!("return (function() {{ {LANES} }}).apply(null, ['#what-if-{id}'])"),
        Duration::from_secs(30),
        "the loop's what-if drawn",
        |d: &Option<Drawn>| d.as_ref().is_some_and(|d| d.lanes.len() >= 2),
    )
    .await
    .unwrap()
}

/// The page's lanes against the arithmetic done here from `conn`'s measured figures: each
/// batch's waits are ⌈commands / batch⌉, its total its own time plus that many of its mean
/// round trip, within the rounding of the total as said.
fn check_lanes(d: &Drawn, conn: &ObservedConnection) {
    let (n, trips) = (conn.counts.commands, conn.counts.round_trips);
    let (own, waiting) = (conn.times.client_us, conn.times.waiting_us);
    let rtt = waiting / trips as f64;
    let expected: Vec<(u64, u64, f64)> = std::iter::once((0, trips, own + waiting))
        .chain(
            [10u64, 100, 1000]
                .into_iter()
                .filter(|&b| b < n && n.div_ceil(b) < trips)
                .map(|b| (b, n.div_ceil(b), own + n.div_ceil(b) as f64 * rtt)),
        )
        .collect();
    let shown: Vec<(u64, u64)> = d.lanes.iter().map(|l| (l.batch(), l.waits())).collect();
    assert_eq!(
        shown,
        expected.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
        "{d:?}"
    );
    assert_eq!(d.bars, d.lanes.len(), "a bar a lane: {d:?}");
    for (lane, (_, _, us)) in d.lanes.iter().zip(&expected) {
        let (said, rounding) = said_us(&lane.total);
        assert!(
            (said - us).abs() <= rounding + 1e-6,
            "{lane:?}: expected {us:.1} µs from {n} commands, {trips} round trips, {waiting:.1} µs waiting, {own:.1} µs own time"
        );
        if lane.batch() == 0 {
            assert!(lane.how.contains("measured by the proxy"), "{lane:?}");
        } else {
            assert!(lane.total.starts_with('~'), "{lane:?}");
            assert!(lane.how.ends_with("derived, not measured"), "{lane:?}");
        }
    }
    assert!(
        d.how.contains("derived from its measured mean round trip")
            && d.how.contains("and its measured own time")
            && d.how.contains("not measured"),
        "{}",
        d.how
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_is_drawn_beside_its_batches_and_the_observation_downloads_as_one_file() {
    let Some(_) = redis_py() else { return };
    let (_redis, target) = support::redis();
    let listen =
        std::net::SocketAddr::from(([127, 0, 0, 1], pipescope::local_redis::free_port().unwrap()));
    let version = target.server_version().await.unwrap();
    let hub = Hub::with_network(target, version, shared::Network::symmetric(DELAY_US))
        .await
        .unwrap()
        .observe_on(listen);
    let server = support::Server::serve(hub.clone()).await;
    let browser = Browser::open(&format!("{}observe", server.http_url())).await;
    let c = &browser.client;
    wait_enabled(c, "#observe-start", Duration::from_secs(30)).await;
    click(c, "#observe-start").await;
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("#connect-url"))
        .await
        .expect("observing starts");

    redis_py_runs(
        listen.port(),
        &[
            ("py-loop", "loop", LOOP_SETS),
            ("py-pipeline", "pipeline", PIPELINE_SETS),
        ],
    )
    .await;
    // Both closed: their figures are final.
    let conns: Vec<ObservedConnection> = support::within(
        Duration::from_secs(30),
        "both connections closed at the proxy",
        async {
            loop {
                let conns = observed(&hub);
                if conns.len() == 2 && conns.iter().all(|c| !c.open) {
                    return conns;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        },
    )
    .await;
    let named = |name: &str| support::observe::named(&conns, name);
    let (plain, piped) = (named("py-loop"), named("py-pipeline"));
    // The loop waited on each reply (or could not be told from one that did not: then drawn
    // as what it would take if it waits); the delay line makes each round trip at least its
    // two delays.
    assert!(
        plain
            .verdict
            .allows(shared::observe::VerdictKind::OneAtATime),
        "{:?}",
        plain.verdict
    );
    let rtt = plain.times.waiting_us / plain.counts.round_trips as f64;
    assert!(rtt >= 2.0 * DELAY_US as f64, "mean round trip {rtt} µs");

    for id in [plain.id, piped.id] {
        click(c, &format!("#choose-{id}")).await;
    }
    let d = drawn(c, plain.id).await;
    eprintln!("{d:#?}");
    check_lanes(&d, plain);
    // The pipeline waited on a few round trips only: nothing to draw.
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(&format!("#figures-{}", piped.id)))
        .await
        .expect("the pipeline's figures");
    let none: bool = c
        .execute(
            &format!("return !document.querySelector('#what-if-{}')", piped.id),
            vec![],
        )
        .await
        .unwrap()
        .as_bool()
        .unwrap();
    assert!(none, "a pipelined client has no what-if");
    c.execute(
        &format!(
            "document.querySelector('#what-if-{}').scrollIntoView({{block: 'center'}})",
            plain.id
        ),
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("observe-what-if").await;
    println!("screenshot {}", shot.display());

    // The observation as one file, its client addresses and names replaced by numbers.
    let downloads = tempfile::tempdir().unwrap();
    cdp(
        c,
        "Page.setDownloadBehavior",
        serde_json::json!({ "behavior": "allow", "downloadPath": downloads.path().display().to_string() }),
    )
    .await;
    click(c, "#observe-html-redact").await;
    c.execute(
        "document.querySelector('#observe-html').scrollIntoView({block: 'center'})",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("observe-download").await;
    println!("screenshot {}", shot.display());
    click(c, "#observe-html").await;
    let file = downloaded(downloads.path()).await;
    drop(browser);
    let html = std::fs::read_to_string(&file).unwrap();
    let data = String::from_utf8(unpacked(&html, "pipescope-data")).unwrap();
    for conn in &conns {
        let name = conn.name.as_deref().expect("redis-py names its connection");
        let key = format!("py:{name}:");
        for (what, text) in [("the file", html.as_str()), ("the data inside", &data)] {
            for secret in [conn.client.as_str(), name, &key] {
                assert!(!text.contains(secret), "{what} holds {secret}");
            }
        }
        assert!(data.contains(&format!("\"client {}\"", conn.id)), "{data}");
    }

    let browser = open_blocked(&format!("file://{}", file.display())).await;
    let c = &browser.client;
    let rows: Vec<(u64, String)> = until_js(
        c,
        "return [...document.querySelectorAll('#observed-table tr.observed-row')].map(r =>
           [Number(r.id.replace('observed-', '')), r.querySelector('.verdict-text').textContent])",
        Duration::from_secs(30),
        "the observation's connections in the file's table",
        |rows: &Vec<(u64, String)>| rows.len() == conns.len(),
    )
    .await;
    for (id, headline) in &rows {
        let conn = conns.iter().find(|c| c.id == *id).unwrap();
        assert_eq!(headline, conn.verdict.lead(), "#{id}");
    }
    let table: String = text_of(c, "#observed-table")
        .await
        .expect("the file's table");
    assert!(
        table.contains("client 1") && !table.contains("127.0.0.1") && !table.contains("py-loop"),
        "{table}"
    );
    tick(c, &format!("#choose-{}", plain.id)).await;
    let in_file = drawn(c, plain.id).await;
    check_lanes(&in_file, plain);
    assert!(
        !shown(c, "#observe-html").await,
        "a file has no server to write another file"
    );
    nothing_requested_or_thrown(c).await;
    c.execute(
        &format!(
            "document.querySelector('#what-if-{}').scrollIntoView({{block: 'center'}})",
            plain.id
        ),
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("observe-what-if-file").await;
    println!("screenshot {}", shot.display());
}
