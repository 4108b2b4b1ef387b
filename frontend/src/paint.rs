//! Draws the timeline onto a 2D canvas: a ruler in real time units, then one panel per run with
//! a Client lane and a Redis lane, each request an arrow out and each reply an arrow back, at
//! their measured times, up to the playback position. A run on a pool of connections gets a
//! client lane per connection ("connection k of C"), each request drawn from its own. A run
//! on a Redis Cluster gets a Redis lane per master, named by its address, each request drawn
//! to the master the engine says answered it, a small diamond where Redis had first said
//! MOVED or ASK.
//!
//! Built to stay at 60 fps with tens of thousands of arrows: spans outside the window are
//! skipped by binary search, and all arrows of one colour go into one path with one `stroke`.
//! A long run's first requests are drawn in full, the rest from its strided sample, lighter.

use std::cell::RefCell;

use web_sys::CanvasRenderingContext2d as Ctx;

use crate::timeaxis::{self, Axis};
use shared::interleave::Interleaving;
use shared::{Mode, Span};

use crate::trace::{self, Trace, Trip, at_server_us, from_server_us};

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
    /// The other client's INCRs: (between the run's batches, inside one).
    pub other: (&'static str, &'static str),
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
    other: ("#7c8695", "#e11d48"),
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
    other: ("#8b95a5", "#fb7185"),
};

pub struct Frame<'a> {
    pub width: f64,
    pub height: f64,
    /// Larger type for presenter mode.
    pub scale: f64,
    pub palette: &'a Palette,
    pub traces: &'a [Trace],
    /// Per trace, its round trips as the mode paid them (`None`: mode unknown, no bands).
    pub trips: &'a [Option<Vec<Trip>>],
    pub start_us: f64,
    pub window_us: f64,
    pub position_us: f64,
}

const GUTTER: f64 = 118.0;
/// Room for the other client's lane under the Redis lane.
const OTHER_LANE: f64 = 34.0;
const RIGHT: f64 = 22.0;
const RULER: f64 = 30.0;
const FOOTER: f64 = 22.0;
/// How much of its colour the sampled part of a long run keeps (the rest is background). A
/// colour, not an alpha: thousands of overlapping translucent lines add up to full strength.
const SAMPLED_STRENGTH: f64 = 0.3;

impl Frame<'_> {
    fn font(&self, px: f64, weight: &str) -> String {
        format!("{weight} {:.0}px system-ui, sans-serif", px * self.scale)
    }
}

/// A piece of text painted on the canvas and the box it takes (CSS pixels, from the canvas's
/// top left; the font's ascent and descent, so a line's box whatever its glyphs).
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub text: String,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Label {
    /// Whether the two boxes share more than half a pixel each way.
    pub fn overlaps(&self, o: &Label) -> bool {
        let ox = (self.x + self.w).min(o.x + o.w) - self.x.max(o.x);
        let oy = (self.y + self.h).min(o.y + o.h) - self.y.max(o.y);
        ox > 0.5 && oy > 0.5
    }
}

/// What a frame drew of one trace.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DrawnTrace {
    /// Arrows, requests + replies.
    pub arrows: usize,
    /// Client lanes: one per connection of the run.
    pub client_lanes: u32,
    /// Redis lanes: one per master on a cluster, else one.
    pub redis_lanes: u32,
    /// On a cluster: requests drawn to each master's lane (from the full requests and the
    /// sample, so far as the playhead).
    pub master_spans: [u32; MAX_COUNTED_MASTERS],
    /// Redirect marks drawn (requests answered MOVED or ASK first).
    pub redirect_marks: u32,
}

/// The legend of a redirect mark.
pub const REDIRECT_LEGEND: &str = "◆ MOVED / ASK: sent again where Redis said";

/// Masters whose drawn requests `DrawnTrace` counts (the browser tests' check; more are drawn).
pub const MAX_COUNTED_MASTERS: usize = 8;

/// What a frame drew: per trace, and every label.
pub struct Drawn {
    pub traces: Vec<DrawnTrace>,
    pub labels: Vec<Label>,
}

/// The labels painted so far in a frame. Text is only painted where it fits inside the canvas
/// and clear of every label already there, so no two labels ever overlap.
struct Texts {
    width: f64,
    height: f64,
    placed: RefCell<Vec<Label>>,
}

impl Texts {
    /// The box `text` would take at (`x`, baseline `y`) with the context's font and `align`.
    fn measure(ctx: &Ctx, text: &str, x: f64, y: f64, align: &str) -> Label {
        ctx.set_text_align(align);
        let (w, ascent, descent) = match ctx.measure_text(text) {
            Ok(m) => (
                m.width(),
                m.font_bounding_box_ascent(),
                m.font_bounding_box_descent(),
            ),
            Err(_) => (text.len() as f64 * 8.0, 12.0, 4.0),
        };
        let left = match align {
            "right" => x - w,
            "center" => x - w / 2.0,
            _ => x,
        };
        Label {
            text: text.to_string(),
            x: left,
            y: y - ascent,
            w,
            h: ascent + descent,
        }
    }

