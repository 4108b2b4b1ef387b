use leptos::prelude::*;
use shared::{Mode, RunSummary, Wait};

use crate::format;
use crate::playback::Playback;
use crate::rtt_model::{RttModel, Trip, WaitComparison};
use crate::timeaxis::duration;
use crate::trace::Trace;

/// Width the SVG gives a part however small, so a 0.05 µs transmission stays legible.
const MIN_PART: f64 = 70.0;

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
    Effect::new(move |_| {
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
    let trip = Trip::of(r.seq.0, &r.seq.1);
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
            {trip_svg("rtt", &trip)}
            {parts_legend("rtt-legend", &trip)}
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

/// The short name a bar segment carries.
fn short(key: &str, half: bool) -> &'static str {
    match (key, half) {
        ("t1", _) => "t1 ½",
        ("host", _) => "host ½",
        ("t2", _) => "t2",
        ("redis", _) => "Redis",
        ("out", _) => "out",
        ("tap", _) => "proxy ⇄ Redis",
        ("back", _) => "back",
        _ => "",
    }
}

/// Left edges of the segments (and the last right edge): proportional, each at least `MIN_PART`.
fn edges(trip: &Trip, x0: f64, width: f64) -> Vec<f64> {
    let total: f64 = trip.segments.iter().map(|s| s.us).sum::<f64>().max(1e-9);
    let free = width - MIN_PART * trip.segments.len() as f64;
    let mut edges = vec![x0];
    for s in &trip.segments {
        edges.push(edges.last().unwrap() + MIN_PART + free * s.us / total);
    }
    edges
}

/// Where the request reaches Redis and the reply leaves it: around the segments at Redis, or
/// the middle of the bar when nothing at Redis is drawn.
fn at_redis(trip: &Trip, edges: &[f64]) -> (f64, f64) {
    let at: Vec<usize> = (0..trip.segments.len())
        .filter(|&k| trip.parts[trip.segments[k].part].tint == crate::rtt_model::Tint::Redis)
        .collect();
    match (at.first(), at.last()) {
        (Some(&a), Some(&b)) => (edges[a], edges[b + 1]),
        _ => {
            let mid = edges[trip.segments.len() / 2];
            (mid, mid)
        }
    }
}

/// The round trip drawn: client and Redis lanes, the request and reply arrows, and a bar of the
/// parts in time order, each with its value and its source (measured / derived / assumed).
pub fn trip_svg(id: &'static str, trip: &Trip) -> impl IntoView + use<> {
    let (x0, width) = (110.0, 860.0);
    let edges = edges(trip, x0, width);
    let end = *edges.last().unwrap();
    let (arrive, leave) = at_redis(trip, &edges);
    let (y_client, y_redis, bar_y) = (58.0, 168.0, 200.0);
    let head = format!("{id}-head");
    let marker = format!("url(#{head})");
    let segments = trip
        .segments
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let part = &trip.parts[s.part];
            let (a, b) = (edges[k], edges[k + 1]);
            view! {
                <g class=format!("part {}", part.tint.class()) data-part=part.key data-source=part.source.kind()>
                    <rect x=a y=bar_y width=b - a height="26" rx="4"></rect>
                    <text x=(a + b) / 2.0 y=bar_y + 18.0 text-anchor="middle" class="part-name">{short(part.key, s.half)}</text>
                    <text x=(a + b) / 2.0 y=bar_y + 46.0 text-anchor="middle" class="part-value">{duration(s.us)}</text>
                    <text x=(a + b) / 2.0 y=bar_y + 64.0 text-anchor="middle" class="part-source">{part.source.kind()}</text>
                </g>
            }
        })
        .collect_view();
    let us = |key: &str| trip.part(key).map_or(0.0, |p| p.us);
    // t2 and t3 as the seed's model names them: the dialled or measured legs, and Redis.
    let t2 = if trip.tapped {
        (us("out") + us("back")) / 2.0
    } else {
        us("t2")
    };
    let t3 = if trip.tapped { us("tap") } else { us("redis") };
    view! {
        <svg
            id=id
            class="trip-svg"
            viewBox="0 0 1000 280"
            role="img"
            aria-label="One round trip taken apart, each part labelled measured, derived or assumed"
            data-rtt-us=trip.rtt_us.to_string()
            data-p50-us=trip.p50_us.to_string()
            data-t1-us=us("t1").to_string()
            data-t2-us=t2.to_string()
            data-t3-us=t3.to_string()
            data-host-us=us("host").to_string()
            data-measured=trip.tapped.to_string()
        >
            <defs>
                <marker id=head viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                    <path d="M0,0 L10,5 L0,10 z" class="head"></path>
                </marker>
            </defs>
            <text x="100" y=y_client + 5.0 text-anchor="end" class="lane-name">"Client"</text>
            <text x="100" y=y_redis + 5.0 text-anchor="end" class="lane-name">"Redis"</text>
            <line x1=x0 x2=x0 + width y1=y_client y2=y_client class="lane"></line>
            <line x1=x0 x2=x0 + width y1=y_redis y2=y_redis class="lane"></line>
            <line x1=x0 y1=y_client x2=arrive y2=y_redis class="req" marker-end=marker.clone()></line>
            <rect x=arrive y=y_redis - 14.0 width=(leave - arrive).max(4.0) height="14" class="server"></rect>
            <line x1=leave y1=y_redis x2=end y2=y_client class="reply" marker-end=marker></line>
            <text x=(x0 + arrive) / 2.0 - 18.0 y=(y_client + y_redis) / 2.0 text-anchor="end" class="arrow-label">"SET →"</text>
            <text x=(leave + end) / 2.0 + 18.0 y=(y_client + y_redis) / 2.0 class="arrow-label">"← +OK"</text>
            <line x1=x0 x2=end y1="24" y2="24" class="bracket"></line>
            <text x=(x0 + end) / 2.0 y="18" text-anchor="middle" class="rtt-label">
                {rtt_label(trip)}
            </text>
            {segments}
        </svg>
    }
}

