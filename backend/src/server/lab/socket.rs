//! `/lab/ws`: one page of the lab. It joins (or, with the presenter's token, acts as the
//! presenter) and asks; it is sent the room's frame on every change (the same bytes for every
//! page), its participant's own state when that changes, and the presenter's view if it is
//! the presenter's. At most a few frames a second per page: changes in between are merged,
//! as the watch channel keeps only the latest.
//!
//! A request that is malformed, too long or not allowed gets a `Refused` saying why, and the
//! connection stays.

use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use shared::lab::{LabClientMsg, LabServerMsg, LabYou};
use shared::validate_runs;

use super::LabRefusal;
use super::lane::LabServer;
use crate::server::ws::{cross_origin_refused, same_origin};

/// A lab request is a few hundred bytes; longer ones are refused in words.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024;
/// Beyond this the websocket layer itself closes the connection.
const MAX_FRAME_BYTES: usize = 256 * 1024;
/// The least time between two rounds of frames to one page.
const FRAME_GAP: Duration = Duration::from_millis(200);
/// A page's key: its own random id, kept across reloads.
const MAX_KEY_BYTES: usize = 64;

pub async fn handler(
    ws: WebSocketUpgrade,
    State(lab): State<LabServer>,
    headers: HeaderMap,
) -> Response {
    if !same_origin(&headers) {
        return cross_origin_refused();
    }
    ws.max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| serve(socket, lab))
}

/// What this page is to the lab.
#[derive(Default)]
struct Page {
    /// The key it joined with.
    key: Option<String>,
    presenter: bool,
    /// The participant's state last sent.
    you: Option<LabYou>,
}

async fn serve(socket: WebSocket, lab: LabServer) {
    let (mut sink, mut stream) = socket.split();
    let mut frames = lab.frames();
    let mut closing = lab.hub().closing();
    let mut page = Page::default();
    let room = frames.borrow_and_update().room.clone();
    if sink.send(Message::Text(room)).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if let Some(reply) = handle(&lab, &mut page, text.as_str())
                        && sink.send(text_frame(&reply)).await.is_err()
                    {
                        break;
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    let no = refused("the lab takes text frames of JSON only".into());
                    if sink.send(text_frame(&no)).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            changed = frames.changed() => {
                if changed.is_err() {
                    break;
                }
                let f = frames.borrow_and_update().clone();
                if send_frames(&lab, &mut page, &mut sink, f.room, f.presenter).await.is_err() {
                    break;
                }
                tokio::time::sleep(FRAME_GAP).await;
            }
            _ = closing.changed() => break,
        }
    }
    if let Some(key) = page.key {
        lab.gone(&key);
    }
}

/// The room's frame, the presenter's to the presenter, and the participant's own state if it
/// changed (or that they are out of the room).
async fn send_frames<S>(
    lab: &LabServer,
    page: &mut Page,
    sink: &mut S,
    room: Utf8Bytes,
    presenter: Utf8Bytes,
) -> Result<(), S::Error>
where
    S: futures_util::Sink<Message> + Unpin,
{
    sink.send(Message::Text(room)).await?;
    if page.presenter {
        sink.send(Message::Text(presenter)).await?;
    }
    let Some(key) = page.key.clone() else {
        return Ok(());
    };
    match lab.you(&key) {
        Some(you) if page.you.as_ref() != Some(&you) => {
            sink.send(text_frame(&LabServerMsg::You(Box::new(you.clone()))))
                .await?;
            page.you = Some(you);
        }
        Some(_) => {}
        None => {
            page.key = None;
            page.you = None;
            let reason = if lab.is_closed() {
                "the presenter closed the lab: you can still watch".to_string()
            } else {
                "you are no longer in the room (the presenter removed you, you were idle too long, or the join link changed): join again from the presenter's current link".to_string()
            };
            sink.send(text_frame(&LabServerMsg::Left { reason }))
                .await?;
        }
    }
    Ok(())
}

/// One request: the reply this page alone gets, if any (frames follow any change).
fn handle(lab: &LabServer, page: &mut Page, text: &str) -> Option<LabServerMsg> {
    if text.len() > MAX_REQUEST_BYTES {
        return Some(refused(format!(
            "a request of {} bytes is too long for the lab (at most {}): send the form as the page does",
            text.len(),
            MAX_REQUEST_BYTES
        )));
    }
    let msg: LabClientMsg = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => return Some(refused(format!("not a lab request ({e})"))),
    };
    let done = |r: Result<(), LabRefusal>| r.err().map(|e| refused(e.to_string()));
    match msg {
        LabClientMsg::Join { code, key } => {
            if key.is_empty() || key.len() > MAX_KEY_BYTES {
                return Some(refused(format!(
                    "a page's key is 1 to {MAX_KEY_BYTES} bytes: reload the join link"
                )));
            }
            done(lab.join(&code, &key).map(|_| {
                page.key = Some(key);
                page.you = None;
            }))
        }
        LabClientMsg::Rename { nickname } => {
            let key = page.key.as_deref()?;
            done(lab.rename(key, &nickname).map(|_| ()))
        }
        LabClientMsg::Run { spec } => {
            let Some(key) = page.key.as_deref() else {
                return Some(refused(LabRefusal::NotJoined.to_string()));
            };
            if let Err(e) = validate_runs(&[spec], &lab.hub().limits()) {
                return Some(refused(e.to_string()));
            }
            done(lab.request(key, spec).map(|_| ()))
        }
        LabClientMsg::Withdraw => {
            if let Some(key) = page.key.as_deref() {
                lab.withdraw(key);
            }
            None
        }
        LabClientMsg::Presenter { token, action } => {
            if !lab.is_presenter(&token) {
                tracing::warn!("refused a presenter action without the presenter's token");
                return Some(refused(
                    "only the presenter's page can do that (it needs the presenter's link)".into(),
                ));
            }
            page.presenter = true;
            if let shared::lab::PresenterAction::Run { runs } = &action
                && let Err(e) = validate_runs(runs, &lab.hub().limits())
            {
                return Some(refused(e.to_string()));
            }
            done(lab.act(action))
        }
    }
}

fn refused(reason: String) -> LabServerMsg {
    LabServerMsg::Refused { reason }
}

fn text_frame(msg: &LabServerMsg) -> Message {
    Message::Text(msg.to_json().into())
}
