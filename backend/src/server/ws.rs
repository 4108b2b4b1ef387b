//! `/ws`: one task sends (the welcome, then every hub event and this page's own replies), one
//! task receives (starts and cancels); when either ends the other is stopped. Generic over
//! Sink/Stream so it can be driven without a network.

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::response::Response;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use shared::{ClientMsg, ServerMsg};
use tokio::sync::{broadcast, mpsc, watch};

use std::time::Duration;

use super::hub::{Hub, Rejection, Subscription};

/// Client messages are small; anything bigger is refused by the websocket layer itself.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

#[derive(Debug, serde::Deserialize)]
pub struct WsParams {
    /// The presenter token, when the server requires one to start or cancel runs.
    token: Option<String>,
}

pub async fn handler(
    ws: WebSocketUpgrade,
    State(hub): State<Hub>,
    Query(params): Query<WsParams>,
    headers: HeaderMap,
) -> Response {
    if !same_origin(&headers) {
        return cross_origin_refused();
    }
    let control = hub.may_control(params.token.as_deref());
    ws.max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket: WebSocket| {
            let (sink, stream) = socket.split();
            serve(sink, stream, hub, control)
        })
}

/// Whether a websocket comes from this server's own page: a page from another site must not
/// drive runs against this Redis (browsers always send Origin on websockets; tools that send
/// none are not pages).
pub fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let origin_host = origin
        .to_str()
        .unwrap_or("")
        .split("://")
        .nth(1)
        .unwrap_or("");
    if origin_host != host {
        tracing::warn!(?origin, host, "refused a cross-origin websocket");
        return false;
    }
    true
}

pub fn cross_origin_refused() -> Response {
    (StatusCode::FORBIDDEN, "cross-origin websocket refused").into_response()
}

/// Serves one page. `control`: whether it may start and cancel runs, or only watch.
pub async fn serve<W, R, E>(mut sink: W, stream: R, hub: Hub, control: bool)
where
    W: Sink<Message> + Unpin + Send + 'static,
    R: Stream<Item = Result<Message, E>> + Unpin + Send + 'static,
    E: Send + 'static,
{
    let Subscription {
        mut welcome,
        catch_up,
        mut events,
    } = hub.subscribe();
    if let ServerMsg::Welcome { can_control, .. } = &mut welcome {
        *can_control = control;
    }
    // Replies meant for this page only (rejections).
    let (reply_tx, mut replies) = mpsc::channel::<ServerMsg>(16);
    let mut closing = hub.closing();

    let mut send_task = tokio::spawn(async move {
        let first = std::iter::once(welcome).chain(catch_up);
        send(&mut sink, first, &mut events, &mut replies, &mut closing).await;
    });
    let mut recv_task = tokio::spawn(receive(stream, hub, control, reply_tx));

    tokio::select! {
        _ = &mut send_task => recv_task.abort(),
        _ = &mut recv_task => send_task.abort(),
    }
}

/// The sending half: `first` (the welcome and the catch-up), then every hub event and this
/// page's own replies, until the page goes, stalls, or the server closes.
async fn send<W: Sink<Message> + Unpin>(
    sink: &mut W,
    first: impl Iterator<Item = ServerMsg>,
    events: &mut broadcast::Receiver<Utf8Bytes>,
    replies: &mut mpsc::Receiver<ServerMsg>,
    closing: &mut watch::Receiver<bool>,
) {
    for msg in first {
        if send_within(sink, text(&msg)).await.is_err() {
            return;
        }
    }
    loop {
        let frame = tokio::select! {
            reply = replies.recv() => match reply { Some(m) => text(&m), None => return },
            event = events.recv() => match event {
                Ok(frame) => Message::Text(frame),
                // Too slow to keep up: skip ahead; the next Progress/Finished resyncs it.
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!(skipped = n, "viewer lagged");
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = closing.changed() => {
                let frame = CloseFrame { code: close_code::AWAY, reason: "pipescope is shutting down".into() };
                let _ = sink.send(Message::Close(Some(frame))).await;
                return;
            }
        };
        if let Err(stalled) = send_within(sink, frame).await {
            if stalled {
                tracing::info!("dropped a viewer that stopped reading");
            }
            return;
        }
    }
}

/// The receiving half: acts on the page's messages, and queues any reply meant for it alone,
/// until the page closes or goes.
async fn receive<R, E>(mut stream: R, hub: Hub, control: bool, replies: mpsc::Sender<ServerMsg>)
where
    R: Stream<Item = Result<Message, E>> + Unpin,
{
    while let Some(Ok(frame)) = stream.next().await {
        let reply = match frame {
            Message::Text(t) => handle_text(&hub, t.as_str(), control, &replies).await,
            Message::Binary(_) => Some(rejected("binary frames are not accepted; send JSON text")),
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) => None,
        };
        if let Some(reply) = reply
            && replies.send(reply).await.is_err()
        {
            break;
        }
    }
}

/// Acts on one text frame; returns a reply for this page only, if any. A measurement runs in
/// the background and replies through `replies` only if it fails.
async fn handle_text(
    hub: &Hub,
    text: &str,
    control: bool,
    replies: &mpsc::Sender<ServerMsg>,
) -> Option<ServerMsg> {
    let msg = match ClientMsg::from_json(text) {
        Ok(msg) => msg,
        Err(e) => return Some(rejected(&e.to_string())),
    };
    let presenter_only = !matches!(msg, ClientMsg::WantTimeline { .. });
    if presenter_only && !control {
        return Some(rejected(&Rejection::WatchOnly.to_string()));
    }
    let refused = |r: Rejection| Some(rejected(&r.to_string()));
    match msg {
        ClientMsg::Start { runs } => hub.start(runs).err().and_then(refused),
        ClientMsg::Cancel => {
            if !hub.cancel() {
                return Some(rejected("nothing to cancel: no run in progress"));
            }
            None
        }
        ClientMsg::Observe { network, probe } => {
            hub.observe(network, probe).await.err().and_then(refused)
        }
        ClientMsg::StopObserve => hub.stop_observing(None).err().and_then(refused),
        ClientMsg::WantTimeline { id } => match hub.observed_timeline(id) {
            Ok(timeline) => Some(ServerMsg::ObservedTimeline(timeline)),
            Err(r) => refused(r),
        },
        ClientMsg::MeasureEquivalent { id } => {
            let (hub, replies) = (hub.clone(), replies.clone());
            tokio::spawn(async move {
                if let Err(r) = hub.measure_equivalent(id).await {
                    let _ = replies.send(rejected(&r.to_string())).await;
                }
            });
            None
        }
    }
}

/// A viewer whose socket accepts nothing for this long is dropped: it holds no more than one
/// frame meanwhile (the broadcast skips it ahead), and dropping it frees even that.
pub const STALLED_VIEWER: Duration = Duration::from_secs(5);

/// Sends one frame; `Err(true)` if the viewer stalled, `Err(false)` if the socket is gone.
async fn send_within<W: Sink<Message> + Unpin>(sink: &mut W, frame: Message) -> Result<(), bool> {
    match tokio::time::timeout(STALLED_VIEWER, sink.send(frame)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(false),
        Err(_) => Err(true),
    }
}

fn rejected(reason: &str) -> ServerMsg {
    ServerMsg::Rejected {
        reason: reason.to_string(),
    }
}

fn text(msg: &ServerMsg) -> Message {
    Message::Text(msg.to_json().into())
}
