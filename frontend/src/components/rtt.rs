use leptos::prelude::*;

use crate::format;
use crate::playback::Playback;
use shared::RoundTripSplit;

use crate::rtt_model::{ASSUMED_BANDWIDTH_LABEL, RttModel};
use crate::timeaxis::duration;

/// Width the SVG gives a part however small, so a 0.05 µs transmission stays legible.
const MIN_PART: f64 = 70.0;

/// One round trip taken apart (t1 transmission, t2 propagation, t3 queuing + processing), and
/// the whole runs' arithmetic, predicted next to measured. Drawn from the latest finished
/// sequential and pipelined runs; each estimated part says how it was estimated.
#[component]
pub fn RttDiagram(playback: Playback) -> impl IntoView {
    let model = Memo::new(move |_| {
        playback.traces.with(|traces| {
            let last = |kind: &str| {
                traces
                    .iter()
                    .rev()
                    .find(|t| t.kind() == kind && t.summary.is_some())
            };
            let seq = last("sequential")?;
            let pipe = last("pipelined")?;
            Some(RttModel::new(
                seq.run,
                seq.summary.as_ref()?,
                pipe.summary.as_ref()?,
            ))
        })
    });

    move || {
        match model.get() {
        None => view! {
            <section class="card rtt-card" aria-label="Round trip">
                <h2>"One round trip, taken apart"</h2>
                <p class="placeholder">
                    "Compare runs sequential and pipelined; this then breaks one round trip into its parts with the measured numbers."
                </p>
            </section>
        }
        .into_any(),
        Some(m) => diagram(m).into_any(),
    }
    }
}

fn diagram(m: RttModel) -> impl IntoView {
    // Parts in time order, with their class and name. Measured (wire tap): out, at Redis, back.
    // Estimated: half the transmission each way, propagation each way, Redis between.
    let measured = m.split.is_some();
    let parts: Vec<(f64, &'static str, &'static str)> = match m.split {
        Some(sp) => vec![
            (sp.out_us, "t2", "out: t1 + t2"),
            (sp.server_us, "t3", "t3 at Redis"),
            (sp.back_us, "t2", "back: t1 + t2"),
        ],
        None => vec![
            (m.t1_us / 2.0, "t1", "t1 ½"),
            (m.t2_us, "t2", "t2"),
            (m.t3_us, "t3", "t3"),
            (m.t2_us, "t2", "t2"),
            (m.t1_us / 2.0, "t1", "t1 ½"),
        ],
    };
    let total: f64 = parts.iter().map(|p| p.0).sum::<f64>().max(1e-9);
    let (x0, width) = (110.0, 860.0);
    let free = width - MIN_PART * parts.len() as f64;
    let widths: Vec<f64> = parts
        .iter()
        .map(|p| MIN_PART + free * p.0 / total)
        .collect();
    let mut edges = vec![x0];
    for w in &widths {
        edges.push(edges.last().unwrap() + w);
    }
    let (y_client, y_redis) = (58.0, 168.0);
    let (arrive, leave, end) = if measured {
        (edges[1], edges[2], edges[3])
    } else {
        (edges[2], edges[3], edges[5])
    };
    let (t3_us, t1_us, t2_us) = match m.split {
        Some(sp) => (sp.server_us, 0.0, 0.0),
        None => (m.t3_us, m.t1_us, m.t2_us),
    };
    let bar_y = 200.0;

    let seg = |k: usize, class: &'static str, name: &'static str, value: f64| {
        let (a, b) = (edges[k], edges[k + 1]);
        view! {
            <g class=format!("part {class}")>
                <rect x=a y=bar_y width=b - a height="26" rx="4"></rect>
                <text x=(a + b) / 2.0 y=bar_y + 18.0 text-anchor="middle" class="part-name">{name}</text>
                <text x=(a + b) / 2.0 y=bar_y + 48.0 text-anchor="middle" class="part-value">{duration(value)}</text>
            </g>
        }
    };

    let ms = |us: f64| us / 1000.0;
    let value = |id: &'static str, us: f64| {
        view! { <b id=id data-value=ms(us).to_string()>{format::wall(us.round() as u64)}</b> }
    };

    view! {
        <section class="card rtt-card" aria-label="Round trip">
            <h2>"One round trip, taken apart"</h2>
            <svg
                id="rtt"
                viewBox="0 0 1000 260"
                role="img"
                aria-label="One round trip: transmission, propagation, queuing and processing"
                data-rtt-us=m.rtt_us.to_string()
                data-t1-us=t1_us.to_string()
                data-t2-us=t2_us.to_string()
                data-t3-us=t3_us.to_string()
                data-measured=measured.to_string()
            >
                <defs>
                    <marker id="rtt-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M0,0 L10,5 L0,10 z" class="head"></path>
                    </marker>
                </defs>
                <text x="100" y=y_client + 5.0 text-anchor="end" class="lane-name">"Client"</text>
                <text x="100" y=y_redis + 5.0 text-anchor="end" class="lane-name">"Redis"</text>
                <line x1=x0 x2=x0 + width y1=y_client y2=y_client class="lane"></line>
                <line x1=x0 x2=x0 + width y1=y_redis y2=y_redis class="lane"></line>
                <line x1=x0 y1=y_client x2=arrive y2=y_redis class="req" marker-end="url(#rtt-head)"></line>
                <rect x=arrive y=y_redis - 14.0 width=leave - arrive height="14" class="server"></rect>
                <line x1=leave y1=y_redis x2=end y2=y_client class="reply" marker-end="url(#rtt-head)"></line>
                <text x=(x0 + arrive) / 2.0 - 18.0 y=(y_client + y_redis) / 2.0 text-anchor="end" class="arrow-label">"SET →"</text>
                <text x=(leave + end) / 2.0 + 18.0 y=(y_client + y_redis) / 2.0 class="arrow-label">"← +OK"</text>
                <g class="rtt-span" data-rtt-us=m.rtt_us.to_string()>
                    <line x1=x0 x2=end y1="24" y2="24" class="bracket"></line>
                    <text x=(x0 + end) / 2.0 y="18" text-anchor="middle" class="rtt-label">
                        {if measured {
                            format!(
                                "RTT = {} (sequential p50); parts measured by the wire tap",
                                duration(m.rtt_us),
                            )
                        } else {
                            format!("RTT = {} (sequential p50, measured)", duration(m.rtt_us))
                        }}
                    </text>
                </g>
                {parts
                    .iter()
                    .enumerate()
                    .map(|(k, (value, class, name))| seg(k, class, name, *value))
                    .collect_view()}
            </svg>
            {match m.split {
                Some(sp) => measured_legend(sp).into_any(),
                None => estimated_legend(&m).into_any(),
            }}
            <table class="arithmetic">
                <thead>
                    <tr>
                        <th scope="col">"Whole run"</th>
                        <th scope="col">"Predicted"</th>
                        <th scope="col">"Measured"</th>
                    </tr>
                </thead>
                <tbody>
                    <tr data-mode="sequential">
                        <th scope="row">
                            "sequential ≈ N × RTT"
                            <span class="formula">
                                {format!("{} × {}", format::count(m.n), duration(m.rtt_us))}
                            </span>
                        </th>
                        <td>{value("rtt-predicted-seq-ms", m.predicted_seq_us)}</td>
                        <td>{value("rtt-measured-seq-ms", m.measured_seq_us)}</td>
                    </tr>
                    <tr data-mode="pipelined">
                        <th scope="row">
                            "pipelined ≈ ⌈N / batch⌉ × RTT + N × per-command cost"
                            <span class="formula">
                                {format!(
                                    "{} × {} + {} × {}",
                                    format::count(m.pipe_round_trips),
                                    duration(m.rtt_us),
                                    format::count(m.n),
                                    duration(m.per_cmd_us),
                                )}
                            </span>
                        </th>
                        <td>{value("rtt-predicted-pipe-ms", m.predicted_pipe_us)}</td>
                        <td>{value("rtt-measured-pipe-ms", m.measured_pipe_us)}</td>
                    </tr>
                </tbody>
            </table>
        </section>
    }
}

