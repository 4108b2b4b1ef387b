use leptos::prelude::*;

use super::connect_box::ConnectBox;
use crate::components::shown::Shown;
use crate::connection::Connection;

/// Start and stop observing (the presenter's page; a page without the token sees the state
/// change live and says it can only watch), and where to point the application.
#[component]
pub fn ObserveControls(conn: Connection) -> impl IntoView {
    let observing = Memo::new(move |_| conn.observe.with(|o| o.observing()));
    let may = move || conn.is_open() && conn.can_control();
    // A replay has no Redis: that, not a token, is why nothing can be observed there.
    let replay = move || conn.server.with(|s| s.as_ref().is_some_and(|s| s.replay));
    let watch_only = move || {
        conn.server
            .with(|s| s.as_ref().is_some_and(|s| !s.can_control && !s.replay))
    };
    // Observation crosses the network the server was started with (`--delay-us` …).
    let network = move || {
        conn.server
            .with(|s| s.as_ref().map(|s| s.network).unwrap_or_default())
    };
    // Asked before starting: the probe holds a few replies back (see `observe --probe`).
    let probe = RwSignal::new(false);
    let probing = move || {
        conn.observe
            .with(|o| o.status.as_ref().is_some_and(|s| s.probe))
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
                    {move || match (observing.get(), conn.observe.with(|o| o.from_capture())) {
                        (true, false) => "observing",
                        (true, true) => "observing (a capture is shown)",
                        (false, _) => "not observing",
                    }}
                </span>
                <div class="buttons">
                    <button
                        id="observe-start"
                        class="primary"
                        disabled=move || !may() || observing.get()
                        on:click=crate::erased::handler(move |_| conn.start_observing(network(), probe.get_untracked()))
                    >
                        "Start observing"
                    </button>
                    <button
                        id="observe-stop"
                        disabled=move || !may() || !observing.get()
                        on:click=crate::erased::handler(move |_| conn.stop_observing())
                    >
                        "Stop"
                    </button>
                </div>
            </div>
            <p class="explain">
                "pipescope's observing proxy sits between your application and Redis, forwards every byte unchanged, and times each command and reply as they pass: whether your client pipelines is then a measurement, not a guess."
            </p>
            <label class="observe-probe">
                <input
                    id="observe-probe"
                    type="checkbox"
                    prop:checked=move || if observing.get() { probing() } else { probe.get() }
                    disabled=move || !may() || observing.get()
                    on:change=crate::erased::handler(move |ev| probe.set(event_target_checked(&ev)))
                />
                " Probe: hold a few replies back (at most 20 a connection; beyond the first 3, within 1 % of its time) to see whether the client waits for them. Decides what timing alone cannot when every reply is back before the next command."
            </label>
            <Shown when=probing>
                <p id="observe-probing" class="note" role="note">
                    "Probing: a few replies per connection are held back; each connection's figures say what was held and what the client did."
                </p>
            </Shown>
            <ConnectBox conn=conn />
            {move || stopped().map(|s| view! { <p class="note">{s}</p> })}
            <Shown when=replay>
                <p id="observe-replay" class="watch-only" role="note">
                    "This page replays a recording: there is no Redis behind it, so no application can be observed through it. Open a capture below, or start pipescope without replay (or pipescope observe) to observe one."
                </p>
            </Shown>
            <Shown when=watch_only>
                <p id="observe-watch-only" class="watch-only" role="note">
                    "This page can only watch: starting or stopping observation needs the presenter's link (with its token), printed when pipescope started."
                </p>
            </Shown>
        </section>
    }
}
