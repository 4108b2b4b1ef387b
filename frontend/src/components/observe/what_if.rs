//! What if it pipelined, drawn: a connection that waits on round trips as measured, beside its
//! commands projected in batches of 10, 100 and 1,000 (`shared::observe::what_if`, worded by
//! the server with each figure's provenance). One lane a scenario on one time axis, each bar
//! its waits then its own time, its total at its end; beneath, each lane said in words.

use leptos::prelude::*;
use shared::observe::WhatIf;

/// Where bars start and how long the longest is, in the SVG's units.
const X0: f64 = 112.0;
const WIDTH: f64 = 420.0;
const LANE: f64 = 30.0;

/// `w` drawn for connection `id`.
pub fn what_if_figure(id: u64, w: WhatIf) -> impl IntoView + use<> {
    let longest = w.lanes.iter().map(|l| l.us()).fold(1e-9, f64::max);
    let scale = WIDTH / longest;
    let axis_y = LANE * w.lanes.len() as f64 + 6.0;
    let lanes = w
        .lanes
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let y = LANE * i as f64;
            let (waits, own) = (l.waits_us * scale, l.own_us * scale);
            let kind = if l.batch == 0 { "measured" } else { "derived" };
            view! {
                <g class=format!("lane {kind}")>
                    <title>{l.text.clone()}</title>
                    <text x="0" y=y + 19.0 class="lane-label">{l.label.clone()}</text>
                    <rect class="waits" x=X0 y=y + 5.0 width=waits height="20"></rect>
                    <rect class="own" x=X0 + waits y=y + 5.0 width=own height="20"></rect>
                    <text x=X0 + waits + own + 6.0 y=y + 19.0 class="lane-total">
                        {format!("{} {kind}", l.total)}
                    </text>
                </g>
            }
        })
        .collect_view();
    let words = w
        .lanes
        .into_iter()
        .map(|l| {
            view! {
                <li data-batch=l.batch data-waits=l.waits>
                    <b>{l.label}</b>
                    " "
                    <span class="total">{l.total}</span>
                    ": "
                    {l.text}
                </li>
            }
        })
        .collect_view();
    view! {
        <figure class="what-if" id=format!("what-if-{id}")>
            <figcaption>
                <b>"What if it pipelined: "</b>
                <span class="how">{w.how}</span>
            </figcaption>
            <svg
                class="what-if-svg"
                viewBox=format!("0 0 640 {}", axis_y + 34.0)
                role="img"
                aria-label="its time as measured beside the same commands in batches: waits, then its own time"
            >
                {lanes}
                <line x1=X0 x2=X0 + WIDTH y1=axis_y y2=axis_y class="axis"></line>
                <text x=X0 y=axis_y + 16.0 class="tick">"0"</text>
                <rect class="waits" x=X0 + 60.0 y=axis_y + 6.0 width="12" height="12"></rect>
                <text x=X0 + 76.0 y=axis_y + 16.0 class="tick">"waits"</text>
                <rect class="own" x=X0 + 130.0 y=axis_y + 6.0 width="12" height="12"></rect>
                <text x=X0 + 146.0 y=axis_y + 16.0 class="tick">"its own time"</text>
            </svg>
            <ul class="what-if-lanes">{words}</ul>
        </figure>
    }
}
