use leptos::prelude::*;

use super::figures::ObservedFigures;
use crate::components::shown::Shown;
use crate::components::timeline::canvas::Timeline;
use crate::components::timeline::drawn_note::DrawnNote;
use crate::components::timeline::playback_controls::PlaybackControls;
use crate::connection::Connection;
use crate::look::Look;
use crate::playback::Playback;

/// The chosen connections: their requests on the runs' timeline (lanes: client ⇄ proxy and
/// proxy ⇄ Redis) with its playback, then each one's time taken apart and its pipelined
/// equivalent. A chosen connection's timeline is asked for again when it ends, so the
/// picture holds all it did.
#[component]
pub fn ObservedDetail(conn: Connection, chosen: RwSignal<Vec<u64>>, look: Look) -> impl IntoView {
    let traces = Memo::new(move |_| {
        let ids = chosen.get();
        conn.observe.with(|o| o.traces(&ids))
    });
    let first = Memo::new(move |_| chosen.with(|c| c.first().copied()));
    // Observed timelines arrive whole: nothing streams, so playback settles at once.
    let playback = Playback::of(traces, first, Signal::derive(|| false));
    crate::erased::effect_with_previous(move |prev: Option<Vec<(u64, bool)>>| {
        let ids = chosen.get();
        let now: Vec<(u64, bool)> = conn.observe.with(|o| {
            ids.iter()
                .filter_map(|id| o.connections.get(id).map(|c| (*id, c.open)))
                .collect()
        });
        for (id, open) in &now {
            let was_open = prev
                .as_ref()
                .is_some_and(|p| p.iter().any(|(i, o)| i == id && *o));
            if was_open && !open {
                conn.want_timeline(*id);
            }
        }
        now
    });
    let capture = Memo::new(move |_| conn.observe.with(|o| o.from_capture()));
    let refresh =
        move |_| chosen.with_untracked(|ids| ids.iter().for_each(|id| conn.want_timeline(*id)));
    view! {
        <Shown when=move || !chosen.with(Vec::is_empty)>
            <section class="card teaching observed-detail" aria-label="Chosen connections">
                <div class="teaching-head">
                    <h2>"The chosen connections' requests at measured times"</h2>
                    <DrawnNote playback=playback />
                    <Shown when=move || !capture.get()>
                        <button id="timeline-refresh" class="small" on:click=crate::erased::handler(refresh)>
                            "Update the picture"
                        </button>
                    </Shown>
                </div>
                <Shown
                    when=move || !traces.with(Vec::is_empty)
                    fallback=move || {
                        let note = if capture.get() {
                            "A capture keeps the requests of its latest 32 connections only: these have none to draw."
                        } else {
                            "Asking the server for the requests…"
                        };
                        view! { <p class="note">{note}</p> }
                    }
                >
                    <Timeline playback=playback look=look />
                    <PlaybackControls playback=playback />
                </Shown>
                <div class="observed-figures-list">
                    <For each=move || chosen.get() key=|id| *id let:id>
                        <ObservedFigures conn=conn id=id />
                    </For>
                </div>
            </section>
        </Shown>
    }
}
