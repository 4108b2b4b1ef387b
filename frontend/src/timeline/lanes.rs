//! A panel's lanes and their names: the client lanes (one per connection of a pool), the Redis
//! lanes (one per master of a cluster), and the other client's lane with its INCRs.

use shared::interleave::Interleaving;

use super::frame::GUTTER;
use super::panel::Panel;

/// A client lane's label: "Client", or on a pool "connection k of C" (k from 1).
pub(super) fn lane_label(k: u32, lanes: u32) -> String {
    if lanes <= 1 {
        "Client".to_string()
    } else {
        format!("connection {} of {lanes}", k + 1)
    }
}

/// Which of a pool's `lanes` client lanes get a label, `gap` px apart with labels `px` tall:
/// every one where they fit, else the first and the last (and their count says the rest).
pub(super) fn labelled_lanes(lanes: u32, gap: f64, px: f64) -> Vec<u32> {
    if lanes <= 1 || gap >= px {
        (0..lanes.max(1)).collect()
    } else {
        vec![0, lanes - 1]
    }
}

impl Panel<'_> {
    /// The Client lanes (one per connection) and the Redis lane with their names (an observed
    /// connection's are the proxy's two sides: it stamps commands from the client and their
    /// trip to Redis and back; or a capture's, which stamps each segment once).
    pub(super) fn lanes(&self) {
        let (ctx, f, s) = (self.ctx, self.f, self.f.scale);
        ctx.set_fill_style_str(f.palette.ink);
        ctx.set_text_align("right");
        let x = GUTTER * s - 10.0 * s;
        match self.t.observed {
            Some(_) => {
                let (near, far) = if self.t.captured {
                    ("client ⇄ capture", "capture ⇄ Redis")
                } else {
                    ("client ⇄ proxy", "proxy ⇄ Redis")
                };
                ctx.set_font(&f.font(11.0, "700"));
                self.texts
                    .put(ctx, near, x, &[self.y_client + 4.0 * s], "right");
                self.texts
                    .put(ctx, far, x, &[self.y_redis + 4.0 * s], "right");
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

    /// The other client's lane at `y`: each of its INCRs an arrow up to Redis (at the midpoint of
    /// its round trip, an estimate) and back, highlighted when the counter values say Redis ran
    /// it inside one of the run's batches (measured).
    pub(super) fn other_lane(&self, other: &Interleaving, y: f64) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

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
}
