//! The page: Trunk's `dist/`, embedded in release builds (one self-contained binary for
//! presenters) and read from disk in debug builds (so a rebuilt page needs no backend rebuild).

use axum::http::{StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use rust_embed::Embed;

#[derive(Embed)]
#[folder = "../dist/"]
#[allow_missing = true]
struct Dist;

const NOT_BUILT: &str = "<!doctype html><title>pipescope</title><h1>The page is not built</h1>\
<p>Run <code>./scripts/run</code> (it builds the page with Trunk), or <code>trunk build --release</code> \
and restart pipescope.</p>";

/// A file of the built page by its name in `dist/` (`index.html`, `style-<hash>.css`, …), or
/// `None` when the page is not built or has no such file.
pub fn dist_file(name: &str) -> Option<std::borrow::Cow<'static, [u8]>> {
    Dist::get(name).map(|f| f.data)
}

pub async fn serve(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if let Some(file) = (!path.is_empty()).then(|| Dist::get(path)).flatten() {
        let mime = file.metadata.mimetype().to_string();
        // Trunk puts a content hash in asset names, so they can be cached for good.
        return (
            [
                (header::CONTENT_TYPE, mime),
                (
                    header::CACHE_CONTROL,
                    "public, max-age=31536000, immutable".into(),
                ),
            ],
            file.data,
        )
            .into_response();
    }
    if path.contains('.') {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    // Any other path is a page route (e.g. /tour): the app decides what to show.
    index().await
}

/// The page's `index.html`, never cached (its asset names change with every build). Its asset
/// URLs are absolute (`/…`), so it works from any path, e.g. `/tour/3`.
pub async fn index() -> Response {
    match Dist::get("index.html") {
        Some(index) => ([(header::CACHE_CONTROL, "no-cache")], Html(index.data)).into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, Html(NOT_BUILT)).into_response(),
    }
}
