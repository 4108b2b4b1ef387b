//! The delay-line proxy: it never changes a byte, it delays by at least what was dialled in,
//! and it keeps many requests in flight at once.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pipescope::engine::{self, RunContext, keys};
use pipescope::latency::{DelayProxy, NetworkProfile};
use pipescope::target::RedisTarget;
use shared::{Mode, RunSpec, RunSummary};

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
        (1, NetworkProfile::default()),
        (2, NetworkProfile::symmetric(Duration::from_micros(300))),
        (
            3,
            NetworkProfile {
                jitter: Duration::from_micros(200),
                ..NetworkProfile::symmetric(Duration::from_micros(250))
            },
        ),
        (
            4,
            NetworkProfile {
                bandwidth: Some(50_000_000),
                ..Default::default()
            },
        ),
    ] {
        let proxy = DelayProxy::start(echo_server(), profile).unwrap();
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
    outcome.summary
}

fn spec(count: u64, mode: Mode) -> RunSpec {
    RunSpec::set(count, mode)
}

#[tokio::test]
async fn every_round_trip_pays_at_least_twice_the_delay() {
    let (_redis, target) = support::redis();
    let delay = Duration::from_millis(2);
    let proxy = DelayProxy::start(
        target.socket_addr().await.unwrap(),
        NetworkProfile::symmetric(delay),
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
    let proxy = DelayProxy::start(
        target.socket_addr().await.unwrap(),
        NetworkProfile::symmetric(Duration::from_millis(5)),
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
    assert!(
        batch.wall_us >= 10_000,
        "but still pay one full round trip (2 × 5 ms)"
    );
}

#[test]
fn dropping_the_proxy_closes_its_connections() {
    let proxy = DelayProxy::start(echo_server(), NetworkProfile::default()).unwrap();
    let mut s = TcpStream::connect(proxy.addr()).unwrap();
    s.write_all(b"ping").unwrap();
    let mut buf = [0u8; 4];
    s.read_exact(&mut buf).unwrap();
    drop(proxy);
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let done = AtomicBool::new(false);
    match s.read(&mut buf) {
        Ok(0) | Err(_) => done.store(true, Ordering::Relaxed),
        Ok(_) => {}
    }
    assert!(
        done.load(Ordering::Relaxed),
        "the client sees the connection end"
    );
}

#[tokio::test]
async fn the_wire_tap_stamps_every_command_in_order() {
    let (_redis, target) = support::redis();
    let proxy = DelayProxy::start(
        target.socket_addr().await.unwrap(),
        NetworkProfile::symmetric(Duration::from_millis(1)),
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
    while tap.snapshot().commands < n && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    let tap = tap.snapshot();
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
