//! A log scale in whole decades, as the charts draw it: the powers of ten that span the data
//! (at least one decade), and a value's position between two pixel rows.

/// The decades `10^lo ..= 10^hi` (exponents; `hi > lo`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decades {
    pub lo: f64,
    pub hi: f64,
}

impl Decades {
    /// The whole decades around `lo ..= hi` (both positive), at least one.
    pub fn between(lo: f64, hi: f64) -> Decades {
        let lo = lo.log10().floor();
        Decades {
            lo,
            hi: hi.log10().ceil().max(lo + 1.0),
        }
    }

    /// The decades spanning the positive, finite `values`; `1 ..= 10` when there are none.
    pub fn spanning(values: impl Iterator<Item = f64>) -> Decades {
        let (lo, hi) = values
            .filter(|v| *v > 0.0 && v.is_finite())
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if !lo.is_finite() {
            return Decades { lo: 0.0, hi: 1.0 };
        }
        Decades::between(lo, hi)
    }

    /// How far up the scale `v` stands: 0 at `10^lo` (and anything below it), 1 at `10^hi`.
    pub fn fraction(self, v: f64) -> f64 {
        let l = v.max(10f64.powf(self.lo)).log10();
        (l - self.lo) / (self.hi - self.lo)
    }

    /// Where `v` stands between `bottom` (`10^lo`, and anything below it) and `top` (`10^hi`).
    pub fn y(self, v: f64, top: f64, bottom: f64) -> f64 {
        bottom - self.fraction(v) * (bottom - top)
    }

    /// Each power of ten from `10^lo` to `10^hi`: the grid lines.
    pub fn powers(self) -> impl Iterator<Item = f64> {
        (self.lo as i32..=self.hi as i32).map(|d| 10f64.powi(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn decades_span_the_values_and_at_least_one() {
        let d = Decades::spanning([30.0, 0.0, 4_000.0, f64::NAN].into_iter());
        assert_eq!(d, Decades { lo: 1.0, hi: 4.0 });
        assert_eq!(d.powers().collect::<Vec<_>>(), [10.0, 100.0, 1e3, 1e4]);
        assert_eq!(Decades::between(100.0, 100.0), Decades { lo: 2.0, hi: 3.0 });
        assert_eq!(
            Decades::spanning(std::iter::empty()),
            Decades { lo: 0.0, hi: 1.0 }
        );
    }

    #[test]
    fn y_runs_from_bottom_to_top_and_clamps_below() {
        let d = Decades { lo: 1.0, hi: 3.0 };
        assert_eq!(d.y(10.0, 0.0, 200.0), 200.0);
        assert_eq!(d.y(100.0, 0.0, 200.0), 100.0);
        assert_eq!(d.y(1_000.0, 0.0, 200.0), 0.0);
        assert_eq!(d.y(1.0, 0.0, 200.0), 200.0);
    }
}
