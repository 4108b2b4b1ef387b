//! What if it pipelined, drawn: a connection that waits on round trips as measured, beside its
//! commands projected in batches of 10, 100 and 1,000 (`shared::observe::what_if`, worded by
//! the server with each figure's provenance). One lane a scenario on one time axis, each bar
//! its waits then its own time, its total at its end; beneath, each lane in words, as the time
//! split's rows. The bars are SVG markup written here from the server's numbers and words
//! (none of them a client's own text), which costs the page less than a view node apiece.

use leptos::prelude::*;
use shared::observe::WhatIf;

use super::figure_rows::figure_rows;

/// Where bars start and how long the longest is, in the SVG's units.
const X0: f64 = 112.0;
const WIDTH: f64 = 360.0;
const LANE: f64 = 30.0;

/// `w` drawn for connection `id`.
pub fn what_if_figure(id: u64, w: WhatIf) -> impl IntoView + use<> {
    let longest = w
        .waits_us
        .iter()
        .fold(1e-9_f64, |m, &us| m.max(us + w.own_us));
    let scale = WIDTH / longest;
    let own = w.own_us * scale;
    let mut svg = String::new();
    for (i, (lane, waits_us)) in w.lanes.iter().zip(&w.waits_us).enumerate() {
        let y = LANE * i as f64;
        let waits = waits_us * scale;
        let kind = if i == 0 { "measured" } else { "derived" };
        svg += &format!(
            "<g class=\"lane {kind}\"><text x=\"0\" y=\"{}\" class=\"lane-label\">{}</text>\
             <rect class=\"waits\" x=\"{X0}\" y=\"{}\" width=\"{waits}\" height=\"20\"/>\
             <rect class=\"own\" x=\"{}\" y=\"{}\" width=\"{own}\" height=\"20\"/>\
             <text x=\"{}\" y=\"{}\" class=\"lane-total\">{} {kind}</text></g>",
            y + 19.0,
            escaped(&lane.label),
            y + 5.0,
            X0 + waits,
            y + 5.0,
            X0 + waits + own + 6.0,
            y + 19.0,
            escaped(&lane.value),
        );
    }
    let axis = LANE * w.lanes.len() as f64 + 6.0;
    svg += &format!(
        "<line x1=\"{X0}\" x2=\"{}\" y1=\"{axis}\" y2=\"{axis}\" class=\"axis\"/>\
         <text x=\"{X0}\" y=\"{}\" class=\"tick\">0</text>\
         <rect class=\"waits\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"{}\" class=\"tick\">waits</text>\
         <rect class=\"own\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"{}\" class=\"tick\">its own time</text>",
        X0 + WIDTH,
        axis + 16.0,
        X0 + 60.0,
        axis + 6.0,
        X0 + 76.0,
        axis + 16.0,
        X0 + 130.0,
        axis + 6.0,
        X0 + 146.0,
        axis + 16.0,
    );
    view! {
        <figure class="what-if" id=format!("what-if-{id}")>
            <figcaption>
                <b>"What if it pipelined: "</b>
                <span class="how">{w.how}</span>
            </figcaption>
            <svg
                class="what-if-svg"
                viewBox=format!("0 0 640 {}", axis + 24.0)
                role="img"
                aria-label="its time as measured beside the same commands in batches: waits, then its own time"
                inner_html=svg
            ></svg>
            <table class="time-split what-if-lanes">
                <tbody>{figure_rows(w.lanes)}</tbody>
            </table>
        </figure>
    }
}

/// `s` as XML text.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;")
}
