//! Human-readable numbers for the page: big counts with separators (`shared::digits`, the
//! grouping every side writes), durations in the unit that reads best, a batch size on a
//! chart's axis.

/// `1234567` → `"1,234,567"`: the grouping every side writes counts with; and a count with
/// its noun, singular or plural (`count(1, "round trip")`).
pub use shared::digits::{count, count_as, group};

/// A count a summary may not carry (a server that does not report it sends 0, and a run that
/// did anything made at least one write): `"—"` for 0.
pub fn known_count(n: u64) -> String {
    if n == 0 { "—".to_string() } else { group(n) }
}

/// Operations per second, rounded to a whole number: `"523,400"`.
pub fn rate(ops_per_sec: f64) -> String {
    if !ops_per_sec.is_finite() || ops_per_sec < 0.0 {
        return "—".to_string();
    }
    group(ops_per_sec.round() as u64)
}

/// A wall or elapsed time: `"850 ms"`, `"12.4 ms"`, `"2.35 s"`, `"1 min 05 s"`.
pub fn wall(us: u64) -> String {
    let ms = us as f64 / 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 100.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else if ms < 60_000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        let s = (ms / 1000.0).round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

/// A request latency given in microseconds: `"87 µs"`, `"1.24 ms"`, `"1.50 s"`.
pub fn latency(us: f64) -> String {
    if !us.is_finite() || us < 0.0 {
        "—".to_string()
    } else if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        let ms = us / 1000.0;
        if ms < 100.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.0} ms")
        }
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

/// A size in bytes, decimal units: `"512 B"`, `"37.6 KB"`, `"87 MB"`.
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    let (v, unit) = if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else if b >= 1e3 {
        (b / 1e3, "KB")
    } else {
        return format!("{b:.0} B");
    };
    if v < 100.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// A speed-up factor for the headline: `"23.4×"`, `"1.05×"`, `"250×"`.
pub fn factor(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}×")
    } else if x >= 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.2}×")
    }
}

/// A batch size as a chart's axis says it: `50000` → `"50k"`.
pub fn batch_label(b: u32) -> String {
    if b >= 1000 && b.is_multiple_of(1000) {
        format!("{}k", b / 1000)
    } else {
        b.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn bytes_read_in_decimal_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(37_632), "37.6 KB");
        assert_eq!(bytes(87_225_784), "87.2 MB");
        assert_eq!(bytes(250_000_000), "250 MB");
    }

    #[test]
    fn rates_and_counts_a_summary_may_lack_are_grouped() {
        assert_eq!(rate(523_399.6), "523,400");
        assert_eq!(rate(f64::NAN), "—");
        assert_eq!(known_count(0), "—");
        assert_eq!(known_count(1200), "1,200");
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(wall(1_234), "1.23 ms");
        assert_eq!(wall(12_345), "12.3 ms");
        assert_eq!(wall(850_000), "850 ms");
        assert_eq!(wall(2_345_000), "2.35 s");
        assert_eq!(wall(65_000_000), "1 min 05 s");
        assert_eq!(latency(87.4), "87 µs");
        assert_eq!(latency(1_240.0), "1.24 ms");
        assert_eq!(latency(250_000.0), "250 ms");
        assert_eq!(latency(1_500_000.0), "1.50 s");
    }

    #[test]
    fn batch_sizes_in_thousands_are_short() {
        assert_eq!(batch_label(50_000), "50k");
        assert_eq!(batch_label(1_500), "1500");
        assert_eq!(batch_label(20), "20");
    }

    #[test]
    fn factors_keep_three_significant_digits() {
        assert_eq!(factor(23.43), "23.4×");
        assert_eq!(factor(1.049), "1.05×");
        assert_eq!(factor(250.2), "250×");
    }
}
