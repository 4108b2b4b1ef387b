//! Draws one frame: the background, a ruler in real time units with its grid, one panel per
//! run stacked under it (each drawn in a fixed order: heading, lanes, bands, arrows, marks),
//! the playhead, and a footer saying how the arrival at Redis was obtained.

use web_sys::CanvasRenderingContext2d as Ctx;

use crate::timeaxis::{self, Axis};
use crate::trace::{Trace, Trip};

use super::frame::{Drawn, DrawnTrace, FOOTER, Frame, GUTTER, RIGHT, RULER};
use super::labels::Texts;
use super::panel::Panel;

/// Draws a frame; returns what it drew per trace and the labels painted.
pub fn draw(ctx: &Ctx, f: &Frame) -> Drawn {
    let s = f.scale;
    ctx.set_fill_style_str(f.palette.background);
    ctx.fill_rect(0.0, 0.0, f.width, f.height);
    let texts = Texts::new(f.width, f.height);
    let axis = Axis::new(
        f.start_us,
        f.start_us + f.window_us,
        GUTTER * s,
        f.width - RIGHT * s,
    );
    if f.traces.is_empty() {
        empty(ctx, f, &texts);
        return Drawn {
            traces: Vec::new(),
            labels: texts.into_labels(),
        };
    }
    ruler(ctx, f, &axis, &texts);
    footer(ctx, f, &texts);
    let panel_h = (f.height - (RULER + FOOTER) * s) / f.traces.len() as f64;
    let traces = f
        .traces
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let trips = f.trips.get(k).and_then(Option::as_deref);
            let top = RULER * s + k as f64 * panel_h;
            panel(Panel::new(ctx, f, &axis, &texts, t, top, panel_h), trips)
        })
        .collect();
    playhead(ctx, f, &axis);
    Drawn {
        traces,
        labels: texts.into_labels(),
    }
}

fn empty(ctx: &Ctx, f: &Frame, texts: &Texts) {
    ctx.set_fill_style_str(f.palette.muted);
    ctx.set_font(&f.font(16.0, "600"));
    texts.put(
        ctx,
        "Run or Compare: every request and reply will be drawn here at its measured time.",
        f.width / 2.0,
        &[f.height / 2.0],
        "center",
    );
}

/// Nice ticks in real units, with grid lines through the panels.
fn ruler(ctx: &Ctx, f: &Frame, axis: &Axis, texts: &Texts) {
    let (p, s) = (f.palette, f.scale);
    let max_ticks = ((axis.right_px - axis.left_px) / (90.0 * s)).max(2.0) as usize;
    let (step, ticks) = timeaxis::ticks(axis.start_us, axis.end_us, max_ticks);
    ctx.set_stroke_style_str(p.grid);
    ctx.set_line_width(1.0);
    ctx.begin_path();
    for t in &ticks {
        let x = axis.x(*t).round() + 0.5;
        ctx.move_to(x, RULER * s);
        ctx.line_to(x, f.height - FOOTER * s);
    }
    ctx.stroke();
    ctx.set_fill_style_str(p.muted);
    ctx.set_font(&f.font(12.0, "600"));
    texts.put(ctx, "run time →", 10.0 * s, &[19.0 * s], "left");
    for t in &ticks {
        let label = timeaxis::tick_label(*t, step);
        texts.put(ctx, &label, axis.x(*t), &[19.0 * s], "center");
    }
}

fn playhead(ctx: &Ctx, f: &Frame, axis: &Axis) {
    let s = f.scale;
    if f.position_us < axis.start_us || f.position_us > axis.end_us {
        return;
    }
    let x = axis.x(f.position_us);
    ctx.set_stroke_style_str(f.palette.playhead);
    ctx.set_line_width(2.0 * s);
    ctx.begin_path();
    ctx.move_to(x, RULER * s - 6.0);
    ctx.line_to(x, f.height - FOOTER * s);
    ctx.stroke();
}

/// How the arrival at Redis was obtained, for the runs on screen (in smaller type where the
/// canvas is too narrow for it).
fn footer(ctx: &Ctx, f: &Frame, texts: &Texts) {
    let s = f.scale;
    ctx.set_fill_style_str(f.palette.muted);
    let note = if f.traces.iter().any(|t| t.captured) {
        "Every time as the capture's host stamped it, each segment once: a command's segment and its reply's, so both lanes carry the same stamps."
    } else if f.traces.iter().any(|t| t.observed.is_some()) {
        "Every time measured by the observing proxy: a command's arrival from the client, its hand-over to Redis, the reply from Redis and its hand-back."
    } else if f.traces.iter().any(Trace::measured_at_server) {
        "Arrival at Redis and the reply leaving it: measured by the latency proxy's wire tap (runs without it: the midpoint, an estimate)."
    } else if f.traces.iter().any(Trace::on_cluster) {
        "Arrival at Redis is drawn at the midpoint (issued + replied) / 2: an estimate (on a cluster the wire taps of the masters' proxies are not read)."
    } else {
        "Arrival at Redis is drawn at the midpoint (issued + replied) / 2: an estimate (the wire tap measures it when a network is dialled in)."
    };
    let room = f.width - 20.0 * s;
    ctx.set_font(&f.font(12.0, "400"));
    let w = ctx.measure_text(note).map_or(room, |m| m.width());
    if w > room {
        ctx.set_font(&f.font((12.0 * room / w).max(8.0), "400"));
    }
    texts.put(ctx, note, 10.0 * s, &[f.height - 7.0 * s], "left");
}

/// Draws panel `p` with its round trips' bands (`None`: mode unknown, no bands), in the order
/// that keeps the notes readable over the arrows; returns what it drew.
fn panel(p: Panel, trips: Option<&[Trip]>) -> DrawnTrace {
    let heading_end = p.heading();
    p.lanes();
    if let Some(trips) = trips {
        p.trip_bands(trips, heading_end);
    }
    let (arrows, redirect_marks) = p.plot();
    if p.masters > 1 {
        // After the arrows: the note's backing keeps it readable over them.
        p.masters_note();
        p.redirect_legend();
    }
    if let Some(first) = p.t.sampled_beyond().first() {
        p.sampled_mark(first.issued_us);
    }
    if let Some(other) = p.t.summary.as_ref().and_then(|s| s.interleaving.as_ref()) {
        p.other_lane(other, p.bottom);
    }
    p.unstamped_note();
    p.finished_mark();
    DrawnTrace {
        arrows,
        client_lanes: p.lanes,
        redis_lanes: p.masters,
        master_spans: p.master_spans.into_inner(),
        redirect_marks,
    }
}
