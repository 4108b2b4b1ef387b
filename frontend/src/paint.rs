//! Draws the timeline onto a 2D canvas: a ruler in real time units, then one panel per run with
//! a Client lane and a Redis lane, each request an arrow out and each reply an arrow back, at
//! their measured times, up to the playback position.
//!
//! Built to stay at 60 fps with tens of thousands of arrows: spans outside the window are
//! skipped by binary search, and all arrows of one colour go into one path with one `stroke`.

use web_sys::CanvasRenderingContext2d as Ctx;

use crate::timeaxis::{self, Axis};
use crate::trace::{Batch, Trace, at_server_us, from_server_us};

/// Colours of one theme.
pub struct Palette {
    pub background: &'static str,
    pub ink: &'static str,
    pub muted: &'static str,
    pub grid: &'static str,
    pub lane: &'static str,
    pub band: [&'static str; 2],
    pub playhead: &'static str,
    /// (request, reply) per mode: sequential, pipelined, other.
    pub seq: (&'static str, &'static str),
    pub pipe: (&'static str, &'static str),
}

pub const LIGHT: Palette = Palette {
    background: "#ffffff",
    ink: "#0f1722",
    muted: "#556070",
    grid: "#e6e9ee",
    lane: "#98a2b1",
    band: ["rgba(11,122,117,0.10)", "rgba(29,78,216,0.08)"],
    playhead: "#1d4ed8",
    seq: ("#d9480f", "#8f2d06"),
    pipe: ("#0b7a75", "#1d4ed8"),
};

pub const DARK: Palette = Palette {
    background: "#0b0f15",
    ink: "#f4f7fb",
    muted: "#aab4c3",
    grid: "#1f2732",
    lane: "#6b7686",
    band: ["rgba(45,212,191,0.16)", "rgba(96,165,250,0.14)"],
    playhead: "#facc15",
    seq: ("#ff8a4c", "#ffd166"),
    pipe: ("#2dd4bf", "#60a5fa"),
};

pub struct Frame<'a> {
    pub width: f64,
    pub height: f64,
    /// Larger type for presenter mode.
    pub scale: f64,
    pub palette: &'a Palette,
    pub traces: &'a [Trace],
    pub batches: &'a [Vec<Batch>],
    pub start_us: f64,
    pub window_us: f64,
    pub position_us: f64,
}

const GUTTER: f64 = 118.0;
const RIGHT: f64 = 22.0;
const RULER: f64 = 30.0;
const FOOTER: f64 = 22.0;

/// Draws a frame; returns the arrows (requests + replies) drawn per trace.
pub fn draw(ctx: &Ctx, f: &Frame) -> Vec<usize> {
    let p = f.palette;
    let s = f.scale;
    ctx.set_fill_style_str(p.background);
    ctx.fill_rect(0.0, 0.0, f.width, f.height);
    let gutter = GUTTER * s;
    let axis = Axis::new(
        f.start_us,
        f.start_us + f.window_us,
        gutter,
        f.width - RIGHT * s,
    );
    let font = |px: f64, weight: &str| format!("{weight} {:.0}px system-ui, sans-serif", px * s);

    if f.traces.is_empty() {
        ctx.set_fill_style_str(p.muted);
        ctx.set_font(&font(16.0, "600"));
        ctx.set_text_align("center");
        let _ = ctx.fill_text(
            "Run or Compare: every request and reply will be drawn here at its measured time.",
            f.width / 2.0,
            f.height / 2.0,
        );
        return Vec::new();
    }

    // Ruler: nice ticks in real units, with grid lines through the panels.
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
    ctx.set_font(&font(12.0, "600"));
    ctx.set_text_align("center");
    for t in &ticks {
        let _ = ctx.fill_text(&timeaxis::tick_label(*t, step), axis.x(*t), 19.0 * s);
    }
    ctx.set_text_align("left");
    let _ = ctx.fill_text("run time →", 10.0 * s, 19.0 * s);

    let panel_h = (f.height - (RULER + FOOTER) * s) / f.traces.len() as f64;
    let mut drawn = Vec::with_capacity(f.traces.len());
    for (k, t) in f.traces.iter().enumerate() {
        let top = RULER * s + k as f64 * panel_h;
        let batches = f.batches.get(k).map_or(&[][..], Vec::as_slice);
        drawn.push(panel(ctx, f, &axis, t, batches, top, panel_h));
    }

    // The playhead.
    if f.position_us >= axis.start_us && f.position_us <= axis.end_us {
        let x = axis.x(f.position_us);
        ctx.set_stroke_style_str(p.playhead);
        ctx.set_line_width(2.0 * s);
        ctx.begin_path();
        ctx.move_to(x, RULER * s - 6.0);
        ctx.line_to(x, f.height - FOOTER * s);
        ctx.stroke();
    }

    ctx.set_fill_style_str(p.muted);
    ctx.set_font(&font(12.0, "400"));
    ctx.set_text_align("left");
    let note = if f.traces.iter().any(Trace::measured_at_server) {
        "Arrival at Redis and the reply leaving it: measured by the latency proxy's wire tap (runs without it: the midpoint, an estimate)."
    } else {
        "Arrival at Redis is drawn at the midpoint (issued + replied) / 2: an estimate (the wire tap measures it when a network is dialled in)."
    };
    let _ = ctx.fill_text(note, 10.0 * s, f.height - 7.0 * s);
    drawn
}

