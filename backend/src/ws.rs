//! `/ws`: one task sends (the welcome, then every hub event and this page's own replies), one
//! task receives (starts and cancels); when either ends the other is stopped. Generic over
//! Sink/Stream so it can be driven without a network.

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use shared::{ClientMsg, ServerMsg};
use tokio::sync::{broadcast, mpsc};

use crate::hub::Hub;

/// Client messages are small; anything bigger is refused by the websocket layer itself.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

pub async fn handler(ws: WebSocketUpgrade, State(hub): State<Hub>) -> Response {
    ws.max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket: WebSocket| {
            let (sink, stream) = socket.split();
            serve(sink, stream, hub)
        })
}

pub async fn serve<W, R, E>(mut sink: W, mut stream: R, hub: Hub)
where
    W: Sink<Message> + Unpin + Send + 'static,
    R: Stream<Item = Result<Message, E>> + Unpin + Send + 'static,
    E: Send + 'static,
{
    let (welcome, mut events) = hub.subscribe();
    // Replies meant for this page only (rejections).
    let (reply_tx, mut replies) = mpsc::channel::<ServerMsg>(16);
    let mut closing = hub.closing();

    let mut send_task = tokio::spawn(async move {
        if sink.send(text(&welcome)).await.is_err() {
            return;
        }
        loop {
            let msg = tokio::select! {
                reply = replies.recv() => match reply { Some(m) => m, None => return },
                event = events.recv() => match event {
                    Ok(m) => m,
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
            if sink.send(text(&msg)).await.is_err() {
                return;
            }
        }
    });

    let mut recv_task = tokio::spawn(async move {
        while let Some(Ok(frame)) = stream.next().await {
            let reply = match frame {
                Message::Text(t) => handle_text(&hub, t.as_str()),
                Message::Binary(_) => {
                    Some(rejected("binary frames are not accepted; send JSON text"))
                }
                Message::Close(_) => break,
                Message::Ping(_) | Message::Pong(_) => None,
            };
            if let Some(reply) = reply {
                if reply_tx.send(reply).await.is_err() {
                    break;
                }
            }
        }
    });

    tokio::select! {
        _ = &mut send_task => recv_task.abort(),
        _ = &mut recv_task => send_task.abort(),
    }
}

/// Acts on one text frame; returns a reply for this page only, if any.
fn handle_text(hub: &Hub, text: &str) -> Option<ServerMsg> {
    match ClientMsg::from_json(text) {
        Err(e) => Some(rejected(&e.to_string())),
        Ok(ClientMsg::Start { runs }) => hub.start(runs).err().map(|r| rejected(&r.to_string())),
        Ok(ClientMsg::Cancel) => {
            if !hub.cancel() {
                return Some(rejected("nothing to cancel: no run in progress"));
            }
            None
        }
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