/// The parts as the wire tap measured them (medians over the sequential run's requests).
fn measured_legend(sp: RoundTripSplit) -> impl IntoView {
    view! {
        <ul class="parts-legend measured">
            <li class="t2">
                <b>{format!("out {}", duration(sp.out_us))}</b>
                " — measured: the request written → its bytes handed to Redis (t1 transmission + t2 propagation + the injected delay)."
            </li>
            <li class="t3">
                <b>{format!("t3 at Redis {}", duration(sp.server_us))}</b>
                " — measured: bytes handed to Redis → its reply read back from Redis (queuing + processing)."
            </li>
            <li class="t2">
                <b>{format!("back {}", duration(sp.back_us))}</b>
                " — measured: the reply leaving Redis → read by the client."
            </li>
            <li class="note">
                {format!(
                    "Medians over {} requests, stamped by the latency proxy's wire tap. Bars are widened to stay readable; the numbers are the values.",
                    format::count(sp.samples)
                )}
            </li>
        </ul>
    }
}

/// The parts as estimated from the two runs' timings, each saying how.
fn estimated_legend(m: &RttModel) -> impl IntoView + use<> {
    let m = *m;
    view! {
        <ul class="parts-legend">
                <li class="t1">
                    <b>{format!("t1 transmission {}", duration(m.t1_us))}</b>
                    {format!(
                        " — estimated: {:.0} B request + {:.0} B reply (their RESP encoding) ÷ an assumed loopback bandwidth of {ASSUMED_BANDWIDTH_LABEL}.",
                        m.request_bytes, m.reply_bytes
                    )}
                </li>
                <li class="t2">
                    <b>{format!("t2 propagation {} each way", duration(m.t2_us))}</b>
                    " — estimated: (RTT − t1 − t3) ÷ 2."
                </li>
                <li class="t3">
                    <b>{format!("t3 queuing + processing {}", duration(m.t3_us))}</b>
                    " — estimated from the pipelined run: its wall time ÷ its commands."
                </li>
                <li class="note">"Bars are widened to stay readable; the numbers are the values. With a network dialled in, the latency proxy's wire tap measures these parts instead."</li>
            </ul>
    }
}
