//! The websocket handler driven over in-memory channels, with no socket and no HTTP (as axum's
//! testing-websockets example does): `ws::serve` takes any Sink of frames and any Stream of
//! frames, so what it says and does can be checked message by message against a real Redis.

use crate::support;

use std::time::Duration;

use axum::extract::ws::Message;
use futures_util::Stream;
use pipescope::server::hub::Hub;
use pipescope::server::ws;
use pipescope::target::RedisTarget;
use shared::{ClientMsg, Mode, Network, RunSpec, ServerMsg};
use tokio::sync::mpsc;

/// How long any one message may take to arrive.
const WAIT: Duration = Duration::from_secs(30);

/// A page as two channels: frames it sends to `serve`, frames `serve` sends it.
struct Page {
    to_server: mpsc::Sender<Result<Message, std::convert::Infallible>>,
    from_server: mpsc::Receiver<Message>,
    served: tokio::task::JoinHandle<()>,
}

impl Page {
    fn open(hub: Hub, control: bool) -> Page {
        let (to_server, inbox) = mpsc::channel(16);
        let (outbox, from_server) = mpsc::channel(64);
        let sink = futures_util::sink::unfold(outbox, |outbox, frame: Message| async move {
            outbox.send(frame).await.map_err(|_| "the page is gone")?;
            Ok::<_, &'static str>(outbox)
        });
        let served = tokio::spawn(ws::serve(
            Box::pin(sink),
            receiver_stream(inbox),
            hub,
            control,
        ));
        Page {
            to_server,
            from_server,
            served,
        }
    }

    async fn send(&self, msg: ClientMsg) {
        let text = serde_json::to_string(&msg).unwrap();
        self.to_server
            .send(Ok(Message::Text(text.into())))
            .await
            .expect("serve stopped reading");
    }

    async fn next(&mut self) -> ServerMsg {
        let frame = tokio::time::timeout(WAIT, self.from_server.recv())
            .await
            .unwrap_or_else(|_| panic!("no message from the server within {WAIT:?}"))
            .expect("serve closed the page's channel");
        match frame {
            Message::Text(t) => ServerMsg::from_json(t.as_str()).expect("a protocol message"),
            other => panic!("expected a text frame, got {other:?}"),
        }
    }

    /// Reads messages until `want` picks one out.
    async fn until<T>(&mut self, mut want: impl FnMut(&ServerMsg) -> Option<T>) -> T {
        loop {
            let msg = self.next().await;
            if let Some(t) = want(&msg) {
                return t;
            }
        }
    }
}

fn receiver_stream<T: Send + 'static>(
    rx: mpsc::Receiver<T>,
) -> impl Stream<Item = T> + Unpin + Send + 'static {
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    }))
}

/// A hub as the server builds one, on loopback.
async fn loopback_hub(target: &RedisTarget) -> Hub {
    Hub::with_network(target.clone(), "7".into(), Network::LOOPBACK)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_presenter_runs_and_every_page_hears_it() {
    let (_redis, target) = support::redis();
    let hub = loopback_hub(&target).await;
    let mut presenter = Page::open(hub.clone(), true);
    let mut viewer = Page::open(hub.clone(), false);
    for (page, control) in [(&mut presenter, true), (&mut viewer, false)] {
        match page.next().await {
            ServerMsg::Welcome { can_control, .. } => assert_eq!(can_control, control),
            other => panic!("the first message must be Welcome, got {other:?}"),
        }
    }
    let sets_before = support::command_calls(&target).await.get("set").copied();
    presenter
        .send(ClientMsg::Start {
            runs: vec![RunSpec::set(300, Mode::pipelined(100))],
        })
        .await;
    for page in [&mut presenter, &mut viewer] {
        let summary = page
            .until(|m| match m {
                ServerMsg::Finished { summary, .. } => Some(summary.clone()),
                ServerMsg::Failed { reason, .. } => panic!("the run failed: {reason}"),
                _ => None,
            })
            .await;
        assert_eq!(summary.done, 300);
        assert_eq!(summary.round_trips, 3);
    }
    let sets_after = support::command_calls(&target).await["set"];
    assert_eq!(
        sets_after - sets_before.unwrap_or(0),
        300,
        "Redis saw the run's SETs"
    );
}

#[tokio::test]
async fn a_viewer_is_refused_and_nothing_runs() {
    let (_redis, target) = support::redis();
    let hub = loopback_hub(&target).await;
    let mut viewer = Page::open(hub.clone(), false);
    assert!(matches!(viewer.next().await, ServerMsg::Welcome { .. }));
    viewer
        .send(ClientMsg::Start {
            runs: vec![RunSpec::set(10, Mode::Sequential)],
        })
        .await;
    match viewer.next().await {
        ServerMsg::Rejected { reason } => assert!(reason.contains("only watch"), "{reason}"),
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert!(!hub.is_busy());
    assert_eq!(support::command_calls(&target).await.get("set"), None);
}

#[tokio::test]
async fn a_page_that_goes_away_ends_its_service() {
    let (_redis, target) = support::redis();
    let hub = loopback_hub(&target).await;
    let mut page = Page::open(hub, true);
    assert!(matches!(page.next().await, ServerMsg::Welcome { .. }));
    let Page {
        to_server, served, ..
    } = page;
    drop(to_server);
    tokio::time::timeout(WAIT, served)
        .await
        .unwrap_or_else(|_| panic!("serve still running {WAIT:?} after its page went away"))
        .expect("serve panicked");
}