    fn fits(&self, l: &Label) -> bool {
        l.x >= 0.0
            && l.y >= 0.0
            && l.x + l.w <= self.width
            && l.y + l.h <= self.height
            && !self.placed.borrow().iter().any(|p| p.overlaps(l))
    }

    /// Paints `text` (font and colour already set) at the first baseline of `ys` where it fits;
    /// returns its box, or `None` where it fits nowhere (then nothing is painted).
    fn put(&self, ctx: &Ctx, text: &str, x: f64, ys: &[f64], align: &str) -> Option<Label> {
        for &y in ys {
            let label = Self::measure(ctx, text, x, y, align);
            if self.fits(&label) {
                let _ = ctx.fill_text(text, x, y);
                self.placed.borrow_mut().push(label.clone());
                return Some(label);
            }
        }
        None
    }
}

/// Draws a frame; returns what it drew per trace and the labels painted.
pub fn draw(ctx: &Ctx, f: &Frame) -> Drawn {
    let s = f.scale;
    ctx.set_fill_style_str(f.palette.background);
    ctx.fill_rect(0.0, 0.0, f.width, f.height);
    let texts = Texts {
        width: f.width,
        height: f.height,
        placed: RefCell::new(Vec::new()),
    };
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
            labels: texts.placed.into_inner(),
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
            panel(ctx, f, &axis, &texts, t, trips, top, panel_h)
        })
        .collect();
    playhead(ctx, f, &axis);
    Drawn {
        traces,
        labels: texts.placed.into_inner(),
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
    let note = if f.traces.iter().any(|t| t.observed.is_some()) {
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

/// One run's panel: where its lanes are and what it is drawn with.
struct Panel<'a> {
    ctx: &'a Ctx,
    f: &'a Frame<'a>,
    axis: &'a Axis,
    texts: &'a Texts,
    t: &'a Trace,
    top: f64,
    /// The (first) client lane.
    y_client: f64,
    y_redis: f64,
    /// Client lanes: the run's connections (`Mode::connections`), one under the other from
    /// `y_client`, `lane_gap` apart.
    lanes: u32,
    lane_gap: f64,
    /// Redis lanes: a cluster's masters, one above the other up from `y_redis`,
    /// `master_gap` apart (one lane elsewhere).
    masters: u32,
    master_gap: f64,
    /// Requests drawn to each master's lane.
    master_spans: RefCell<[u32; MAX_COUNTED_MASTERS]>,
    /// (request, reply).
    colours: (&'static str, &'static str),
}

/// How far down towards Redis a pool's client lanes reach (a share of the gap between the
/// first client lane and Redis's), leaving the rest to the arrows.
const POOL_LANES_SHARE: f64 = 0.6;
/// How far up towards the client a cluster's master lanes reach, likewise.
const MASTER_LANES_SHARE: f64 = 0.5;

#[allow(clippy::too_many_arguments)]
fn panel(
    ctx: &Ctx,
    f: &Frame,
    axis: &Axis,
    texts: &Texts,
    t: &Trace,
    trips: Option<&[Trip]>,
    top: f64,
    height: f64,
) -> DrawnTrace {
    let s = f.scale;
    let other = t.summary.as_ref().and_then(|s| s.interleaving.as_ref());
    let bottom = top + height - 16.0 * s;
    let (y_client, y_redis) = (
        top + 34.0 * s,
        bottom - other.map_or(0.0, |_| OTHER_LANE * s),
    );
    let lanes = t.mode.map_or(1, Mode::connections).max(1);
    let lane_gap = if lanes > 1 {
        (y_redis - y_client) * POOL_LANES_SHARE / (lanes - 1) as f64
    } else {
        0.0
    };
    let masters = if t.on_cluster() { t.redis_lanes() } else { 1 };
    let master_gap = if masters > 1 {
        (y_redis - y_client) * MASTER_LANES_SHARE / (masters - 1) as f64
    } else {
        0.0
    };
    let p = Panel {
        ctx,
        f,
        axis,
        texts,
        t,
        top,
        y_client,
        y_redis,
        lanes,
        lane_gap,
        masters,
        master_gap,
        master_spans: RefCell::new([0; MAX_COUNTED_MASTERS]),
        // A pool's connections each go one command at a time: sequential's colours.
        colours: if t.is_sequential() || lanes > 1 {
            f.palette.seq
        } else {
            f.palette.pipe
        },
    };
    let heading_end = p.heading();
    p.lanes();
    if let Some(trips) = trips {
        p.trip_bands(trips, heading_end);
    }
    // Arrows stay in the plot: one that began before the window does not cross the lanes'
    // names in the gutter.
    ctx.save();
    ctx.begin_path();
    ctx.rect(axis.left_px, top, axis.right_px - axis.left_px, height);
    ctx.clip();
    let mut count = p.arrows(&t.spans, p.colours);
    let sampled = t.sampled_beyond();
    if !sampled.is_empty() {
        let bg = f.palette.background;
        let faded = (
            fade(p.colours.0, bg, SAMPLED_STRENGTH),
            fade(p.colours.1, bg, SAMPLED_STRENGTH),
        );
        count += p.arrows(sampled, (&faded.0, &faded.1));
    }
    let marks = if masters > 1 {
        p.redirect_marks(&t.spans) + p.redirect_marks(sampled)
    } else {
        0
    };
    ctx.restore();
    if masters > 1 {
        // After the arrows: the note's backing keeps it readable over them.
        p.masters_note();
        p.redirect_legend();
    }
    if let Some(first) = sampled.first() {
        p.sampled_mark(first.issued_us);
    }
    if let Some(other) = other {
        p.other_lane(other, bottom);
    }
    p.unstamped_note();
    p.finished_mark();
    DrawnTrace {
        arrows: count,
        client_lanes: lanes,
        redis_lanes: masters,
        master_spans: p.master_spans.into_inner(),
        redirect_marks: marks,
    }
}

/// A client lane's label: "Client", or on a pool "connection k of C" (k from 1).
pub fn lane_label(k: u32, lanes: u32) -> String {
    if lanes <= 1 {
        "Client".to_string()
    } else {
        format!("connection {} of {lanes}", k + 1)
    }
}

/// Which of a pool's `lanes` client lanes get a label, `gap` px apart with labels `px` tall:
/// every one where they fit, else the first and the last (and their count says the rest).
pub fn labelled_lanes(lanes: u32, gap: f64, px: f64) -> Vec<u32> {
    if lanes <= 1 || gap >= px {
        (0..lanes.max(1)).collect()
    } else {
        vec![0, lanes - 1]
    }
}

impl Panel<'_> {
    fn visible_end(&self) -> f64 {
        self.axis.end_us.min(self.f.position_us)
    }

    /// Separator, title (mode and network) and what of the run is drawn (left out where it
    /// does not fit: the card's heading says it too). Returns where its text ends (x).
    fn heading(&self) -> f64 {
        let (ctx, f, t, s) = (self.ctx, self.f, self.t, self.f.scale);
        ctx.set_stroke_style_str(f.palette.grid);
        ctx.set_line_width(1.0);
        ctx.begin_path();
        ctx.move_to(0.0, self.top.round() + 0.5);
        ctx.line_to(f.width, self.top.round() + 0.5);
        ctx.stroke();
        ctx.set_text_align("left");
        ctx.set_fill_style_str(self.colours.0);
        ctx.set_font(&f.font(15.0, "800"));
        let mut title = match (&t.observed, t.mode) {
            (Some(observed), _) => observed.clone(),
            (None, Some(Mode::Sequential)) => "sequential · one at a time".to_string(),
            (None, Some(mode)) => mode.label(),
            (None, None) => format!("run #{}", t.run),
        };
        if let Some(network) = t.network {
            title += &format!(" · {}", network.label());
        }
        let y = self.top + 17.0 * s;
        let Some(title) = self.texts.put(ctx, &title, 10.0 * s, &[y], "left") else {
            return 10.0 * s;
        };
        let mut end = title.x + title.w;
        if let Some(note) = trace::drawn_note(t) {
            ctx.set_fill_style_str(f.palette.muted);
            ctx.set_font(&f.font(12.0, "400"));
            let x = end + 14.0 * s;
            let fits = Texts::measure(ctx, &note, x, y, "left").w + x <= self.axis.right_px;
            if let Some(l) = fits
                .then(|| self.texts.put(ctx, &note, x, &[y], "left"))
                .flatten()
            {
                end = l.x + l.w;
            }
        }
        end
    }

    /// Client lane `k`'s height (the lane of connection `k`).
    fn y_lane(&self, k: u32) -> f64 {
        self.y_client + k.min(self.lanes - 1) as f64 * self.lane_gap
    }

    /// Master `k`'s Redis lane (the first is the highest; the last is `y_redis`).
    fn y_master(&self, k: u32) -> f64 {
        self.y_redis - (self.masters - 1 - k.min(self.masters - 1)) as f64 * self.master_gap
    }

    /// Where request `sp` is served: on a cluster its master's lane (measured by the engine).
    fn y_server(&self, sp: &Span) -> f64 {
        match sp.node {
            Some(n) if self.masters > 1 => self.y_master(u32::from(n)),
            _ => self.y_redis,
        }
    }

    /// Where request `sp` leaves from: its connection's lane.
    fn y_of(&self, sp: &Span) -> f64 {
        match self.t.mode {
            Some(mode) if self.lanes > 1 => self.y_lane(mode.connection_of(sp.i)),
            _ => self.y_client,
        }
    }

    /// The Client lanes (one per connection) and the Redis lane with their names (an observed
    /// connection's are the proxy's two sides: it stamps commands from the client and their
    /// trip to Redis and back).
    fn lanes(&self) {
        let (ctx, f, s) = (self.ctx, self.f, self.f.scale);
        ctx.set_fill_style_str(f.palette.ink);
        ctx.set_text_align("right");
        let x = GUTTER * s - 10.0 * s;
        match self.t.observed {
            Some(_) => {
                ctx.set_font(&f.font(11.0, "700"));
                self.texts.put(
                    ctx,
                    "client ⇄ proxy",
                    x,
                    &[self.y_client + 4.0 * s],
                    "right",
                );
                self.texts
                    .put(ctx, "proxy ⇄ Redis", x, &[self.y_redis + 4.0 * s], "right");
            }
            None if self.masters > 1 => {
                ctx.set_font(&f.font(13.0, "700"));
                self.texts
                    .put(ctx, "Client", x, &[self.y_client + 4.0 * s], "right");
                let px = 10.5;
                ctx.set_font(&f.font(px, "700"));
                for k in labelled_lanes(self.masters, self.master_gap, (px + 1.0) * s) {
                    let label = self.t.master_label(k);
                    self.texts
                        .put(ctx, &label, x, &[self.y_master(k) + 3.5 * s], "right");
                }
            }
            None if self.lanes > 1 => {
                let px = 10.0;
                ctx.set_font(&f.font(px, "700"));
                for k in labelled_lanes(self.lanes, self.lane_gap, (px + 1.0) * s) {
                    let y = self.y_lane(k);
                    self.texts
                        .put(ctx, &lane_label(k, self.lanes), x, &[y + 3.5 * s], "right");
                }
                ctx.set_font(&f.font(13.0, "700"));
                self.texts
                    .put(ctx, "Redis", x, &[self.y_redis + 4.0 * s], "right");
            }
            None => {
                ctx.set_font(&f.font(13.0, "700"));
                self.texts
                    .put(ctx, "Client", x, &[self.y_client + 4.0 * s], "right");
                self.texts
                    .put(ctx, "Redis", x, &[self.y_redis + 4.0 * s], "right");
            }
        }
        ctx.set_stroke_style_str(f.palette.lane);
        // Many lanes: thinner, so they stay lanes and not a grey block.
        let pool_width = (self.lane_gap / 3.0).clamp(0.5, 2.0 * s);
        for (k, y) in (0..self.lanes)
            .map(|k| (k, self.y_lane(k)))
            .chain((0..self.masters).map(|m| (u32::MAX, self.y_master(m))))
        {
            let width = if k == u32::MAX || self.lanes == 1 {
                2.0 * s
            } else {
                pool_width
            };
            ctx.set_line_width(width);
            ctx.begin_path();
            ctx.move_to(self.axis.left_px, y);
            ctx.line_to(self.axis.right_px, y);
            ctx.stroke();
        }
    }

    /// A shaded band per round trip the mode paid, from its first write to its last reply
    /// (none when every request is its own round trip). Labels start after `heading_end`.
    fn trip_bands(&self, trips: &[Trip], heading_end: f64) {
        let (ctx, f, axis, s) = (self.ctx, self.f, self.axis, self.f.scale);
        if trips.len() >= self.t.spans.len() {
            return;
        }
        let (start, end, pos) = (axis.start_us, self.visible_end(), f.position_us);
        let first = trips.partition_point(|b| b.last_reply_us < start);
        let last = trips.partition_point(|b| b.issued_us <= end);
        // Labels only where they fit, never over the heading or the previous label.
        let mut label_end = heading_end + 8.0 * s;
        for (n, b) in trips.iter().enumerate().take(last).skip(first) {
            let x0 = axis.x(b.issued_us).max(axis.left_px);
            let x1 = axis.x(b.last_reply_us.min(pos)).min(axis.right_px);
            ctx.set_fill_style_str(f.palette.band[n % 2]);
            ctx.fill_rect(
                x0,
                self.y_client - 8.0 * s,
                (x1 - x0).max(1.0),
                self.y_redis - self.y_client + 16.0 * s,
            );
            let lx = (x0 + 4.0 * s).max(label_end);
            if x1 - lx > 56.0 * s {
                ctx.set_fill_style_str(f.palette.muted);
                ctx.set_font(&f.font(11.0, "600"));
                ctx.set_text_align("left");
                let label = trip_label(self.t.mode, n + 1, b.end - b.start);
                let y = self.y_client - 12.0 * s;
                let w = Texts::measure(ctx, &label, lx, y, "left").w;
                if w + 4.0 * s < x1 - lx
                    && let Some(l) = self.texts.put(ctx, &label, lx, &[y], "left")
                {
                    label_end = l.x + l.w + 8.0 * s;
                }
            }
        }
    }

    /// The other client's lane at `y`: each of its INCRs an arrow up to Redis (at the midpoint of
    /// its round trip, an estimate) and back, highlighted when the counter values say Redis ran
    /// it inside one of the run's batches (measured).
    fn other_lane(&self, other: &Interleaving, y: f64) {
        let (ctx, f, axis, s) = (self.ctx, self.f, self.axis, self.f.scale);
        ctx.set_fill_style_str(f.palette.ink);
        ctx.set_text_align("right");
        ctx.set_font(&f.font(12.0, "700"));
        self.texts.put(
            ctx,
            "Other client",
            GUTTER * s - 10.0 * s,
            &[y + 4.0 * s],
            "right",
        );
        ctx.set_stroke_style_str(f.palette.lane);
        ctx.set_line_width(1.0 * s);
        ctx.begin_path();
        ctx.move_to(axis.left_px, y);
        ctx.line_to(axis.right_px, y);
        ctx.stroke();
        let (start, end, pos) = (axis.start_us, self.visible_end(), f.position_us);
        let incrs = &other.other_first;
        let lo = incrs.partition_point(|o| o.replied_us < start);
        let hi = incrs.partition_point(|o| o.issued_us <= end);
        for (inside, colour, width) in [
            (false, f.palette.other.0, 1.0),
            (true, f.palette.other.1, 2.0),
        ] {
            ctx.set_stroke_style_str(colour);
            ctx.set_line_width(width * s);
            ctx.begin_path();
            for o in incrs.get(lo..hi).unwrap_or_default() {
                if other.batch_holding(o.value).is_some() != inside {
                    continue;
                }
                let at = (o.issued_us + o.replied_us) / 2.0;
                ctx.move_to(axis.x(o.issued_us), y);
                ctx.line_to(axis.x(at.min(pos)), self.y_redis);
                if o.replied_us <= pos {
                    ctx.move_to(axis.x(at), self.y_redis);
                    ctx.line_to(axis.x(o.replied_us), y);
                }
            }
            ctx.stroke();
        }
        ctx.set_fill_style_str(f.palette.other.1);
        ctx.set_font(&f.font(11.0, "600"));
        ctx.set_text_align("right");
        self.texts.put(
            ctx,
            "red: ran inside a batch (INCR replies give Redis's order)",
            axis.right_px,
            &[y + 14.0 * s],
            "right",
        );
    }

    /// Arrows for `spans` (in order of `i`) whose round trip overlaps the window and had begun by
    /// the playhead, in `colours` (request, reply). Returns how many were drawn.
    fn arrows(&self, spans: &[Span], colours: (&str, &str)) -> usize {
        let (start, end) = (self.axis.start_us, self.visible_end());
        let style = if self.lanes > 1 || self.masters > 1 {
            // A pool's connections (or a cluster's masters) each keep their own pace, so in
            // order of `i` its requests are not in order of time: every one is tried (the requests and replies skip those
            // outside the picture), a few thousand comparisons a frame.
            let shown = spans
                .iter()
                .filter(|sp| sp.issued_us <= end && sp.replied_us >= start)
                .count();
            if shown == 0 {
                return 0;
            }
            ArrowStyle::for_count(self.axis, shown, self.f.scale)
        } else {
            let lo = spans.partition_point(|sp| sp.replied_us < start);
            let hi = spans.partition_point(|sp| sp.issued_us <= end);
            if hi <= lo {
                return 0;
            }
            let shown = &spans[lo..hi];
            let style = ArrowStyle::for_spans(self.axis, shown, self.f.scale);
            return self.draw_arrows(shown, &style, colours);
        };
        self.draw_arrows(spans, &style, colours)
    }

    fn draw_arrows(&self, spans: &[Span], style: &ArrowStyle, colours: (&str, &str)) -> usize {
        self.ctx.set_line_width(style.width);
        self.ctx
            .set_global_alpha(if style.dense { 0.75 } else { 1.0 });
        let count = self.requests(spans, style, colours.0) + self.replies(spans, style, colours.1);
        self.ctx.set_global_alpha(1.0);
        count
    }

    /// Requests: client → Redis, as far as the playhead.
    fn requests(&self, spans: &[Span], style: &ArrowStyle, colour: &str) -> usize {
        let (ctx, axis, pos) = (self.ctx, self.axis, self.f.position_us);
        ctx.set_stroke_style_str(colour);
        ctx.begin_path();
        let mut count = 0;
        for sp in spans {
            // Only a pool's or a cluster's requests (see `arrows`) may lie outside the picture.
            if sp.issued_us > pos.min(axis.end_us) || sp.replied_us < axis.start_us {
                continue;
            }
            count += 1;
            let at = at_server_us(sp);
            let y0 = self.y_of(sp);
            let x0 = axis.x(sp.issued_us);
            let u = if at > sp.issued_us {
                (pos - sp.issued_us) / (at - sp.issued_us)
            } else {
                1.0
            };
            let y_server = self.y_server(sp);
            if let Some(n) = sp.node.filter(|_| u >= 1.0)
                && let Some(c) = self.master_spans.borrow_mut().get_mut(usize::from(n))
            {
                *c += 1;
            }
            let (x1, y1) = (lerp(x0, axis.x(at), u), lerp(y0, y_server, u));
            ctx.move_to(x0, y0);
            ctx.line_to(x1, y1);
            if style.heads && u >= 1.0 {
                head(ctx, (x0, y0), (x1, y1), style.head_size);
            }
        }
        ctx.stroke();
        count
    }

    /// Replies: Redis → client, once the reply left Redis (measured, or by our estimate), with
    /// the measured time inside Redis along its lane.
    fn replies(&self, spans: &[Span], style: &ArrowStyle, colour: &str) -> usize {
        let (ctx, axis, pos) = (self.ctx, self.axis, self.f.position_us);
        ctx.set_stroke_style_str(colour);
        ctx.begin_path();
        let mut count = 0;
        for sp in spans {
            if sp.issued_us > pos.min(axis.end_us) || sp.replied_us < axis.start_us {
                continue;
            }
            let (at, from) = (at_server_us(sp), from_server_us(sp));
            let y_redis = self.y_server(sp);
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
                lerp(y_redis, self.y_of(sp), u),
            );
            ctx.move_to(x0, y_redis);
            ctx.line_to(x1, y1);
            if style.heads && u >= 1.0 {
                head(ctx, (x0, y_redis), (x1, y1), style.head_size);
            }
            count += 1;
        }
        ctx.stroke();
        count
    }

    /// Where the full requests end and the sample begins: a dotted line and what is drawn after it.
    fn sampled_mark(&self, from_us: f64) {
        let (ctx, f, axis, s) = (self.ctx, self.f, self.axis, self.f.scale);
        if from_us > axis.end_us {
            return;
        }
        let x = axis.x(from_us).max(axis.left_px);
        if from_us >= axis.start_us {
            ctx.set_stroke_style_str(f.palette.muted);
            ctx.set_line_width(1.0 * s);
            let _ = ctx.set_line_dash(&js_dash(s * 0.5));
            ctx.begin_path();
            ctx.move_to(x, self.y_client - 14.0 * s);
            ctx.line_to(x, self.y_redis + 8.0 * s);
            ctx.stroke();
            let _ = ctx.set_line_dash(&js_sys::Array::new());
        }
        let label = format!(
            "sampled from here: every {} request (lighter)",
            trace::ordinal(self.t.stride)
        );
        self.note(&label, x + 6.0 * s, self.y_client + 16.0 * s);
    }

    /// Says on the Redis lane when some drawn requests were not stamped by the wire tap.
    fn unstamped_note(&self) {
        let n = self.t.unstamped();
        if n == 0 {
            return;
        }
        let total = self.t.spans.len() + self.t.sampled_beyond().len();
        let label = format!(
            "{} of {} drawn requests not stamped by the wire tap: their arrival at Redis is drawn at the midpoint (an estimate)",
            crate::format::count(n as u64),
            crate::format::count(total as u64),
        );
        let s = self.f.scale;
        self.note(&label, self.axis.left_px + 6.0 * s, self.y_redis - 8.0 * s);
    }

    /// Baselines for a label between the lanes: `y` first, then a line further from the
    /// client lane, then one nearer, never beyond the lanes.
    fn between_lanes(&self, y: f64) -> Vec<f64> {
        let line = 16.0 * self.f.scale;
        [y, y + line, y - line, y + 2.0 * line]
            .into_iter()
            .filter(|y| *y > self.y_client && *y < self.y_master(0))
            .collect()
    }

    /// Small muted text on a backing, readable over arrows, at the first of `y`'s baselines
    /// where it is clear of every other label (not drawn where there is none).
    fn note(&self, text: &str, x: f64, y: f64) {
        let (ctx, f, s) = (self.ctx, self.f, self.f.scale);
        ctx.set_font(&f.font(11.0, "600"));
        let w = Texts::measure(ctx, text, x, y, "left").w;
        let x = x
            .min(self.axis.right_px - w - 4.0 * s)
            .max(self.axis.left_px);
        let ys = self.between_lanes(y);
        let Some(y) = ys
            .iter()
            .copied()
            .find(|&y| self.texts.fits(&Texts::measure(ctx, text, x, y, "left")))
        else {
            return;
        };
        ctx.set_global_alpha(0.85);
        ctx.set_fill_style_str(f.palette.background);
        ctx.fill_rect(x - 3.0 * s, y - 11.0 * s, w + 6.0 * s, 15.0 * s);
        ctx.set_global_alpha(1.0);
        ctx.set_fill_style_str(f.palette.muted);
        self.texts.put(ctx, text, x, &[y], "left");
    }

    /// A diamond on its master's lane where each redirected request of `spans` arrived (once
    /// the playhead is past it). Returns how many were drawn.
    fn redirect_marks(&self, spans: &[Span]) -> u32 {
        let (ctx, f, axis, s) = (self.ctx, self.f, self.axis, self.f.scale);
        let end = self.visible_end();
        let r = 4.5 * s;
        ctx.set_fill_style_str(f.palette.other.1);
        ctx.begin_path();
        let mut n = 0;
        for sp in spans.iter().filter(|sp| sp.redirect.is_some()) {
            let at = at_server_us(sp);
            if at > end || at < axis.start_us {
                continue;
            }
            let (x, y) = (axis.x(at), self.y_server(sp));
            ctx.move_to(x, y - r);
            ctx.line_to(x + r, y);
            ctx.line_to(x, y + r);
            ctx.line_to(x - r, y);
            ctx.close_path();
            n += 1;
        }
        ctx.fill();
        n
    }

    /// The redirect mark's legend under the lowest master lane, with the run's redirects as
    /// the engine counted them once it finished.
    fn redirect_legend(&self) {
        let (ctx, f, s) = (self.ctx, self.f, self.f.scale);
        let mut text = REDIRECT_LEGEND.to_string();
        if let Some(c) = self.t.summary.as_ref().and_then(|s| s.cluster.as_ref()) {
            text += &format!(
                " · this run: {} MOVED, {} ASK (counted by the engine)",
                crate::format::count(c.moved),
                crate::format::count(c.ask)
            );
        }
        ctx.set_font(&f.font(10.5, "600"));
        ctx.set_fill_style_str(f.palette.other.1);
        // Under the lowest lane; in the last panel the footer is there: above the lanes' note.
        let ys = [self.y_redis + 13.0 * s, self.y_master(0) - 19.0 * s];
        self.texts.put(ctx, &text, self.axis.right_px, &ys, "right");
    }

    /// Says where the master lanes' split comes from, at the right over the first of them.
    fn masters_note(&self) {
        let text = "one Redis lane per master · measured by the engine: which master answered";
        self.note(
            text,
            self.axis.right_px,
            self.y_master(0) - 6.0 * self.f.scale,
        );
    }

    /// Where the run finished, once playback gets there.
    fn finished_mark(&self) {
        let (ctx, f, axis, t, s) = (self.ctx, self.f, self.axis, self.t, self.f.scale);
        let Some(summary) = &t.summary else { return };
        let done = summary.wall_us as f64;
        let whole = (t.spans.len() as u64) >= t.count || !t.sampled_beyond().is_empty();
        if !whole || done > f.position_us || done < axis.start_us || done > axis.end_us {
            return;
        }
        let x = axis.x(done);
        let (y_client, y_redis) = (self.y_client, self.y_redis);
        ctx.set_stroke_style_str(self.colours.0);
        ctx.set_line_width(2.0 * s);
        let _ = ctx.set_line_dash(&js_dash(s));
        ctx.begin_path();
        ctx.move_to(x, y_client - 14.0 * s);
        ctx.line_to(x, y_redis + 8.0 * s);
        ctx.stroke();
        let _ = ctx.set_line_dash(&js_sys::Array::new());
        ctx.set_fill_style_str(self.colours.0);
        ctx.set_font(&f.font(13.0, "800"));
        let label = format!("finished · {}", timeaxis::duration(done));
        let w = Texts::measure(ctx, &label, x, y_client, "left").w;
        let right = x + 6.0 * s + w <= axis.right_px;
        let ys = self.between_lanes((y_client + y_redis) / 2.0);
        self.texts.put(
            ctx,
            &label,
            if right { x + 6.0 * s } else { x - 6.0 * s },
            &ys,
            if right { "left" } else { "right" },
        );
    }
}

