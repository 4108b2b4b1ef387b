//! The Observe view's probe in headless Chromium, against the real backend and a real
//! redis-server: the presenter ticks the probe before starting, a client that waits for each
//! reply (patterns.py) runs through the proxy, and the chosen connection's figures say what was
//! held, for how long and its share of the time, and that the client waited for the release:
//! the same line `observe --probe` prints. Reloaded, the page shows the probe as it is (ticked,
//! and fixed while observing). A capture dropped while observing takes the table's place, the
//! header says so, and a button goes back to the proxy's connections. Screenshots:
//! target/screenshots/observe-probe.png, observe-capture-over-live.png.

use crate::support;

use std::time::Duration;

use super::observe_capture::{drop_file, redis_port};
use fantoccini::Locator;
use pipescope::server::hub::Hub;
use support::browser::{Browser, click, until_js, wait_enabled};
use support::capture_demo::Demo;
use support::clients::{patterns, run};

/// The client's SETs, each after 200 µs of its own work: time for a few holds within 1 %.
const N: &str = "5000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probed_connection_shows_what_was_held_and_that_the_client_waited() {
    let Some(_) = patterns() else { return };
    let (_redis, target) = support::redis();
    let listen =
        std::net::SocketAddr::from(([127, 0, 0, 1], pipescope::local_redis::free_port().unwrap()));
    let version = target.server_version().await.unwrap();
    let hub = Hub::with_network(target, version, shared::Network::LOOPBACK)
        .await
        .unwrap()
        .observe_on(listen);
    let server = support::Server::serve(hub).await;
    let browser = Browser::open(&format!("{}observe", server.http_url())).await;
    let c = &browser.client;

    wait_enabled(c, "#observe-probe", Duration::from_secs(30)).await;
    click(c, "#observe-probe").await;
    wait_enabled(c, "#observe-start", Duration::from_secs(30)).await;
    click(c, "#observe-start").await;
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("#observe-probing"))
        .await
        .expect("the page says it is probing");

    let mut client = patterns().expect("checked above");
    client.args([&listen.port().to_string(), "waits", N, "200"]);
    tokio::task::spawn_blocking(move || run(client, None, "patterns.py waits"))
        .await
        .unwrap();

    // Its row, once the proxy saw it close; then its figures.
    let id: String = until_js(
        c,
        "const r = [...document.querySelectorAll('#observed-table tr.observed-row')]\
           .find(r => r.querySelector('.conn-state').textContent !== 'open'); \
         return r ? r.id.replace('observed-', '') : '';",
        Duration::from_secs(30),
        "the client's connection, closed, in the table",
        |id: &String| !id.is_empty(),
    )
    .await;
    click(c, &format!("#choose-{id}")).await;
    let line: String = until_js(
        c,
        &format!("const p = document.querySelector('#probe-{id}'); return p ? p.textContent : '';"),
        Duration::from_secs(30),
        "the probe's line under the connection's figures",
        |l: &String| !l.is_empty(),
    )
    .await;
    eprintln!("{line}");
    assert!(line.starts_with("probe (measured): held "), "{line}");
    assert!(line.contains("% of its time"), "{line}");
    assert!(line.contains("it sent while 0 were held"), "{line}");
    assert!(
        !line.contains("waited for the release of 0,"),
        "the client waited for each reply, and some holds said so: {line}"
    );

    c.set_window_size(1400, 2000).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let shot = browser.screenshot("observe-probe").await;
    eprintln!("screenshot: {}", shot.display());

    // Reloaded while probing: the box says what runs (ticked) and cannot change it.
    c.refresh().await.unwrap();
    let (checked, disabled): (bool, bool) = until_js(
        c,
        "const p = document.querySelector('#observe-probe');          const s = document.querySelector('#observe-state');          return p && s && s.dataset.state === 'on' ? [p.checked, p.disabled] : [false, false];",
        Duration::from_secs(30),
        "the probe box after a reload",
        |(checked, _): &(bool, bool)| *checked,
    )
    .await;
    assert!(checked && disabled, "ticked and fixed while probing");

    // A capture dropped while observing: shown in the proxy's place, said so, and back.
    let Some(demo) = Demo::take_blocking(10, 100).await else {
        return;
    };
    redis_port(c, demo.port).await;
    drop_file(c, "demo.pcap", &demo.bytes()).await;
    let state: String = until_js(
        c,
        "const s = document.querySelector('#observe-state'); return s ? s.textContent : '';",
        Duration::from_secs(60),
        "the header saying a capture is shown",
        |s: &String| s == "observing (a capture is shown)",
    )
    .await;
    let rows =
        "return [...document.querySelectorAll('#observed-table tr.observed-row')].map(r => r.id)";
    let captured: Vec<String> = until_js(
        c,
        rows,
        Duration::from_secs(30),
        "the capture's connections",
        |ids: &Vec<String>| ids.len() == demo.cli.len(),
    )
    .await;
    let back = support::browser::text(c, "#observe-back-live").await;
    assert_eq!(
        back, "Back to live: the proxy's 1 connection",
        "{state}; {captured:?}"
    );
    let shot = browser.screenshot("observe-capture-over-live").await;
    eprintln!("screenshot: {}", shot.display());
    click(c, "#observe-back-live").await;
    let live: Vec<String> = until_js(
        c,
        rows,
        Duration::from_secs(30),
        "the proxy's connection again",
        |ids: &Vec<String>| *ids == [format!("observed-{id}")],
    )
    .await;
    assert_eq!(
        support::browser::text(c, "#observe-state").await,
        "observing",
        "{live:?}"
    );
}
