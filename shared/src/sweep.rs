//! The batch sizes a sweep steps through, for the page's sweep and `pipescope bench --mode sweep`
//! alike.

use crate::{Limits, SpecError};

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

/// The batch sizes of a sweep up to `max` (`up_to`), the whole series `repeats` times over
/// (rounds, not each batch back to back). Refused, in words, when `max` is below 2 or above
/// the batch limit, when a run of `count` commands would not fill one batch of the largest
/// size (it would be labelled with a batch that never happened), or when the sweep needs
/// more runs than a start may have.
pub fn plan(max: u32, count: u64, repeats: usize, limits: &Limits) -> Result<Vec<u32>, SpecError> {
    if !(2..=limits.max_batch).contains(&max) {
        return Err(SpecError::SweepMax {
            got: max,
            max: limits.max_batch,
        });
    }
    let batches = up_to(max);
    let largest = batches[batches.len() - 1];
    if count < u64::from(largest) {
        return Err(SpecError::SweepCount { largest, count });
    }
    let runs = batches.len() * repeats.max(1);
    if runs > limits.max_runs {
        let sizes = (limits.max_runs / repeats.max(1)).max(1);
        return Err(SpecError::SweepRuns {
            largest,
            runs,
            sizes: batches.len(),
            repeats,
            max_runs: limits.max_runs,
            fits: series().nth(sizes - 1).unwrap_or(1),
        });
    }
    Ok(batches.repeat(repeats.max(1)))
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

    #[test]
    fn a_plan_refuses_a_largest_batch_its_runs_cannot_fill() {
        let l = Limits::DEFAULT;
        assert_eq!(plan(10, 10, 1, &l), Ok(vec![1, 2, 5, 10]));
        assert_eq!(plan(10, 10, 2, &l).unwrap().len(), 8);
        let err = plan(100_000, 100, 1, &l).unwrap_err();
        assert_eq!(
            err,
            SpecError::SweepCount {
                largest: 100_000,
                count: 100
            }
        );
        assert_eq!(
            err.to_string(),
            "a sweep up to batch 100000 needs at least 100000 commands per run (one whole batch), got 100: raise the count or lower the largest batch"
        );
        // 999 sweeps up to 500: the largest batch that happens is the one named.
        assert!(matches!(
            plan(999, 100, 1, &l),
            Err(SpecError::SweepCount { largest: 500, .. })
        ));
        assert!(matches!(
            plan(1, 100, 1, &l),
            Err(SpecError::SweepMax { got: 1, .. })
        ));
        assert!(matches!(
            plan(1_000_000, 10_000_000, 1, &l),
            Err(SpecError::SweepMax { got: 1_000_000, .. })
        ));
        let few = Limits { max_runs: 9, ..l };
        let err = plan(10, 1000, 3, &few).unwrap_err().to_string();
        assert!(
            err.contains("12 runs") && err.contains("at most 5"),
            "{err}"
        );
    }
}