/// A band's label: what one round trip of this mode is, and how many requests it answered.
pub fn trip_label(mode: Option<Mode>, n: usize, requests: usize) -> String {
    match mode {
        Some(Mode::Multiplexed { .. }) => format!("read {n} · {requests} replies"),
        Some(Mode::Mset { .. }) => format!("round trip {n} · {requests} keys"),
        _ => format!("round trip {n} · {requests} cmds"),
    }
}

/// Line width and heads for a set of arrows: dense pictures get thinner lines and no heads
/// (they would only smear).
struct ArrowStyle {
    dense: bool,
    heads: bool,
    width: f64,
    head_size: f64,
}

impl ArrowStyle {
    fn for_spans(axis: &Axis, spans: &[Span], s: f64) -> Self {
        let shown = spans.len();
        let span_px = if shown > 1 {
            (axis.x(spans[shown - 1].issued_us) - axis.x(spans[0].issued_us)) / shown as f64
        } else {
            f64::INFINITY
        };
        Self::with(shown, span_px, s)
    }

    /// For `shown` arrows spread over the window (a pool's, whose order is not time's).
    fn for_count(axis: &Axis, shown: usize, s: f64) -> Self {
        Self::with(
            shown,
            (axis.right_px - axis.left_px) / shown.max(1) as f64,
            s,
        )
    }

