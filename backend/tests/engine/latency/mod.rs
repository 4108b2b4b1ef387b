//! The delay-line proxy: it never changes a byte, it delays by at least what was dialled in,
//! and it keeps many requests in flight at once.

use crate::support;
use pipescope::median::median;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use pipescope::engine::{self, RunContext, keys};
use pipescope::net::DelayProxy;
use pipescope::target::RedisTarget;
use shared::{ClientMsg, Mode, Network, RunSpec, RunSummary, ServerMsg, Timeline};

mod server;

/// A TCP echo server on a free loopback port, for one connection.
fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 16 * 1024];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => s.write_all(&buf[..n]).unwrap(),
            }
        }
    });
    addr
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| rng.u8(..)).collect()
}

/// Sends `payload` through the proxy to the echo server and returns what came back.
fn echo_through(proxy: &DelayProxy, payload: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(proxy.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut writer = s.try_clone().unwrap();
    let to_send = payload.to_vec();
    // Write in odd-sized pieces from another thread while reading, like a real client.
    let sender = std::thread::spawn(move || {
        for piece in to_send.chunks(7_777) {
            writer.write_all(piece).unwrap();
        }
    });
    let mut got = vec![0u8; payload.len()];
    s.read_exact(&mut got).unwrap();
    sender.join().unwrap();
    got
}

#[test]
fn bytes_out_equal_bytes_in_both_ways() {
    for (seed, profile) in [
        (1, Network::LOOPBACK),
        (2, Network::symmetric(300)),
        (
            3,
            Network {
                jitter_us: 200,
                ..Network::symmetric(250)
            },
        ),
        (
            4,
            Network {
                bandwidth: Some(50_000_000),
                ..Network::LOOPBACK
            },
        ),
        (
            5,
            Network {
                delay_out_us: 50,
                delay_back_us: 700,
                jitter_us: 40,
                bandwidth: Some(200_000_000),
            },
        ),
    ] {
        let proxy = DelayProxy::raw(echo_server(), profile).unwrap();
        let payload = random_bytes(1_000_000, seed);
        let got = echo_through(&proxy, &payload);
        assert!(
            got == payload,
            "the proxy changed or reordered bytes ({profile:?})"
        );
        // The writer counts a chunk just after writing it: give the last count a moment.
        let stats = proxy.stats();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while (stats.bytes_back.load(Ordering::Relaxed) < 1_000_000
            || stats.bytes_out.load(Ordering::Relaxed) < 1_000_000)
            && std::time::Instant::now() < deadline
        {
            std::thread::yield_now();
        }
        assert_eq!(stats.bytes_out.load(Ordering::Relaxed), 1_000_000);
        assert_eq!(stats.bytes_back.load(Ordering::Relaxed), 1_000_000);
    }
}

async fn run_through(target: &RedisTarget, run_id: u64, spec: RunSpec) -> RunSummary {
    run_outcome(target, run_id, spec).await.summary
}

async fn run_outcome(target: &RedisTarget, run_id: u64, spec: RunSpec) -> engine::RunOutcome {
    let outcome = engine::run(
        target,
        spec,
        RunContext::new(run_id, Default::default(), Default::default()),
    )
    .await
    .unwrap();
    keys::remove_run_keys(target, run_id, outcome.written)
        .await
        .unwrap();
    outcome
}

fn spec(count: u64, mode: Mode) -> RunSpec {
    RunSpec::set(count, mode)
}

/// The raw delay line holds every chunk at least D each way, so no round trip beats 2·D. (The
/// hub's calibrated proxies release each chunk early by their compensation: their floor is
/// 2·D less that, checked by `a_start_with_a_network…` here and in ws.rs.)
#[tokio::test]
async fn every_round_trip_pays_at_least_twice_the_delay() {
    let (_redis, target) = support::redis();
    let delay = Duration::from_millis(2);
    let proxy = DelayProxy::raw(
        target.socket_addr().await.unwrap(),
        Network::symmetric(delay.as_micros() as u32),
    )
    .unwrap();
    let routed = target.through(proxy.addr());
    let s = run_through(&routed, 1, spec(50, Mode::Sequential)).await;
    let min_rtt_us = 2.0 * delay.as_micros() as f64;
    // The histogram keeps 3 significant digits, hence the 0.1 % allowance.
    assert!(
        s.latency.p50_us >= min_rtt_us * 0.999,
        "p50 {} µs < 2·D",
        s.latency.p50_us
    );
    assert!(
        s.wall_us as f64 >= 50.0 * min_rtt_us,
        "50 sequential round trips take at least 50 × 2·D"
    );
    println!(
        "2·D = {min_rtt_us} µs; measured p50 {:.0} µs, mean {:.0} µs",
        s.latency.p50_us, s.latency.mean_us
    );
    assert_eq!(support::command_calls(&target).await["set"], 50);
}

#[tokio::test]
async fn a_pipelined_batch_pays_one_round_trip_not_one_per_command() {
    let (_redis, target) = support::redis();
    let proxy = DelayProxy::raw(
        target.socket_addr().await.unwrap(),
        Network::symmetric(5_000),
    )
    .unwrap();
    let routed = target.through(proxy.addr());
    // 1,000 commands pipelined against 10 sent one by one through the same 5 ms network:
    // if the proxy serialised requests, the batch would take 100× longer than the 10.
    let batch = run_through(&routed, 2, spec(1_000, Mode::pipelined(1_000))).await;
    let ten = run_through(&routed, 3, spec(10, Mode::Sequential)).await;
    println!(
        "1,000 pipelined: {:.1} ms; 10 sequential: {:.1} ms",
        batch.wall_ms(),
        ten.wall_ms()
    );
    assert!(
        batch.wall_us < ten.wall_us,
        "1,000 pipelined ({} µs) should beat 10 sequential ({} µs)",
        batch.wall_us,
        ten.wall_us
    );
    let c = proxy.compensation();
    assert!(
        batch.wall_us as u128 >= 10_000 - (c.out + c.back).as_micros(),
        "but still pay one full round trip (2 × 5 ms, less the compensation {c:?})"
    );
}

#[test]
fn dropping_the_proxy_closes_its_connections() {
    let proxy = DelayProxy::raw(echo_server(), Network::LOOPBACK).unwrap();
    let mut s = TcpStream::connect(proxy.addr()).unwrap();
    s.write_all(b"ping").unwrap();
    let mut buf = [0u8; 4];
    s.read_exact(&mut buf).unwrap();
    drop(proxy);
    // Closed means the end of the stream (or a reset), not merely silence: a read that times
    // out found the connection still open.
    let limit = Duration::from_secs(5);
    s.set_read_timeout(Some(limit)).unwrap();
    match s.read(&mut buf) {
        Ok(0) => {}
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
            ) => {}
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            panic!("the connection is still open {limit:?} after the proxy was dropped")
        }
        Err(e) => panic!("reading the dropped proxy's connection: {e}"),
        Ok(n) => panic!("{n} bytes arrived after the proxy was dropped"),
    }
}

