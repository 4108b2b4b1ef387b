//! The delay line as the server uses it: a start over a network, the welcome's default, a proxy the hub keeps.

use super::*;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn next(ws: &mut Ws) -> ServerMsg {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("a message within 30 s")
            .expect("the socket stays open")
            .unwrap();
        if let tokio_tungstenite::tungstenite::Message::Text(text) = frame {
            return ServerMsg::from_json(&text).unwrap();
        }
    }
}

/// End to end: a page starts runs whose specs name a network; the hub routes them through a
/// proxy (the server's own default is loopback) and `Finished` carries the wire-tap stamps
/// and the split, as do the records a late page gets.
#[tokio::test]
async fn a_start_with_a_network_finishes_with_server_stamps_and_a_split() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(server.ws_url())
        .await
        .unwrap();
    let ServerMsg::Welcome { network, .. } = next(&mut ws).await else {
        panic!("no welcome")
    };
    assert_eq!(network, Network::LOOPBACK, "the server's default");
    let d = 1_000u32;
    let net = Network::symmetric(d);
    let runs = vec![
        RunSpec::set(200, Mode::Sequential).with_network(net),
        RunSpec::set(3_000, Mode::pipelined(500)).with_network(net),
        RunSpec::set(100, Mode::Sequential),
    ];
    let start = ClientMsg::Start { runs: runs.clone() };
    ws.send(tokio_tungstenite::tungstenite::Message::text(
        start.to_json(),
    ))
    .await
    .unwrap();
    let mut finished = Vec::new();
    support::within(Duration::from_secs(120), "every run finishes", async {
        while finished.len() < runs.len() {
            match next(&mut ws).await {
                ServerMsg::Finished {
                    summary, timeline, ..
                } => finished.push((summary, timeline)),
                ServerMsg::Failed { reason, .. } | ServerMsg::Rejected { reason } => {
                    panic!("{reason}")
                }
                _ => {}
            }
        }
    })
    .await;
    for (summary, timeline) in &finished[..2] {
        let split = summary.split.expect("a split through the proxy");
        println!(
            "{}: p50 {:.0} µs, {split:?}",
            summary.spec.mode.label(),
            summary.latency.p50_us
        );
        // The hub's proxy is calibrated: each chunk is held at least D less the compensation
        // for its direction, which the split reports.
        assert!(
            split.out_us >= d as f64 - split.early_out_us,
            "out {split:?} < D less the compensation"
        );
        assert!(split.back_us > 0.0 && split.server_us > 0.0, "{split:?}");
        assert_eq!(split.samples, summary.spec.count, "every request stamped");
        assert_causal(timeline);
        let floor_us = 2.0 * d as f64 - (split.early_out_us + split.early_back_us);
        assert!(
            summary.latency.p50_us >= floor_us * 0.999,
            "p50 {} µs < 2·D less the compensation ({floor_us} µs)",
            summary.latency.p50_us
        );
    }
    // The loopback run went direct: no proxy, no stamps.
    let (summary, timeline) = &finished[2];
    assert!(summary.split.is_none());
    assert!(timeline.first.iter().all(|s| s.at_server_us.is_none()));
    // A page that connects now gets the same, merged, records.
    let welcome = server.hub.subscribe().welcome;
    let ServerMsg::Welcome { recent, .. } = welcome else {
        unreachable!()
    };
    assert_eq!(recent.len(), 3);
    for (record, (summary, timeline)) in recent.iter().zip(&finished) {
        // The page's copy went through JSON: equal to within float printing.
        let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-6,
            (a, b) => a.is_none() && b.is_none(),
        };
        assert_eq!(record.timeline.first.len(), timeline.first.len());
        assert!(
            record
                .timeline
                .first
                .iter()
                .zip(&timeline.first)
                .all(|(r, f)| {
                    close(r.at_server_us, f.at_server_us)
                        && close(r.from_server_us, f.from_server_us)
                })
        );
        assert!(close(
            record.summary.split.map(|s| s.out_us),
            summary.split.map(|s| s.out_us)
        ));
    }
    assert!(support::pipescope_keys(&target).await.is_empty());
    drop(ws);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_welcome_offers_the_servers_default_network() {
    let (_redis, target) = support::redis();
    let server = support::Server::start_with_network(target, Network::symmetric(250)).await;
    let welcome = server.hub.subscribe().welcome;
    let ServerMsg::Welcome { network, .. } = welcome else {
        unreachable!()
    };
    assert_eq!(network, Network::symmetric(250));
    server.shutdown().await.unwrap();
}

/// A proxy the hub keeps serves run after run: it must not hold on to every connection's
/// sockets.
#[tokio::test]
async fn a_kept_proxy_lets_go_of_finished_connections() {
    let (_redis, target) = support::redis();
    let proxy = DelayProxy::start_compensated(
        target.socket_addr().await.unwrap(),
        Network::symmetric(10),
        Default::default(),
    )
    .unwrap();
    let ping = |proxy: &DelayProxy| {
        let mut s = TcpStream::connect(proxy.addr()).unwrap();
        s.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
        let mut pong = [0u8; 7];
        s.read_exact(&mut pong).unwrap();
        assert_eq!(&pong, b"+PONG\r\n");
    };
    for _ in 0..10 {
        ping(&proxy);
    }
    // Both directions of a connection end once the client has gone and Redis has closed its
    // side, and the proxy lets go of ended ones when it accepts the next: so connection after
    // connection, it soon holds only the one in use (and one still ending), never all of them.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        ping(&proxy);
        let held = proxy.connections_held();
        if held <= 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{held} connections held after 10 s of connections"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