    fn with(shown: usize, span_px: f64, s: f64) -> Self {
        let dense = shown > 1500;
        ArrowStyle {
            dense,
            heads: span_px > 10.0 * s || shown <= 40,
            width: if dense { 1.0 } else { 1.6 * s },
            head_size: 7.0 * s,
        }
    }
}

/// `colour` kept at `strength` (0..=1) over `background`, both `#rrggbb`: `#rrggbb` again.
/// Anything else comes back unchanged.
pub fn fade(colour: &str, background: &str, strength: f64) -> String {
    let rgb = |c: &str| -> Option<[f64; 3]> {
        let hex = c.strip_prefix('#').filter(|h| h.len() == 6)?;
        let ch = |k: usize| u8::from_str_radix(&hex[k..k + 2], 16).ok().map(f64::from);
        Some([ch(0)?, ch(2)?, ch(4)?])
    };
    let (Some(c), Some(b)) = (rgb(colour), rgb(background)) else {
        return colour.to_string();
    };
    let mix = |k: usize| (b[k] + (c[k] - b[k]) * strength.clamp(0.0, 1.0)).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2))
}

fn lerp(a: f64, b: f64, u: f64) -> f64 {
    a + (b - a) * u.clamp(0.0, 1.0)
}

/// An arrow head at `to`, pointing away from `from` (added to the current path).
fn head(ctx: &Ctx, from: (f64, f64), to: (f64, f64), size: f64) {
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let len = (dx * dx + dy * dy).sqrt().max(1e-6);
    let (ux, uy) = (dx / len, dy / len);
    for side in [-1.0, 1.0] {
        ctx.move_to(to.0, to.1);
        ctx.line_to(
            to.0 - size * ux + side * size * 0.45 * uy,
            to.1 - size * uy - side * size * 0.45 * ux,
        );
    }
}

