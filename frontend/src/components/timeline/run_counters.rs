use leptos::prelude::*;
use shared::Mode;

use crate::format;
use crate::playback::Playback;
use crate::trace::{self, Counters, Trace, Trip};

/// One run's counters at the playback position, with what they count.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    run: u64,
    kind: &'static str,
    counters: Counters,
    /// What a round trip is for this run's mode, for one and for several (`None`: the mode
    /// is unknown, nothing said).
    trips_label: Option<(&'static str, &'static str)>,
    /// Set when only the first requests are counted: "the first 5,000 of 20,000".
    partial: Option<String>,
}

fn row(t: &Trace, trips: Option<&Vec<Trip>>, position_us: f64) -> Row {
    let trips_label = t.mode.map(|mode| match mode {
        Mode::Multiplexed { .. } => (
            " read that brought replies (this mode's round trips)",
            " reads that brought replies (this mode's round trips)",
        ),
        _ => (" round trip paid", " round trips paid"),
    });
    let drawn = t.spans.len() as u64;
    Row {
        run: t.run,
        kind: t.kind(),
        counters: trace::counters(&t.spans, trips.map(Vec::as_slice), position_us),
        trips_label,
        partial: (drawn < t.count).then(|| {
            format!(
                "counting the first {} of {} requests",
                format::group(drawn),
                format::group(t.count)
            )
        }),
    }
}

/// Per run, what had happened by the playback position: requests sent, replies received, round
/// trips paid (as the mode paid them). They tick with playback, so the room can count along.
#[component]
pub fn RunCounters(playback: Playback) -> impl IntoView {
    let rows = Memo::new(move |_| {
        let pos = playback.position_us.get();
        playback.traces.with(|traces| {
            playback.trips.with(|trips| {
                traces
                    .iter()
                    .zip(trips)
                    .map(|(t, trips)| row(t, trips.as_ref(), pos))
                    .collect::<Vec<Row>>()
            })
        })
    });
    let keys = move || -> Vec<(u64, &'static str)> {
        rows.with(|rows| rows.iter().map(|r| (r.run, r.kind)).collect())
    };
    view! {
        <div class="counters" aria-live="off">
            <For
                each=keys
                key=|row| *row
                children=move |(run, kind)| {
                    let r = Memo::new(move |_| rows.with(|rows| rows.iter().find(|r| r.run == run).cloned()));
                    let c = move || r.with(|r| r.as_ref().map(|r| r.counters).unwrap_or_default());
                    let trips = move || {
                        r.with(|r| {
                            let r = r.as_ref()?;
                            let n = r.counters.round_trips?;
                            let label = r.trips_label.map(|(one, many)| if n == 1 { one } else { many });
                            Some(view! {
                                <span class="counter rt">
                                    <b class="round-trips">{format::group(n as u64)}</b>
                                    {label}
                                </span>
                            })
                        })
                    };
                    let partial = move || {
                        r.with(|r| r.as_ref().and_then(|r| r.partial.clone()))
                            .map(|text| view! { <span class="counter-note">{text}</span> })
                    };
                    view! {
                        <div class="counter-row" data-mode=kind data-run=run.to_string()>
                            <span class="counter-name">{kind}</span>
                            <span class="counter">
                                <b class="sent">{move || format::group(c().sent as u64)}</b>
                                " sent"
                            </span>
                            <span class="counter">
                                <b class="received">{move || format::group(c().received as u64)}</b>
                                {move || if c().received == 1 { " reply" } else { " replies" }}
                            </span>
                            {trips}
                            {partial}
                        </div>
                    }
                }
            />
        </div>
    }
}
