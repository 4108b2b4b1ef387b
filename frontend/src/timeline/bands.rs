//! The shaded band behind each round trip a run's mode paid, labelled with what the round trip
//! was and how many requests it answered.

use shared::Mode;

use crate::trace::Trip;

use super::labels::Texts;
use super::panel::Panel;

impl Panel<'_> {
    /// A shaded band per round trip the mode paid, from its first write to its last reply
    /// (none when every request is its own round trip). Labels start after `heading_end`.
    pub(super) fn trip_bands(&self, trips: &[Trip], heading_end: f64) {
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
}

/// A band's label: what one round trip of this mode is, and how many requests it answered.
pub(super) fn trip_label(mode: Option<Mode>, n: usize, requests: usize) -> String {
    match mode {
        Some(Mode::Multiplexed { .. }) => format!("read {n} · {requests} replies"),
        Some(Mode::Mset { .. }) => format!("round trip {n} · {requests} keys"),
        _ => format!("round trip {n} · {requests} cmds"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

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
