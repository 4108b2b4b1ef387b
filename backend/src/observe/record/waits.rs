//! Whether the client waited: the moments every reply was back before its next command,
//! weighed for a dependency between the two.
//!
//! The wire shows a reply coming back before the next command; it does not show the client
//! waiting for it. A client that waits sends its next command a steady moment after the
//! reply, so the gap between its writes grows one for one with the time its reply took. One
//! that keeps its own cadence (a pipeline written command by command, a client on a timer)
//! sends when it would have anyway: the gap does not follow the reply. So each moment keeps
//! `gap` (the previous write to the next) and `lag` (the previous write to the last reply),
//! and the slope of gap on lag, with its interval, tells which (≈ 1: waited; ≈ 0: its own
//! cadence). Too few moments, or an interval that straddles ½, leave them unconfirmed.
//!
//! The slope is only weighed for a client that never sent a command while replies were
//! awaited. One that did has shown that it does not wait for every reply, and on two cores
//! its writes and Redis's replies are coupled by the scheduler (seen here: a client writing
//! each command, slowed by strace to a round trip's pace, gave a slope of 0.87), so a reply
//! back before its next command shows nothing: those moments stay unconfirmed.
//!
//! On one host (the client on loopback, Redis and the observer beside it) the slope decides
//! nothing: the scheduler runs the client when a reply wakes it whether it waited or not, so a
//! client pipelining with callbacks (Perl's Redis.pm) follows its replies one for one; only
//! the probe or the client's own sleeps (`--pid`) tell there.
//!
//! Nor does a slope near 1 confirm waits where the client's reaction (the reply to its next
//! command) is as long as the reply's lag: a client whose own work per command outlasts the
//! round trip has every reply back in time without waiting for it, and where it shares a CPU
//! with Redis (or the proxy), the scheduler runs one while the other waits for the core, so
//! its next write follows the reply one for one all the same (a non-blocking reader beside
//! Redis on loopback read so). Only a reaction shorter than the lag, which a client that did
//! not wait would have shown by sending before the reply, confirms them.

use shared::observe::{WAIT_EVIDENCE_MIN, WaitEvidence, WaitReading};

/// Moments kept for the estimate (the first ones); all are counted.
const KEPT: usize = 8_192;

/// The fewest moments from which round trips are taken off as the client's own cadence.
const CADENCE_MIN: u64 = 256;

/// A moment whose lag or reaction (gap − lag) is further than this many median absolute
/// deviations from its median is left out of the slope: a collector's pause or a descheduled
/// client is one such point, and least squares would let it decide.
const OUTLIER_MADS: f64 = 10.0;

#[derive(Debug, Clone, Default)]
pub struct Waits {
    moments: Vec<(f64, f64)>,
    count: u64,
    /// The last reading and the count it was made at: a snapshot is taken every tick while
    /// the page watches, and the moments change far less often.
    read: std::cell::RefCell<Option<(u64, Reading)>>,
}

/// What the moments came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// Moments counted as round trips the wire cannot confirm.
    pub unconfirmed: u64,
    /// Moments shown to be no waits (to be taken off the round trips).
    pub cadence: u64,
    pub evidence: Option<WaitEvidence>,
}

impl Waits {
    /// Every reply was back, then a command came: `gap` µs after the previous write, whose
    /// last reply came `lag` µs after it.
    pub fn moment(&mut self, gap: f64, lag: f64) {
        self.count += 1;
        if self.moments.len() < KEPT {
            self.moments.push((gap, lag));
        }
    }

    /// What the moments come to; `overlapped`: the client sent commands while replies were
    /// awaited (beyond its handshake); `one_host`: the client shares the host with Redis and
    /// the observer, where the slope is weighed and shown but decides nothing.
    pub fn read(&self, overlapped: bool, one_host: bool) -> Reading {
        let r = self.read_any(overlapped);
        if !one_host {
            return r;
        }
        Reading {
            unconfirmed: self.count,
            cadence: 0,
            evidence: r.evidence.map(|e| WaitEvidence {
                reading: WaitReading::Undecided,
                ..e
            }),
        }
    }

    fn read_any(&self, overlapped: bool) -> Reading {
        if overlapped {
            return Reading {
                unconfirmed: self.count,
                cadence: 0,
                evidence: None,
            };
        }
        if let Some((at, r)) = &*self.read.borrow()
            && *at == self.count
        {
            return r.clone();
        }
        let r = self.weigh();
        *self.read.borrow_mut() = Some((self.count, r.clone()));
        r
    }

