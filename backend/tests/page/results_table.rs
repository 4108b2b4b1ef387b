//! The results table fits its card at every window width a room or a laptop uses (1280, 1400,
//! 1920 and 800 px wide, and presenter mode's larger type at 1920 and 1280): no horizontal
//! overflow, the Speed-up cell on screen. A Compare of GETs (sequential, then MSET/MGET) runs
//! in headless Chromium against the real backend and a real redis-server; each row's Redis
//! figures show its own connection only (the GET seeding is not the run's), and the MGET
//! row's CPU per key and per MGET. Screenshots: target/screenshots/results-table-*.png.

use crate::support;

use std::time::Duration;

use serde::Deserialize;
use support::browser::{Browser, until_js, viewport};

const COMPARE: &str = "?count=20000&cmd=get&mode=mset&batch=1000&plan=compare";

/// The table, its scrolling container and the Speed-up cells, measured in one evaluation, with
/// the last Speed-up cell scrolled into view first.
const MEASURE: &str = r#"
const table = document.querySelector('#results');
const wrap = table.closest('.table-wrap');
const cells = [...document.querySelectorAll('#results td.speed-up')];
cells[cells.length - 1].scrollIntoView({ block: 'center' });
const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
return {
  inner: [window.innerWidth, window.innerHeight],
  table_scroll_width: table.scrollWidth,
  table_width: table.getBoundingClientRect().width,
  wrap_client_width: wrap.clientWidth,
  wrap_scroll_width: wrap.scrollWidth,
  speedups: cells.map(rect),
  speedup_text: cells.map((c) => c.textContent),
  wrap_rect: rect(wrap),
};
"#;

#[derive(Debug, Deserialize)]
struct Fit {
    inner: [f64; 2],
    table_scroll_width: f64,
    table_width: f64,
    wrap_client_width: f64,
    wrap_scroll_width: f64,
    speedups: Vec<[f64; 4]>,
    speedup_text: Vec<String>,
    wrap_rect: [f64; 4],
}

async fn measure(c: &fantoccini::Client, name: &str) -> Fit {
    let fit: Fit = until_js(
        c,
        MEASURE,
        Duration::from_secs(10),
        "the results table",
        |f: &Fit| f.speedups.len() == 2,
    )
    .await;
    let shot = Browser::screenshot_of(c, &format!("results-table-{name}")).await;
    println!(
        "{name}: viewport {:?}, table {} px (scrollWidth {}) in a container {} px wide; speed-ups {:?} at {:?}; screenshot {}",
        fit.inner,
        fit.table_width,
        fit.table_scroll_width,
        fit.wrap_client_width,
        fit.speedup_text,
        fit.speedups,
        shot.display()
    );
    let [width, height] = fit.inner;
    assert!(
        fit.table_scroll_width <= fit.wrap_client_width
            && fit.wrap_scroll_width <= fit.wrap_client_width,
        "{name}: the table overflows its card: {fit:?}"
    );
    for (r, text) in fit.speedups.iter().zip(&fit.speedup_text) {
        assert!(!text.is_empty(), "{name}: {fit:?}");
        assert!(
            r[0] >= fit.wrap_rect[0] - 0.5 && r[2] <= fit.wrap_rect[2] + 0.5,
            "{name}: a Speed-up cell lies outside the table's container: {fit:?}"
        );
        assert!(
            r[0] >= -0.5 && r[2] <= width + 0.5,
            "{name}: a Speed-up cell lies outside the viewport: {fit:?}"
        );
    }
    // The last one was scrolled into view: it is on screen top to bottom too.
    let last = fit.speedups.last().unwrap();
    assert!(
        last[1] >= -0.5 && last[3] <= height + 0.5,
        "{name}: {fit:?}"
    );
    fit
}

#[tokio::test(flavor = "multi_thread")]
async fn the_results_table_fits_its_card_at_every_width() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let url = format!("{}{COMPARE}", server.http_url());
    let browser = Browser::open(&url).await;
    let c = &browser.client;
    support::browser::wait_enabled(c, "#compare", Duration::from_secs(30)).await;
    support::browser::click(c, "#compare").await;
    let rows: usize = until_js(
        c,
        "return document.querySelectorAll('#results tr.result-row').length",
        Duration::from_secs(120),
        "both runs finished",
        |n: &usize| *n == 2,
    )
    .await;
    assert_eq!(rows, 2);

    // Each run's Redis figures hold that run alone: one connection (the seeding of its GET keys
    // was before its window), and the MGET row per key and per MGET.
    let redis: Vec<(String, String, String)> = serde_json::from_value(
        c.execute(
            "return [...document.querySelectorAll('#results tr.result-row')].map((r) => [r.dataset.mode, r.querySelector('td.connections').dataset.connections, r.querySelector('td.redis-cpu').textContent])",
            vec![],
        )
        .await
        .unwrap(),
    )
    .unwrap();
    println!("connections and Redis CPU per row: {redis:?}");
    for (mode, connections, _) in &redis {
        assert_eq!(connections, "1", "{mode}: the run's own connection only");
    }
    let mget = &redis
        .iter()
        .find(|r| r.0 == "mset")
        .expect("the MGET row")
        .2;
    assert!(mget.contains("/ key") && mget.contains("/ MGET"), "{mget}");

    for (w, h, name) in [
        (1280, 800, "1280"),
        (1400, 900, "1400"),
        (1920, 1080, "1920"),
        (800, 600, "800"),
    ] {
        viewport(c, w, h).await;
        measure(c, name).await;
    }

    // Presenter mode: larger type, the same table.
    c.goto(&format!("{url}&presenter=1")).await.unwrap();
    until_js(
        c,
        "return document.querySelectorAll('#results tr.result-row').length",
        Duration::from_secs(30),
        "the runs shown again after the reload",
        |n: &usize| *n == 2,
    )
    .await;
    for (w, h, name) in [
        (1920, 1080, "presenter-1920"),
        (1280, 720, "presenter-1280"),
    ] {
        viewport(c, w, h).await;
        measure(c, name).await;
    }
    assert!(support::pipescope_keys(&target).await.is_empty());
}
