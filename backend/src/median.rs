//! The median, one rule for every figure: the middle value, or the mean of the two middle ones
//! for an even count.

use std::cmp::Ordering;
use std::time::Duration;

/// A value with a total order and a midpoint between two of them.
pub trait Midpoint: Copy {
    fn order(&self, other: &Self) -> Ordering;
    fn midpoint(a: Self, b: Self) -> Self;
}

impl Midpoint for f64 {
    fn order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
    fn midpoint(a: Self, b: Self) -> Self {
        (a + b) / 2.0
    }
}

impl Midpoint for Duration {
    fn order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn midpoint(a: Self, b: Self) -> Self {
        (a + b) / 2
    }
}

/// The median of `v`; `None` when it is empty.
pub fn median<T: Midpoint>(mut v: Vec<T>) -> Option<T> {
    v.sort_by(T::order);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some(T::midpoint(v[n / 2 - 1], v[n / 2])),
    }
}

/// A median with its 95 % confidence interval (distribution-free: order statistics).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Median {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    /// How many values it is the median of: one has no interval to print.
    #[serde(skip)]
    pub n: usize,
}

impl Median {
    /// The median of `v` and the interval between the order statistics that cover it with
    /// at least 95 % probability (all of `v` when there are too few for that: up to 5).
    pub fn of(mut v: Vec<f64>) -> Median {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let Some(median) = median(v.clone()) else {
            return Median {
                median: f64::NAN,
                low: f64::NAN,
                high: f64::NAN,
                n: 0,
            };
        };
        // The largest j with P(Binomial(n, ½) < j) ≤ 2.5 %: then [x_j, x_(n+1-j)] (1-based)
        // holds the true median with probability ≥ 95 %.
        let mut pmf = 0.5f64.powi(n as i32);
        let mut below = 0.0;
        let mut j = 0;
        for i in 0..n {
            if below + pmf > 0.025 {
                break;
            }
            below += pmf;
            pmf *= (n - i) as f64 / (i + 1) as f64;
            j = i + 1;
        }
        let j = j.max(1);
        Median {
            median,
            low: v[j - 1],
            high: v[n - j],
            n,
        }
    }

    /// As printed: the median with `decimals` places and `unit` after it, then the interval in
    /// brackets (`0.93 [0.78–1.00]`, `1.5 % [-3.1–3.0]`); of one value, that value alone (one
    /// round has no spread to show).
    /// A value that `decimals` places would round to zero keeps two significant digits, so a
    /// small ratio never reads as none (`0.0043`, not `0.00`).
    pub fn with_interval(&self, decimals: usize, unit: &str) -> String {
        match self.n {
            1 => format!("{}{unit}", places(self.median, decimals)),
            _ => format!(
                "{}{unit} [{}–{}]",
                places(self.median, decimals),
                places(self.low, decimals),
                places(self.high, decimals)
            ),
        }
    }
}

/// `v` with `decimals` places, or as many more as show its first two significant digits
/// where those places would print it as zero.
fn places(v: f64, decimals: usize) -> String {
    let shown_as_zero = v != 0.0 && v.is_finite() && v.abs() < 0.5 * 10f64.powi(-(decimals as i32));
    let d = if shown_as_zero {
        decimals.max((-v.abs().log10()).ceil() as usize + 1)
    } else {
        decimals
    };
    format!("{v:.d$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(Vec::<f64>::new()), None);
        let us = Duration::from_micros;
        assert_eq!(
            median(vec![us(4), us(1), us(2), us(3)]),
            Some(Duration::from_nanos(2_500))
        );
        assert_eq!(Median::of(vec![4.0, 1.0, 2.0, 3.0]).median, 2.5);
    }

    #[test]
    fn printed_with_its_interval() {
        let m = Median {
            median: 0.934,
            low: 0.776,
            high: 1.0,
            n: 5,
        };
        assert_eq!(m.with_interval(2, ""), "0.93 [0.78–1.00]");
        let small = Median {
            median: 0.0043,
            low: 0.0021,
            high: 0.5,
            n: 3,
        };
        assert_eq!(small.with_interval(2, "×"), "0.0043× [0.0021–0.50]");
        assert_eq!(m.with_interval(1, " %"), "0.9 % [0.8–1.0]");
        // One round: no interval.
        assert_eq!(Median::of(vec![-9.6]).with_interval(1, " %"), "-9.6 %");
    }

    #[test]
    fn few_samples_give_their_whole_range() {
        let m = Median::of(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((m.low, m.median, m.high), (1.0, 3.0, 5.0));
    }

    #[test]
    fn the_interval_narrows_to_order_statistics_as_samples_grow() {
        // n = 6: P(X ≤ 0) = 1/64 ≤ 2.5 % < P(X ≤ 1) = 7/64, so x_1 … x_6, and for n = 9:
        // P(X ≤ 1) = 10/512 ≤ 2.5 %, so x_2 … x_8.
        let six = Median::of((1..=6).map(f64::from).collect());
        assert_eq!((six.low, six.high), (1.0, 6.0));
        let nine = Median::of((1..=9).map(f64::from).collect());
        assert_eq!((nine.low, nine.median, nine.high), (2.0, 5.0, 8.0));
        // n = 51: the textbook ranks are 19 and 33.
        let many = Median::of((1..=51).map(f64::from).collect());
        assert_eq!((many.low, many.median, many.high), (19.0, 26.0, 33.0));
    }
}
