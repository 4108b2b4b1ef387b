//! `POST /html?file=NAME`: the page's "Download as one HTML file". The page sends the
//! recording it would save (its "Save session" file); the answer is that recording as one
//! HTML file (`text/html`), or a sentence saying why not (`text/plain`). The server writes it
//! because it has the page's parts and a gzip encoder; the page's WASM has neither.

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use shared::Recording;

use super::Page;
use crate::recording_upload::MAX_RECORDING_BYTES;

#[derive(Debug, serde::Deserialize)]
pub struct Params {
    /// The HTML file's name, as the page will save it: the file says it is this file.
    file: Option<String>,
}

/// The route, with its body limit.
pub fn route<S: Clone + Send + Sync + 'static>() -> MethodRouter<S> {
    post(write).layer(DefaultBodyLimit::max(MAX_RECORDING_BYTES))
}

async fn write(Query(params): Query<Params>, body: Bytes) -> Response {
    let file = params.file.unwrap_or_else(|| "pipescope.html".to_string());
    let made = std::str::from_utf8(&body)
        .map_err(|e| format!("the page sent a recording that is not UTF-8 text ({e})"))
        .and_then(|text| Recording::from_json(text).map_err(|e| e.to_string()))
        .and_then(|recording| {
            let page = Page::built().map_err(|e| e.to_string())?;
            Ok(super::of_recording(&page, recording, &file))
        });
    match made {
        Ok(html) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response(),
        Err(reason) => {
            tracing::info!(file, reason, "refused to write a page as one file");
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                format!("Could not make {file}: {reason}."),
            )
                .into_response()
        }
    }
}
