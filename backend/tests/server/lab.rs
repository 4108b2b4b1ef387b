//! The lab served (`serve --lab`) against a real redis-server, its pages as websocket clients
//! of the test: turns on the one lane (never two runs at once, round-robin), the presenter's
//! actions checked on the server, refusals that keep the connection, the stale drop and the
//! wall-clock limit, a page closed mid-run, and a room of 60 joining at once. Asserted from
//! the hub's own event stream (`/ws`), Redis's commandstats and its key count.

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use pipescope::server::hub::Hub;
use pipescope::server::lab::lane::LabServer;
use pipescope::server::lab::queue::Bounds;
use pipescope::target::RedisTarget;
use shared::lab::{Ceilings, LabClientMsg, LabServerMsg, LabYou, PresenterAction};
use shared::{Mode, Network, RunSpec, ServerMsg};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

const TOKEN: &str = "presenter-secret";
const CODE: &str = "room1";
/// How long any one message may take to come.
const WAIT: Duration = Duration::from_secs(60);

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A lab served on a free loopback port.
struct LabUnderTest {
    addr: SocketAddr,
    target: RedisTarget,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl LabUnderTest {
    async fn start(target: RedisTarget, ceilings: Ceilings, bounds: Bounds) -> Self {
        let version = target.server_version().await.unwrap();
        let hub = Hub::with_network(target.clone(), version, Network::LOOPBACK)
            .await
            .unwrap()
            .require_token(TOKEN.into());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let lab = LabServer::start(
            hub.clone(),
            TOKEN.into(),
            vec![format!("http://{addr}")],
            CODE.into(),
            ceilings,
            bounds,
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(pipescope::server::serve_lab(listener, hub, lab, async {
            let _ = stopped.await;
        }));
        LabUnderTest {
            addr,
            target,
            stop: Some(stop),
            task,
        }
    }

    async fn page(&self) -> Page {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/lab/ws", self.addr))
            .await
            .unwrap();
        let mut page = Page { ws };
        page.until("the room's first frame", |m| {
            matches!(m, LabServerMsg::Room(_))
        })
        .await;
        page
    }

    /// A page that joined as `key`: its participant.
    async fn joined(&self, key: &str) -> (Page, LabYou) {
        let mut page = self.page().await;
        page.send(&LabClientMsg::Join {
            code: CODE.into(),
            key: key.into(),
        })
        .await;
        let you = page.you(&format!("{key} joined"), |_| true).await;
        (page, you)
    }

    async fn presenter(&self) -> Page {
        let mut page = self.page().await;
        page.act(TOKEN, PresenterAction::Watch).await;
        page.until("the presenter's view", |m| {
            matches!(m, LabServerMsg::Presenter(_))
        })
        .await;
        page
    }

    /// The hub's event stream, as any page on `/ws` gets it (the presenter's token).
    async fn events(&self) -> Ws {
        let (ws, _) =
            tokio_tungstenite::connect_async(format!("ws://{}/ws?token={TOKEN}", self.addr))
                .await
                .unwrap();
        ws
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        support::within(WAIT, "the server to stop", self.task)
            .await
            .unwrap()
            .unwrap();
    }
}

struct Page {
    ws: Ws,
}

impl Page {
    async fn send(&mut self, msg: &LabClientMsg) {
        self.ws.send(Message::text(msg.to_json())).await.unwrap();
    }

    async fn act(&mut self, token: &str, action: PresenterAction) {
        self.send(&LabClientMsg::Presenter {
            token: token.into(),
            action,
        })
        .await;
    }

    /// The next lab message that `pred` accepts, within `WAIT`; `what` names it if it does
    /// not come.
    /// The presenter pauses or resumes the queue, and the room's frame says so.
    async fn pause(&mut self, paused: bool) {
        self.act(TOKEN, PresenterAction::Pause { paused }).await;
        self.until(
            "the room's frame saying so",
            |m| matches!(m, LabServerMsg::Room(r) if r.paused == paused),
        )
        .await;
    }

    async fn until(&mut self, what: &str, pred: impl Fn(&LabServerMsg) -> bool) -> LabServerMsg {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("{what}: nothing within {WAIT:?}"))
                .unwrap_or_else(|| panic!("{what}: the connection closed"))
                .unwrap();
            if let Message::Text(t) = frame {
                let msg: LabServerMsg = serde_json::from_str(t.as_str()).unwrap();
                if pred(&msg) {
                    return msg;
                }
            }
        }
    }

