//! The wire tap's figures are what they say they are. Through the delay line, against a Redis
//! that asks for a password and a database other than 0 (so the engine's connection begins with
//! AUTH and SELECT before any measured command), every stamped request's three legs are
//! positive, each leg is at least its dialled delay less the proxy's compensation (the proxy
//! holds every chunk that long: it holds by construction), and the legs add up to the request's
//! round trip. Redis's own time per call comes from `INFO commandstats` and is shorter than a
//! round trip.

use crate::support;

use std::time::Duration;

use pipescope::engine::{RunContext, keys};
use pipescope::net::{Compensation, Proxies, Route};
use pipescope::target::RedisTarget;
use shared::{Mode, Network, RoundTripSplit, RunSpec, RunSummary, ServerMsg, Timeline};

/// The one-way delay dialled in, each way (µs).
const D: u32 = 250;
/// Spans are µs as f64: a difference of two of them carries rounding of this order.
const ROUNDING_US: f64 = 1e-6;

fn us(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1000.0
}

/// Runs `spec` over `route` as the hub and `bench` do (keys removed, split stamped).
async fn run(route: &Route, spec: RunSpec) -> (RunSummary, Timeline) {
    let ctx = RunContext::new(keys::first_run_id(), Default::default(), Default::default());
    let outcome = route.run(spec, ctx).await.unwrap();
    (outcome.summary, outcome.timeline)
}

/// Every stamped span's legs against what holds by construction; returns how many were
/// stamped.
fn assert_legs(timeline: &Timeline, network: Network, c: Compensation) -> usize {
    let least_out = network.delay_out_us as f64 - us(c.out) - ROUNDING_US;
    let least_back = network.delay_back_us as f64 - us(c.back) - ROUNDING_US;
    let mut stamped = 0;
    for s in timeline.first.iter().chain(&timeline.sampled) {
        let (Some(at), Some(from)) = (s.at_server_us, s.from_server_us) else {
            continue;
        };
        stamped += 1;
        let (out, server, back) = (at - s.issued_us, from - at, s.replied_us - from);
        assert!(
            out > 0.0 && server > 0.0 && back > 0.0,
            "request {}: out {out:.1} µs, at Redis {server:.1} µs, back {back:.1} µs: {s:?}",
            s.i
        );
        assert!(
            out >= least_out && back >= least_back,
            "request {}: out {out:.1} µs, back {back:.1} µs; each must be at least its delay ({} / {} µs) less the compensation ({c:?})",
            s.i,
            network.delay_out_us,
            network.delay_back_us
        );
        let round_trip = s.replied_us - s.issued_us;
        assert!(
            (out + server + back - round_trip).abs() < ROUNDING_US * round_trip.max(1.0),
            "request {}: legs {out} + {server} + {back} ≠ round trip {round_trip}",
            s.i
        );
    }
    stamped
}

/// The summary's split: medians of legs each at least the dialled delay less the compensation,
/// and it says what that compensation was.
fn assert_split(split: &RoundTripSplit, network: Network, c: Compensation) {
    assert_eq!(
        (split.early_out_us, split.early_back_us),
        (us(c.out), us(c.back)),
        "the split carries the proxy's compensation"
    );
    assert!(
        split.out_us >= network.delay_out_us as f64 - split.early_out_us
            && split.back_us >= network.delay_back_us as f64 - split.early_back_us
            && split.server_us > 0.0,
        "{split:?} at D = {} / {} µs",
        network.delay_out_us,
        network.delay_back_us
    );
}

async fn route(proxies: &Proxies, target: &RedisTarget, network: Network) -> Route {
    let route = proxies.route(target, network).await.unwrap();
    assert!(
        route.proxy.is_some(),
        "a network other than loopback goes through the proxy"
    );
    route
}

#[tokio::test]
async fn sequential_legs_are_positive_and_add_up_with_a_password_and_a_db() {
    let (_redis, target) = support::redis_with_password();
    let network = Network::symmetric(D);
    let proxies = Proxies::default();
    let route = route(&proxies, &target, network).await;
    let c = route.proxy.as_ref().unwrap().compensation();
    let count = 300;
    let (summary, timeline) = run(&route, RunSpec::set(count, Mode::Sequential)).await;
    assert_eq!(summary.done, count);
    assert!(timeline.first.iter().all(|s| s.at_server_us.is_some()));
    assert_eq!(
        assert_legs(&timeline, network, c),
        timeline.first.len() + timeline.sampled.len()
    );
    let split = summary.split.expect("a run through the proxy is split");
    assert_eq!(split.samples, count);
    assert_split(&split, network, c);
    // The measured commands went to db 3, and none is left behind.
    assert_eq!(support::dbsize(&target).await, 0);
}

