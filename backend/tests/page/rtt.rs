//! The RTT diagram in headless Chromium against the real backend and a real redis-server: every
//! part in its legend names its source (measured / derived / assumed), loopback's remainder is
//! the hosts' time rather than propagation, a network's legs stand beside the dialled delay and
//! the proxy's compensation, and the pipelined arithmetic counts the round trips once.
//! Screenshots: target/screenshots/rtt-loopback.png, rtt-busy-poll.png, rtt-250us.png.

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use fantoccini::{Client, Locator};
use support::browser::{Browser, click, wait_enabled};

/// The legend's parts: key → (data-source, text). Every item's text names its source.
async fn legend(c: &Client) -> HashMap<String, (String, String)> {
    let items: Vec<(String, String, String)> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#rtt-legend li[data-part]')].map(e => \
         [e.dataset.part, e.dataset.source, e.textContent])",
        Duration::from_secs(10),
        "the RTT legend",
        |items: &Vec<(String, String, String)>| !items.is_empty(),
    )
    .await;
    let mut out = HashMap::new();
    for (part, source, text) in items {
        assert!(
            ["measured", "derived", "assumed"].contains(&source.as_str()),
            "{part}: {source}"
        );
        assert!(
            text.contains(&format!("— {source}")),
            "{part}'s label must name its source ({source}): {text}"
        );
        out.insert(part, (source, text));
    }
    out
}

/// Every segment drawn in the bar carries a source, written under it.
async fn bar_sources(c: &Client) {
    let segments: Vec<(String, String, String)> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#rtt g.part')].map(e => \
         [e.dataset.part, e.dataset.source, e.querySelector('.part-source').textContent])",
        Duration::from_secs(10),
        "the RTT bar",
        |s: &Vec<(String, String, String)>| !s.is_empty(),
    )
    .await;
    for (part, source, shown) in segments {
        assert_eq!(source, shown, "{part}");
    }
}

