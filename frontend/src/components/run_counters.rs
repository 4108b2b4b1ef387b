use leptos::prelude::*;

use crate::format;
use crate::playback::Playback;
use crate::trace::{self, Counters};

/// Per run, what had happened by the playback position: requests sent, replies received, round
/// trips paid. They tick with playback, so the room can count along.
#[component]
pub fn RunCounters(playback: Playback) -> impl IntoView {
    let rows = Memo::new(move |_| {
        let pos = playback.position_us.get();
        playback.traces.with(|traces| {
            playback.batches.with(|batches| {
                traces
                    .iter()
                    .zip(batches)
                    .map(|(t, b)| (t.run, t.kind(), trace::counters(&t.spans, b, pos)))
                    .collect::<Vec<(u64, &'static str, Counters)>>()
            })
        })
    });
    let keys = move || -> Vec<(u64, &'static str)> {
        rows.with(|rows| rows.iter().map(|(run, kind, _)| (*run, *kind)).collect())
    };
    view! {
        <div class="counters" aria-live="off">
            <For
                each=keys
                key=|row| *row
                children=move |(run, kind)| {
                    let c = Memo::new(move |_| {
                        rows.with(|rows| {
                            rows.iter().find(|r| r.0 == run).map(|r| r.2).unwrap_or_default()
                        })
                    });
                    view! {
                        <div class="counter-row" data-mode=kind data-run=run.to_string()>
                            <span class="counter-name">{kind}</span>
                            <span class="counter">
                                <b class="sent">{move || format::count(c.get().sent as u64)}</b>
                                " sent"
                            </span>
                            <span class="counter">
                                <b class="received">{move || format::count(c.get().received as u64)}</b>
                                " replies"
                            </span>
                            <span class="counter rt">
                                <b class="round-trips">{move || format::count(c.get().round_trips as u64)}</b>
                                " round trips paid"
                            </span>
                        </div>
                    }
                }
            />
        </div>
    }
}
