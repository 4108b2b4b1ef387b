//! The page's controls, sweep and export in headless Chromium, against the real backend and a
//! real redis-server.

use crate::support;

use std::time::Duration;

use fantoccini::Client;
use support::browser::{Browser, click, css};

/// `523399.6` → `"523,400"`: how the page (and its Markdown export) writes ops/s.
fn rate(ops: f64) -> String {
    shared::digits::group(ops.round() as u64)
}

async fn set_field(c: &Client, selector: &str, text: &str) {
    let field = c.find(css(selector)).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

async fn url(c: &Client) -> String {
    c.current_url().await.unwrap().to_string()
}

/// Waits until a button can be pressed (the page is connected, idle and allowed to control).
async fn wait_enabled(c: &Client, selector: &str) {
    support::browser::wait_enabled(c, selector, Duration::from_secs(30)).await;
}

#[tokio::test]
async fn the_controls_say_everything_a_run_can_and_keep_it_in_the_url() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&server.http_url()).await;
    let c = &browser.client;

    // Mode, command, flush policy, value size and a network preset all land in the link.
    c.find(css("#mode"))
        .await
        .unwrap()
        .select_by_value("pipelined")
        .await
        .unwrap();
    c.find(css("#flush"))
        .await
        .unwrap()
        .select_by_value("buffered")
        .await
        .unwrap();
    set_field(c, "#flush-every", "10").await;
    c.find(css("#command"))
        .await
        .unwrap()
        .select_by_value("get")
        .await
        .unwrap();
    set_field(c, "#value-bytes", "64").await;
    click(c, "button.preset[data-us='500']").await;
    let slider = c.find(css("#delay-slider")).await.unwrap();
    assert_eq!(slider.prop("value").await.unwrap().as_deref(), Some("28"));
    let summary = c
        .find(css("#network-summary"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(summary.contains("500 µs"), "{summary}");
    let link = url(c).await;
    for part in [
        "mode=pipelined",
        "flush=buffered",
        "every=10",
        "cmd=get",
        "value=64",
        "delay=500",
    ] {
        assert!(link.contains(part), "{part} in {link}");
    }

    // The link opens the same form.
    c.goto(&link).await.unwrap();
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(css("#status[data-state='open']"))
        .await
        .unwrap();
    assert_eq!(
        c.find(css("#flush-every"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("10")
    );
    assert_eq!(
        c.find(css("#delay-us"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("500")
    );

    // Invalid combinations are explained in words, before and on click; nothing typed is lost
    // and nothing runs.
    c.goto(&format!(
        "{}?mode=mset&cmd=incr&count=77",
        server.http_url()
    ))
    .await
    .unwrap();
    let inline = c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(css(".field-error"))
        .await
        .unwrap();
    assert!(
        inline
            .text()
            .await
            .unwrap()
            .contains("INCR has no one-command-many-keys form")
    );
    wait_enabled(c, "#run").await;
    click(c, "#run").await;
    let banner = c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(css("#error"))
        .await
        .unwrap();
    assert!(
        banner
            .text()
            .await
            .unwrap()
            .contains("INCR has no one-command-many-keys form")
    );
    assert_eq!(
        c.find(css("#count"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("77"),
        "the form keeps what was typed"
    );
    assert!(!support::command_calls(&target).await.contains_key("incr"));
}

#[tokio::test]
async fn a_sweep_draws_one_point_per_batch_and_the_markdown_has_each_runs_ops() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!("{}?count=2000&sweep=20", server.http_url())).await;
    let c = &browser.client;

    wait_enabled(c, "#sweep").await;
    click(c, "#sweep").await;
    // The chart is drawn after each complete round; wait for the last (every batch run 3×).
    c.wait()
        .at_most(Duration::from_secs(120))
        .for_element(css(
            "#sweep-chart[data-points='5'] circle.sweep-point[data-batch='20'][data-runs='3']",
        ))
        .await
        .expect("a sweep chart of batch 1, 2, 5, 10, 20, each run three times");
    let chart = c.find(css("#sweep-chart")).await.unwrap();
    let points = chart.find_all(css("circle.sweep-point")).await.unwrap();
    let mut batches = Vec::new();
    for p in &points {
        batches.push(p.attr("data-batch").await.unwrap().unwrap());
    }
    assert_eq!(
        batches,
        ["1", "2", "5", "10", "20"],
        "one point per batch size"
    );
    assert_eq!(
        chart.find_all(css("rect.cost-point")).await.unwrap().len(),
        5
    );
    // Each batch size is run three times (the page shows the median and the spread).
    let runs = 5 * 3;
    let spreads = chart.find_all(css("line.spread")).await.unwrap().len();
    assert_eq!(spreads, 5, "a min–max bar per batch size");
    assert_eq!(
        support::command_calls(&target).await["set"],
        runs * 2000,
        "every sweep run reached Redis"
    );

    // The exported Markdown carries each run's ops/s exactly as its summary says.
    let rows = c.find_all(css("#results tr.result-row")).await.unwrap();
    assert_eq!(rows.len(), runs as usize);
    let markdown = c
        .find(css("#export-markdown"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(markdown.lines().count(), 2 + runs as usize, "{markdown}");
    for row in &rows {
        let ops: f64 = row
            .attr("data-ops")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        let label = row.attr("data-label").await.unwrap().unwrap();
        // The same batch size appears in three rows: one of them carries this run's ops/s.
        let line = markdown
            .lines()
            .filter(|l| l.contains(&format!("SET · {label} |")))
            .find(|l| l.contains(&format!("| {} |", rate(ops))))
            .unwrap_or_else(|| panic!("a Markdown row for {label} at {}: {markdown}", rate(ops)));
        assert!(line.contains("| loopback |"), "{line}");
    }
    for id in [
        "#export-json",
        "#export-csv",
        "#export-md-copy",
        "#export-md",
    ] {
        assert!(c.find(css(id)).await.is_ok(), "{id}");
    }

    c.execute(
        "document.getElementById('sweep-chart').scrollIntoView({block: 'center'})",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("sweep").await;
    println!("sweep screenshot: {}", shot.display());
    c.execute(
        "document.getElementById('results').scrollIntoView({block: 'start'})",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("sweep-results").await;
    println!("results screenshot: {}", shot.display());
    assert!(support::pipescope_keys(&target).await.is_empty());
}

/// Needs the engine that runs `Mode::Transaction` (engine branch): until it is merged the
/// row and label assertions pass but Redis sees no MULTI/EXEC.
#[tokio::test]
async fn a_transaction_run_appears_with_its_label() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!(
        "{}?count=2000&mode=transaction&batch=50",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#run").await;
    click(c, "#run").await;
    let row = c
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(css("#results tr.result-row[data-mode='transaction']"))
        .await
        .expect("the MULTI/EXEC run's result row");
    let text = row.text().await.unwrap();
    assert!(text.contains("MULTI/EXEC (batch 50)"), "{text}");
    assert!(text.contains("SET · loopback"), "{text}");
    let shot = browser.screenshot("transaction").await;
    println!("transaction screenshot: {}", shot.display());
    let calls = support::command_calls(&target).await;
    assert_eq!(calls.get("set"), Some(&2000));
    assert_eq!(calls.get("multi"), Some(&40), "one MULTI per batch of 50");
    assert_eq!(calls.get("exec"), Some(&40), "one EXEC per batch of 50");
}

/// The busy-poll box goes into the link and into every run of the plan, and the results say
/// which runs busy-polled.
#[tokio::test]
async fn busy_polling_is_a_box_in_the_link_and_a_label_on_its_runs() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!(
        "{}?count=300&mode=sequential&batch=100",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#compare").await;
    click(c, "#busy-poll").await;
    let link = url(c).await;
    assert!(link.contains("poll=2000"), "{link}");
    click(c, "#compare").await;
    let details: Vec<String> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#results tr.result-row .mode-detail')].map(e => e.textContent)",
        Duration::from_secs(60),
        "two result rows",
        |d: &Vec<String>| d.len() == 2,
    )
    .await;
    for d in &details {
        assert!(d.contains("busy-poll 2000 µs"), "{details:?}");
    }
    browser.screenshot("busy-poll").await;
    assert_eq!(support::command_calls(&target).await.get("set"), Some(&600));

    // The link opens with the box ticked; unticking it takes it out of the link.
    c.goto(&link).await.unwrap();
    let check = c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(css("#busy-poll"))
        .await
        .unwrap();
    assert_eq!(
        check.prop("checked").await.unwrap().as_deref(),
        Some("true")
    );
    check.click().await.unwrap();
    assert!(!url(c).await.contains("poll="));
}

/// Needs the network branch (wire-tap stamps on spans and `summary.split`): until it is merged
/// the page shows the estimate, and this fails at the `data-measured` check.
#[tokio::test]
async fn with_a_network_the_round_trip_is_drawn_as_measured() {
    let (_redis, target) = support::redis();
    let server =
        support::Server::start_with_network(target.clone(), shared::Network::symmetric(300)).await;
    let browser = Browser::open(&format!("{}?count=300&batch=50", server.http_url())).await;
    let c = &browser.client;
    wait_enabled(c, "#compare").await;
    click(c, "#compare").await;
    let rtt = c
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(css("#rtt"))
        .await
        .expect("the round-trip diagram after a comparison");
    c.execute(
        "document.getElementById('rtt').scrollIntoView({block: 'center'})",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("rtt-network").await;
    println!("rtt screenshot: {}", shot.display());
    let label = c
        .find(css(
            "#results tr.result-row[data-mode='sequential'] .mode-detail",
        ))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        label.contains("300 µs"),
        "the run's label names its network: {label}"
    );
    assert_eq!(
        rtt.attr("data-measured").await.unwrap().as_deref(),
        Some("true"),
        "the wire tap's split is drawn"
    );
}

#[tokio::test]
async fn presenter_mode_keeps_presets_and_buttons_in_reach() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!(
        "{}?presenter=1&mode=transaction&batch=50&delay=500",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#run").await;
    // Folded into one line: the buttons are on it, the presets one click (Edit) away.
    for id in ["#run", "#compare", "#sweep", "#edit-controls"] {
        let el = c.find(css(id)).await.unwrap();
        assert!(
            el.is_displayed().await.unwrap(),
            "{id} visible on a projector"
        );
    }
    let preset = c.find(css("button.preset[data-us='30000']")).await.unwrap();
    assert!(
        !preset.is_displayed().await.unwrap(),
        "the presets are folded away until Edit"
    );
    click(c, "#edit-controls").await;
    for id in [
        "#run",
        "#compare",
        "#sweep",
        "button.preset[data-us='30000']",
    ] {
        let el = c.find(css(id)).await.unwrap();
        assert!(
            el.is_displayed().await.unwrap(),
            "{id} visible on a projector"
        );
    }
    let pressed = c
        .find(css("button.preset[data-us='500']"))
        .await
        .unwrap()
        .attr("aria-pressed")
        .await
        .unwrap();
    assert_eq!(
        pressed.as_deref(),
        Some("true"),
        "the link's network is shown"
    );
    let shot = browser.screenshot("presenter-controls").await;
    println!("presenter screenshot: {}", shot.display());
}
