//! What the engine measures while it runs: a latency histogram it owns, and a progress counter
//! that others read without ever making the engine wait.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use shared::RunSpec;
use shared::report::{Latency, RunSummary, ops_per_sec};

/// Shared between the engine (writer) and whoever reports progress (reader).
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    elapsed_us: AtomicU64,
}

impl Progress {
    pub fn update(&self, done: u64, elapsed: Duration) {
        self.elapsed_us
            .store(elapsed.as_micros() as u64, Ordering::Relaxed);
        self.done.store(done, Ordering::Relaxed);
    }

    /// (commands replied, µs since the run started)
    pub fn read(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.elapsed_us.load(Ordering::Relaxed),
        )
    }
}

/// Latency of each request in nanoseconds (3 significant digits, up to 10 minutes).
pub struct Recorder {
    latency_ns: Histogram<u64>,
}

const MAX_LATENCY_NS: u64 = 600 * 1_000_000_000;

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    pub fn new() -> Self {
        Self {
            latency_ns: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid bounds"),
        }
    }

    /// Records `n` requests that were issued together and replied together.
    pub fn record(&mut self, latency: Duration, n: u64) {
        let ns = (latency.as_nanos() as u64).clamp(1, MAX_LATENCY_NS);
        self.latency_ns.record_n(ns, n).expect("clamped into range");
    }

    pub fn latency(&self) -> Latency {
        let h = &self.latency_ns;
        if h.is_empty() {
            return Latency::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            mean_us: h.mean() / 1000.0,
            p50_us: us(h.value_at_quantile(0.50)),
            p90_us: us(h.value_at_quantile(0.90)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
            slowest_1pct_share: self.slowest_share(0.99),
        }
    }

    /// The share of the summed latency taken by the requests above quantile `q` (the slowest
    /// 1 % for 0.99), counting each histogram bucket at its value.
    fn slowest_share(&self, q: f64) -> f64 {
        let h = &self.latency_ns;
        let n = h.len();
        let slow = n - ((n as f64 * q).round() as u64).min(n);
        let (mut total, mut tail, mut seen) = (0f64, 0f64, 0u64);
        // From the slowest down: the first `slow` requests met are the tail.
        let mut buckets: Vec<(u64, u64)> = h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        buckets.reverse();
        for (value, count) in buckets {
            let sum = value as f64 * count as f64;
            total += sum;
            let in_tail = count.min(slow.saturating_sub(seen));
            tail += value as f64 * in_tail as f64;
            seen += count;
        }
        if total > 0.0 { tail / total } else { 0.0 }
    }

    pub fn count(&self) -> u64 {
        self.latency_ns.len()
    }

    pub fn summary(
        &self,
        spec: RunSpec,
        done: u64,
        wall: Duration,
        round_trips: u64,
    ) -> RunSummary {
        let wall_us = wall.as_micros() as u64;
        RunSummary {
            spec,
            done,
            wall_us,
            ops_per_sec: ops_per_sec(done, wall_us),
            round_trips,
            writes: 0,
            wire_commands: 0,
            latency: self.latency(),
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_what_was_recorded() {
        let mut r = Recorder::new();
        r.record(Duration::from_micros(100), 99);
        r.record(Duration::from_millis(10), 1);
        let l = r.latency();
        assert_eq!(r.count(), 100);
        assert!((l.p50_us - 100.0).abs() < 1.0, "{l:?}");
        assert!((l.max_us - 10_000.0).abs() < 20.0, "{l:?}");
        assert!(l.p99_us <= l.p999_us && l.p999_us <= l.max_us);
        // The one slow request of 100 is the slowest 1 %: 10 ms of 10 ms + 99 × 100 µs.
        let share = 10_000.0 / (10_000.0 + 9_900.0);
        assert!((l.slowest_1pct_share - share).abs() < 0.01, "{l:?}");
    }
}
