//! Per-request timings, kept within a flat memory budget for any run length: the first
//! requests in full (they are what the timeline animates) and a strided sample of the whole run
//! whose stride doubles whenever it fills (so it always covers the run evenly).
//!
//! A run of known length starts at the stride its whole sample needs, so the sample never
//! doubles: what is streamed of it while the run goes on (every `stride`-th request past the
//! first ones) is what the finished timeline holds, and the page draws the run live to its end.
//!
//! Requests may be answered out of order (several connections): the first ones are kept in
//! order of `i` and streamed only as an unbroken run from 0, so the page always gets them in
//! order; the sample is put in order at the end (the page puts streamed ones in place).

use std::sync::{Arc, Mutex};

use shared::{Span, Timeline};

/// Requests kept in full at the start of every run.
pub const FULL_SPANS: u64 = 5_000;
/// The sample never holds more than this many spans.
pub const MAX_SAMPLED: usize = 4_096;

/// New spans waiting to be streamed; the engine appends, the hub drains.
pub type Outbox = Arc<Mutex<Streamed>>;

/// What the engine recorded since the hub last drained it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Streamed {
    /// Of the first requests, the next ones in order of `i`.
    pub first: Vec<Span>,
    /// Of the sample beyond the first requests, the new ones (in order of reply).
    pub sampled: Vec<Span>,
    /// The sample's stride when they were taken.
    pub stride: u64,
}

/// The stride at which a sample of a whole run of `count` requests stays under `max_sampled`:
/// the smallest power of two that does.
pub fn stride_for(count: u64, max_sampled: usize) -> u64 {
    let mut stride = 1u64;
    while count.div_ceil(stride) >= max_sampled as u64 {
        stride *= 2;
    }
    stride
}

pub struct SpanStore {
    full_limit: u64,
    first: Vec<Span>,
    sampled: Vec<Span>,
    max_sampled: usize,
    stride: u64,
    outbox: Option<Outbox>,
    /// `first[..streamed]` went to the outbox.
    streamed: usize,
}

impl SpanStore {
    /// A run of `count` requests: its sample is taken at its final stride from the start.
    pub fn new(count: u64, outbox: Option<Outbox>) -> Self {
        let mut store = Self::with_limits(FULL_SPANS, MAX_SAMPLED, outbox);
        store.stride = stride_for(count, MAX_SAMPLED);
        store
    }

    pub fn with_limits(full_limit: u64, max_sampled: usize, outbox: Option<Outbox>) -> Self {
        assert!(max_sampled >= 2, "the sample must hold at least two spans");
        Self {
            full_limit,
            first: Vec::new(),
            sampled: Vec::new(),
            max_sampled,
            stride: 1,
            outbox,
            streamed: 0,
        }
    }

    /// Records requests `first..first + n`, issued together and replied together (times in µs
    /// from the run's start).
    pub fn record(&mut self, first: u64, n: u64, issued_us: f64, replied_us: f64) {
        self.record_marked(first, n, issued_us, replied_us, Span::new);
    }

    /// As `record`, each span made by `span(i, issued_us, replied_us)`: a cluster run's carry
    /// the master that answered.
    #[inline]
    pub fn record_marked(
        &mut self,
        first: u64,
        n: u64,
        issued_us: f64,
        replied_us: f64,
        span: impl Fn(u64, f64, f64) -> Span,
    ) {
        let end = first + n;
        if first < self.full_limit {
            let upto = end.min(self.full_limit);
            let new = (first..upto).map(|i| span(i, issued_us, replied_us));
            // In order (the common case) this is the end; otherwise a few places before it.
            let at = self.first.partition_point(|s| s.i < first);
            self.first.splice(at..at, new);
            let mut ready = self.streamed;
            while self.first.get(ready).is_some_and(|s| s.i == ready as u64) {
                ready += 1;
            }
            if let Some(outbox) = &self.outbox
                && ready > self.streamed
            {
                outbox
                    .lock()
                    .expect("span outbox")
                    .first
                    .extend_from_slice(&self.first[self.streamed..ready]);
            }
            self.streamed = ready;
        }
        let mut i = first.next_multiple_of(self.stride);
        while i < end {
            let s = span(i, issued_us, replied_us);
            if i >= self.full_limit
                && let Some(outbox) = &self.outbox
            {
                let mut streamed = outbox.lock().expect("span outbox");
                streamed.sampled.push(s);
                streamed.stride = self.stride;
            }
            self.sampled.push(s);
            if self.sampled.len() >= self.max_sampled {
                // Full: keep every other one and sample half as often from here on.
                self.stride *= 2;
                let stride = self.stride;
                self.sampled.retain(|s| s.i % stride == 0);
            }
            i = (i + 1).next_multiple_of(self.stride);
        }
    }

