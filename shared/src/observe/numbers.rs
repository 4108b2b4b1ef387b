//! How numbers are said in every sentence about a connection: counts with their noun (their
//! digits grouped by `crate::digits`), durations, shares. It knows nothing of verdicts, so
//! anything may use it.

pub use crate::digits::count;

/// µs → "850 µs", "12.3 ms", "4.56 s".
pub fn duration(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// `part` of `total` as a whole percent, "89"; a part strictly between none and all is never
/// rounded to "0" or "100", which would say there was nothing else, or nothing of it.
pub fn percent(part: f64, total: f64) -> String {
    if total <= 0.0 {
        return "0".into();
    }
    let p = part / total * 100.0;
    let shown = if part > 0.0 && part < total {
        p.round().clamp(1.0, 99.0)
    } else {
        p.round()
    };
    format!("{shown:.0}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_between_none_and_all_is_never_said_as_either() {
        assert_eq!(percent(89.4, 100.0), "89");
        assert_eq!(percent(99.6, 100.0), "99");
        assert_eq!(percent(0.2, 100.0), "1");
        assert_eq!(percent(100.0, 100.0), "100");
        assert_eq!(percent(0.0, 100.0), "0");
        assert_eq!(percent(1.0, 0.0), "0");
    }

    #[test]
    fn counts_and_durations_are_worded() {
        assert_eq!(count(1, "write"), "1 write");
        assert_eq!(count(1000, "write"), "1,000 writes");
        assert_eq!(duration(12_345.0), "12.3 ms");
    }
}