#[tokio::test]
async fn the_wire_tap_stamps_every_command_in_order() {
    let (_redis, target) = support::redis();
    let proxy = DelayProxy::raw(
        target.socket_addr().await.unwrap(),
        Network::symmetric(1_000),
    )
    .unwrap();
    let routed = target.through(proxy.addr());
    let n = 3_000;
    let s = run_through(&routed, 4, spec(n, Mode::pipelined(500))).await;
    assert_eq!(s.done, n);
    let tap = proxy
        .last_tap()
        .expect("the engine's connection went through the proxy");
    // The proxy's writer books a chunk just after writing it: allow it that moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while tap.snapshot().commands < n + 1 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    // CLIENT ID, asked before the run's first command, is not one of the run's.
    let tap = tap.snapshot().after_handshake(routed.commands_before_run());
    assert_eq!(tap.commands, n, "one stamp per command sent");
    assert_eq!(tap.replies, n);
    assert_eq!(tap.at_server.len() as u64, n);
    assert_eq!(tap.from_server.len() as u64, n);
    assert!(
        tap.at_server.windows(2).all(|w| w[0] <= w[1]),
        "delivered in order"
    );
    assert!(
        tap.from_server.windows(2).all(|w| w[0] <= w[1]),
        "replied in order"
    );
    // Each reply leaves Redis after its command reached it.
    assert!(
        tap.at_server
            .iter()
            .zip(&tap.from_server)
            .all(|(a, f)| a <= f)
    );
    assert_eq!(support::command_calls(&target).await["set"], n);
}