/// The RTT over the bar: the engine's mean, with the median beside it.
fn rtt_label(trip: &Trip) -> String {
    if trip.n == 1 {
        return format!(
            "RTT = {} (one request, measured by the engine)",
            duration(trip.rtt_us)
        );
    }
    format!(
        "RTT = {} (mean of {} requests, measured by the engine; median {})",
        duration(trip.rtt_us),
        format::count(trip.n),
        duration(trip.p50_us),
    )
}

/// Every part with its value, its source in words and what the time is.
pub fn parts_legend(id: &'static str, trip: &Trip) -> impl IntoView + use<> {
    let items = trip
        .parts
        .iter()
        .map(|p| {
            view! {
                <li class=p.tint.class() data-part=p.key data-source=p.source.kind()>
                    <b>{format!("{} {}", p.name, duration(p.us))}</b>
                    " — "
                    <span class="source">{p.source.describe()}</span>
                    {format!(". {}.", capitalised(&p.what))}
                </li>
            }
        })
        .collect_view();
    let note = if trip.tapped {
        "The legs are medians over the stamped requests, so they need not add up to the mean RTT. Bars are widened to stay readable; the numbers are the values."
    } else {
        "On loopback there is no wire, so no propagation: the time is the hosts'. Bars are widened to stay readable; the numbers are the values."
    };
    view! {
        <ul class="parts-legend" id=id>
            {items}
            <li class="note">{note}</li>
        </ul>
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
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
                            {format!("{} × {}", format::count(m.n), duration(m.rtt_us))}
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
                                format::count(m.pipe_round_trips),
                                duration(m.rtt_us),
                                format::count(m.pipe_n),
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
            format::count(m.pipe_round_trips),
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
