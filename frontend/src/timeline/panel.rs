//! One run's panel: where its lanes lie (a client lane per connection, a Redis lane per master)
//! and its heading.

use std::cell::RefCell;

use web_sys::CanvasRenderingContext2d as Ctx;

use crate::timeaxis::Axis;
use crate::trace::{self, Trace};
use shared::{Mode, Span};

use super::frame::{Frame, MAX_COUNTED_MASTERS, OTHER_LANE};
use super::labels::Texts;

/// One run's panel: where its lanes are and what it is drawn with.
pub(super) struct Panel<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) f: &'a Frame<'a>,
    pub(super) axis: &'a Axis,
    pub(super) texts: &'a Texts,
    pub(super) t: &'a Trace,
    pub(super) top: f64,
    pub(super) height: f64,
    /// The (first) client lane.
    pub(super) y_client: f64,
    pub(super) y_redis: f64,
    /// The panel's lowest line: the other client's lane, where the run has one.
    pub(super) bottom: f64,
    /// Client lanes: the run's connections (`Mode::connections`), one under the other from
    /// `y_client`, `lane_gap` apart.
    pub(super) lanes: u32,
    pub(super) lane_gap: f64,
    /// Redis lanes: a cluster's masters, one above the other up from `y_redis`,
    /// `master_gap` apart (one lane elsewhere).
    pub(super) masters: u32,
    pub(super) master_gap: f64,
    /// Requests drawn to each master's lane.
    pub(super) master_spans: RefCell<[u32; MAX_COUNTED_MASTERS]>,
    /// (request, reply).
    pub(super) colours: (&'static str, &'static str),
}

/// How far down towards Redis a pool's client lanes reach (a share of the gap between the
/// first client lane and Redis's), leaving the rest to the arrows.
const POOL_LANES_SHARE: f64 = 0.6;
/// How far up towards the client a cluster's master lanes reach, likewise.
const MASTER_LANES_SHARE: f64 = 0.5;

impl<'a> Panel<'a> {
    /// The panel of `t` from `top`, `height` tall: its lanes placed, nothing drawn yet.
    pub(super) fn new(
        ctx: &'a Ctx,
        f: &'a Frame<'a>,
        axis: &'a Axis,
        texts: &'a Texts,
        t: &'a Trace,
        top: f64,
        height: f64,
    ) -> Self {
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
        Panel {
            ctx,
            f,
            axis,
            texts,
            t,
            top,
            height,
            y_client,
            y_redis,
            bottom,
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
        }
    }

    pub(super) fn visible_end(&self) -> f64 {
        self.axis.end_us.min(self.f.position_us)
    }

    /// Separator, title (mode and network) and what of the run is drawn (left out where it
    /// does not fit: the card's heading says it too). Returns where its text ends (x).
    pub(super) fn heading(&self) -> f64 {
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
    pub(super) fn y_lane(&self, k: u32) -> f64 {
        self.y_client + k.min(self.lanes - 1) as f64 * self.lane_gap
    }

    /// Master `k`'s Redis lane (the first is the highest; the last is `y_redis`).
    pub(super) fn y_master(&self, k: u32) -> f64 {
        self.y_redis - (self.masters - 1 - k.min(self.masters - 1)) as f64 * self.master_gap
    }

    /// Where request `sp` is served: on a cluster its master's lane (measured by the engine).
    pub(super) fn y_server(&self, sp: &Span) -> f64 {
        match sp.node {
            Some(n) if self.masters > 1 => self.y_master(u32::from(n)),
            _ => self.y_redis,
        }
    }

    /// Where request `sp` leaves from: its connection's lane.
    pub(super) fn y_of(&self, sp: &Span) -> f64 {
        match self.t.mode {
            Some(mode) if self.lanes > 1 => self.y_lane(mode.connection_of(sp.i)),
            _ => self.y_client,
        }
    }
}