    fn weigh(&self) -> Reading {
        let unconfirmed = Reading {
            unconfirmed: self.count,
            cadence: 0,
            evidence: None,
        };
        if self.count < WAIT_EVIDENCE_MIN {
            return unconfirmed;
        }
        let Some(Slope {
            follows,
            half_width,
            used,
            quick,
        }) = slope(&self.moments)
        else {
            return unconfirmed;
        };
        let (low, high) = (follows - half_width, follows + half_width);
        // Each side of ½ with a margin; and taking moments off the round trips (its own
        // cadence) needs many of them: a connection mixing a handshake that waited with a
        // batch sent in pieces that did not (redis-py's pipeline, 12 moments) must not lose
        // its handshake's waits.
        let reading = if low > 0.7 && quick {
            WaitReading::Waited
        } else if high < 0.3 && self.count >= CADENCE_MIN {
            WaitReading::OwnCadence
        } else {
            WaitReading::Undecided
        };
        let evidence = Some(WaitEvidence {
            moments: used,
            follows,
            low,
            high,
            reading,
        });
        match reading {
            WaitReading::Waited => Reading {
                unconfirmed: 0,
                cadence: 0,
                evidence,
            },
            WaitReading::OwnCadence => Reading {
                unconfirmed: 0,
                cadence: self.count,
                evidence,
            },
            WaitReading::Undecided => Reading {
                evidence,
                ..unconfirmed
            },
        }
    }
}

/// What the moments that are not outliers show.
struct Slope {
    /// The least-squares slope of gap on lag, and the half width of its 95 % interval.
    follows: f64,
    half_width: f64,
    /// Moments used.
    used: u64,
    /// The median reaction (gap − lag) is shorter than the median lag: a slope near 1 can
    /// only be a client that waited (see the module's doc).
    quick: bool,
}

/// The slope of gap on lag over the moments that are not outliers; `None` when fewer than
/// `WAIT_EVIDENCE_MIN` remain or the lags did not vary.
fn slope(moments: &[(f64, f64)]) -> Option<Slope> {
    let lags: Vec<f64> = moments.iter().map(|m| m.1).collect();
    let reactions: Vec<f64> = moments.iter().map(|m| m.0 - m.1).collect();
    let near = |xs: &[f64]| {
        let (median, mad) = median_and_mad(xs);
        move |x: f64| (x - median).abs() <= OUTLIER_MADS * mad.max(1.0)
    };
    let (lag_ok, reaction_ok) = (near(&lags), near(&reactions));
    let used: Vec<(f64, f64)> = moments
        .iter()
        .copied()
        .filter(|&(gap, lag)| lag_ok(lag) && reaction_ok(gap - lag))
        .collect();
    let n = used.len() as f64;
    if (used.len() as u64) < WAIT_EVIDENCE_MIN {
        return None;
    }
    let mean_lag = used.iter().map(|m| m.1).sum::<f64>() / n;
    let mean_gap = used.iter().map(|m| m.0).sum::<f64>() / n;
    let sxx: f64 = used.iter().map(|m| (m.1 - mean_lag).powi(2)).sum();
    if sxx <= f64::EPSILON {
        return None;
    }
    let sxy: f64 = used
        .iter()
        .map(|m| (m.1 - mean_lag) * (m.0 - mean_gap))
        .sum();
    let b = sxy / sxx;
    let a = mean_gap - b * mean_lag;
    let residuals: f64 = used.iter().map(|m| (m.0 - a - b * m.1).powi(2)).sum();
    let se = (residuals / (n - 2.0) / sxx).sqrt();
    let (median_lag, _) = median_and_mad(&used.iter().map(|m| m.1).collect::<Vec<_>>());
    let (median_reaction, _) = median_and_mad(&used.iter().map(|m| m.0 - m.1).collect::<Vec<_>>());
    Some(Slope {
        follows: b,
        half_width: 1.96 * se,
        used: used.len() as u64,
        quick: median_reaction < median_lag,
    })
}

