//! The page's "Download as one HTML file". `POST /html`: the page's form sends the recording
//! it would save (its "Save session" file) as the field `recording`; the answer is that
//! recording as one HTML file. `POST /observe.html`: the observe view's form asks for the
//! latest observation through the proxy, as `observe --html` writes it, its client addresses
//! and names replaced by numbers when the field `redact` is sent (`observe --redact`).
//! `POST /capture.html`: the capture the observe view shows, sent back as the field `capture`
//! (the server's own answer to `POST /capture`: it keeps none), as `observe --pcap --html`
//! writes it, worded again here, after `redact` when sent. Each
//! answers with a download (`Content-Disposition: attachment`), so the page stays where it
//! is; what cannot be made is answered with a sentence saying why. The server writes the file
//! because it has the page's parts, a gzip encoder and the observation; the page's WASM has
//! none of them.

use axum::Form;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use shared::{Recording, ServerMsg};

use super::hub::Hub;
use super::recording_upload::MAX_RECORDING_BYTES;
use crate::html_file::Page;

#[derive(Debug, serde::Deserialize)]
pub struct Fields {
    /// The recording, as "Save session" writes it.
    recording: String,
}

/// The route, with its body limit (a form's recording is percent-encoded: up to 3× as long).
pub fn route<S: Clone + Send + Sync + 'static>() -> MethodRouter<S> {
    post(write).layer(DefaultBodyLimit::max(3 * MAX_RECORDING_BYTES))
}

async fn write(Form(fields): Form<Fields>) -> Response {
    answer(made(&fields.recording))
}

#[derive(Debug, serde::Deserialize)]
pub struct ObservedFields {
    /// Present (a ticked checkbox): client addresses and names replaced by numbers.
    #[serde(default)]
    redact: Option<String>,
}

/// `POST /observe.html`: the latest observation through the proxy as one HTML file.
pub async fn observed(State(hub): State<Hub>, Form(fields): Form<ObservedFields>) -> Response {
    let made = tokio::task::spawn_blocking(move || {
        let mut observed = hub.observation().map_err(|e| e.to_string())?;
        if fields.redact.is_some() {
            crate::redact::redact(&mut observed.conns, &mut []);
        }
        let page = Page::built().map_err(|e| e.to_string())?;
        let file = "pipescope-observed.html".to_string();
        let html = crate::html_file::of_proxy(&page, observed, &file);
        Ok((file, html))
    })
    .await
    .unwrap_or_else(|e| Err(format!("writing it failed: {e}")));
    answer(made)
}

#[derive(Debug, serde::Deserialize)]
pub struct CapturedFields {
    /// The capture as read (`ServerMsg::CaptureRead`'s JSON).
    capture: String,
    #[serde(default)]
    redact: Option<String>,
}

/// The route of `POST /capture.html`, with its body limit (percent-encoded: up to 3×).
pub fn capture_route<S: Clone + Send + Sync + 'static>() -> MethodRouter<S> {
    post(captured).layer(DefaultBodyLimit::max(3 * MAX_RECORDING_BYTES))
}

/// `POST /capture.html`: the capture the page shows as one HTML file.
async fn captured(Form(fields): Form<CapturedFields>) -> Response {
    let made =
        tokio::task::spawn_blocking(move || capture_file(&fields.capture, fields.redact.is_some()))
            .await
            .unwrap_or_else(|e| Err(format!("writing it failed: {e}")));
    answer(made)
}

/// The file's name and text for the capture `json`, its connections worded again (after
/// their client addresses and names are replaced by numbers, if `redact`), so that no
/// sentence in it carries what was replaced.
fn capture_file(json: &str, redact: bool) -> Result<(String, String), String> {
    let Ok(ServerMsg::CaptureRead {
        label,
        mut notes,
        mut connections,
        timelines,
    }) = ServerMsg::from_json(json)
    else {
        return Err("what the page sent is not a capture pipescope read".into());
    };
    if redact {
        crate::redact::redact(&mut connections, &mut notes);
    }
    let read = ServerMsg::CaptureRead {
        label,
        notes,
        connections: connections.into_iter().map(|c| c.with_words()).collect(),
        timelines,
    };
    let page = Page::built().map_err(|e| e.to_string())?;
    let file = "pipescope-capture.html".to_string();
    let html = crate::html_file::of_capture(&page, &read, &file);
    Ok((file, html))
}

/// The file as a download, or the sentence saying why there is none.
fn answer(made: Result<(String, String), String>) -> Response {
    match made {
        Ok((file, html)) => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{file}\""),
                ),
            ],
            html,
        )
            .into_response(),
        Err(reason) => {
            tracing::info!(reason, "refused to write a page as one file");
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                format!("Could not make the page one HTML file: {reason}. Go back to the page: it still shows what it showed."),
            )
                .into_response()
        }
    }
}

/// The file's name and text, for the recording `json`.
fn made(json: &str) -> Result<(String, String), String> {
    let recording = Recording::from_json(json).map_err(|e| e.to_string())?;
    let page = Page::built().map_err(|e| e.to_string())?;
    // The name "Save session" gives, as .html; only characters safe in a header's quotes.
    let file: String = format!("pipescope-{}.html", recording.saved_at)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let html = crate::html_file::of_recording(&page, recording, &file);
    Ok((file, html))
}

#[cfg(test)]
mod tests {
    use super::made;

    #[test]
    fn a_capture_file_refuses_anything_but_a_capture_read() {
        let e = super::capture_file("{\"hello\": 1}", false).unwrap_err();
        assert_eq!(e, "what the page sent is not a capture pipescope read");
    }

    #[test]
    fn a_recording_names_its_file_and_anything_else_is_refused_with_why() {
        let e = made("{\"hello\": 1}").unwrap_err();
        assert!(e.starts_with("not a pipescope recording"), "{e}");
    }
}