#[test]
fn jitter_never_reorders_bytes() {
    let proxy = DelayProxy::raw(
        echo_server(),
        Network {
            jitter_us: 400,
            ..Network::symmetric(500)
        },
    )
    .unwrap();
    let mut s = TcpStream::connect(proxy.addr()).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut writer = s.try_clone().unwrap();
    // Many small numbered writes, spaced so each is a chunk of its own with its own jitter.
    let n = 2_000u32;
    let sender = std::thread::spawn(move || {
        for k in 0..n {
            writer.write_all(&k.to_be_bytes()).unwrap();
            if k % 4 == 0 {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    });
    let mut got = vec![0u8; 4 * n as usize];
    s.read_exact(&mut got).unwrap();
    sender.join().unwrap();
    let order: Vec<u32> = got
        .chunks(4)
        .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        order,
        (0..n).collect::<Vec<_>>(),
        "bytes came back reordered"
    );
    assert!(
        proxy.stats().chunks_out.load(Ordering::Relaxed) > 100,
        "the writes crossed as many chunks"
    );
}

/// With one-way delay D, a sequential run's median round trip is never below 2·D less the
/// proxy's compensation for its own cost, and at 1 ms it is below what a delay applied twice
/// would cost: the proxy adds the delay once each way. How close it comes to 2·D plus the
/// direct round trip (measured in the same test, medians of 3 × 400 round trips each; the
/// target is ±10 %) is printed here and measured by `cost accuracy`; a test does not
/// hold a shared machine to a percentage of wall-clock time (+15 % was seen once at 250 µs
/// with the whole suite running beside it).
#[tokio::test]
async fn the_measured_round_trip_is_twice_the_delay_plus_loopback() {
    let (_redis, target) = support::redis();
    let n = 400;
    let mut run_id = 100;
    // As the hub and bench do it: a proxy per network, calibrated with the engine.
    let proxies = pipescope::net::Proxies::default();
    for delay_us in [250u32, 1_000] {
        let route = proxies
            .route(&target, Network::symmetric(delay_us))
            .await
            .unwrap();
        let (routed, proxy) = (&route.target, route.proxy.as_ref().unwrap());
        // Direct and delayed runs alternate, so both see the machine alike.
        let (mut direct, mut delayed) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            run_id += 2;
            direct.push(
                run_through(&target, run_id, spec(n, Mode::Sequential))
                    .await
                    .latency
                    .p50_us,
            );
            delayed.push(
                run_through(routed, run_id + 1, spec(n, Mode::Sequential))
                    .await
                    .latency
                    .p50_us,
            );
        }
        let (base, got) = (median(direct).unwrap(), median(delayed).unwrap());
        let expected = 2.0 * delay_us as f64 + base;
        println!(
            "D = {delay_us} µs: loopback p50 {base:.1} µs, expected {expected:.1} µs, measured p50 {got:.1} µs ({:+.1} %), proxy compensation {:?}, median release lateness (out, back) {:?}",
            (got - expected) / expected * 100.0,
            proxy.compensation(),
            proxy.stats().lateness(),
        );
        // Calibrated, the proxy releases each chunk early by (80 % of) its own forwarding cost
        // as measured when it started; when that cost is lower at the moment, a round trip
        // can come in under 2·D, but never under 2·D less that (the uncalibrated proxy's
        // 2·D floor is `every_round_trip_pays_at_least_twice_the_delay`).
        let c = proxy.compensation();
        let early_us = (c.out + c.back).as_nanos() as f64 / 1000.0;
        // A delay applied twice holds a round trip at least 4·D less twice the compensation,
        // by the same construction. At 1 ms that floor is ~1.5 ms above 2·D + loopback, which
        // no load on the median of 1,200 round trips makes up; at 250 µs the gap is a few
        // hundred µs, too close for a shared machine, so there the figure is only printed.
        if delay_us >= 1_000 {
            let doubled_floor_us = 4.0 * delay_us as f64 - 2.0 * early_us;
            assert!(
                got < doubled_floor_us,
                "D = {delay_us} µs: p50 {got:.1} µs is what a delay applied twice costs (≥ {doubled_floor_us:.1} µs)"
            );
        }
        assert!(
            got >= (2.0 * delay_us as f64 - early_us) * 0.999,
            "below 2·D less the compensation ({early_us:.1} µs)"
        );
    }
}

#[tokio::test]
async fn a_pipelined_batch_is_stamped_command_by_command_in_order() {
    let (_redis, target) = support::redis();
    let proxy = DelayProxy::raw(
        target.socket_addr().await.unwrap(),
        Network::symmetric(2_000),
    )
    .unwrap();
    let routed = target.through(proxy.addr());
    let n = 1_000;
    let spec = spec(n, Mode::pipelined(n as u32));
    let outcome = run_outcome(&routed, 7, spec).await;
    let tap = proxy
        .last_tap()
        .unwrap()
        .settle(Duration::from_secs(5))
        .await
        .after_handshake(routed.commands_before_run());
    assert_eq!(tap.commands, n, "one stamp per command sent");
    assert_eq!(tap.at_server.len() as u64, n);
    assert_eq!(tap.from_server.len() as u64, n);
    assert!(tap.at_server.windows(2).all(|w| w[0] <= w[1]));
    assert!(tap.from_server.windows(2).all(|w| w[0] <= w[1]));
    let mut timeline = outcome.timeline;
    let split = pipescope::net::stamp_timeline(
        &mut timeline,
        spec.mode,
        n,
        outcome.started,
        std::slice::from_ref(&tap),
    )
    .unwrap();
    assert_eq!(split.samples, n);
    assert_causal(&timeline);
    // The outbound leg holds each chunk at least D less the compensation taken off it.
    let early_out_us = proxy.compensation().out.as_nanos() as f64 / 1000.0;
    assert!(split.out_us >= 2_000.0 - early_out_us, "{split:?}");
}

/// issued ≤ at_server ≤ from_server ≤ replied for every stamped span, and the first ones are.
fn assert_causal(timeline: &Timeline) {
    let stamped: Vec<_> = timeline
        .first
        .iter()
        .chain(&timeline.sampled)
        .filter(|s| s.at_server_us.is_some())
        .collect();
    assert!(!stamped.is_empty());
    assert!(timeline.first.iter().all(|s| s.at_server_us.is_some()));
    for s in stamped {
        let (a, f) = (s.at_server_us.unwrap(), s.from_server_us.unwrap());
        assert!(
            s.issued_us <= a && a <= f && f <= s.replied_us,
            "out of order: {s:?}"
        );
    }
}
