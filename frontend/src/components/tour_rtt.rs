//! Step 1's figure: the one SET's round trip, t1/t2/t3 labelled with its numbers. The RTT is
//! measured (the SET's latency). With the wire tap (`RunSummary::split`) the parts are measured
//! too; without it, t1 is estimated from the bytes (as the RTT diagram does), t2 is the
//! dialled-in delay and t3 is what is left.

use leptos::prelude::*;
use shared::RunSummary;

use crate::components::tour::Tour;
use crate::rtt_model::{REPLY_BYTES, request_bytes, transmission_us};
use crate::timeaxis::duration;

/// The parts of one round trip, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parts {
    pub rtt_us: f64,
    pub t1_us: f64,
    /// One way.
    pub t2_us: f64,
    pub t3_us: f64,
    pub measured: bool,
}

impl Parts {
    pub fn of(run: u64, s: &RunSummary) -> Parts {
        let rtt_us = s.latency.p50_us;
        let bytes = (request_bytes(run, 0) + REPLY_BYTES) as f64;
        let t1_us = transmission_us(bytes);
        match s.split {
            Some(split) if split.samples > 0 => Parts {
                rtt_us,
                t1_us,
                t2_us: ((split.out_us + split.back_us - t1_us) / 2.0).max(0.0),
                t3_us: split.server_us,
                measured: true,
            },
            _ => {
                let t2_us = s.spec.network.delay_out_us as f64;
                Parts {
                    rtt_us,
                    t1_us,
                    t2_us,
                    t3_us: (rtt_us - t1_us - 2.0 * t2_us).max(0.0),
                    measured: false,
                }
            }
        }
    }
}

const MIN_PART: f64 = 70.0;

#[component]
pub fn OneTrip(tour: Tour) -> impl IntoView {
    let parts = Memo::new(move |_| {
        tour.results.with(|all| {
            let r = all.iter().find(|r| r.step == 0)?;
            let (_, s) = r.runs.first()?;
            Some(Parts::of(r.ids.first().copied().unwrap_or(0), s))
        })
    });
    move || {
        match parts.get() {
        None => view! {
            <section class="card one-trip-card stage-part focus" aria-label="One round trip">
                <h2>"One round trip"</h2>
                <p class="placeholder">"Run the step: its SET's round trip appears here, taken apart."</p>
            </section>
        }
        .into_any(),
        Some(p) => figure(p).into_any(),
    }
    }
}

fn figure(p: Parts) -> impl IntoView {
    let segs = [p.t1_us / 2.0, p.t2_us, p.t3_us, p.t2_us, p.t1_us / 2.0];
    let total = segs.iter().sum::<f64>().max(1e-9);
    let (x0, width) = (110.0, 860.0);
    let free = width - MIN_PART * segs.len() as f64;
    let mut edges = vec![x0];
    for s in segs {
        edges.push(edges.last().unwrap() + MIN_PART + free * s / total);
    }
    let (y_client, y_redis, bar_y) = (58.0, 168.0, 200.0);
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
    let how = if p.measured {
        "measured by the wire tap"
    } else {
        "t2 as dialled in, t1 from the bytes, t3 the rest"
    };
    view! {
        <section class="card one-trip-card stage-part focus" aria-label="One round trip">
            <h2>"One SET's round trip, taken apart"</h2>
            <svg
                id="one-trip"
                viewBox="0 0 1000 260"
                role="img"
                aria-label="One round trip: t1 transmission, t2 propagation, t3 queuing and processing"
                data-rtt-us=p.rtt_us.to_string()
                data-t1-us=p.t1_us.to_string()
                data-t2-us=p.t2_us.to_string()
                data-t3-us=p.t3_us.to_string()
                data-source=if p.measured { "measured" } else { "estimated" }
            >
                <defs>
                    <marker id="one-trip-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M0,0 L10,5 L0,10 z" class="head"></path>
                    </marker>
                </defs>
                <text x="100" y=y_client + 5.0 text-anchor="end" class="lane-name">"Client"</text>
                <text x="100" y=y_redis + 5.0 text-anchor="end" class="lane-name">"Redis"</text>
                <line x1=x0 x2=x0 + width y1=y_client y2=y_client class="lane"></line>
                <line x1=x0 x2=x0 + width y1=y_redis y2=y_redis class="lane"></line>
                <line x1=x0 y1=y_client x2=edges[2] y2=y_redis class="req" marker-end="url(#one-trip-head)"></line>
                <rect x=edges[2] y=y_redis - 14.0 width=edges[3] - edges[2] height="14" class="server"></rect>
                <line x1=edges[3] y1=y_redis x2=edges[5] y2=y_client class="reply" marker-end="url(#one-trip-head)"></line>
                <text x=(x0 + edges[2]) / 2.0 - 18.0 y=(y_client + y_redis) / 2.0 text-anchor="end" class="arrow-label">"SET →"</text>
                <text x=(edges[3] + edges[5]) / 2.0 + 18.0 y=(y_client + y_redis) / 2.0 class="arrow-label">"← +OK"</text>
                <line x1=x0 x2=edges[5] y1="24" y2="24" class="bracket"></line>
                <text x=(x0 + edges[5]) / 2.0 y="18" text-anchor="middle" class="rtt-label">
                    {format!("RTT = {} (measured)", duration(p.rtt_us))}
                </text>
                {seg(0, "t1", "t1 ½", p.t1_us / 2.0)}
                {seg(1, "t2", "t2", p.t2_us)}
                {seg(2, "t3", "t3", p.t3_us)}
                {seg(3, "t2", "t2", p.t2_us)}
                {seg(4, "t1", "t1 ½", p.t1_us / 2.0)}
            </svg>
            <p class="note">{format!("Parts: {how}. Bars are widened to stay readable; the numbers are the values.")}</p>
        </section>
    }
}