    async fn you(&mut self, what: &str, pred: impl Fn(&LabYou) -> bool) -> LabYou {
        match self
            .until(what, |m| matches!(m, LabServerMsg::You(y) if pred(y)))
            .await
        {
            LabServerMsg::You(y) => *y,
            _ => unreachable!(),
        }
    }

    async fn refused(&mut self, what: &str) -> String {
        match self
            .until(what, |m| matches!(m, LabServerMsg::Refused { .. }))
            .await
        {
            LabServerMsg::Refused { reason } => reason,
            _ => unreachable!(),
        }
    }
}

/// Runs started and ended on the hub's stream, in order: (run, started?) — a start is never
/// followed by another start before its end.
async fn lane_order(events: &mut Ws, runs: usize) -> Vec<u64> {
    let mut started = Vec::new();
    let mut open: Option<u64> = None;
    let mut ended = 0;
    let deadline = tokio::time::Instant::now() + WAIT * 2;
    while ended < runs {
        let frame = tokio::time::timeout_at(deadline, events.next())
            .await
            .unwrap_or_else(|_| panic!("{ended} of {runs} runs ended in time"))
            .unwrap()
            .unwrap();
        let Message::Text(t) = frame else { continue };
        match ServerMsg::from_json(t.as_str()).unwrap() {
            ServerMsg::RunStarted { run, .. } => {
                assert_eq!(
                    open, None,
                    "run {run} started while run {open:?} was on the lane"
                );
                open = Some(run);
                started.push(run);
            }
            ServerMsg::Finished { run, .. } | ServerMsg::Failed { run: Some(run), .. } => {
                assert_eq!(open, Some(run), "run {run} ended, not the one on the lane");
                open = None;
                ended += 1;
            }
            _ => {}
        }
    }
    started
}

/// Every key of pipescope's gone from Redis within 10 s (a run's lease goes just after it).
async fn no_keys_left(target: &RedisTarget) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let keys = support::pipescope_keys(target).await;
        if keys.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} keys left 10 s after the runs, e.g. {:?}",
            keys.len(),
            &keys[..keys.len().min(3)]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn run(count: u64, batch: u32) -> RunSpec {
    RunSpec::set(count, Mode::pipelined(batch))
}

