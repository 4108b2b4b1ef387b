//! The page served by a pipescope pointed at a real three-master cluster: a Compare runs both
//! modes to the end, split per master, and leaves no key; a pipelined run draws one Redis lane
//! per master, named by the addresses the engine reports, and a table of each master's share.

use crate::support;

use std::time::Duration;

use pipescope::cluster::LocalCluster;
use support::browser::{Browser, click, until_state, wait_enabled};

/// Waits (10 s at most) until no master holds a key: the run's cleanup follows its end.
async fn no_key_left(cluster: &LocalCluster) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while support::dbsizes(cluster) != [0, 0, 0] {
        assert!(
            std::time::Instant::now() < deadline,
            "keys left: {:?}",
            support::dbsizes(cluster)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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
    no_key_left(&cluster).await;
}

#[tokio::test]
async fn a_pipelined_run_on_a_cluster_draws_a_redis_lane_per_master_and_its_share() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    let server = support::Server::start(target).await;
    let count = 3000u64;
    let browser = Browser::open(&format!(
        "{}?count={count}&mode=pipelined&batch=500",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#run", Duration::from_secs(30)).await;
    // Before any run: the explainer, because the server's target is a cluster.
    let explainer: String = support::browser::until_js(
        c,
        "const e = document.getElementById('cluster-explainer'); return e ? e.textContent : ''",
        Duration::from_secs(10),
        "the cluster explainer",
        |t: &String| !t.is_empty(),
    )
    .await;
    assert!(
        explainer.contains("one round trip per master") && explainer.contains("hash tag"),
        "{explainer}"
    );
    click(c, "#run").await;
    // The per-master table: (address, commands) as the engine counted them.
    let masters: Vec<(String, u64)> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#cluster-shares tr.master-row')]\
           .map(r => [r.dataset.addr, Number(r.dataset.commands)])",
        Duration::from_secs(60),
        "a per-master table of three",
        |r: &Vec<(String, u64)>| r.len() == 3,
    )
    .await;
    let mut addrs: Vec<String> = masters.iter().map(|(a, _)| a.clone()).collect();
    addrs.sort();
    let mut expected: Vec<String> = cluster
        .ports()
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect();
    expected.sort();
    assert_eq!(addrs, expected, "the cluster's three masters, by address");
    assert_eq!(
        masters.iter().map(|(_, n)| n).sum::<u64>(),
        count,
        "the masters' commands add up to the run's: {masters:?}"
    );
    assert!(masters.iter().all(|(_, n)| *n > 0), "{masters:?}");
    let done: u64 = c
        .execute(
            "return Number(document.querySelector('#cluster-shares .cluster-run').dataset.done)",
            vec![],
        )
        .await
        .unwrap()
        .as_u64()
        .unwrap();
    assert_eq!(done, count);

    // The whole run on screen, played to its end.
    until_state(c, "the run drawn", Duration::from_secs(30), |s| {
        s["runs"].as_array().is_some_and(|r| r.len() == 1)
            && s["runs"][0]["spans"].as_u64() == Some(count)
            && s["runs"][0]["done"].as_u64() == Some(count)
            && s["playback"]["live"] == false
    })
    .await;
    click(c, "#zoom-fit").await;
    c.execute(
        "const el = document.getElementById('scrub'); el.value = el.max; \
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![],
    )
    .await
    .unwrap();
    let s = until_state(
        c,
        "every request drawn to a master's lane",
        Duration::from_secs(30),
        |s| {
            let p = &s["playback"];
            let at_end = p["position_us"].as_f64() >= p["extent_us"].as_f64();
            let lanes = s["runs"][0]["master_spans"].as_array();
            at_end
                && s["runs"][0]["redis_lanes"].as_u64() == Some(3)
                && lanes.is_some_and(|l| l.iter().filter_map(|n| n.as_u64()).sum::<u64>() == count)
        },
    )
    .await;
    let run = &s["runs"][0];
    let labels: Vec<&str> = s["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["text"].as_str())
        .collect();
    // Lane k is the engine's master k: its label is that master's address, and the requests
    // drawn on it are exactly the commands the engine counted for it (no redirects here).
    let drawn: Vec<u64> = run["master_spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    for (k, (addr, commands)) in masters.iter().enumerate() {
        assert!(
            labels.contains(&addr.as_str()),
            "lane {addr} labelled: {labels:?}"
        );
        assert_eq!(
            drawn[k], *commands,
            "lane {k} ({addr}): {drawn:?} vs {masters:?}"
        );
    }
    assert!(
        labels
            .iter()
            .any(|l| l.contains("measured by the engine: which master answered")),
        "{labels:?}"
    );
    assert!(
        labels
            .iter()
            .any(|l| l.starts_with("◆ MOVED / ASK: sent again where Redis said")),
        "{labels:?}"
    );
    assert_eq!(
        run["redirect_marks"], 0,
        "a steady cluster redirects nothing: {run}"
    );
    c.execute(
        "document.getElementById('timeline').scrollIntoView({ block: 'start' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("cluster-lanes").await;
    println!("cluster lanes screenshot: {}", shot.display());
    c.execute(
        "document.getElementById('cluster-shares').scrollIntoView({ block: 'start' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("cluster-shares").await;
    println!("cluster shares screenshot: {}", shot.display());
    c.execute(
        "document.getElementById('cluster-explainer').scrollIntoView({ block: 'start' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("cluster-explainer").await;
    println!("cluster explainer screenshot: {}", shot.display());
}

#[tokio::test]
async fn the_layouts_preset_runs_spread_keys_on_every_master_then_one_tag_on_one() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    let server = support::Server::start(target).await;
    let count = 3000u64;
    // The preset link: the layouts button is the prepared one.
    let browser = Browser::open(&format!(
        "{}?count={count}&mode=pipelined&batch=500&plan=layouts",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#compare-layouts", Duration::from_secs(30)).await;
    click(c, "#compare-layouts").await;
    // Per run, each master's commands as the engine counted them.
    let runs: Vec<Vec<u64>> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#cluster-shares .cluster-run')]\
           .map(r => [...r.querySelectorAll('tr.master-row')].map(m => Number(m.dataset.commands)))",
        Duration::from_secs(60),
        "two cluster runs' tables",
        |r: &Vec<Vec<u64>>| r.len() == 2 && r.iter().all(|m| m.len() == 3),
    )
    .await;
    assert!(
        runs[0].iter().all(|&n| n > 0) && runs[0].iter().sum::<u64>() == count,
        "spread: every master does a share: {runs:?}"
    );
    let mut one = runs[1].clone();
    one.sort_unstable();
    assert_eq!(
        one,
        [0, 0, count],
        "one hash tag: one master does all: {runs:?}"
    );
    let titles: Vec<String> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#cluster-shares .cluster-run h3')].map(h => h.textContent)",
        Duration::from_secs(10),
        "the tables' titles",
        |t: &Vec<String>| t.len() == 2,
    )
    .await;
    assert!(
        !titles[0].contains("one hash tag") && titles[1].contains("one hash tag"),
        "{titles:?}"
    );
    c.execute(
        "document.getElementById('cluster-shares').scrollIntoView({ block: 'start' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("cluster-layouts").await;
    println!("cluster layouts screenshot: {}", shot.display());
    no_key_left(&cluster).await;
}

#[tokio::test]
async fn a_compare_on_a_cluster_through_a_dialled_delay_crosses_every_master_s_proxy() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!(
        "{}?count=600&mode=pipelined&batch=100&delay=1000",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    wait_enabled(c, "#compare", Duration::from_secs(30)).await;
    click(c, "#compare").await;
    // Per run, each master's round trips as the engine counted them.
    let runs: Vec<Vec<u64>> = support::browser::until_js(
        c,
        "return [...document.querySelectorAll('#cluster-shares .cluster-run')]\
           .map(r => [...r.querySelectorAll('tr.master-row')].map(m => Number(m.dataset.commands)))",
        Duration::from_secs(120),
        "both runs' per-master tables",
        |r: &Vec<Vec<u64>>| r.len() == 2 && r.iter().all(|m| m.len() == 3),
    )
    .await;
    assert!(
        runs.iter()
            .all(|r| r.iter().sum::<u64>() == 600 && r.iter().all(|&n| n > 0)),
        "{runs:?}"
    );
    // The sequential run's p50, as the page shows it: at least 2·D less the compensation
    // (at most 200 µs a direction), so each master's round trips crossed its delay line.
    let s = until_state(c, "both runs finished", Duration::from_secs(30), |s| {
        s["runs"]
            .as_array()
            .is_some_and(|r| r.len() == 2 && r.iter().all(|x| x["done"].as_u64() == Some(600)))
    })
    .await;
    let p50 = s["runs"][0]["p50_us"]
        .as_f64()
        .expect("the sequential run's p50");
    assert_eq!(s["runs"][0]["mode"], "sequential", "{}", s["runs"][0]);
    assert!(
        p50 >= 2.0 * 1_000.0 - 400.0,
        "p50 {p50:.1} µs: under 2·D less the compensation, so a delay line was skipped"
    );
    assert_eq!(s["runs"][0]["redis_lanes"], 3);
    let shot = browser.screenshot("cluster-delay").await;
    println!("cluster through a delay screenshot: {}", shot.display());
    no_key_left(&cluster).await;
}
