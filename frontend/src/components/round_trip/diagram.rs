use leptos::prelude::*;
use shared::{Mode, RunSummary, Wait};

use super::trip_figure::{parts_legend, trip_svg};
use crate::format;
use crate::playback::Playback;
use crate::rtt_model::{RttModel, TripBreakdown, WaitComparison};
use crate::timeaxis::duration;
use crate::trace::Trace;

/// The latest finished sequential and pipelined runs, and a sequential run that waited the
/// other way (slept against busy-polled) over the same network, for the hosts' comparison.
#[derive(Clone, PartialEq)]
struct Runs {
    seq: (u64, RunSummary),
    pipe: RunSummary,
    other_wait: Option<(u64, RunSummary)>,
}

fn busy(s: &RunSummary) -> bool {
    matches!(s.spec.wait, Wait::BusyPoll { .. })
}

/// From the drawn plan's runs; the other wait from `earlier`, the sequential runs this page has
/// seen finish (the comparison is two Compare clicks, one with busy-poll, and the drawn traces
/// hold only the current plan's runs).
fn latest_runs(traces: &[Trace], earlier: &[(u64, RunSummary)]) -> Option<Runs> {
    let finished = |is: fn(Mode) -> bool| {
        traces
            .iter()
            .rev()
            .filter(move |t| t.mode.is_some_and(is))
            .filter_map(|t| Some((t.run, t.summary.clone()?)))
    };
    let seq = finished(Mode::is_sequential).next()?;
    let pipe = finished(Mode::is_pipelined).next()?.1;
    let other_wait = earlier
        .iter()
        .rev()
        .find(|(_, s)| busy(s) != busy(&seq.1) && s.spec.network == seq.1.spec.network)
        .cloned();
    Some(Runs {
        seq,
        pipe,
        other_wait,
    })
}

/// Remembers every finished sequential run the page draws (summaries only: a few hundred bytes
/// each).
fn remember_sequential(playback: Playback) -> RwSignal<Vec<(u64, RunSummary)>> {
    let seen = RwSignal::new(Vec::<(u64, RunSummary)>::new());
    crate::erased::effect(move || {
        playback.traces.with(|traces| {
            for t in traces.iter().filter(|t| t.is_sequential()) {
                let Some(s) = &t.summary else { continue };
                if !seen.with_untracked(|v| v.iter().any(|(run, _)| *run == t.run)) {
                    seen.update(|v| v.push((t.run, s.clone())));
                }
            }
        })
    });
    seen
}

/// One round trip taken apart, each part labelled with its source, and the whole runs'
/// arithmetic beside the measurements. Drawn from the latest finished sequential and pipelined
/// runs.
#[component]
pub fn RttDiagram(playback: Playback) -> impl IntoView {
    let seen = remember_sequential(playback);
    let runs = Memo::new(move |_| {
        playback
            .traces
            .with(|t| seen.with(|earlier| latest_runs(t, earlier)))
    });
    move || {
        match runs.get() {
        None => view! {
            <section class="card rtt-card" aria-label="Round trip">
                <h2>"One round trip, taken apart"</h2>
                <p class="placeholder">
                    "Compare runs sequential and pipelined; this then breaks one round trip into its parts with the measured numbers."
                </p>
            </section>
        }
        .into_any(),
        Some(r) => diagram(r).into_any(),
    }
    }
}

fn diagram(r: Runs) -> impl IntoView {
    let trip = TripBreakdown::of(r.seq.0, &r.seq.1);
    let model = RttModel::new(&r.seq.1, &r.pipe);
    let comparison = r.other_wait.and_then(|(run, other)| {
        let this = (r.seq.0, &r.seq.1);
        let other = (run, &other);
        if trip.busy_poll {
            WaitComparison::of(other, this)
        } else {
            WaitComparison::of(this, other)
        }
    });
    view! {
        <section class="card rtt-card" aria-label="Round trip">
            <h2>"One round trip, taken apart"</h2>
            {trip_svg("rtt".into(), &trip)}
            {parts_legend("rtt-legend".into(), &trip)}
            {comparison.map(wait_note)}
            {arithmetic(model)}
        </section>
    }
}