#[tokio::test]
async fn the_rooms_runs_take_turns_on_one_lane_and_leave_no_keys() {
    let (_redis, target) = support::redis();
    let lab = LabUnderTest::start(target, Ceilings::default(), Bounds::default()).await;
    let mut events = lab.events().await;
    let mut presenter = lab.presenter().await;
    // Paused, the three queue in order; then a queues again behind the others.
    presenter.pause(true).await;
    let mut pages = Vec::new();
    let mut places = Vec::new();
    for key in ["a", "b", "c"] {
        let (mut page, _) = lab.joined(key).await;
        page.send(&LabClientMsg::Run {
            spec: run(20_000, 10),
        })
        .await;
        let y = page
            .you(&format!("{key}'s run waiting"), |y| y.waiting.is_some())
            .await;
        places.push(y.waiting.unwrap().place);
        pages.push((page, y.id));
    }
    assert_eq!(places, [1, 2, 3]);
    presenter.pause(false).await;
    // a's run ends; a queues again at once: behind b and c, who were waiting.
    let a_id = pages[0].1;
    let a = &mut pages[0].0;
    let done = a
        .you("a's run measured", |y| {
            y.last.as_ref().is_some_and(|l| l.summary.is_some())
        })
        .await;
    let first = done.last.unwrap();
    assert_eq!(first.summary.as_ref().unwrap().done, 20_000, "{first:?}");
    a.send(&LabClientMsg::Run {
        spec: run(20_000, 10),
    })
    .await;
    let order = lane_order(&mut events, 4).await;
    // Who ran, in lane order, from each page's own runs.
    let mut owner = std::collections::HashMap::new();
    owner.insert(first.run.unwrap(), a_id);
    for (page, id) in pages.iter_mut() {
        let y = page
            .you("its latest run", |y| {
                y.last
                    .as_ref()
                    .is_some_and(|l| l.run.is_some() && l.run != first.run)
                    && y.waiting.is_none()
                    && y.running.is_none()
            })
            .await;
        owner.insert(y.last.unwrap().run.unwrap(), *id);
    }
    assert_eq!(order.len(), 4);
    assert_eq!(owner.get(&order[0]), Some(&a_id), "{order:?} {owner:?}");
    assert_eq!(
        owner.get(&order[3]),
        Some(&a_id),
        "a ran again only after b and c"
    );
    // Each run's SETs reached Redis, all of them, and every key is gone.
    let calls = support::command_calls(&lab.target).await;
    assert_eq!(
        calls.get("set").copied().unwrap_or(0),
        4 * 20_000,
        "{calls:?}"
    );
    no_keys_left(&lab.target).await;
    lab.stop().await;
}

#[tokio::test]
async fn presenter_actions_from_a_participants_page_are_refused_and_a_ban_holds() {
    let (_redis, target) = support::redis();
    let lab = LabUnderTest::start(target, Ceilings::default(), Bounds::default()).await;
    let (mut mallory, m) = lab.joined("mallory").await;
    let (mut other, o) = lab.joined("other").await;
    // Forged: the wrong token, and none at all.
    for (token, action) in [
        ("guess", PresenterAction::Pause { paused: true }),
        (
            "",
            PresenterAction::Remove {
                id: o.id,
                ban: true,
            },
        ),
        (
            "presenter-secreT",
            PresenterAction::Reveal { revealed: true },
        ),
        ("x", PresenterAction::RotateLink),
        ("x", PresenterAction::Close),
    ] {
        mallory.act(token, action).await;
        let why = mallory.refused("a forged presenter action").await;
        assert!(why.contains("presenter"), "{why}");
    }
    let mut presenter = lab.presenter().await;
    presenter.act(TOKEN, PresenterAction::Watch).await;
    let view = presenter
        .until("the room", |msg| matches!(msg, LabServerMsg::Room(_)))
        .await;
    let LabServerMsg::Room(room) = view else {
        unreachable!()
    };
    assert!(!room.paused && !room.revealed && !room.closed, "{room:?}");
    assert_eq!(room.participants, 2, "nobody was removed: {room:?}");
    // The presenter bans mallory: their page is told, and they cannot rejoin.
    presenter
        .act(
            TOKEN,
            PresenterAction::Remove {
                id: m.id,
                ban: true,
            },
        )
        .await;
    mallory
        .until("mallory told they left", |msg| {
            matches!(msg, LabServerMsg::Left { .. })
        })
        .await;
    mallory
        .send(&LabClientMsg::Join {
            code: CODE.into(),
            key: "mallory".into(),
        })
        .await;
    let why = mallory.refused("a banned rejoin").await;
    assert!(why.contains("removed you"), "{why}");
    // The other participant is still in and may run.
    other
        .send(&LabClientMsg::Run {
            spec: run(1_000, 100),
        })
        .await;
    other
        .you("other's run measured", |y| {
            y.last.as_ref().is_some_and(|l| l.summary.is_some())
        })
        .await;
    lab.stop().await;
}