/// Redis's own time per SET, from `INFO commandstats`: present, positive, and shorter than the
/// run's median round trip (Redis's work is part of every round trip).
#[tokio::test]
async fn redis_own_time_per_call_is_reported_and_inside_the_round_trip() {
    let (_redis, target) = support::redis_with_password();
    let proxies = Proxies::default();
    for network in [Network::LOOPBACK, Network::symmetric(D)] {
        let route = proxies.route(&target, network).await.unwrap();
        for mode in [
            Mode::Sequential,
            Mode::pipelined(100),
            Mode::Transaction { batch: 10 },
        ] {
            let (summary, _) = run(&route, RunSpec::set(1_000, mode)).await;
            let own = summary
                .redis_usec_per_call
                .expect("Redis reports its time per call");
            assert!(
                own > 0.0 && own < summary.latency.p50_us,
                "{mode:?} over {}: Redis's own {own} µs per call, p50 round trip {} µs",
                network.label(),
                summary.latency.p50_us
            );
            println!(
                "FIGURE {} over {}: Redis's own time {own:.2} µs per call, p50 {:.1} µs",
                mode.label(),
                network.label(),
                summary.latency.p50_us
            );
        }
    }
}

/// A transaction's requests take more wire commands than requests (MULTI and EXEC around each
/// batch): the tap keeps enough stamps for every request the timeline holds in full, after the
/// handshake, and their legs hold as a sequential run's do.
#[tokio::test]
async fn every_first_request_of_a_transaction_run_is_stamped_with_a_password_and_a_db() {
    let (_redis, target) = support::redis_with_password();
    let network = Network::symmetric(D);
    let proxies = Proxies::default();
    let route = route(&proxies, &target, network).await;
    let c = route.proxy.as_ref().unwrap().compensation();
    let count = pipescope::spans::FULL_SPANS;
    let (summary, timeline) =
        run(&route, RunSpec::set(count, Mode::Transaction { batch: 10 })).await;
    assert_eq!(summary.done, count);
    assert_eq!(timeline.first.len() as u64, count);
    let unstamped: Vec<u64> = timeline
        .first
        .iter()
        .filter(|s| s.at_server_us.is_none() || s.from_server_us.is_none())
        .map(|s| s.i)
        .collect();
    assert!(
        unstamped.is_empty(),
        "{} of the first {count} requests not stamped, from request {:?}",
        unstamped.len(),
        unstamped.first()
    );
    assert_legs(&timeline, network, c);
    assert_split(&summary.split.expect("split"), network, c);
}

/// The hub's runs carry the same figures: the split with its compensation, and Redis's own time.
#[tokio::test]
async fn the_hub_reports_the_split_with_its_compensation_and_redis_own_time() {
    let (_redis, target) = support::redis_with_password();
    let network = Network::symmetric(D);
    let server = support::Server::start_with_network(target.clone(), network).await;
    let mut events = server.hub.subscribe().events;
    server
        .hub
        .start(vec![
            RunSpec::set(200, Mode::Sequential).with_network(network),
        ])
        .unwrap();
    let summary = loop {
        let frame = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("the run finishes within 60 s")
            .expect("the hub's events go on");
        match ServerMsg::from_json(frame.as_str()).unwrap() {
            ServerMsg::Finished { summary, .. } => break summary,
            ServerMsg::Failed { reason, .. } => panic!("the run failed: {reason}"),
            _ => {}
        }
    };
    let split = summary.split.expect("a run through the proxy is split");
    assert!(split.early_out_us >= 0.0 && split.early_back_us >= 0.0);
    assert!(
        split.out_us >= D as f64 - split.early_out_us
            && split.back_us >= D as f64 - split.early_back_us
            && split.server_us > 0.0,
        "{split:?}"
    );
    let own = summary.redis_usec_per_call.expect("Redis's own time");
    assert!(own > 0.0 && own < summary.latency.p50_us, "{own} µs");
    server.shutdown().await.unwrap();
}

/// `pipescope bench --json` prints the split with the compensation and Redis's own time.
#[test]
fn bench_json_prints_the_split_with_its_compensation_and_redis_own_time() {
    let (redis, _) = support::redis_with_password();
    let url = format!(
        "redis://:{}@127.0.0.1:{}/3",
        support::PASSWORD,
        redis.port()
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .env_remove("REDIS_URL")
        .args(["bench", "--mode", "sequential", "--count", "300", "--json"])
        .args(["--delay-us", &D.to_string(), "--redis-url", &url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains(support::PASSWORD)
            && !String::from_utf8_lossy(&out.stdout).contains(support::PASSWORD)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("FIGURE {stdout}");
    let run: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    let split = &run["split"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or_else(|| panic!("a number: {run}"));
    let (early_out, early_back) = (f(&split["early_out_us"]), f(&split["early_back_us"]));
    assert!(f(&split["out_us"]) >= D as f64 - early_out, "{run}");
    assert!(f(&split["back_us"]) >= D as f64 - early_back, "{run}");
    assert!(f(&split["server_us"]) > 0.0, "{run}");
    let own = f(&run["redis_usec_per_call"]);
    assert!(own > 0.0 && own < f(&run["p50_us"]), "{run}");
}
