//! Time-axis maths for the timeline, pure so it is tested on the host: run time (µs) ↔ canvas
//! pixels, "nice" ruler ticks, the logarithmic slow-motion and zoom sliders, and the window
//! that follows the playhead.

/// A linear map from run time `[start_us, end_us]` to pixels `[left_px, right_px]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    pub start_us: f64,
    pub end_us: f64,
    pub left_px: f64,
    pub right_px: f64,
}

impl Axis {
    pub fn new(start_us: f64, end_us: f64, left_px: f64, right_px: f64) -> Self {
        // A zero-width window would divide by zero; widen it to a nanosecond.
        let end_us = if end_us - start_us > 1e-3 {
            end_us
        } else {
            start_us + 1e-3
        };
        Axis {
            start_us,
            end_us,
            left_px,
            right_px,
        }
    }

    pub fn px_per_us(&self) -> f64 {
        (self.right_px - self.left_px) / (self.end_us - self.start_us)
    }

    pub fn x(&self, us: f64) -> f64 {
        self.left_px + (us - self.start_us) * self.px_per_us()
    }

    pub fn us(&self, x: f64) -> f64 {
        self.start_us + (x - self.left_px) / self.px_per_us()
    }
}

/// The tick step for `range_us` shown with at most `max_ticks` ticks: 1, 2 or 5 × 10ⁿ µs.
pub fn nice_step(range_us: f64, max_ticks: usize) -> f64 {
    let max_ticks = max_ticks.max(1) as f64;
    if range_us.is_nan() || range_us <= 0.0 || !range_us.is_finite() {
        return 1.0;
    }
    let raw = range_us / max_ticks;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// Tick positions (µs): multiples of the nice step within `[start_us, end_us]`.
pub fn ticks(start_us: f64, end_us: f64, max_ticks: usize) -> (f64, Vec<f64>) {
    let step = nice_step(end_us - start_us, max_ticks);
    let first = (start_us / step).ceil() as i64;
    let last = (end_us / step + 1e-9).floor() as i64;
    let ticks = (first..=last).map(|k| k as f64 * step).collect();
    (step, ticks)
}

/// A tick label in the unit the step reads best in: `"0"`, `"250 µs"`, `"1.5 ms"`, `"2 s"`.
pub fn tick_label(us: f64, step_us: f64) -> String {
    if us.abs() < step_us * 1e-6 {
        return "0".to_string();
    }
    // The unit the step is at least 0.1 of, so labels never need more than one decimal.
    let (value, unit, unit_step) = if step_us >= 1e5 {
        (us / 1e6, "s", step_us / 1e6)
    } else if step_us >= 1e2 {
        (us / 1e3, "ms", step_us / 1e3)
    } else {
        (us, "µs", step_us)
    };
    format!("{} {unit}", trim(value, decimals(unit_step)))
}

/// Decimals needed to print multiples of `step` exactly (1 → 0, 0.5 → 1, 0.02 → 2).
fn decimals(step: f64) -> usize {
    let mut d = 0;
    while d < 6 && (step * 10f64.powi(d as i32)).fract().abs() > 1e-6 {
        d += 1;
    }
    d
}

fn trim(value: f64, decimals: usize) -> String {
    format!("{value:.decimals$}")
}

/// A duration for labels and counters: `"0.8 µs"`, `"42 µs"`, `"1.25 ms"`, `"3.40 s"`.
pub fn duration(us: f64) -> String {
    if !us.is_finite() {
        "—".to_string()
    } else if us < 1.0 {
        // Transmission of a few dozen bytes: nanoseconds.
        format!("{:.0} ns", us * 1e3)
    } else if us < 10.0 {
        format!("{us:.1} µs")
    } else if us < 1e3 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// The slow-motion slider: positions `0..=SPEED_MAX`, ten per decade, from real time (×1) to
/// 1 µs → 1 s (×10⁶). Log scale, because the interesting factors span six decades.
pub const SPEED_MAX: u32 = 60;
/// 1 µs → 3.16 ms: a loopback round trip of ~100 µs then takes a third of a second to watch.
pub const SPEED_DEFAULT: u32 = 35;

/// Playback time per unit of run time at slider position `step`.
pub fn slowdown(step: u32) -> f64 {
    10f64.powf(step.min(SPEED_MAX) as f64 / 10.0)
}

/// `"1 µs → 10 ms"`: what one unit of real time becomes on screen at this slowdown.
pub fn speed_label(slowdown: f64) -> String {
    if slowdown < 1.0 + 1e-9 {
        return "real time".to_string();
    }
    // Pick the real unit so the playback side reads between 1 ms and 1 s where possible.
    let real_us = if slowdown >= 1e3 {
        1.0
    } else if slowdown >= 1.0 {
        1e3
    } else {
        1e6
    };
    let shown_us = real_us * slowdown;
    format!("{} → {}", unit_label(real_us), unit_label(shown_us))
}

/// `1.0 → "1 µs"`, `10_000.0 → "10 ms"`, `2_000_000.0 → "2 s"` (3 significant digits).
fn unit_label(us: f64) -> String {
    let (v, unit) = if us >= 1e6 {
        (us / 1e6, "s")
    } else if us >= 1e3 {
        (us / 1e3, "ms")
    } else {
        (us, "µs")
    };
    let s = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s} {unit}")
}

/// Where playback is after `elapsed_ms` of wall time at `slowdown`, stopped at `end_us`.
pub fn advance(position_us: f64, elapsed_ms: f64, slowdown: f64, end_us: f64) -> f64 {
    (position_us + elapsed_ms * 1e3 / slowdown.max(1e-9)).min(end_us)
}

/// The zoom slider: positions `0..=ZOOM_MAX` map the visible window, log scale, from
/// `MIN_WINDOW_US` to the whole run (`ZOOM_MAX` = fit everything).
pub const ZOOM_MAX: u32 = 100;
pub const MIN_WINDOW_US: f64 = 20.0;

pub fn zoom_window(step: u32, extent_us: f64) -> f64 {
    let max = extent_us.max(MIN_WINDOW_US);
    let f = step.min(ZOOM_MAX) as f64 / ZOOM_MAX as f64;
    MIN_WINDOW_US * (max / MIN_WINDOW_US).powf(f)
}

/// The slider position whose window is closest to `window_us` (inverse of `zoom_window`).
pub fn zoom_step(window_us: f64, extent_us: f64) -> u32 {
    let max = extent_us.max(MIN_WINDOW_US);
    if max <= MIN_WINDOW_US * (1.0 + 1e-9) {
        return ZOOM_MAX;
    }
    let f = (window_us.clamp(MIN_WINDOW_US, max) / MIN_WINDOW_US).ln() / (max / MIN_WINDOW_US).ln();
    (f * ZOOM_MAX as f64).round() as u32
}

/// The window's start so the playhead stays in view. While playing it turns like a page: the
/// playhead runs to 85 % of the window, then the window moves so it sits at 15 % (the picture
/// stays still between turns). A jump outside the window (scrub, step, replay) shows the
/// playhead at 85 %, with what led up to it. Never before 0 or past the data.
pub fn follow(start_us: f64, window_us: f64, position_us: f64, extent_us: f64) -> f64 {
    let latest = (extent_us - window_us).max(0.0);
    let offset = position_us - start_us;
    let start = if (0.0..=0.85 * window_us).contains(&offset) {
        start_us
    } else if offset > 0.0 && offset <= window_us {
        position_us - 0.15 * window_us
    } else {
        position_us - 0.85 * window_us
    };
    start.clamp(0.0, latest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn axis_maps_both_ways() {
        let a = Axis::new(100.0, 300.0, 50.0, 450.0);
        assert_eq!(a.x(100.0), 50.0);
        assert_eq!(a.x(300.0), 450.0);
        assert_eq!(a.x(200.0), 250.0);
        assert!((a.us(a.x(123.4)) - 123.4).abs() < 1e-9);
        let empty = Axis::new(5.0, 5.0, 0.0, 100.0);
        assert!(empty.px_per_us().is_finite());
    }

    #[test]
    fn nice_steps_are_1_2_5() {
        assert_eq!(nice_step(1000.0, 10), 100.0);
        assert_eq!(nice_step(1500.0, 10), 200.0);
        assert_eq!(nice_step(4000.0, 10), 500.0);
        assert_eq!(nice_step(7.0, 10), 1.0);
        assert_eq!(nice_step(0.3, 6), 0.05);
        assert_eq!(nice_step(0.0, 6), 1.0);
        assert_eq!(nice_step(2_500_000.0, 8), 500_000.0);
    }

    #[test]
    fn ticks_cover_the_window() {
        let (step, t) = ticks(130.0, 1020.0, 10);
        assert_eq!(step, 100.0);
        assert_eq!(t.first(), Some(&200.0));
        assert_eq!(t.last(), Some(&1000.0));
        let (_, t) = ticks(0.0, 1000.0, 10);
        assert_eq!(t.len(), 11);
    }

    #[test]
    fn tick_labels_use_real_units() {
        assert_eq!(tick_label(0.0, 100.0), "0");
        assert_eq!(tick_label(250.0, 50.0), "250 µs");
        assert_eq!(tick_label(1500.0, 500.0), "1.5 ms");
        assert_eq!(tick_label(2000.0, 1000.0), "2 ms");
        assert_eq!(tick_label(2_000_000.0, 500_000.0), "2.0 s");
        assert_eq!(tick_label(1_000.0, 200.0), "1.0 ms");
        assert_eq!(tick_label(1_000.0, 50.0), "1000 µs");
        assert_eq!(tick_label(0.4, 0.2), "0.4 µs");
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(duration(0.026), "26 ns");
        assert_eq!(duration(2.5), "2.5 µs");
        assert_eq!(duration(112.0), "112 µs");
        assert_eq!(duration(1_500.0), "1.50 ms");
        assert_eq!(duration(2_620_000.0), "2.62 s");
    }

    #[test]
    fn slow_motion_is_logarithmic() {
        assert_eq!(slowdown(0), 1.0);
        assert!((slowdown(30) - 1e3).abs() < 1e-6);
        assert!((slowdown(40) - 1e4).abs() < 1e-6);
        assert!((slowdown(SPEED_MAX) - 1e6).abs() < 1e-3);
        assert!((slowdown(35) / slowdown(34) - slowdown(1)).abs() < 1e-9);
        assert_eq!(speed_label(1.0), "real time");
        assert_eq!(speed_label(1e4), "1 µs → 10 ms");
        assert_eq!(speed_label(1e3), "1 µs → 1 ms");
        assert_eq!(speed_label(1e6), "1 µs → 1 s");
        assert_eq!(speed_label(100.0), "1 ms → 100 ms");
        assert_eq!(speed_label(slowdown(45)), "1 µs → 31.6 ms");
    }

    #[test]
    fn playback_advances_by_wall_time_over_slowdown() {
        // 16 ms of wall time at 1 µs → 10 ms moves 1.6 µs of run time.
        assert!((advance(10.0, 16.0, 1e4, 1e9) - 11.6).abs() < 1e-9);
        assert_eq!(advance(10.0, 1e9, 1.0, 500.0), 500.0);
    }

    #[test]
    fn zoom_goes_from_a_few_round_trips_to_the_whole_run() {
        assert!((zoom_window(0, 1e6) - MIN_WINDOW_US).abs() < 1e-9);
        assert!((zoom_window(ZOOM_MAX, 1e6) - 1e6).abs() < 1e-6);
        for step in [0, 17, 50, 99, ZOOM_MAX] {
            assert_eq!(zoom_step(zoom_window(step, 1e6), 1e6), step);
        }
        assert_eq!(zoom_step(5.0, 10.0), ZOOM_MAX);
    }

    #[test]
    fn the_window_follows_the_playhead_in_page_turns() {
        assert_eq!(follow(0.0, 100.0, 50.0, 1000.0), 0.0);
        assert_eq!(follow(0.0, 100.0, 90.0, 1000.0), 75.0);
        assert_eq!(follow(500.0, 100.0, 10.0, 1000.0), 0.0);
        assert_eq!(follow(0.0, 100.0, 990.0, 1000.0), 900.0);
        assert_eq!(follow(0.0, 2000.0, 990.0, 1000.0), 0.0);
        assert_eq!(follow(0.0, 100.0, 500.0, 1000.0), 415.0);
        assert_eq!(follow(600.0, 100.0, 85.0, 1000.0), 0.0);
    }
}