#[tokio::test]
async fn bad_requests_are_refused_in_words_and_the_connection_stays() {
    let (_redis, target) = support::redis();
    let lab = LabUnderTest::start(target, Ceilings::default(), Bounds::default()).await;
    let mut page = lab.page().await;
    page.ws.send(Message::text("not json")).await.unwrap();
    assert!(
        page.refused("garbage")
            .await
            .starts_with("not a lab request")
    );
    page.ws
        .send(Message::text("x".repeat(10_000)))
        .await
        .unwrap();
    assert!(page.refused("10,000 bytes").await.contains("too long"));
    page.ws
        .send(Message::binary(vec![1u8, 2, 3]))
        .await
        .unwrap();
    assert!(page.refused("binary").await.contains("text frames"));
    page.send(&LabClientMsg::Run { spec: run(100, 10) }).await;
    assert!(page.refused("a run before joining").await.contains("join"));
    page.send(&LabClientMsg::Join {
        code: "wrong".into(),
        key: "k".into(),
    })
    .await;
    assert!(page.refused("a wrong code").await.contains("join link"));
    // Above a ceiling, and beyond what the server runs at all.
    page.send(&LabClientMsg::Join {
        code: CODE.into(),
        key: "k".into(),
    })
    .await;
    page.you("joined after all that", |_| true).await;
    page.send(&LabClientMsg::Run {
        spec: run(1_000_000, 100),
    })
    .await;
    assert!(
        page.refused("a count above the ceiling")
            .await
            .contains("ceiling")
    );
    page.send(&LabClientMsg::Run { spec: run(10, 100) }).await;
    assert!(
        page.refused("a batch above the count")
            .await
            .contains("batch")
    );
    page.send(&LabClientMsg::Rename {
        nickname: "<script>".into(),
    })
    .await;
    assert!(
        page.refused("a nickname with markup")
            .await
            .contains("nickname")
    );
    page.send(&LabClientMsg::Run {
        spec: run(1_000, 100),
    })
    .await;
    page.you("the run measured on the same connection", |y| {
        y.last.as_ref().is_some_and(|l| l.summary.is_some())
    })
    .await;
    lab.stop().await;
}

#[tokio::test]
async fn a_run_left_waiting_is_dropped_and_one_past_the_limit_is_cancelled_without_keys() {
    let (_redis, target) = support::redis();
    let ceilings = Ceilings {
        max_run_secs: 1,
        ..Ceilings::default()
    };
    let bounds = Bounds {
        stale_after: Duration::from_secs(1),
        ..Bounds::default()
    };
    let lab = LabUnderTest::start(target, ceilings, bounds).await;
    let mut presenter = lab.presenter().await;
    presenter.pause(true).await;
    let (mut waiter, _) = lab.joined("waiter").await;
    waiter
        .send(&LabClientMsg::Run {
            spec: run(1_000, 100),
        })
        .await;
    let dropped = waiter
        .you("the waiting run dropped", |y| {
            y.last.as_ref().is_some_and(|l| l.note.is_some())
        })
        .await;
    let note = dropped.last.unwrap().note.unwrap();
    assert!(note.starts_with("dropped after waiting"), "{note}");
    presenter.pause(false).await;
    // 100,000 SETs one at a time across 500 µs each way: ~100 s, cancelled at 1 s.
    let (mut slow, _) = lab.joined("slow").await;
    let mut long = RunSpec::set(100_000, Mode::Sequential);
    long.network = Network::symmetric(500);
    slow.send(&LabClientMsg::Run { spec: long }).await;
    let ended = slow
        .you("the long run cancelled", |y| {
            y.last.as_ref().is_some_and(|l| l.run.is_some())
        })
        .await;
    let last = ended.last.unwrap();
    assert!(
        last.note
            .as_deref()
            .is_some_and(|n| n.contains("limit of 1 s")),
        "{last:?}"
    );
    assert!(last.summary.is_none(), "{last:?}");
    no_keys_left(&lab.target).await;
    lab.stop().await;
}

