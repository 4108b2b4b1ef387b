//! The real page in headless Chromium against the real backend and a real redis-server.

use crate::support;

use std::time::Duration;

use fantoccini::Locator;
use shared::ServerMsg;
use support::browser::Browser;

#[tokio::test]
async fn compare_in_the_page_shows_a_measured_speedup() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&server.http_url()).await;
    let c = &browser.client;

    let wait = || c.wait().at_most(Duration::from_secs(30));

    let count = wait().for_element(Locator::Css("#count")).await.unwrap();
    count.clear().await.unwrap();
    count.send_keys("20000").await.unwrap();
    support::browser::click(c, "#compare").await;

    // Mid-run: a live progress bar exists.
    wait()
        .for_element(Locator::Css(".run-progress progress"))
        .await
        .expect("a progress bar while running");

    let speedup = c
        .wait()
        .at_most(Duration::from_secs(120))
        .for_element(Locator::Css("#speedup[data-speedup]"))
        .await
        .expect("the results show a speed-up");
    let value: f64 = speedup
        .attr("data-speedup")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    let shot = browser.screenshot("compare").await;
    println!(
        "speed-up read from the page: {value}× (screenshot {})",
        shot.display()
    );
    assert!(
        value > 1.0,
        "pipelined should beat sequential, the page says {value}"
    );
    // The figure is the two runs' throughputs as the server recorded them, divided (shown
    // with two decimals).
    let ServerMsg::Welcome { recent, .. } = server.hub.subscribe().welcome else {
        unreachable!()
    };
    let [seq, pipe] = [&recent[0].summary, &recent[1].summary];
    assert_eq!(
        (seq.spec.mode, pipe.spec.mode.batch() > 1),
        (shared::Mode::Sequential, true)
    );
    let recorded = pipe.speedup_over(seq);
    assert!(
        (value - recorded).abs() <= 0.005 + 1e-9,
        "the page's {value}× against the recorded {recorded}× ({} / {} ops/s)",
        pipe.ops_per_sec,
        seq.ops_per_sec
    );

    let rows = c
        .find_all(Locator::Css("#results tr.result-row"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2, "one result row per run");
    assert!(
        c.find(Locator::Css("#error")).await.is_err(),
        "no error banner after a good run"
    );
    assert_eq!(
        support::command_calls(&target).await["set"],
        40_000,
        "the page's runs really reached Redis"
    );
    assert!(support::pipescope_keys(&target).await.is_empty());
}

#[tokio::test]
async fn invalid_input_is_refused_in_the_page() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&server.http_url()).await;
    let c = &browser.client;
    let wait = || c.wait().at_most(Duration::from_secs(30));
    let count = c.find(Locator::Css("#count")).await.unwrap();
    count.clear().await.unwrap();
    count.send_keys("0").await.unwrap();
    support::browser::click(c, "#compare").await;
    let error = wait()
        .for_element(Locator::Css("#error"))
        .await
        .expect("an error banner");
    let text = error.text().await.unwrap();
    assert!(
        text.to_lowercase().contains("count must be between 1 and"),
        "the banner explains: {text}"
    );
    assert_eq!(
        support::command_calls(&target).await.get("set"),
        None,
        "nothing ran"
    );
}

#[tokio::test]
async fn only_the_presenters_link_can_start_a_run() {
    let (_redis, target) = support::redis();
    let server = support::Server::start_with_token(target.clone(), "Tok3n").await;

    let viewer = Browser::open(&server.http_url()).await;
    // The page knows (from Welcome) that it may only watch: it says so, and its buttons are off.
    let note = viewer
        .client
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("#watch-only"))
        .await
        .expect("the page says it can only watch");
    assert!(note.text().await.unwrap().contains("only watch"));
    for id in ["#run", "#compare", "#sweep", "#cancel"] {
        let button = viewer.client.find(Locator::Css(id)).await.unwrap();
        assert!(!button.is_enabled().await.unwrap(), "{id} is disabled");
    }
    assert_eq!(
        support::command_calls(&target).await.get("set"),
        None,
        "nothing ran"
    );

    let presenter = Browser::open(&format!(
        "{}?count=500&batch=50&token=Tok3n",
        server.http_url()
    ))
    .await;
    presenter
        .client
        .find(Locator::Css("#compare"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    presenter
        .client
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css("#speedup[data-speedup]"))
        .await
        .expect("the presenter's runs finish");
    assert_eq!(support::command_calls(&target).await["set"], 1000);
    // The page kept the token in its URL while rewriting the query.
    assert!(
        presenter
            .client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("token=Tok3n")
    );
}
