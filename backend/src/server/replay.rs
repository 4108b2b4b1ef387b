//! `pipescope replay FILE`: the page served from a recording, with no Redis at all. Every
//! page gets a `Welcome` whose `recent` holds the recording's runs (the path a late page takes
//! to show finished runs) and whose `replay` says which file it is; anything a page asks to
//! run is refused with the reason.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use axum::routing::get;
use futures_util::{SinkExt, StreamExt};
use shared::{Recording, ServerMsg};
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::page_routes;
use super::ws::MAX_MESSAGE_BYTES;

/// A recording being served.
struct Replay {
    /// The `Welcome` every page gets, serialised once.
    welcome: String,
    /// Why anything a page asks for is refused.
    refusal: String,
    /// Raised when the server shuts down; every websocket then closes with a reason.
    closing: watch::Sender<bool>,
}

/// Reads `path` as a recording: the file's text, or a message that says what is wrong with it.
pub fn read(path: &std::path::Path) -> anyhow::Result<Recording> {
    let bytes =
        std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    Recording::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The routes for `recording`, read from the file named `file`.
pub fn router(recording: Recording, file: &str) -> (Router, watch::Sender<bool>) {
    let refusal = format!(
        "this page shows a recording ({file}, saved {}): nothing can run here, there is no Redis behind it. Start pipescope without `replay` to run against a Redis",
        recording.saved_at
    );
    let welcome = recording.welcome(file).to_json();
    let closing = watch::channel(false).0;
    let replay = Arc::new(Replay {
        welcome,
        refusal,
        closing: closing.clone(),
    });
    let router = page_routes().route("/ws", get(handler)).with_state(replay);
    (router, closing)
}

/// Serves `recording` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    recording: Recording,
    file: &str,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (router, closing) = router(recording, file);
    let shutdown = async move {
        shutdown.await;
        // Websockets would hold the graceful shutdown open forever: close them with a reason.
        closing.send_replace(true);
    };
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

async fn handler(ws: WebSocketUpgrade, State(replay): State<Arc<Replay>>) -> Response {
    ws.max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| page(socket, replay))
}

/// One page: the welcome, then a refusal for each thing it asks, until it goes or we stop.
async fn page(socket: WebSocket, replay: Arc<Replay>) {
    let (mut sink, mut stream) = socket.split();
    let mut closing = replay.closing.subscribe();
    if sink
        .send(Message::Text(replay.welcome.clone().into()))
        .await
        .is_err()
    {
        return;
    }
    let refused = ServerMsg::Rejected {
        reason: replay.refusal.clone(),
    }
    .to_json();
    loop {
        tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(_) | Message::Binary(_))) => {
                    if sink.send(Message::Text(refused.clone().into())).await.is_err() {
                        return;
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            _ = closing.changed() => {
                let frame = CloseFrame { code: close_code::AWAY, reason: "pipescope is shutting down".into() };
                let _ = sink.send(Message::Close(Some(frame))).await;
                return;
            }
        }
    }
}