/// The median of `xs` and its median absolute deviation.
fn median_and_mad(xs: &[f64]) -> (f64, f64) {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let m = median(&mut xs.to_vec());
    let mad = median(&mut xs.iter().map(|x| (x - m).abs()).collect());
    (m, mad)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic spread of `n` values in [0, 1).
    fn spread(n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    }

    #[test]
    fn a_client_that_waits_follows_its_replies() {
        // Replies after 40–100 µs, the next command 10–30 µs after each.
        let (lags, reactions) = (spread(200, 1), spread(200, 2));
        let mut w = Waits::default();
        for (l, r) in lags.iter().zip(&reactions) {
            w.moment(40.0 + 60.0 * l + 10.0 + 20.0 * r, 40.0 + 60.0 * l);
        }
        let r = w.read(false, false);
        assert_eq!(r.evidence.unwrap().reading, WaitReading::Waited);
        assert_eq!((r.unconfirmed, r.cadence), (0, 0));
    }

    #[test]
    fn a_client_on_its_own_clock_keeps_its_cadence() {
        // A write every 300 ± 5 µs whatever the replies (back after 40–100 µs) did.
        let (lags, jitter) = (spread(300, 3), spread(300, 4));
        let mut w = Waits::default();
        for (l, j) in lags.iter().zip(&jitter) {
            w.moment(295.0 + 10.0 * j, 40.0 + 60.0 * l);
        }
        let r = w.read(false, false);
        assert_eq!(r.evidence.unwrap().reading, WaitReading::OwnCadence);
        assert_eq!((r.unconfirmed, r.cadence), (0, 300));
        // Fewer than CADENCE_MIN such moments stay unconfirmed.
        let mut w = Waits::default();
        for (l, j) in lags.iter().zip(&jitter).take(100) {
            w.moment(295.0 + 10.0 * j, 40.0 + 60.0 * l);
        }
        assert_eq!(
            (
                w.read(false, false).unconfirmed,
                w.read(false, false).cadence
            ),
            (100, 0)
        );
    }

    #[test]
    fn few_moments_or_lags_that_never_vary_are_unconfirmed() {
        let mut w = Waits::default();
        for _ in 0..WAIT_EVIDENCE_MIN - 1 {
            w.moment(80.0, 50.0);
        }
        assert_eq!(w.read(false, false).unconfirmed, WAIT_EVIDENCE_MIN - 1);
        w.moment(80.0, 50.0);
        let r = w.read(false, false);
        assert_eq!((r.unconfirmed, r.evidence), (WAIT_EVIDENCE_MIN, None));
    }

    #[test]
    fn one_long_pause_does_not_decide() {
        let (lags, reactions) = (spread(100, 5), spread(100, 6));
        let mut w = Waits::default();
        for (l, r) in lags.iter().zip(&reactions) {
            w.moment(40.0 + 60.0 * l + 10.0 + 20.0 * r, 40.0 + 60.0 * l);
        }
        w.moment(50_000.0, 60.0); // a collector's pause
        assert_eq!(
            w.read(false, false).evidence.unwrap().reading,
            WaitReading::Waited
        );
    }

    #[test]
    fn a_slow_client_coupled_to_its_replies_by_the_scheduler_is_not_confirmed() {
        // A client that works 200 µs per command and does not wait, sharing a core with
        // Redis: each reply (back after 40–100 µs of Redis's time on that core) delays its
        // next write as much, so gap follows lag one for one, but its reaction (~200 µs) is
        // longer than the lag: undecided, not waited.
        let (lags, jitter) = (spread(300, 7), spread(300, 8));
        let mut w = Waits::default();
        for (l, j) in lags.iter().zip(&jitter) {
            let lag = 40.0 + 60.0 * l;
            w.moment(lag + 195.0 + 10.0 * j, lag);
        }
        let r = w.read(false, false);
        let e = r.evidence.unwrap();
        assert!(e.follows > 0.9, "{e:?}");
        assert_eq!(e.reading, WaitReading::Undecided);
        assert_eq!((r.unconfirmed, r.cadence), (300, 0));
    }

    #[test]
    fn on_one_host_a_slope_is_shown_but_confirms_nothing() {
        let mut w = Waits::default();
        // Every gap follows its lag one for one, a quick reaction: a wait anywhere else.
        for k in 0..200 {
            let lag = 50.0 + (k % 17) as f64 * 10.0;
            w.moment(lag + 5.0, lag);
        }
        assert_eq!(
            w.read(false, false).evidence.unwrap().reading,
            WaitReading::Waited
        );
        let r = w.read(false, true);
        assert_eq!((r.unconfirmed, r.cadence), (200, 0));
        assert_eq!(r.evidence.unwrap().reading, WaitReading::Undecided);
    }
}
