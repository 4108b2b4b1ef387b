//! "Why not just use more connections?" on the page, in headless Chromium against the real
//! backend and a real redis-server, through a dialled-in network: the Compare preset runs a
//! pool of 8 connections (each one command at a time) beside one pipelined connection; the
//! timeline draws 8 client lanes for the pool and one for the pipeline, every request stamped
//! by its own connection's wire tap; the results show the round trips the engine counted and
//! the connections and CPU per command Redis measured. Saves target/screenshots/connections.png.

use crate::support;

use std::time::Duration;

use fantoccini::Client;
use support::browser::{Browser, css, text, until_state};

const COUNT: u64 = 2_000;
const POOL: &str = "sequential on 8 connections";
const PIPE: &str = "pipelined (batch 1000)";

async fn attr(c: &Client, selector: &str, name: &str) -> String {
    c.find(css(selector))
        .await
        .unwrap_or_else(|e| panic!("{selector}: {e}"))
        .attr(name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{selector} has no {name}"))
}

#[tokio::test]
async fn the_pool_preset_draws_a_lane_per_connection_and_shows_what_it_cost_redis() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let url = format!("{}?count={COUNT}&delay=100&plan=pool", server.http_url());
    let browser = Browser::open(&url).await;
    let c = &browser.client;
    c.set_window_size(1600, 1000).await.unwrap();
    support::browser::wait_enabled(c, "#compare-pool", Duration::from_secs(30)).await;
    support::browser::click(c, "#compare-pool").await;
    let row = |label: &str| format!("#results tr.result-row[data-label='{label}']");
    for label in [POOL, PIPE] {
        c.wait()
            .at_most(Duration::from_secs(120))
            .for_element(css(&row(label)))
            .await
            .unwrap_or_else(|e| panic!("the {label} run finishes: {e}"));
    }

    // The results: round trips as the engine counted them, connections and CPU as Redis did.
    let cell = |label, class: &str| format!("{} td.{class}", row(label));
    assert_eq!(text(c, &cell(POOL, "round-trips")).await, "2,000");
    assert_eq!(text(c, &cell(PIPE, "round-trips")).await, "2");
    assert_eq!(
        attr(c, &cell(POOL, "connections"), "data-connections").await,
        "8"
    );
    assert_eq!(
        attr(c, &cell(PIPE, "connections"), "data-connections").await,
        "1"
    );
    assert!(
        attr(c, &cell(POOL, "connections"), "title")
            .await
            .contains("INFO stats")
    );
    let mut cpu = Vec::new();
    for label in [POOL, PIPE] {
        let us: f64 = attr(c, &cell(label, "redis-cpu"), "data-cpu-us")
            .await
            .parse()
            .unwrap();
        assert!(us > 0.0, "{label}: Redis used CPU for its SETs");
        let title = attr(c, &cell(label, "redis-cpu"), "title").await;
        assert!(title.contains("INFO cpu"), "{label}: {title}");
        let shown = text(c, &cell(label, "redis-cpu")).await;
        assert!(shown.ends_with(" µs"), "{label}: {shown:?}");
        cpu.push((label, us, shown));
    }
    println!("Redis CPU per command: {cpu:?}");

    // The timeline: eight client lanes for the pool, one for the pipeline, every request and
    // reply drawn once playback reaches the end, each stamped by its connection's wire tap.
    until_state(c, "both runs drawn", Duration::from_secs(30), |s| {
        s["runs"].as_array().is_some_and(|r| r.len() == 2)
            && s["runs"][0]["spans"].as_u64() == Some(COUNT)
            && s["runs"][1]["spans"].as_u64() == Some(COUNT)
            && s["playback"]["live"] == false
    })
    .await;
    support::browser::click(c, "#zoom-fit").await;
    c.execute(
        "const el = document.getElementById('scrub'); el.value = el.max; \
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![],
    )
    .await
    .unwrap();
    let s = until_state(c, "every arrow drawn", Duration::from_secs(30), |s| {
        let p = &s["playback"];
        let at_end = p["position_us"].as_f64() >= p["extent_us"].as_f64();
        let whole = p["window_us"].as_f64() >= p["extent_us"].as_f64().map(|e| e * (1.0 - 1e-9));
        at_end
            && whole
            && s["runs"].as_array().is_some_and(|r| {
                r.iter()
                    .all(|r| r["arrows_drawn"].as_u64() == Some(2 * COUNT))
            })
    })
    .await;
    let runs = s["runs"].as_array().unwrap();
    assert_eq!(runs[0]["mode"], "connections");
    assert_eq!(runs[0]["client_lanes"], 8, "{s}");
    assert_eq!(runs[1]["mode"], "pipelined");
    assert_eq!(runs[1]["client_lanes"], 1, "{s}");
    for r in runs {
        assert_eq!(
            r["unstamped"], 0,
            "every request stamped by its own tap: {r}"
        );
    }
    c.execute(
        "document.getElementById('timeline').scrollIntoView({ block: 'start' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("connections").await;
    println!("screenshot {}", shot.display());

    // Closer: a few milliseconds near the start, where each connection's round trips show.
    c.execute(
        "const z = document.getElementById('zoom'); z.value = 52; \
         z.dispatchEvent(new Event('input', { bubbles: true })); \
         const el = document.getElementById('scrub'); el.value = el.max / 10; \
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![],
    )
    .await
    .unwrap();
    until_state(c, "a narrow window drawn", Duration::from_secs(10), |s| {
        let p = &s["playback"];
        match (p["window_us"].as_f64(), p["extent_us"].as_f64()) {
            (Some(w), Some(e)) => w < e / 20.0 && s["runs"][0]["arrows_drawn"].as_u64() > Some(0),
            _ => false,
        }
    })
    .await;
    let shot = browser.screenshot("connections-zoomed").await;
    println!("screenshot {}", shot.display());
    let _ = browser.client.clone().close().await;
}
