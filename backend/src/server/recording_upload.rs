//! `POST /recording?file=NAME`: a recording file a page opened, read here instead of in the
//! page. The page sends the file's bytes as they are; this reads them with
//! `Recording::from_json` (the reader `pipescope replay` uses) and answers with the `ServerMsg`
//! the page applies: `RecordingRead` with the runs, or `Rejected` saying what is wrong with the
//! file. Reading recordings in the page would add a second JSON reader for every run type to
//! its WASM, which has a size budget; the server has one already.

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use shared::{Recording, ServerMsg};

/// Larger than any recording pipescope writes (timelines are bounded); refused unread.
pub const MAX_RECORDING_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, serde::Deserialize)]
pub struct Params {
    /// The file's name as the page's user picked it, for the messages.
    file: Option<String>,
}

/// The route, with its body limit.
pub fn route<S: Clone + Send + Sync + 'static>() -> MethodRouter<S> {
    post(read).layer(DefaultBodyLimit::max(MAX_RECORDING_BYTES))
}

async fn read(Query(params): Query<Params>, body: Bytes) -> Response {
    let file = params.file.unwrap_or_else(|| "the file".to_string());
    let (status, msg) = match decode(&file, &body) {
        Ok(recording) => (
            StatusCode::OK,
            ServerMsg::RecordingRead {
                info: recording.info(&file),
                runs: recording.runs,
            },
        ),
        Err(reason) => {
            tracing::info!(file, reason, "refused a recording a page opened");
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                ServerMsg::Rejected { reason },
            )
        }
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        msg.to_json(),
    )
        .into_response()
}

/// The recording in `body`, or the sentence the page shows.
fn decode(file: &str, body: &[u8]) -> Result<Recording, String> {
    let text = std::str::from_utf8(body).map_err(|e| {
        format!("Could not open {file}: not a pipescope recording: the file is not UTF-8 text ({e}). The page still shows what it showed before.")
    })?;
    Recording::from_json(text).map_err(|e| {
        format!("Could not open {file}: {e}. The page still shows what it showed before.")
    })
}
