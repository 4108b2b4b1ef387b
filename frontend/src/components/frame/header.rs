use leptos::prelude::*;

use super::view_toggles::ViewToggles;
use crate::connection::{ConnStatus, Connection};
use crate::look::Look;

/// Title, the two views (Runs | Observe), connection status (`#status[data-state]`) and what
/// we are talking to.
#[component]
pub fn Header(conn: Connection, look: Look) -> impl IntoView {
    let status_text = move || match conn.status.get() {
        ConnStatus::Connecting => "connecting…".to_string(),
        ConnStatus::Open => "connected".to_string(),
        ConnStatus::Closed => match conn.retry_in.get() {
            Some(secs) => format!("disconnected · retry in {secs} s"),
            None => "disconnected".to_string(),
        },
    };
    let target = move || {
        conn.server.with(|s| match s {
            // A replay server has no Redis: these are the recording's.
            Some(s) if s.replay => format!("recorded at {} · Redis {}", s.target, s.redis_version),
            Some(s) => format!("{} · Redis {}", s.target, s.redis_version),
            None => "no server yet".to_string(),
        })
    };
    // The query (a presenter's token, the look) goes along to the other view.
    let search = window().location().search().unwrap_or_default();
    let observing_view = window().location().pathname().unwrap_or_default() == "/observe";
    let current = |here: bool| if here { "page" } else { "false" };
    view! {
        <header class="top">
            <div class="brand">
                <h1>"pipescope"</h1>
                <p class="tagline">"Redis pipelining, measured live"</p>
            </div>
            <nav class="views" aria-label="Views">
                <a id="nav-runs" href=format!("/{search}") aria-current=current(!observing_view)>
                    "Runs"
                </a>
                <span class="sep" aria-hidden="true">"|"</span>
                <a
                    id="nav-observe"
                    href=format!("/observe{search}")
                    aria-current=current(observing_view)
                >
                    "Observe"
                </a>
            </nav>
            <div class="where">
                <span
                    id="status"
                    class="status"
                    data-state=move || conn.status.get().as_str()
                    role="status"
                >
                    <span class="dot" aria-hidden="true"></span>
                    {status_text}
                </span>
                <span class="target" id="target" title="Redis target (password removed)">
                    {target}
                </span>
                <ViewToggles look=look />
            </div>
        </header>
    }
}
