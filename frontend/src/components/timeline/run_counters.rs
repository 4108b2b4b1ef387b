use leptos::prelude::*;
use shared::Mode;

use crate::format;
use crate::playback::Playback;
use crate::trace::{self, Counters, Trace, Trip};

/// One run's counters at the playback position, with what they count: the engine's while live
/// and at the end of a finished run, else the drawn requests' (exact) and beyond them the
/// sample's (said so, with how close), beside the engine's count for the whole run once it
/// finished.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    run: u64,
    kind: &'static str,
    /// The run's mode as the results table names it ("pipelined (batch 20)").
    name: String,
    counters: Counters,
    /// What a round trip is for this run's mode, for one and for several (`None`: the mode
    /// is unknown, nothing said).
    trips_label: Option<(&'static str, &'static str)>,
    /// Where the counts come from, when not simply the drawn requests.
    partial: Option<String>,
}

fn row(t: &Trace, trips: Option<&Vec<Trip>>, extent_us: f64, position_us: f64, live: bool) -> Row {
    let trips_label = t.mode.map(|mode| match mode {
        Mode::Multiplexed { .. } => (
            " read that brought replies (this mode's round trips)",
            " reads that brought replies (this mode's round trips)",
        ),
        _ => (" round trip paid", " round trips paid"),
    });
    let drawn = t.spans.len() as u64;
    let row = |counters, partial| Row {
        run: t.run,
        kind: t.kind(),
        name: t.mode.map_or_else(|| t.kind().to_string(), |m| m.label()),
        counters,
        trips_label,
        partial,
    };
    let drawn_counters = trace::run_counters(t, trips.map(Vec::as_slice), position_us);
    // At the end of a finished run, the engine's own count for the whole run (what the results
    // table says), however much of it was drawn.
    if let Some(s) = &t.summary
        && position_us >= extent_us
    {
        let counters = Counters {
            sent: s.done as usize,
            received: s.done as usize,
            round_trips: t.mode.map(|_| s.round_trips as usize),
            within: None,
        };
        let said = (drawn < t.count).then(|| "the engine's count for the whole run".to_string());
        return row(counters, said);
    }
    // Following a run under way: the engine's count so far (the progress bar's).
    if live
        && let Some((done, _)) = t.running
        && done > drawn
    {
        let received = done as usize;
        let counters = Counters {
            sent: drawn_counters.sent.max(received),
            received,
            round_trips: t.mode.map(|mode| {
                (received as f64 * trace::trips_per_reply(mode, &drawn_counters)).round() as usize
            }),
            within: None,
        };
        return row(counters, Some("the engine's count so far".to_string()));
    }
    // Scrubbed before the end of a finished run: the counts by the playhead, beside the
    // engine's for the whole run (what the results table says).
    let whole = t.summary.as_ref().map(|s| {
        let trips = match (t.mode, trips_label) {
            (Some(_), Some((one, many))) => format!(
                ", {}{}",
                format::group(s.round_trips),
                if s.round_trips == 1 { one } else { many }
            ),
            _ => String::new(),
        };
        format!(
            "the whole run: {} sent{trips} (the engine's count)",
            format::group(s.done)
        )
    });
    let said = match drawn_counters.within {
        Some(stride) => Some(format!(
            "the first {} counted one by one, the rest from every {} request (fewer than {} short)",
            format::group(drawn),
            trace::ordinal(stride),
            format::group(stride)
        )),
        None if drawn < t.count && t.sampled_beyond().is_empty() => Some(format!(
            "counting the first {} of {} requests",
            format::group(drawn),
            format::group(t.count)
        )),
        None => None,
    };
    let said = match (said, whole) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    row(drawn_counters, said)
}

