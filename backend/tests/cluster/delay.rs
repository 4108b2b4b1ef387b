//! A network dialled in front of a real three-master Redis Cluster: one delay-line proxy per
//! master, each calibrated against its own master, so every master's round trips cross the
//! delay and a batch split across the masters pays it once per master, side by side.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pipescope::cluster::LocalCluster;
use pipescope::engine::RunContext;
use pipescope::net::Proxies;
use pipescope::target::RedisTarget;
use shared::{Mode, Network, RunSpec};

#[tokio::test]
async fn a_delay_in_front_of_a_cluster_is_crossed_by_every_master_s_round_trips() {
    let cluster = LocalCluster::start(3).expect("a local cluster (redis-server must be installed)");
    let target = RedisTarget::parse(&cluster.url()).unwrap().as_cluster();
    let nodes: Vec<RedisTarget> = (0..3)
        .map(|i| RedisTarget::parse(&cluster.node_url(i)).unwrap())
        .collect();
    // Long enough that skipping the delay could not pass for it on a busy machine.
    let d = 2_000u32;
    let network = Network::symmetric(d);
    let proxies = Proxies::default();
    let route = proxies
        .route(&target, network)
        .await
        .expect("a route through a proxy per master");
    let mut upstreams: Vec<u16> = route.masters.iter().map(|p| p.upstream().port()).collect();
    upstreams.sort_unstable();
    let mut ports = cluster.ports().to_vec();
    ports.sort_unstable();
    assert_eq!(upstreams, ports, "one proxy in front of each master");

    let before: Vec<u64> = {
        let mut v = Vec::new();
        for n in &nodes {
            v.push(
                support::command_calls(n)
                    .await
                    .get("set")
                    .copied()
                    .unwrap_or(0),
            );
        }
        v
    };
    let bytes_before: Vec<u64> = route
        .masters
        .iter()
        .map(|p| p.stats().bytes_out.load(Ordering::Relaxed))
        .collect();
    let (n, batch) = (3_000u64, 500u32);
    let spec = RunSpec {
        network,
        ..RunSpec::set(n, Mode::pipelined(batch))
    };
    let ctx = RunContext::new(7_001, Default::default(), Arc::default());
    let outcome = route.run(spec, ctx).await.expect("a pipelined run");
    let summary = &outcome.summary;
    assert_eq!(summary.done, n);
    let shares = &summary.cluster.as_ref().expect("per-master shares").masters;
    assert!(
        shares.iter().all(|m| m.round_trips == 6 && m.commands > 0),
        "each of the 6 batches split over the three masters: {shares:?}"
    );
    // Every master executed its share, and every master's proxy carried traffic.
    let mut done = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        let calls = support::command_calls(node)
            .await
            .get("set")
            .copied()
            .unwrap_or(0);
        done.push(calls - before[k]);
    }
    assert_eq!(done.iter().sum::<u64>(), n, "{done:?}");
    for (p, b) in route.masters.iter().zip(&bytes_before) {
        assert!(
            p.stats().bytes_out.load(Ordering::Relaxed) > *b,
            "{} carried the run's commands",
            p.upstream()
        );
    }
    // Each request's round trip crossed a delay line both ways: at least 2·D, less what the
    // proxy was calibrated to release early (at most 200 µs a direction).
    let floor_us = 2.0 * f64::from(d) - 400.0;
    assert!(
        summary.latency.p50_us >= floor_us,
        "p50 {:.1} µs is under 2·D less the compensation ({floor_us} µs): the delay was skipped",
        summary.latency.p50_us
    );
    // The batches went one after another, each waiting for its slowest master.
    assert!(
        summary.wall_us as f64 >= 6.0 * floor_us,
        "6 batches in {} µs",
        summary.wall_us
    );
    println!(
        "through a {d} µs one-way delay per master: {} SETs in {:.1} ms, p50 {:.0} µs, shares {shares:?}",
        n,
        summary.wall_us as f64 / 1000.0,
        summary.latency.p50_us
    );
    let mut left = Vec::new();
    for node in &nodes {
        left.push(support::dbsize(node).await);
    }
    assert_eq!(left, [0, 0, 0], "cleaned up");
}
