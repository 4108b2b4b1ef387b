//! The requests and replies as arrows: out to Redis at the measured (or estimated) arrival,
//! along Redis's lane for its time there, and back, each drawn as far as the playhead. All
//! arrows of one colour go into one path with one `stroke`, and spans outside the window are
//! skipped by binary search, so tens of thousands stay at 60 fps.

use web_sys::CanvasRenderingContext2d as Ctx;

use crate::timeaxis::Axis;
use crate::trace::{at_server_us, from_server_us};
use shared::Span;

use super::palette::{SAMPLED_STRENGTH, fade};
use super::panel::Panel;

impl Panel<'_> {
    /// The run's arrows, the full requests then the sample lighter, and on a cluster the
    /// redirect marks, all inside the plot: one that began before the window does not cross
    /// the lanes' names in the gutter. Returns (arrows, redirect marks) drawn.
    pub(super) fn plot(&self) -> (usize, u32) {
        let (ctx, axis, t) = (self.ctx, self.axis, self.t);
        ctx.save();
        ctx.begin_path();
        ctx.rect(
            axis.left_px,
            self.top,
            axis.right_px - axis.left_px,
            self.height,
        );
        ctx.clip();
        let mut count = self.arrows(&t.spans, self.colours);
        let sampled = t.sampled_beyond();
        if !sampled.is_empty() {
            let bg = self.f.palette.background;
            let faded = (
                fade(self.colours.0, bg, SAMPLED_STRENGTH),
                fade(self.colours.1, bg, SAMPLED_STRENGTH),
            );
            count += self.arrows(sampled, (&faded.0, &faded.1));
        }
        let marks = if self.masters > 1 {
            self.redirect_marks(&t.spans) + self.redirect_marks(sampled)
        } else {
            0
        };
        ctx.restore();
        (count, marks)
    }

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
