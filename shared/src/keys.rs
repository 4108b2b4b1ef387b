//! The one key format: request `i` of run `r` writes `pipescope:<r>:k<i>`. The engine writes
//! and removes keys by it (and touches nothing outside `pipescope:`), and the page counts a
//! request's bytes on the wire by it.

/// Every key pipescope writes starts with this.
pub const PREFIX: &str = "pipescope:";

/// A run's namespace: `pipescope:<run>:`.
pub fn namespace(run: u64) -> String {
    format!("{PREFIX}{run}:")
}

/// Request `i`'s key: `pipescope:<run>:k<i>`.
pub fn key(run: u64, i: u64) -> String {
    format!("{}k{i}", namespace(run))
}

/// The one counter a run with the other client INCRs, both sides: `pipescope:<run>:counter`
/// (inside the run's namespace, so its cleanup removes it).
pub fn counter(run: u64) -> String {
    format!("{}counter", namespace(run))
}

/// `key(run, i).len()`, without building the key.
pub fn key_len(run: u64, i: u64) -> u64 {
    PREFIX.len() as u64 + digits(run) + ":k".len() as u64 + digits(i)
}

/// Decimal digits of `n`.
pub fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| d as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_length_is_the_keys() {
        for (run, i) in [
            (0, 0),
            (7, 9),
            (7, 10),
            (1_764_701_234_567, 99_999),
            (u64::MAX, 1),
        ] {
            assert_eq!(key_len(run, i), key(run, i).len() as u64, "{run} {i}");
        }
        assert_eq!(key(3, 42), "pipescope:3:k42");
        assert!(key(3, 42).starts_with(&namespace(3)));
        assert!(counter(3).starts_with(&namespace(3)));
    }
}