async fn attr(c: &Client, selector: &str, name: &str) -> f64 {
    c.find(Locator::Css(selector))
        .await
        .unwrap()
        .attr(name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{selector} has no {name}"))
        .parse()
        .unwrap()
}

async fn compare(c: &Client) {
    wait_enabled(c, "#compare", Duration::from_secs(60)).await;
    click(c, "#compare").await;
    c.wait()
        .at_most(Duration::from_secs(120))
        .for_element(Locator::Css("#rtt"))
        .await
        .expect("the round-trip diagram after a comparison");
    wait_enabled(c, "#compare", Duration::from_secs(120)).await;
}

async fn shot(browser: &Browser, name: &str) {
    browser
        .client
        .execute(
            "document.querySelector('.rtt-card').scrollIntoView({block: 'start'})",
            vec![],
        )
        .await
        .unwrap();
    let path = browser.screenshot(name).await;
    println!("screenshot {}", path.display());
}

/// The pipelined row: round trips × RTT + N × fitted cost is the measured time unless the fit
/// was clamped (round trips alone longer than the run), which the page then says.
async fn pipelined_adds_up(c: &Client) {
    let predicted = attr(c, "#rtt-predicted-pipe-ms", "data-value").await;
    let measured = attr(c, "#rtt-measured-pipe-ms", "data-value").await;
    let cost = attr(c, "#rtt-fitted-cost", "data-fitted-cost-us").await;
    let share = attr(c, "#rtt-fitted-cost", "data-rtt-share").await;
    let text = c
        .find(Locator::Css("#rtt-fitted-cost"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    if cost > 0.0 {
        assert!(
            (predicted - measured).abs() <= 1e-9 * measured.max(1.0),
            "round trips counted once: {predicted} ms = {measured} ms"
        );
        assert!(text.contains("fitted, not measured"), "{text}");
    } else {
        assert!(
            share >= 1.0,
            "a clamped fit: round trips ≥ the run ({share})"
        );
        assert!(text.contains("exceed the measured time"), "{text}");
    }
    println!(
        "pipelined: {measured:.2} ms measured, round trips {:.0} % of it, fitted cost {cost:.2} µs",
        share * 100.0
    );
}

#[tokio::test]
async fn on_loopback_the_legend_names_each_parts_source_and_busy_polling_shrinks_the_host() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!("{}?count=3000&batch=100", server.http_url())).await;
    let c = &browser.client;
    compare(c).await;

    let parts = legend(c).await;
    assert!(
        !parts.contains_key("t2"),
        "no propagation on loopback: {parts:?}"
    );
    assert_eq!(parts["t1"].0, "assumed");
    assert!(parts["t1"].1.contains("10 Gbit/s"), "{}", parts["t1"].1);
    let (source, host) = &parts["host"];
    assert_eq!(source, "derived");
    assert!(
        host.contains("kernel") && host.contains("wake-ups"),
        "{host}"
    );
    if let Some((source, text)) = parts.get("redis") {
        assert_eq!(source, "measured");
        assert!(text.contains("INFO commandstats"), "{text}");
    }
    bar_sources(c).await;
    assert_eq!(
        c.find(Locator::Css("#rtt"))
            .await
            .unwrap()
            .attr("data-measured")
            .await
            .unwrap()
            .as_deref(),
        Some("false")
    );
    // N × mean RTT, and the tail named beside it.
    let rtt = attr(c, "#rtt", "data-rtt-us").await;
    let predicted = attr(c, "#rtt-predicted-seq-ms", "data-value").await;
    assert!((predicted - 3000.0 * rtt / 1000.0).abs() <= 1e-9 * predicted.max(1.0));
    let tail = c
        .find(Locator::Css(".formula.tail"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(tail.contains("slowest 1 % of round trips took"), "{tail}");
    pipelined_adds_up(c).await;
    let sleeping_host = attr(c, "#rtt", "data-host-us").await;
    shot(&browser, "rtt-loopback").await;

    // The same comparison busy-polling: the page sets the hosts' time of both side by side.
    click(c, "#busy-poll").await;
    compare(c).await;
    let note = c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(".wait-comparison"))
        .await
        .expect("the sleeping and busy-polling runs compared");
    let sleep = attr(c, ".wait-comparison", "data-sleep-host-us").await;
    let busy = attr(c, ".wait-comparison", "data-busy-host-us").await;
    assert_eq!(
        sleep, sleeping_host,
        "the earlier, sleeping run's host part"
    );
    println!(
        "loopback host part: sleeping {sleep:.1} µs, busy-polling {busy:.1} µs — {}",
        note.text().await.unwrap()
    );
    legend(c).await;
    shot(&browser, "rtt-busy-poll").await;
    assert_eq!(
        support::command_calls(&target).await.get("set"),
        Some(&12_000)
    );
}

#[tokio::test]
async fn through_a_network_the_legs_stand_beside_the_dialled_delay_and_the_compensation() {
    // With a password and a db index: the handshake (AUTH, SELECT) crosses the wire tap too.
    let (_redis, target) = support::redis_with_password();
    let server =
        support::Server::start_with_network(target.clone(), shared::Network::symmetric(250)).await;
    let browser = Browser::open(&format!("{}?count=400&batch=50", server.http_url())).await;
    let c = &browser.client;
    compare(c).await;
    let parts = legend(c).await;
    for key in ["out", "tap", "back"] {
        let (source, text) = &parts[key];
        assert_eq!(source, "measured", "{key}");
        assert!(text.contains("measured by the wire tap"), "{key}: {text}");
    }
    for key in ["out", "back"] {
        let text = &parts[key].1;
        assert!(
            text.contains("ialled delay 250 µs") && text.contains("compensation"),
            "{key} stands beside the dialled delay and the compensation: {text}"
        );
    }
    assert!(
        parts["tap"].1.contains("wo loopback hops"),
        "{}",
        parts["tap"].1
    );
    assert_eq!(parts["t1"].0, "assumed");
    // Each chunk is held at least its delay less the compensation the proxy reports, so no leg
    // may read shorter than that (it did when the handshake shifted the stamps).
    for key in ["out", "back"] {
        assert!(
            !parts[key].1.contains("earlier than the compensation"),
            "{key}: {}",
            parts[key].1
        );
    }
    let redis = parts
        .get("redis")
        .expect("Redis's own time per SET (INFO commandstats) stands beside the tap's");
    assert_eq!(redis.0, "measured", "{}", redis.1);
    bar_sources(c).await;
    pipelined_adds_up(c).await;
    println!(
        "legs: out «{}» tap «{}» back «{}»",
        parts["out"].1, parts["tap"].1, parts["back"].1
    );
    shot(&browser, "rtt-250us").await;
}
