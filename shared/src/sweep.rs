//! The batch sizes a sweep steps through, for the page's sweep and `pipescope bench --mode sweep`
//! alike.

/// 1, 2, 5, 10, 20, 50, … (every step ×2 or ×2.5, three a decade, so they sit evenly on a log
/// axis), up to what fits in a u32: 1 to 100,000 is 16 sizes.
pub fn series() -> impl Iterator<Item = u32> {
    std::iter::successors(Some(1u32), |b| {
        if b.to_string().starts_with('2') {
            b.checked_mul(5).map(|x| x / 2)
        } else {
            b.checked_mul(2)
        }
    })
}

/// The series up to `max` (inclusive when `max` is one of them).
pub fn up_to(max: u32) -> Vec<u32> {
    series().take_while(|b| *b <= max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_is_one_two_five_a_decade() {
        let first: Vec<u32> = series().take(10).collect();
        assert_eq!(first, [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]);
        assert_eq!(up_to(100_000).len(), 16);
        assert_eq!(up_to(99_999).last(), Some(&50_000));
        assert_eq!(
            series().last(),
            Some(2_000_000_000),
            "ends before u32 overflows"
        );
    }
}