fn js_dash(scale: f64) -> js_sys::Array {
    let a = js_sys::Array::new();
    a.push(&(6.0 * scale).into());
    a.push(&(4.0 * scale).into());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_faded_colour_lies_between_the_colour_and_the_background() {
        assert_eq!(fade("#1d4ed8", "#ffffff", 1.0), "#1d4ed8");
        assert_eq!(fade("#1d4ed8", "#ffffff", 0.0), "#ffffff");
        assert_eq!(fade("#000000", "#ffffff", 0.3), "#b3b3b3");
        assert_eq!(fade("rgba(0,0,0,1)", "#ffffff", 0.3), "rgba(0,0,0,1)");
    }

    #[test]
    fn a_pool_s_lanes_are_named_by_connection() {
        assert_eq!(lane_label(0, 1), "Client");
        assert_eq!(lane_label(0, 8), "connection 1 of 8");
        assert_eq!(lane_label(7, 8), "connection 8 of 8");
        // Room for every label, or only the first and the last.
        assert_eq!(labelled_lanes(8, 14.0, 11.0), (0..8).collect::<Vec<_>>());
        assert_eq!(labelled_lanes(50, 2.0, 11.0), [0, 49]);
        assert_eq!(labelled_lanes(1, 0.0, 11.0), [0]);
    }

    #[test]
    fn a_multiplexed_band_is_a_read_that_brought_replies() {
        let mux = Mode::Multiplexed { in_flight: 8 };
        assert_eq!(trip_label(Some(mux), 3, 5), "read 3 · 5 replies");
        assert_eq!(
            trip_label(Some(Mode::pipelined(10)), 1, 10),
            "round trip 1 · 10 cmds"
        );
    }
}