    pub fn into_timeline(mut self) -> Timeline {
        self.sampled.sort_unstable_by_key(|s| s.i);
        Timeline {
            first: self.first,
            sampled: self.sampled,
            stride: self.stride,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(store: &mut SpanStore, count: u64, batch: u64) {
        let mut i = 0;
        while i < count {
            let n = batch.min(count - i);
            store.record(i, n, i as f64, i as f64 + 10.0);
            i += n;
        }
    }

    #[test]
    fn first_spans_are_exact() {
        let mut store = SpanStore::with_limits(100, 16, None);
        fill(&mut store, 1_000, 7);
        let t = store.into_timeline();
        assert_eq!(t.first.len(), 100);
        for (k, s) in t.first.iter().enumerate() {
            assert_eq!(s.i, k as u64);
            let batch_start = (k as u64 / 7) * 7;
            assert_eq!(
                (s.issued_us, s.replied_us),
                (batch_start as f64, batch_start as f64 + 10.0)
            );
        }
    }

    #[test]
    fn output_is_bounded_for_any_count() {
        for count in [0u64, 1, 15, 16, 17, 1_000, 123_457, 2_000_000] {
            for batch in [1u64, 3, 1000] {
                let mut store = SpanStore::with_limits(50, 16, None);
                fill(&mut store, count, batch);
                let t = store.into_timeline();
                assert!(t.first.len() as u64 == count.min(50), "count {count}");
                assert!(
                    t.sampled.len() < 16,
                    "count {count} batch {batch}: {} sampled",
                    t.sampled.len()
                );
                // Evenly strided, in order, and covering the run.
                assert!(t.sampled.iter().all(|s| s.i % t.stride == 0));
                assert!(t.sampled.windows(2).all(|w| w[1].i == w[0].i + t.stride));
                if count > 0 {
                    assert_eq!(t.sampled[0].i, 0);
                    assert!(
                        t.sampled.last().unwrap().i + t.stride >= count,
                        "count {count}"
                    );
                    assert!(
                        t.sampled.len() >= 16 / 2 - 1 || count < 16,
                        "count {count}: too few"
                    );
                }
            }
        }
    }

    #[test]
    fn requests_answered_out_of_order_are_kept_and_streamed_in_order() {
        let outbox: Outbox = Default::default();
        let mut store = SpanStore::with_limits(30, 8, Some(outbox.clone()));
        // Four connections, each answering its share (i % 4) at its own pace.
        let mut order: Vec<u64> = (0..100).collect();
        order.sort_by_key(|&i| (i / 4) * 4 + (3 - i % 4));
        for &i in &order {
            store.record(i, 1, i as f64, i as f64 + 1.0);
            let streamed = outbox.lock().unwrap().first.clone();
            assert!(
                streamed.iter().enumerate().all(|(k, s)| s.i == k as u64),
                "streamed out of order after {i}"
            );
        }
        let t = store.into_timeline();
        let firsts: Vec<u64> = t.first.iter().map(|s| s.i).collect();
        assert_eq!(firsts, (0..30).collect::<Vec<_>>());
        assert_eq!(outbox.lock().unwrap().first, t.first);
        assert!(t.sampled.windows(2).all(|w| w[1].i == w[0].i + t.stride));
        assert!(t.sampled.len() < 8);
    }

    #[test]
    fn the_outbox_gets_exactly_the_full_spans() {
        let outbox: Outbox = Default::default();
        let mut store = SpanStore::with_limits(30, 8, Some(outbox.clone()));
        fill(&mut store, 100, 4);
        let sent = outbox.lock().unwrap().first.clone();
        assert_eq!(sent, store.into_timeline().first);
        assert_eq!(sent.len(), 30);
    }

    #[test]
    fn a_run_of_known_length_streams_the_sample_its_timeline_ends_with() {
        for count in [0u64, 1, 4_999, 5_000, 5_001, 20_000, 100_000, 1_000_000] {
            let outbox: Outbox = Default::default();
            let mut store = SpanStore::new(count, Some(outbox.clone()));
            fill(&mut store, count, 7);
            let streamed = outbox.lock().unwrap().clone();
            let t = store.into_timeline();
            assert!(t.sampled.len() < MAX_SAMPLED, "count {count}");
            assert_eq!(
                t.stride,
                stride_for(count, MAX_SAMPLED),
                "count {count}: it doubled"
            );
            let beyond: Vec<Span> = t
                .sampled
                .iter()
                .filter(|s| s.i >= FULL_SPANS)
                .copied()
                .collect();
            assert_eq!(streamed.sampled, beyond, "count {count}");
            if !beyond.is_empty() {
                assert_eq!(streamed.stride, t.stride);
            }
        }
    }

    #[test]
    fn the_stride_is_the_smallest_power_of_two_that_fits() {
        assert_eq!(stride_for(0, 4_096), 1);
        assert_eq!(stride_for(4_095, 4_096), 1);
        assert_eq!(stride_for(4_096, 4_096), 2);
        assert_eq!(stride_for(100_000, 4_096), 32);
    }
}