fn panel(
    ctx: &Ctx,
    f: &Frame,
    axis: &Axis,
    t: &Trace,
    batches: &[Batch],
    top: f64,
    height: f64,
) -> usize {
    let p = f.palette;
    let s = f.scale;
    let (req_colour, reply_colour) = match t.kind() {
        "sequential" => p.seq,
        _ => p.pipe,
    };
    let y_client = top + 34.0 * s;
    let y_redis = top + height - 16.0 * s;
    let pos = f.position_us;
    let font = |px: f64, weight: &str| format!("{weight} {:.0}px system-ui, sans-serif", px * s);

    // Separator, title and lane labels.
    ctx.set_stroke_style_str(p.grid);
    ctx.set_line_width(1.0);
    ctx.begin_path();
    ctx.move_to(0.0, top.round() + 0.5);
    ctx.line_to(f.width, top.round() + 0.5);
    ctx.stroke();
    ctx.set_text_align("left");
    ctx.set_fill_style_str(req_colour);
    ctx.set_font(&font(15.0, "800"));
    let mut title = match t.mode {
        Some(shared::Mode::Sequential) => "sequential · one at a time".to_string(),
        Some(mode) => mode.label(),
        None => format!("run #{}", t.run),
    };
    if let Some(network) = t.network {
        title += &format!(" · {}", network.label());
    }
    let _ = ctx.fill_text(&title, 10.0 * s, top + 17.0 * s);
    if (t.spans.len() as u64) < t.count {
        ctx.set_fill_style_str(p.muted);
        ctx.set_font(&font(12.0, "400"));
        let title_w = ctx.measure_text(&title).map_or(200.0, |m| m.width());
        let _ = ctx.fill_text(
            &format!(
                "first {} of {} requests drawn",
                crate::format::count(t.spans.len() as u64),
                crate::format::count(t.count)
            ),
            10.0 * s + title_w * 15.0 / 12.0 + 14.0 * s,
            top + 17.0 * s,
        );
    }
    ctx.set_fill_style_str(p.ink);
    ctx.set_font(&font(13.0, "700"));
    ctx.set_text_align("right");
    let _ = ctx.fill_text("Client", GUTTER * s - 10.0 * s, y_client + 4.0 * s);
    let _ = ctx.fill_text("Redis", GUTTER * s - 10.0 * s, y_redis + 4.0 * s);
    ctx.set_stroke_style_str(p.lane);
    ctx.set_line_width(2.0 * s);
    ctx.begin_path();
    ctx.move_to(axis.left_px, y_client);
    ctx.line_to(axis.right_px, y_client);
    ctx.move_to(axis.left_px, y_redis);
    ctx.line_to(axis.right_px, y_redis);
    ctx.stroke();

    let (start, end) = (axis.start_us, axis.end_us.min(pos));
    // Batches of a pipeline: a shaded band from the write to the last reply, one per round trip.
    if batches.len() < t.spans.len() {
        let first = batches.partition_point(|b| b.last_reply_us < start);
        let last = batches.partition_point(|b| b.issued_us <= end);
        // Labels only where they fit, never over the previous one.
        let mut label_end = f64::NEG_INFINITY;
        for (n, b) in batches.iter().enumerate().take(last).skip(first) {
            let x0 = axis.x(b.issued_us).max(axis.left_px);
            let x1 = axis.x(b.last_reply_us.min(pos)).min(axis.right_px);
            ctx.set_fill_style_str(p.band[n % 2]);
            ctx.fill_rect(
                x0,
                y_client - 8.0 * s,
                (x1 - x0).max(1.0),
                y_redis - y_client + 16.0 * s,
            );
            if x1 - x0 > 60.0 * s && x0 > label_end {
                ctx.set_fill_style_str(p.muted);
                ctx.set_font(&font(11.0, "600"));
                ctx.set_text_align("left");
                let label = format!("round trip {} · {} cmds", n + 1, b.end - b.start);
                let w = ctx.measure_text(&label).map_or(140.0, |m| m.width());
                if w + 8.0 * s < x1 - x0 {
                    let _ = ctx.fill_text(&label, x0 + 4.0 * s, y_client - 12.0 * s);
                    label_end = x0 + w + 12.0 * s;
                }
            }
        }
    }

    // Arrows: every span whose round trip overlaps the window and had begun by the playhead.
    let lo = t.spans.partition_point(|sp| sp.replied_us < start);
    let hi = t.spans.partition_point(|sp| sp.issued_us <= end);
    let shown = hi.saturating_sub(lo);
    let span_px = if shown > 1 {
        (axis.x(t.spans[hi - 1].issued_us) - axis.x(t.spans[lo].issued_us)) / shown as f64
    } else {
        f64::INFINITY
    };
    // Dense pictures: thinner lines and no heads (they would only smear).
    let dense = shown > 1500;
    let heads = span_px > 10.0 * s || shown <= 40;
    let width = if dense { 1.0 } else { 1.6 * s };
    let lerp = |a: f64, b: f64, u: f64| a + (b - a) * u.clamp(0.0, 1.0);
    let head = |x0: f64, y0: f64, x1: f64, y1: f64| {
        let (dx, dy) = (x1 - x0, y1 - y0);
        let len = (dx * dx + dy * dy).sqrt().max(1e-6);
        let (ux, uy) = (dx / len, dy / len);
        let size = 7.0 * s;
        for side in [-1.0, 1.0] {
            ctx.move_to(x1, y1);
            ctx.line_to(
                x1 - size * ux + side * size * 0.45 * uy,
                y1 - size * uy - side * size * 0.45 * ux,
            );
        }
    };

    let mut count = 0;
    ctx.set_line_width(width);
    ctx.set_global_alpha(if dense { 0.75 } else { 1.0 });
    // Requests: client → Redis.
    ctx.set_stroke_style_str(req_colour);
    ctx.begin_path();
    for sp in &t.spans[lo..hi] {
        let at = at_server_us(sp);
        let x0 = axis.x(sp.issued_us);
        let u = if at > sp.issued_us {
            (pos - sp.issued_us) / (at - sp.issued_us)
        } else {
            1.0
        };
        let (x1, y1) = (lerp(x0, axis.x(at), u), lerp(y_client, y_redis, u));
        ctx.move_to(x0, y_client);
        ctx.line_to(x1, y1);
        if heads && u >= 1.0 {
            head(x0, y_client, x1, y1);
        }
        count += 1;
    }
    ctx.stroke();
    // Replies: Redis → client, once the reply left Redis (measured, or by our estimate).
    ctx.set_stroke_style_str(reply_colour);
    ctx.begin_path();
    for sp in &t.spans[lo..hi] {
        let (at, from) = (at_server_us(sp), from_server_us(sp));
        // Measured time inside Redis: along its lane, from arrival to the reply leaving.
        if from > at && pos > at {
            ctx.move_to(axis.x(at), y_redis);
            ctx.line_to(axis.x(from.min(pos)), y_redis);
        }
        if pos <= from {
            continue;
        }
        let x0 = axis.x(from);
        let u = if sp.replied_us > from {
            (pos - from) / (sp.replied_us - from)
        } else {
            1.0
        };
        let (x1, y1) = (
            lerp(x0, axis.x(sp.replied_us), u),
            lerp(y_redis, y_client, u),
        );
        ctx.move_to(x0, y_redis);
        ctx.line_to(x1, y1);
        if heads && u >= 1.0 {
            head(x0, y_redis, x1, y1);
        }
        count += 1;
    }
    ctx.stroke();
    ctx.set_global_alpha(1.0);

    // Where the run finished, once playback gets there.
    if let Some(summary) = &t.summary {
        let done = summary.wall_us as f64;
        if (t.spans.len() as u64) >= t.count && done <= pos && done >= start && done <= axis.end_us
        {
            let x = axis.x(done);
            ctx.set_stroke_style_str(req_colour);
            ctx.set_line_width(2.0 * s);
            let _ = ctx.set_line_dash(&js_dash(s));
            ctx.begin_path();
            ctx.move_to(x, y_client - 14.0 * s);
            ctx.line_to(x, y_redis + 8.0 * s);
            ctx.stroke();
            let _ = ctx.set_line_dash(&js_sys::Array::new());
            ctx.set_fill_style_str(req_colour);
            ctx.set_font(&font(13.0, "800"));
            let label = format!("finished · {}", timeaxis::duration(done));
            let w = ctx.measure_text(&label).map_or(120.0, |m| m.width());
            let right = x + 6.0 * s + w <= axis.right_px;
            ctx.set_text_align(if right { "left" } else { "right" });
            let _ = ctx.fill_text(
                &label,
                if right { x + 6.0 * s } else { x - 6.0 * s },
                (y_client + y_redis) / 2.0,
            );
        }
    }
    count
}

fn js_dash(scale: f64) -> js_sys::Array {
    let a = js_sys::Array::new();
    a.push(&(6.0 * scale).into());
    a.push(&(4.0 * scale).into());
    a
}