#[tokio::test]
async fn a_page_closed_mid_run_leaves_nothing_behind() {
    let (_redis, target) = support::redis();
    let lab = LabUnderTest::start(target, Ceilings::default(), Bounds::default()).await;
    let mut events = lab.events().await;
    let (mut page, _) = lab.joined("leaver").await;
    let mut long = RunSpec::set(100_000, Mode::Sequential);
    long.network = Network::symmetric(500);
    page.send(&LabClientMsg::Run { spec: long }).await;
    page.you("its run on the lane", |y| y.running.is_some())
        .await;
    drop(page);
    // The run ends (cancelled) well before its ~100 s, and its keys are gone.
    lane_order(&mut events, 1).await;
    no_keys_left(&lab.target).await;
    lab.stop().await;
}

#[tokio::test]
async fn sixty_join_at_once_each_with_a_name_of_their_own_and_the_sixty_first_watches() {
    let (_redis, target) = support::redis();
    let lab = LabUnderTest::start(target, Ceilings::default(), Bounds::default()).await;
    let joins = (0..60).map(|k| {
        let lab = &lab;
        async move { lab.joined(&format!("p{k}")).await }
    });
    let joined = support::within(
        WAIT,
        "60 pages joining at once",
        futures_util::future::join_all(joins),
    )
    .await;
    let mut names: Vec<String> = joined.iter().map(|(_, y)| y.nickname.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 60, "nicknames unique");
    let mut late = lab.page().await;
    late.send(&LabClientMsg::Join {
        code: CODE.into(),
        key: "p60".into(),
    })
    .await;
    let why = late.refused("the 61st").await;
    assert!(why.contains("full"), "{why}");
    lab.stop().await;
}

/// `GET path` on the lab's server: the status line and the body.
async fn get(addr: SocketAddr, path: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut raw = String::new();
    support::within(WAIT, "the response", s.read_to_string(&mut raw))
        .await
        .unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

#[tokio::test]
async fn the_join_link_is_drawn_as_a_qr_code_and_a_rotated_link_turns_the_old_one_away() {
    let (_redis, target) = support::redis();
    let lab = LabUnderTest::start(target, Ceilings::default(), Bounds::default()).await;
    let mut presenter = lab.presenter().await;
    presenter.act(TOKEN, PresenterAction::Watch).await;
    let view = |m: LabServerMsg| match m {
        LabServerMsg::Presenter(p) => p,
        _ => unreachable!(),
    };
    let before = view(
        presenter
            .until("the presenter's view", |m| {
                matches!(m, LabServerMsg::Presenter(_))
            })
            .await,
    );
    assert_eq!(
        before.join_urls,
        [format!("http://{}/lab/join/{CODE}", lab.addr)]
    );
    let (status, first) = get(lab.addr, "/lab/qr.svg").await;
    assert!(status.contains("200"), "{status}");
    assert!(first.contains("<svg"), "{first:.200}");
    presenter.act(TOKEN, PresenterAction::RotateLink).await;
    let after = view(
        presenter
            .until(
                "the presenter's view with a new link",
                |m| matches!(m, LabServerMsg::Presenter(p) if p.join_code != CODE),
            )
            .await,
    );
    assert!(after.join_urls[0].ends_with(&after.join_code));
    let (_, second) = get(lab.addr, "/lab/qr.svg").await;
    assert_ne!(first, second, "the QR code follows the new link");
    let mut old = lab.page().await;
    old.send(&LabClientMsg::Join {
        code: CODE.into(),
        key: "late".into(),
    })
    .await;
    assert!(
        old.refused("the old link")
            .await
            .contains("no longer valid")
    );
    lab.stop().await;
}