/// How busy-polling changed the hosts' share of a loopback round trip.
fn wait_note(c: WaitComparison) -> impl IntoView {
    view! {
        <p class="note wait-comparison" data-sleep-host-us=c.sleep_host_us.to_string() data-busy-host-us=c.busy_host_us.to_string()>
            {if c.busy_host_us < c.sleep_host_us {
                format!(
                    "Busy-polling for replies, the hosts' part was {}; sleeping, {} (both derived the same way, over the same network): {} less with the client never asleep, so never woken.",
                    duration(c.busy_host_us),
                    duration(c.sleep_host_us),
                    duration(c.sleep_host_us - c.busy_host_us),
                )
            } else {
                format!(
                    "Busy-polling for replies, the hosts' part was {}; sleeping, {}: busy-polling did not shrink it here.",
                    duration(c.busy_host_us),
                    duration(c.sleep_host_us),
                )
            }}
        </p>
    }
}

/// The whole runs: sequential N × mean RTT against its wall time, with the tail named; the
/// pipelined run split into its round trips and a fitted per-command cost.
fn arithmetic(m: RttModel) -> impl IntoView {
    let ms = |us: f64| us / 1000.0;
    let value = |id: &'static str, us: f64| {
        view! { <b id=id data-value=ms(us).to_string()>{format::wall(us.round() as u64)}</b> }
    };
    view! {
        <table class="arithmetic">
            <thead>
                <tr>
                    <th scope="col">"Whole run"</th>
                    <th scope="col">"Model"</th>
                    <th scope="col">"Measured (engine)"</th>
                </tr>
            </thead>
            <tbody>
                <tr data-mode="sequential">
                    <th scope="row">
                        "sequential ≈ N × mean RTT"
                        <span class="formula">
                            {format!("{} × {}", format::group(m.n), duration(m.rtt_us))}
                        </span>
                        {tail_note(&m)}
                    </th>
                    <td>{value("rtt-predicted-seq-ms", m.predicted_seq_us)}</td>
                    <td>{value("rtt-measured-seq-ms", m.measured_seq_us)}</td>
                </tr>
                <tr data-mode="pipelined">
                    <th scope="row">
                        "pipelined = round trips × RTT + N × fitted cost"
                        <span class="formula">
                            {format!(
                                "{} × {} + {} × {}",
                                format::group(m.pipe_round_trips),
                                duration(m.rtt_us),
                                format::group(m.pipe_n),
                                duration(m.fitted_cost_us),
                            )}
                        </span>
                        {fit_note(&m)}
                    </th>
                    <td>{value("rtt-predicted-pipe-ms", m.predicted_pipe_us)}</td>
                    <td>{value("rtt-measured-pipe-ms", m.measured_pipe_us)}</td>
                </tr>
            </tbody>
        </table>
    }
}

/// Why N × p50 would fall short: the slowest round trips' share.
fn tail_note(m: &RttModel) -> impl IntoView + use<> {
    view! {
        <span class="formula tail" data-tail-share=m.tail_share.to_string()>
            {format!(
                "The mean, not the median ({}): N × median would say {}. The slowest 1 % of round trips took {:.0} % of the time (measured by the engine).",
                duration(m.p50_us),
                format::wall(m.p50_prediction_us().round() as u64),
                m.tail_share * 100.0,
            )}
        </span>
    }
}

/// What the fitted cost is, and the round trips' share it leaves.
fn fit_note(m: &RttModel) -> impl IntoView + use<> {
    let text = if m.fit_clamped() {
        format!(
            "Round trips at the sequential RTT alone ({}) exceed the measured time: this run's round trips were faster than the sequential run's, and no per-command cost is left to fit.",
            format::wall(m.pipe_rtt_time_us.round() as u64)
        )
    } else {
        format!(
            "Round trips: {} counted by the engine × the sequential mean RTT = {} ({:.0} % of the run). Per-command cost {} fitted, not measured: (wall − round trips × RTT) ÷ N, so the model adds up to the measurement by construction.",
            format::group(m.pipe_round_trips),
            format::wall(m.pipe_rtt_time_us.round() as u64),
            m.pipe_rtt_share * 100.0,
            duration(m.fitted_cost_us),
        )
    };
    view! {
        <span
            class="formula fit"
            id="rtt-fitted-cost"
            data-fitted-cost-us=m.fitted_cost_us.to_string()
            data-rtt-share=m.pipe_rtt_share.to_string()
        >
            {text}
        </span>
    }
}
