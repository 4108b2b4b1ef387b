//! A connection's wall time taken apart: each part with its share, and how it was obtained.
//! The CLI, the verdict's sentence and the page all read these, so they say the same thing.
//!
//! The parts never overlap and add up to the wall time exactly; their whole percentages add
//! up to exactly 100 (rounded by largest remainder), so a reader can check the sum.

use super::numbers::duration;
use super::{ObservedConnection, ObservedTimes, Vantage};
use crate::digits::group;

/// The hops' spread, as the parts say it: ", median of 600 PINGs in 3 measurements, 10th to
/// 90th percentile 31–48 µs".
fn spread_words(spread: Option<&super::HopSpread>) -> String {
    spread.map_or_else(String::new, |s| {
        format!(
            " (the median of {} in {}; 10th to 90th percentile {} to {})",
            super::numbers::count(s.pings, "PING"),
            super::numbers::count(s.measurements, "measurement"),
            duration(s.low_us),
            duration(s.high_us),
        )
    })
}

/// One part of a connection's wall time.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// E.g. "at Redis (proxy → Redis → proxy)".
    pub label: String,
    pub us: f64,
    /// Whole percent of the wall time; all parts' add up to 100.
    pub percent: u32,
    /// Starts with "measured", "derived" or "assumed", then by what or from what.
    pub how: String,
}

/// The parts of `c`'s wall time, the empty ones left out.
pub fn parts(c: &ObservedConnection) -> Vec<Part> {
    let t = &c.times;
    let mut out: Vec<(String, f64, String)> = Vec::new();
    let mut push = |label: String, us: f64, how: String| out.push((label, us, how));
    match &c.vantage {
        Vantage::Proxy {
            hop_us,
            remote_redis,
            hop_spread,
        } => {
            let network = if *remote_redis {
                "Redis's work and the network to Redis each way"
            } else {
                "Redis's work and the loopback hop each way"
            };
            push(
                "at Redis (proxy → Redis → proxy)".into(),
                t.at_redis_us,
                format!(
                    "measured by the proxy: a command handed to Redis until its reply came back ({network})"
                ),
            );
            push(
                "in the proxy and the dialled network".into(),
                t.network_us(),
                "derived: replies awaited at the proxy − at Redis".into(),
            );
            push(
                "the observer's two hops".into(),
                t.observer_us,
                match hop_us {
                    Some(hop) => format!(
                        "derived: {} round trips × {} a round trip for client → proxy and proxy → client, measured by PINGs through a proxy like it{}",
                        group(c.counts.round_trips),
                        duration(*hop),
                        spread_words(hop_spread.as_ref())
                    ),
                    None => "not measured: the probe at start did not run".into(),
                },
            );
            let own = match (hop_us, hop_spread) {
                (Some(hop), Some(s)) if t.observer_uncharged => format!(
                    "derived: nothing awaited at the proxy, the observer's two hops not taken out: their median, {}, varies from {} to {} (10th to 90th percentile), more than the mean wait of {} it would be split from",
                    duration(*hop),
                    duration(s.low_us),
                    duration(s.high_us),
                    duration(t.waiting_us / c.counts.round_trips.max(1) as f64),
                ),
                _ => "derived: nothing awaited at the proxy − the observer's two hops (the application's code and its kernel)".into(),
            };
            let label = if t.observer_uncharged {
                "the client's own time, the observer's hops in it"
            } else {
                "the client's own time"
            };
            push(label.into(), t.client_us, own);
        }
        Vantage::Capture => {
            push(
                "waiting on replies".into(),
                t.waiting_us,
                "measured by the capture on its host: a request segment until the reply's last segment (the network and Redis)".into(),
            );
            push(
                "the client's own time".into(),
                t.client_us,
                "measured by the capture on its host: nothing awaited (on the client's host: the application's code and its kernel)".into(),
            );
        }
    }
    push(
        "blocked (BLPOP …)".into(),
        t.blocked_us,
        "measured: waiting on blocking commands, not counted as round trips".into(),
    );
    let shares = largest_remainder(&out.iter().map(|p| p.1).collect::<Vec<_>>());
    out.into_iter()
        .zip(shares)
        .filter(|((_, us, _), _)| *us > 0.0)
        .map(|((label, us, how), percent)| Part {
            label,
            us,
            percent,
            how,
        })
        .collect()
}

/// Whole percentages of `values`' sum that add up to exactly 100 (all 0 for an empty sum):
/// each gets its share rounded down, then the largest remainders get one more.
pub fn largest_remainder(values: &[f64]) -> Vec<u32> {
    let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
    if total <= 0.0 {
        return vec![0; values.len()];
    }
    let exact: Vec<f64> = values.iter().map(|v| 100.0 * v.max(0.0) / total).collect();
    let mut out: Vec<u32> = exact.iter().map(|x| x.floor() as u32).collect();
    let short = 100 - out.iter().sum::<u32>().min(100);
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for &i in order.iter().take(short as usize) {
        out[i] += 1;
    }
    out
}

/// The sentence's breakdown: "; of 12.3 ms: 60 % waiting on round trips (5 % at Redis),
/// 10 % the observer's two hops, 30 % the client's own time".
pub fn sentence(t: &ObservedTimes) -> String {
    if t.wall_us <= 0.0 {
        return String::new();
    }
    let [waiting, at_redis, hops, own, blocked] = {
        let p = largest_remainder(&[
            t.waiting_us - t.at_redis_us,
            t.at_redis_us,
            t.observer_us,
            t.client_us,
            t.blocked_us,
        ]);
        [p[0] + p[1], p[1], p[2], p[3], p[4]]
    };
    let mut s = format!(
        "; of {}: {waiting} % waiting on round trips ({at_redis} % at Redis)",
        duration(t.wall_us)
    );
    if t.observer_us > 0.0 {
        s += &format!(", {hops} % the observer's two hops");
    }
    s += &format!(", {own} % the client's own time");
    if t.blocked_us > 0.0 {
        s += &format!(", {blocked} % blocked");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_exactly_100() {
        assert_eq!(largest_remainder(&[1.0, 1.0, 1.0]), vec![34, 33, 33]);
        assert_eq!(largest_remainder(&[0.0, 0.0]), vec![0, 0]);
        assert_eq!(largest_remainder(&[994.0, 6.0]), vec![99, 1]);
        // A tie goes to the first.
        assert_eq!(largest_remainder(&[995.0, 5.0]), vec![100, 0]);
        // 66.6, 16.7, 16.7: rounding each would give 101.
        let p = largest_remainder(&[4.0, 1.0, 1.0]);
        assert_eq!(p.iter().sum::<u32>(), 100, "{p:?}");
        for values in [
            [3.0, 3.0, 3.0, 1.0],
            [0.4, 0.4, 0.1, 0.1],
            [7.0, 0.0, 0.0, 2.0],
        ] {
            assert_eq!(largest_remainder(&values).iter().sum::<u32>(), 100);
        }
    }
}
