use leptos::prelude::*;

use crate::components::ConnectBox;
use crate::connection::Connection;

/// Start and stop observing (the presenter's page; a page without the token sees the state
/// change live and says it can only watch), and where to point the application.
#[component]
pub fn ObserveControls(conn: Connection) -> impl IntoView {
    let observing = Memo::new(move |_| conn.observe.with(|o| o.observing()));
    let may = move || conn.is_open() && conn.can_control();
    let watch_only = move || {
        conn.server
            .with(|s| s.as_ref().is_some_and(|s| !s.can_control))
    };
    // Observation crosses the network the server was started with (`--delay-us` …).
    let network = move || {
        conn.server
            .with(|s| s.as_ref().map(|s| s.network).unwrap_or_default())
    };
    let stopped = move || {
        conn.observe.with(|o| match (&o.status, &o.stopped) {
            (None, Some(reason)) => Some(format!("Observation stopped: {reason}.")),
            _ => None,
        })
    };
    view! {
        <section class="card observe-controls" aria-label="Observation">
            <div class="observe-head">
                <h2>"Observe your application's own connections"</h2>
                <span
                    id="observe-state"
                    class="observe-state"
                    data-state=move || if observing.get() { "on" } else { "off" }
                    role="status"
                >
                    {move || if observing.get() { "observing" } else { "not observing" }}
                </span>
                <div class="buttons">
                    <button
                        id="observe-start"
                        class="primary"
                        disabled=move || !may() || observing.get()
                        on:click=move |_| conn.start_observing(network())
                    >
                        "Start observing"
                    </button>
                    <button
                        id="observe-stop"
                        disabled=move || !may() || !observing.get()
                        on:click=move |_| conn.stop_observing()
                    >
                        "Stop"
                    </button>
                </div>
            </div>
            <p class="explain">
                "pipescope's observing proxy sits between your application and Redis, forwards every byte unchanged, and times each command and reply as they pass: whether your client pipelines is then a measurement, not a guess."
            </p>
            <ConnectBox conn=conn />
            {move || stopped().map(|s| view! { <p class="note">{s}</p> })}
            <Show when=watch_only>
                <p id="observe-watch-only" class="watch-only" role="note">
                    "This page can only watch: starting or stopping observation needs the presenter's link (with its token), printed when pipescope started."
                </p>
            </Show>
        </section>
    }
}
