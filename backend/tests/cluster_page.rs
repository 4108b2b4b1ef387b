//! The page served by a pipescope pointed at a real three-master cluster: a Compare runs both
//! modes to the end, split per master, and leaves no key.

mod support;

use std::time::Duration;

use pipescope::cluster::LocalCluster;
use support::browser::{Browser, click, wait_enabled};

fn dbsizes(cluster: &LocalCluster) -> Vec<u64> {
    (0..cluster.ports().len())
        .map(|i| {
            let mut c = redis::Client::open(cluster.node_url(i))
                .unwrap()
                .get_connection()
                .unwrap();
            redis::cmd("DBSIZE").query(&mut c).unwrap()
        })
        .collect()
}

#[tokio::test]
async fn a_compare_on_a_cluster_runs_both_modes_and_leaves_no_key() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!(
        "{}?count=3000&mode=pipelined&batch=500",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#compare", Duration::from_secs(30)).await;
    let header: String = c
        .execute(
            "return document.querySelector('header').textContent",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        header.contains("Redis Cluster via redis://127.0.0.1:"),
        "{header}"
    );
    click(c, "#compare").await;
    let rows: Vec<String> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#results tr.result-row')].map(e => e.textContent)",
        Duration::from_secs(60),
        "two result rows",
        |r: &Vec<String>| r.len() == 2,
    )
    .await;
    assert!(
        rows.iter()
            .all(|r| r.contains("3,000") || r.contains("3000")),
        "{rows:?}"
    );
    let shot = browser.screenshot("cluster-compare").await;
    println!("cluster screenshot: {}", shot.display());
    // Cleaned up on every master.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while dbsizes(&cluster) != [0, 0, 0] {
        assert!(
            std::time::Instant::now() < deadline,
            "keys left: {:?}",
            dbsizes(&cluster)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
