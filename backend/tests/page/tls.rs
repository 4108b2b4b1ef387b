//! The page against a redis-server reached over TLS as an ACL user, in headless Chromium: the
//! target line names the TLS and how it is trusted, a run through the delay line says the
//! wire tap cannot read encrypted traffic, and a user without permission for SET sees Redis's
//! refusal on the run's bar, with no key left behind.
//! Screenshots: target/screenshots/tls-250us.png, tls-noperm.png.

use crate::support;

use std::time::Duration;

use fantoccini::Locator;
use support::browser::{Browser, click, text, wait_enabled};
use support::tls::{ServerCert, TlsRedis};

#[tokio::test]
async fn over_tls_the_page_names_the_trust_and_the_wire_tap_says_it_cannot_read() {
    let redis = TlsRedis::start(ServerCert::Valid);
    redis.acl_user("pipe", &["~pipescope:*", "+@all"]).await;
    let target = redis.target(Some("pipe"));
    let server =
        support::Server::start_with_network(target.clone(), shared::Network::symmetric(250)).await;
    let browser = Browser::open(&format!("{}?count=400&batch=50", server.http_url())).await;
    let c = &browser.client;
    let shown = text(c, "#target").await;
    assert!(
        shown.contains(&format!("rediss://pipe:***@127.0.0.1:{}/0", redis.tls_port))
            && shown.contains("TLS, verified against"),
        "{shown}"
    );
    assert!(!shown.contains(support::tls::ACL_PASSWORD), "{shown}");

    wait_enabled(c, "#compare", Duration::from_secs(60)).await;
    click(c, "#compare").await;
    c.wait()
        .at_most(Duration::from_secs(120))
        .for_element(Locator::Css("#rtt"))
        .await
        .expect("the round-trip diagram after a comparison");
    wait_enabled(c, "#compare", Duration::from_secs(120)).await;
    let t2: String = support::browser::until_js(
        c,
        "const e = document.querySelector('#rtt-legend li[data-part=t2]'); \
         return e ? [e.dataset.source, e.textContent] : ['', '']",
        Duration::from_secs(10),
        "the propagation part of the RTT legend",
        |v: &(String, String)| !v.0.is_empty(),
    )
    .await
    .1;
    assert!(
        t2.contains("assumed") && t2.contains("cannot read encrypted traffic"),
        "{t2}"
    );
    // No part claims the wire tap measured it.
    let tapped: Vec<String> = c
        .execute(
            "return [...document.querySelectorAll('#rtt-legend li[data-part]')]\
             .map(e => e.textContent).filter(t => t.includes('measured by the wire tap'))",
            vec![],
        )
        .await
        .map(|v| serde_json::from_value(v).unwrap())
        .unwrap();
    assert!(tapped.is_empty(), "{tapped:?}");
    browser
        .client
        .execute(
            "document.querySelector('.rtt-card').scrollIntoView({block: 'start'})",
            vec![],
        )
        .await
        .unwrap();
    println!(
        "screenshot {}",
        browser.screenshot("tls-250us").await.display()
    );
    assert_eq!(
        support::pipescope_keys(&redis.plain()).await,
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn a_user_without_set_sees_redis_s_refusal_on_the_page() {
    let redis = TlsRedis::start(ServerCert::Valid);
    redis
        .acl_user("noset", &["~pipescope:*", "+@all", "-set"])
        .await;
    let server = support::Server::start(redis.target(Some("noset"))).await;
    let browser = Browser::open(&format!("{}?count=100&batch=10", server.http_url())).await;
    let c = &browser.client;
    wait_enabled(c, "#run", Duration::from_secs(60)).await;
    click(c, "#run").await;
    let state: String = support::browser::until_js(
        c,
        "const e = document.querySelector('.run-progress.failed .bar-state'); \
         return e ? e.textContent : ''",
        Duration::from_secs(60),
        "the run's bar says it failed",
        |t: &String| !t.is_empty(),
    )
    .await;
    assert!(
        state.contains("stopped: Redis refused request 0") && state.contains("NOPERM"),
        "{state}"
    );
    println!(
        "screenshot {}",
        browser.screenshot("tls-noperm").await.display()
    );
    assert_eq!(
        support::pipescope_keys(&redis.plain()).await,
        Vec::<String>::new()
    );
}
