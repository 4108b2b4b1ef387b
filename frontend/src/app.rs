use leptos::prelude::*;

use crate::components::{Controls, ErrorBanner, Header, Results, RunProgress, SpeedupHeadline};
use crate::connection::Connection;

/// The page. All state lives in the `Connection`'s signals, created here at the top and fed
/// by the websocket; every component below only reads them.
#[component]
pub fn App() -> impl IntoView {
    let conn = Connection::new();
    conn.connect();
    view! { <Page conn=conn /> }
}

/// The page's layout for a given connection (separate from `App` so tests can render it
/// without opening a socket).
#[component]
pub fn Page(conn: Connection) -> impl IntoView {
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
        <Header conn=conn />
        <main>
            <ErrorBanner conn=conn />
            <Controls conn=conn />
            <SpeedupHeadline conn=conn />
            <RunProgress conn=conn />
            <Results conn=conn />
        </main>
        <footer class="bottom">{footer}</footer>
    }
}
