//! What serves the page (`pipescope`, `serve`, `replay`): the HTTP routes, and serving until
//! told to stop.
//!
//! - `ws`: one page's websocket: the hub's events out, starts and cancels in.
//! - `hub`: one run at a time, its events broadcast to every page, a late page caught up; and
//!   observe mode started and stopped from the page (`hub::observing`).
//! - `capture_upload`, `recording_upload`: a capture or a recording a page opened, read for it.
//! - `replay`: the page served from a recording, no Redis at all.
//! - `lab`: a room's participants running their own experiments, queued on one lane.
//! - `html_download`: the page's runs, its observation or its capture as one HTML file
//!   (`POST /html`, `/observe.html`, `/capture.html`).

pub mod capture_upload;
pub mod html_download;
pub mod hub;
pub mod lab;
pub mod recording_upload;
pub mod replay;
pub mod ws;

use std::future::Future;

use axum::Router;
use axum::routing::get;
use tokio::net::TcpListener;

use crate::assets;
use hub::Hub;

pub fn router(hub: Hub) -> Router {
    page_routes()
        .route("/ws", get(ws::handler))
        // The latest observation as one HTML file (`html_download::observed`).
        .route(
            "/observe.html",
            axum::routing::post(html_download::observed),
        )
        .with_state(hub)
}

/// The page and its routes, whatever serves its websocket (the hub, or a replay).
pub fn page_routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        // The guided tour: the page itself, which opens the step named in its path.
        .route("/tour", get(assets::index))
        .route("/tour/", get(assets::index))
        .route("/tour/{step}", get(assets::index))
        // Observe mode: the same page, which shows its observe view there.
        .route("/observe", get(assets::index))
        // A recording the page opened, read for it (`recording_upload`).
        .route("/recording", recording_upload::route())
        // A capture the page opened on its observe view, read for it (`capture_upload`).
        .route("/capture", capture_upload::route())
        // The page's runs as one HTML file (`html_download`).
        .route("/html", html_download::route())
        // A capture the page shows, sent back, as one HTML file (`html_download`).
        .route("/capture.html", html_download::capture_route())
        .fallback(assets::serve)
}

/// Serves until `shutdown` completes, then stops observing, cancels any run and waits for
/// its cleanup.
pub async fn serve(
    listener: TcpListener,
    hub: Hub,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let routes = router(hub.clone());
    serve_routes(listener, hub, routes, shutdown).await
}

/// The same, with the lab's routes beside the page's (`serve --lab`).
pub async fn serve_lab(
    listener: TcpListener,
    hub: Hub,
    lab: lab::lane::LabServer,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let routes = router(hub.clone()).merge(lab::routes(lab));
    serve_routes(listener, hub, routes, shutdown).await
}

async fn serve_routes(
    listener: TcpListener,
    hub: Hub,
    routes: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let closing = hub.clone();
    let shutdown = async move {
        shutdown.await;
        // Websockets would hold the graceful shutdown open forever: close them with a reason.
        closing.close();
    };
    axum::serve(listener, routes)
        .with_graceful_shutdown(shutdown)
        .await?;
    // Closes the observing proxy (and the application connections through it).
    let _ = hub.stop_observing(Some("pipescope is shutting down".into()));
    if hub.cancel() {
        tracing::info!("waiting for the cancelled run to remove its keys");
        while hub.is_busy() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    Ok(())
}
