use leptos::prelude::*;

use crate::components::ViewToggles;
use crate::connection::{ConnStatus, Connection};
use crate::look::Look;

/// Title, connection status (`#status[data-state]`) and what we are talking to.
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
            Some(s) => format!("{} · Redis {}", s.target, s.redis_version),
            None => "no server yet".to_string(),
        })
    };
    view! {
        <header class="top">
            <div class="brand">
                <h1>"pipescope"</h1>
                <p class="tagline">"Redis pipelining, measured live"</p>
            </div>
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
