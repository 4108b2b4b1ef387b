//! The websocket against the real backend and a real redis-server, with a tokio-tungstenite
//! client: streaming, rejections, the one-run-at-a-time rule, and shutdown.

use crate::support;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use shared::{ClientMsg, Mode, RunSpec, ServerMsg};
use tokio_tungstenite::tungstenite::Message;

mod access;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(server: &support::Server) -> Ws {
    let (mut ws, _) = tokio_tungstenite::connect_async(server.ws_url())
        .await
        .unwrap();
    let welcome = next(&mut ws).await;
    assert!(
        matches!(
            welcome,
            ServerMsg::Welcome {
                protocol: shared::PROTOCOL_VERSION,
                ..
            }
        ),
        "{welcome:?}"
    );
    ws
}

async fn next(ws: &mut Ws) -> ServerMsg {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(60), ws.next())
            .await
            .expect("a message within 60 s")
            .unwrap()
            .unwrap();
        match frame {
            Message::Text(t) => return ServerMsg::from_json(t.as_str()).unwrap(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

async fn send(ws: &mut Ws, msg: &ClientMsg) {
    ws.send(Message::text(msg.to_json())).await.unwrap();
}

#[tokio::test]
async fn a_comparison_streams_both_runs_to_the_end() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let mut ws = connect(&server).await;
    let n = 20_000;
    send(
        &mut ws,
        &ClientMsg::Start {
            runs: RunSpec::comparison(n, 500),
        },
    )
    .await;

    let mut summaries = Vec::new();
    for index in 0..2 {
        let ServerMsg::RunStarted {
            run,
            index: i,
            of: 2,
            spec,
        } = next(&mut ws).await
        else {
            panic!("expected RunStarted")
        };
        assert_eq!(i, index);
        let mut progress_frames = 0u64;
        let mut last_done = 0;
        let mut streamed_spans = 0u64;
        let mut streamed_sample: Vec<shared::Span> = Vec::new();
        let mut sample_stride = None;
        let summary = support::within(
            Duration::from_secs(120),
            "the run streams to Finished",
            async {
                loop {
                    match next(&mut ws).await {
                        ServerMsg::Progress {
                            run: r,
                            done,
                            total,
                            ..
                        } => {
                            assert_eq!((r, total), (run, n));
                            assert!(done >= last_done, "progress never goes back");
                            last_done = done;
                            progress_frames += 1;
                        }
                        ServerMsg::Spans { run: r, spans } => {
                            assert_eq!(r, run);
                            assert!(
                                !spans.is_empty()
                                    && spans.len() <= shared::protocol::MAX_SPANS_PER_FRAME
                            );
                            for s in &spans {
                                assert_eq!(
                                    s.i, streamed_spans,
                                    "spans stream in order, none missing"
                                );
                                assert!(s.replied_us >= s.issued_us);
                                streamed_spans += 1;
                            }
                        }
                        ServerMsg::Sampled {
                            run: r,
                            stride,
                            spans,
                        } => {
                            assert_eq!(r, run);
                            assert!(
                                !spans.is_empty()
                                    && spans.len() <= shared::protocol::MAX_SPANS_PER_FRAME
                            );
                            assert!(
                                sample_stride.is_none_or(|s| s == stride),
                                "one stride a run"
                            );
                            sample_stride = Some(stride);
                            streamed_sample.extend(spans);
                        }
                        ServerMsg::Finished {
                            run: r,
                            summary,
                            timeline,
                        } => {
                            assert_eq!(r, run);
                            assert_eq!(
                                timeline.first.len() as u64,
                                streamed_spans,
                                "Finished repeats the streamed spans"
                            );
                            assert!(!timeline.sampled.is_empty());
                            // The sample beyond the first requests was streamed live, as
                            // the finished timeline holds it.
                            streamed_sample.sort_by_key(|s| s.i);
                            let beyond: Vec<shared::Span> = timeline
                                .sampled
                                .iter()
                                .filter(|s| s.i >= pipescope::spans::FULL_SPANS)
                                .copied()
                                .collect();
                            assert!(!beyond.is_empty(), "{n} requests sample beyond the first");
                            assert_eq!(streamed_sample, beyond, "the live sample is the final one");
                            assert_eq!(sample_stride, Some(timeline.stride));
                            break summary;
                        }
                        other => panic!("unexpected {other:?}"),
                    }
                }
            },
        )
        .await;
        assert_eq!(
            last_done, n,
            "the last progress frame reports the whole run"
        );
        assert_eq!(summary.spec, spec);
        assert_eq!(summary.done, n);
        // The hub samples progress on a 30 Hz tick aligned to a fixed grid (late ticks are
        // skipped, never bunched) and sends a frame only when the run moved: the frame at the
        // start (nothing done yet), at most one per grid point while the engine runs (one more
        // where a late tick lands across an edge of the run), and one with its last state.
        let allowed = (summary.wall_us as f64 / 1e6 * 30.0).floor() as u64 + 4;
        assert!(
            progress_frames <= allowed,
            "{progress_frames} progress frames in {} ms",
            summary.wall_ms()
        );
        summaries.push(summary);
    }
    assert_eq!(summaries[0].spec.mode, Mode::Sequential);
    assert_eq!(summaries[1].spec.mode, Mode::pipelined(500));
    assert_eq!(support::command_calls(&target).await["set"], 2 * n);
    assert!(
        support::pipescope_keys(&target).await.is_empty(),
        "keys removed after both runs"
    );

    // A page that connects now sees the finished runs in its Welcome.
    let (mut late, _) = tokio_tungstenite::connect_async(server.ws_url())
        .await
        .unwrap();
    let ServerMsg::Welcome {
        busy,
        recent,
        target: shown,
        ..
    } = next(&mut late).await
    else {
        panic!("expected Welcome")
    };
    assert!(!busy);
    assert_eq!(
        recent.iter().map(|r| r.summary.clone()).collect::<Vec<_>>(),
        summaries
    );
    assert!(
        recent
            .iter()
            .all(|r| r.timeline.first.len() == pipescope::spans::FULL_SPANS as usize)
    );
    assert_eq!(shown, target.redacted());
}

#[tokio::test]
async fn bad_messages_are_rejected_and_the_server_keeps_serving() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let mut ws = connect(&server).await;

    ws.send(Message::text("this is not json")).await.unwrap();
    let ServerMsg::Rejected { reason } = next(&mut ws).await else {
        panic!("expected Rejected")
    };
    assert!(reason.contains("not a pipescope message"), "{reason}");

    ws.send(Message::text(
        r#"{"Start":{"runs":[{"count":1,"mode":{"kind":"warp"}}]}}"#,
    ))
    .await
    .unwrap();
    assert!(matches!(next(&mut ws).await, ServerMsg::Rejected { .. }));

    let too_many = RunSpec::set(10_000_001, Mode::Sequential);
    send(
        &mut ws,
        &ClientMsg::Start {
            runs: vec![too_many],
        },
    )
    .await;
    let ServerMsg::Rejected { reason } = next(&mut ws).await else {
        panic!("expected Rejected")
    };
    assert!(
        reason.contains("count must be between 1 and 10000000"),
        "{reason}"
    );

    // Every other field out of range, each refused with words naming it; the whole start is
    // refused when one of its runs is bad.
    for (json, words) in [
        (
            r#"{"count":10,"mode":{"kind":"pipelined","batch":0}}"#,
            "batch must be between 1",
        ),
        (
            r#"{"count":10,"mode":{"kind":"multiplexed","in_flight":100001}}"#,
            "in-flight requests must be between 1",
        ),
        (
            r#"{"count":10,"mode":{"kind":"pipelined","batch":10,"flush":{"policy":"buffered","commands":11}}}"#,
            "flush every 11 commands",
        ),
        (
            r#"{"count":10,"mode":{"kind":"pipelined","batch":10,"flush":{"policy":"sometimes"}}}"#,
            "not a pipescope message",
        ),
        (
            r#"{"count":10,"mode":{"kind":"sequential"},"value_bytes":0}"#,
            "value size must be between 1",
        ),
        (
            r#"{"count":10000000,"mode":{"kind":"pipelined","batch":1000},"value_bytes":1000}"#,
            "more than the 536870912 bytes",
        ),
        (
            r#"{"count":10,"mode":{"kind":"sequential"},"network":{"delay_out_us":1000001}}"#,
            "one-way delay out must be at most 1000000",
        ),
        (
            r#"{"count":10,"mode":{"kind":"sequential"},"network":{"jitter_us":4000000}}"#,
            "jitter must be at most",
        ),
        (
            r#"{"count":10,"mode":{"kind":"sequential"},"network":{"bandwidth":5}}"#,
            "bandwidth must be between",
        ),
        (
            r#"{"count":10,"mode":{"kind":"sequential"},"network":{"delay_out_us":-1}}"#,
            "not a pipescope message",
        ),
        (
            r#"{"count":1000000,"mode":{"kind":"sequential"},"network":{"delay_out_us":30000,"delay_back_us":30000}}"#,
            "would spend at least 60000 s",
        ),
        (
            r#"{"command":"INCR","count":10,"mode":{"kind":"mset","batch":5}}"#,
            "INCR has no one-command-many-keys form",
        ),
        (
            r#"{"command":"FLUSHALL","count":10,"mode":{"kind":"sequential"}}"#,
            "not a pipescope message",
        ),
        (
            r#"{"count":10,"mode":{"kind":"sequential"},"wait":{"kind":"busy_poll","us":60000000}}"#,
            "busy-poll must be between 1 and 10000 µs",
        ),
        (
            r#"{"count":10,"mode":{"kind":"sequential"},"wait":{"kind":"spin"}}"#,
            "not a pipescope message",
        ),
    ] {
        let start = format!(
            r#"{{"Start":{{"runs":[{{"count":1,"mode":{{"kind":"sequential"}}}},{json}]}}}}"#
        );
        ws.send(Message::text(start)).await.unwrap();
        let ServerMsg::Rejected { reason } = next(&mut ws).await else {
            panic!("expected Rejected for {json}")
        };
        assert!(reason.contains(words), "{json}: {reason}");
    }

    ws.send(Message::binary(vec![1u8, 2, 3])).await.unwrap();
    let ServerMsg::Rejected { reason } = next(&mut ws).await else {
        panic!("expected Rejected")
    };
    assert!(reason.contains("binary"), "{reason}");

    send(&mut ws, &ClientMsg::Cancel).await;
    assert!(matches!(next(&mut ws).await, ServerMsg::Rejected { .. }));

    // Nothing ran.
    assert_eq!(support::command_calls(&target).await.get("set"), None);

    // And a good start still works on the same socket.
    send(
        &mut ws,
        &ClientMsg::Start {
            runs: vec![RunSpec::set(50, Mode::Sequential)],
        },
    )
    .await;
    assert!(matches!(next(&mut ws).await, ServerMsg::RunStarted { .. }));
    support::within(Duration::from_secs(60), "the good start finishes", async {
        loop {
            match next(&mut ws).await {
                ServerMsg::Finished { summary, .. } => break assert_eq!(summary.done, 50),
                ServerMsg::Progress { .. }
                | ServerMsg::Spans { .. }
                | ServerMsg::Sampled { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    })
    .await;
}

#[tokio::test]
async fn an_oversized_frame_closes_only_that_socket() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let mut big = connect(&server).await;
    let huge = format!(
        r#"{{"WantTimeline":{{"id":1,"pad":"{}"}}}}"#,
        "x".repeat(pipescope::server::ws::MAX_MESSAGE_BYTES + 1)
    );
    let _ = big.send(Message::text(huge)).await;
    // The server drops that connection...
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match big.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "an oversized frame must end the connection");
    // ...and keeps serving others.
    let _other = connect(&server).await;
}

#[tokio::test]
async fn a_second_start_while_running_is_rejected_as_busy_and_cancel_works() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let mut presenter = connect(&server).await;
    let mut viewer = connect(&server).await;

    let long = RunSpec::set(5_000_000, Mode::Sequential);
    send(&mut presenter, &ClientMsg::Start { runs: vec![long] }).await;
    let ServerMsg::RunStarted { run, .. } = next(&mut presenter).await else {
        panic!("expected RunStarted")
    };
    // Every page watches the run, not only the one that started it.
    assert!(matches!(next(&mut viewer).await, ServerMsg::RunStarted { run: r, .. } if r == run));

    send(
        &mut viewer,
        &ClientMsg::Start {
            runs: RunSpec::comparison(10, 5),
        },
    )
    .await;
    let reason = support::within(Duration::from_secs(60), "the busy rejection", async {
        loop {
            match next(&mut viewer).await {
                ServerMsg::Rejected { reason } => break reason,
                ServerMsg::Progress { .. }
                | ServerMsg::Spans { .. }
                | ServerMsg::Sampled { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    })
    .await;
    assert!(reason.contains("already in progress"), "{reason}");

    send(&mut presenter, &ClientMsg::Cancel).await;
    let (reason, partial) =
        support::within(Duration::from_secs(120), "the cancelled run fails", async {
            loop {
                match next(&mut presenter).await {
                    ServerMsg::Failed {
                        run: Some(r),
                        reason,
                        partial,
                    } => {
                        assert_eq!(r, run);
                        break (reason, partial.unwrap());
                    }
                    ServerMsg::Progress { .. }
                    | ServerMsg::Spans { .. }
                    | ServerMsg::Sampled { .. } => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        })
        .await;
    assert_eq!(reason, "cancelled");
    assert!(partial.done < 5_000_000);
    assert!(
        support::pipescope_keys(&target).await.is_empty(),
        "a cancelled run's keys are removed"
    );
}

#[tokio::test]
async fn shutdown_closes_websockets_with_a_reason() {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let mut ws = connect(&server).await;
    let stopping = tokio::spawn(server.shutdown());
    let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
        .await
        .expect("closed within 10 s");
    let Some(Ok(Message::Close(Some(close)))) = frame else {
        panic!("expected a close frame, got {frame:?}")
    };
    assert!(close.reason.contains("shutting down"), "{close:?}");
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn runs_cross_the_network_the_server_was_given() {
    let (_redis, target) = support::redis();
    let delay = Duration::from_millis(2);
    let server = support::Server::start_with_network(
        target.clone(),
        shared::Network::symmetric(delay.as_micros() as u32),
    )
    .await;
    let mut ws = connect(&server).await;
    // The server's network is the page's initial choice (Welcome.network); a run names it.
    let network = server.hub.network();
    assert_eq!(network, shared::Network::symmetric(2_000));
    send(
        &mut ws,
        &ClientMsg::Start {
            runs: vec![RunSpec::set(20, Mode::Sequential).with_network(network)],
        },
    )
    .await;
    let summary = support::within(
        Duration::from_secs(120),
        "the run through the network finishes",
        async {
            loop {
                match next(&mut ws).await {
                    ServerMsg::Finished { summary, .. } => break summary,
                    ServerMsg::Failed { reason, .. } => panic!("{reason}"),
                    _ => {}
                }
            }
        },
    )
    .await;
    // The hub's proxy is calibrated: each chunk is held at least D less the compensation for
    // its direction (the split reports both), so no round trip beats 2·D less their sum.
    let split = summary.split.expect("a split through the proxy");
    let floor_us = 2.0 * delay.as_micros() as f64 - (split.early_out_us + split.early_back_us);
    assert!(
        summary.latency.p50_us >= floor_us * 0.999,
        "p50 below 2·D less the compensation ({floor_us} µs): {:?}, {split:?}",
        summary.latency
    );
    // Cleanup still reaches Redis directly.
    assert!(support::pipescope_keys(&target).await.is_empty());
}

#[tokio::test]
async fn redis_dying_mid_run_fails_the_run_and_the_next_run_works_once_it_is_back() {
    let (mut redis, target) = support::redis();
    let port = redis.port();
    let server = support::Server::start(target.clone()).await;
    let mut ws = connect(&server).await;
    let long = RunSpec::set(5_000_000, Mode::Sequential);
    send(&mut ws, &ClientMsg::Start { runs: vec![long] }).await;
    support::within(Duration::from_secs(120), "100 replies", async {
        loop {
            if let ServerMsg::Progress { done, .. } = next(&mut ws).await
                && done > 100
            {
                break;
            }
        }
    })
    .await;
    redis.stop();
    let reason = support::within(
        Duration::from_secs(120),
        "the run fails once Redis is stopped",
        async {
            loop {
                match next(&mut ws).await {
                    ServerMsg::Failed {
                        reason, partial, ..
                    } => {
                        assert!(partial.unwrap().done > 100);
                        break reason;
                    }
                    ServerMsg::Progress { .. }
                    | ServerMsg::Spans { .. }
                    | ServerMsg::Sampled { .. } => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        },
    )
    .await;
    assert!(
        reason.contains("closed the connection") || reason.contains("connection"),
        "{reason}"
    );

    // Redis comes back on the same port: the same server, same page, runs again.
    let _back = pipescope::local_redis::LocalRedis::start_on(port).unwrap();
    let short = RunSpec::set(100, Mode::pipelined(10));
    send(&mut ws, &ClientMsg::Start { runs: vec![short] }).await;
    support::within(
        Duration::from_secs(120),
        "the run after Redis came back finishes",
        async {
            loop {
                match next(&mut ws).await {
                    ServerMsg::Finished { summary, .. } => break assert_eq!(summary.done, 100),
                    ServerMsg::Failed { reason, .. } => panic!("{reason}"),
                    ServerMsg::Rejected { reason } => panic!("{reason}"),
                    _ => {}
                }
            }
        },
    )
    .await;
}
