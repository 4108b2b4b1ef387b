//! The page's key layout on a real three-master cluster: a link with `keys=one-tag` runs
//! MULTI/EXEC on the tag's master alone, and choosing spread keys instead is refused in words.

use crate::support;

use std::time::Duration;

use pipescope::cluster::LocalCluster;
use pipescope::target::RedisTarget;
use support::browser::{Browser, click, until_js, wait_enabled};

#[tokio::test]
async fn a_one_tag_multi_exec_runs_on_one_master_and_spread_keys_are_refused_in_words() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let nodes: Vec<RedisTarget> = (0..3)
        .map(|i| RedisTarget::parse(&cluster.node_url(i)).unwrap())
        .collect();
    let target = RedisTarget::parse(&cluster.url()).unwrap().as_cluster();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!(
        "{}?count=2000&mode=transaction&batch=100&keys=one-tag",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#run", Duration::from_secs(30)).await;
    let layout = c
        .execute("return document.querySelector('#keys').value", vec![])
        .await
        .unwrap();
    assert_eq!(
        layout.as_str(),
        Some("one-tag"),
        "the link's layout is chosen"
    );
    let mut before = Vec::new();
    for n in &nodes {
        before.push(
            support::command_calls(n)
                .await
                .get("exec")
                .copied()
                .unwrap_or(0),
        );
    }
    click(c, "#run").await;
    let rows: Vec<String> = until_js(
        c,
        "return [...document.querySelectorAll('#results tr.result-row')].map(e => e.textContent)",
        Duration::from_secs(60),
        "one result row",
        |r: &Vec<String>| r.len() == 1,
    )
    .await;
    assert!(
        rows[0].contains("2,000") || rows[0].contains("2000"),
        "{rows:?}"
    );
    let mut execs = Vec::new();
    for (n, b) in nodes.iter().zip(&before) {
        execs.push(
            support::command_calls(n)
                .await
                .get("exec")
                .copied()
                .unwrap_or(0)
                - b,
        );
    }
    execs.sort_unstable();
    assert_eq!(execs, [0, 0, 20], "every EXEC on one master");

    // Spread keys: the same run is refused, saying what to choose.
    c.execute(
        "const s = document.querySelector('#keys'); s.value = 'spread'; \
         s.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![],
    )
    .await
    .unwrap();
    until_js(
        c,
        "return location.search",
        Duration::from_secs(10),
        "the URL drops keys=one-tag",
        |q: &String| !q.contains("keys="),
    )
    .await;
    click(c, "#run").await;
    until_js(
        c,
        "return document.body.textContent",
        Duration::from_secs(30),
        "the refusal in words",
        |t: &String| t.contains("needs every key in one slot") && t.contains("one hash tag"),
    )
    .await;
    let shot = browser.screenshot("cluster-one-tag-refusal").await;
    println!("screenshot: {}", shot.display());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut sizes = Vec::new();
        for n in &nodes {
            sizes.push(support::dbsize(n).await);
        }
        if sizes == [0, 0, 0] {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "keys left: {sizes:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