/// Per run, what had happened by the playback position: requests sent, replies received, round
/// trips paid (as the mode paid them). They tick with playback, so the room can count along.
#[component]
pub fn RunCounters(playback: Playback) -> impl IntoView {
    // Each run's end, once per change of the runs: not on every tick of playback.
    let extents = Memo::new(move |_| {
        playback
            .traces
            .with(|traces| traces.iter().map(Trace::extent_us).collect::<Vec<f64>>())
    });
    let rows = Memo::new(move |_| {
        let pos = playback.position_us.get();
        let live = playback.live.get();
        playback.traces.with(|traces| {
            playback.trips.with(|trips| {
                extents.with(|extents| {
                    traces
                        .iter()
                        .zip(trips)
                        .zip(extents)
                        .map(|((t, trips), &end)| row(t, trips.as_ref(), end, pos, live))
                        .collect::<Vec<Row>>()
                })
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
                    // Read from the sample: about, not exactly.
                    let about = move || if c().within.is_some() { "≈" } else { "" };
                    let trips = move || {
                        r.with(|r| {
                            let r = r.as_ref()?;
                            let n = r.counters.round_trips?;
                            let label = r.trips_label.map(|(one, many)| if n == 1 { one } else { many });
                            let about = if r.counters.within.is_some() { "≈" } else { "" };
                            Some(view! {
                                <span class="counter rt">
                                    <b class="round-trips">{about}{format::group(n as u64)}</b>
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
                            <span class="counter-name">{move || r.with(|r| r.as_ref().map(|r| r.name.clone()))}</span>
                            <span class="counter">
                                <b class="sent">{about}{move || format::group(c().sent as u64)}</b>
                                " sent"
                            </span>
                            <span class="counter">
                                <b class="received">{about}{move || format::group(c().received as u64)}</b>
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;
    use shared::{Latency, RunSpec, RunSummary, Span};

    /// A sequential run of 100 SETs of which the first 10 are drawn.
    fn long_run(summary: Option<RunSummary>, running: Option<(u64, u64)>) -> Trace {
        Trace {
            run: 1,
            mode: Some(Mode::Sequential),
            network: None,
            spans: (0..10)
                .map(|i| Span::new(i, i as f64 * 10.0, i as f64 * 10.0 + 5.0))
                .collect(),
            sampled: vec![],
            stride: 1,
            count: 100,
            summary,
            observed: None,
            captured: false,
            running,
        }
    }

    #[test]
    fn the_end_of_a_finished_run_counts_what_the_engine_counted() {
        let summary = RunSummary {
            spec: RunSpec::set(100, Mode::Sequential),
            done: 100,
            wall_us: 1_000,
            ops_per_sec: 100_000.0,
            round_trips: 100,
            writes: 100,
            wire_commands: 100,
            latency: Latency::default(),
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        };
        let t = long_run(Some(summary), None);
        let trips = trace::round_trips(&t);
        let end = row(&t, trips.as_ref(), t.extent_us(), t.extent_us(), false);
        assert_eq!(
            (
                end.counters.sent,
                end.counters.received,
                end.counters.round_trips
            ),
            (100, 100, Some(100))
        );
        // Before the end, the drawn requests', said so.
        let mid = row(&t, trips.as_ref(), t.extent_us(), 42.0, false);
        assert_eq!(mid.counters.sent, 5);
        let said = mid.partial.unwrap();
        assert!(said.starts_with("counting the first 10 of 100"), "{said}");
        // And the whole run's, as the engine counted it, at any position.
        assert!(
            said.ends_with("; the whole run: 100 sent, 100 round trips paid (the engine's count)"),
            "{said}"
        );
    }

    #[test]
    fn a_run_under_way_says_the_engines_count_beside_the_drawn_ones() {
        let t = long_run(None, Some((60, 900)));
        let trips = trace::round_trips(&t);
        let r = row(&t, trips.as_ref(), t.extent_us(), 95.0, true);
        assert_eq!(r.partial.as_deref(), Some("the engine's count so far"));
        assert_eq!(
            (r.counters.sent, r.counters.received, r.counters.round_trips),
            (60, 60, Some(60))
        );
        // Scrubbed back, no longer live: the drawn requests', and what they are.
        let back = row(&t, trips.as_ref(), t.extent_us(), 95.0, false);
        assert_eq!(back.counters.received, 10);
        assert_eq!(
            back.partial.as_deref(),
            Some("counting the first 10 of 100 requests")
        );
    }
}
