use leptos::prelude::*;

use crate::components::{
    Charts, ClusterExplainer, Controls, ErrorBanner, ExportBar, Header, RecordingBar, ReplayBanner,
    Results, RttDiagram, RunProgress, SpeedupHeadline, SweepChart, TeachingView,
};
use crate::connection::Connection;
use crate::look::{Look, Theme};
use crate::playback::Playback;
use crate::url_state::UrlState;

/// The page. All state lives in signals created here at the top: the `Connection`'s (fed by the
/// websocket), the teaching view's `Playback` (derived from them, advanced by the timeline's
/// animation loop) and the `Look` (presenter mode and theme). Components below only read them.
#[component]
pub fn App() -> impl IntoView {
    let conn = Connection::new().feed();
    let url = UrlState::parse(&window().location().search().unwrap_or_default());
    // `/tour` and `/tour/<step>`: the guided tour (the backend serves this page there too).
    // A one-file page's path is the file's: its view is named after `#` instead
    // (`#tour/handout`). What it cannot do (run, reach a server) its own stylesheet hides.
    let location = window().location();
    let path = match conn.file {
        true => format!(
            "/{}",
            location.hash().unwrap_or_default().get(1..).unwrap_or("")
        ),
        false => location.pathname().unwrap_or_default(),
    };
    // `/observe`: an application's own connections (observe mode).
    if path == "/observe" {
        return view! { <crate::components::ObservePage conn=conn url=url /> }.into_any();
    }
    if let Some(page) = crate::tour::page_from_path(&path) {
        return view! { <crate::components::TourPage conn=conn url=url page=page /> }.into_any();
    }
    view! { <Page conn=conn url=url /> }.into_any()
}

/// The main page's layout for a given connection (`App` picks it or the tour by path).
#[component]
pub fn Page(conn: Connection, #[prop(optional)] url: UrlState) -> impl IntoView {
    let look = Look::new(
        url.presenter,
        Theme::from_value(url.theme.as_deref().unwrap_or("light")),
    );
    let playback = Playback::new(conn);
    crate::keyboard::install(playback, look);
    let footer = move || {
        conn.server.with(|s| match s {
            Some(s) => format!(
                "pipescope {} · protocol {} · Redis {} at {}",
                s.server_version, s.protocol, s.redis_version, s.target
            ),
            None => "pipescope · waiting for the server".to_string(),
        })
    };
    view! {
        <Header conn=conn look=look />
        <main>
            // What the room watches; in presenter mode exactly one screen high.
            <div class="screen">
                <ErrorBanner conn=conn />
                <ReplayBanner conn=conn />
                <Controls conn=conn look=look url=url />
                <div class="stage">
                    <SpeedupHeadline conn=conn />
                    <RunProgress conn=conn />
                </div>
                <TeachingView conn=conn playback=playback look=look />
            </div>
            <div class="explain-grid">
                <RttDiagram playback=playback />
                <Charts conn=conn />
            </div>
            <ClusterExplainer conn=conn />
            <SweepChart conn=conn />
            <Results conn=conn />
            <ExportBar conn=conn />
            <RecordingBar conn=conn />
        </main>
        <footer class="bottom">{footer}</footer>
    }
}
