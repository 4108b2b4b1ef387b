//! What a panel marks over its arrows: where the sample begins, where the run finished, the
//! redirects on a cluster's master lanes and their legend, and short notes on how a figure was
//! obtained, each on a backing so it stays readable over the arrows.

use shared::Span;

use crate::timeaxis;
use crate::trace::{self, at_server_us};

use super::labels::Texts;
use super::panel::Panel;

/// The legend of a redirect mark.
pub(super) const REDIRECT_LEGEND: &str = "◆ MOVED / ASK: sent again where Redis said";

impl Panel<'_> {
    /// Where the full requests end and the sample begins: a dotted line and what is drawn after it.
    pub(super) fn sampled_mark(&self, from_us: f64) {
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
    pub(super) fn unstamped_note(&self) {
        let n = self.t.unstamped();
        if n == 0 {
            return;
        }
        let total = self.t.spans.len() + self.t.sampled_beyond().len();
        let label = format!(
            "{} of {} drawn requests not stamped by the wire tap: their arrival at Redis is drawn at the midpoint (an estimate)",
            crate::format::group(n as u64),
            crate::format::group(total as u64),
        );
        let s = self.f.scale;
        self.note(&label, self.axis.left_px + 6.0 * s, self.y_redis - 8.0 * s);
    }

    /// Baselines for a label between the lanes: `y` first, then a line further from the
    /// client lane, then one nearer, never beyond the lanes.
    pub(super) fn between_lanes(&self, y: f64) -> Vec<f64> {
        let line = 16.0 * self.f.scale;
        [y, y + line, y - line, y + 2.0 * line]
            .into_iter()
            .filter(|y| *y > self.y_client && *y < self.y_master(0))
            .collect()
    }

    /// Small muted text on a backing, readable over arrows, at the first of `y`'s baselines
    /// where it is clear of every other label (not drawn where there is none).
    pub(super) fn note(&self, text: &str, x: f64, y: f64) {
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
    pub(super) fn redirect_marks(&self, spans: &[Span]) -> u32 {
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
    pub(super) fn redirect_legend(&self) {
        let (ctx, f, s) = (self.ctx, self.f, self.f.scale);
        let mut text = REDIRECT_LEGEND.to_string();
        if let Some(c) = self.t.summary.as_ref().and_then(|s| s.cluster.as_ref()) {
            text += &format!(
                " · this run: {} MOVED, {} ASK (counted by the engine)",
                crate::format::group(c.moved),
                crate::format::group(c.ask)
            );
        }
        ctx.set_font(&f.font(10.5, "600"));
        ctx.set_fill_style_str(f.palette.other.1);
        // Under the lowest lane; in the last panel the footer is there: above the lanes' note.
        let ys = [self.y_redis + 13.0 * s, self.y_master(0) - 19.0 * s];
        self.texts.put(ctx, &text, self.axis.right_px, &ys, "right");
    }

    /// Says where the master lanes' split comes from, at the right over the first of them.
    pub(super) fn masters_note(&self) {
        let text = "one Redis lane per master · measured by the engine: which master answered";
        self.note(
            text,
            self.axis.right_px,
            self.y_master(0) - 6.0 * self.f.scale,
        );
    }

    /// Where the run finished, once playback gets there.
    pub(super) fn finished_mark(&self) {
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

pub(super) fn js_dash(scale: f64) -> js_sys::Array {
    let a = js_sys::Array::new();
    a.push(&(6.0 * scale).into());
    a.push(&(4.0 * scale).into());
    a
}
