//! What crossed the proxy, counted for the integration tests (feature `test-util`): bytes and
//! chunks per direction, and how late the writers released them. Nothing in the product reads
//! these, so without the feature the counting compiles to nothing.

/// Which way a chunk crossed the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Engine → Redis.
    Out,
    /// Redis → engine.
    Back,
}

#[cfg(feature = "test-util")]
mod counting {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use super::Direction;

    /// Bytes and chunks (reads, hence writes) that crossed the proxy, per direction.
    #[derive(Debug, Default)]
    pub struct ProxyStats {
        pub bytes_out: AtomicU64,
        pub bytes_back: AtomicU64,
        pub chunks_out: AtomicU64,
        pub chunks_back: AtomicU64,
        /// How late chunks leave after their release time (the writer woke late): a running
        /// median, ns.
        pub late_ns_out: AtomicU64,
        pub late_ns_back: AtomicU64,
    }

    /// The running median's step (frugal streaming: a step towards each sample).
    const STEP_NS: u64 = 1_000;

    impl ProxyStats {
        /// Median lateness of a chunk's release, out and back (running estimate).
        pub fn lateness(&self) -> (Duration, Duration) {
            let get = |ns: &AtomicU64| Duration::from_nanos(ns.load(Ordering::Relaxed));
            (get(&self.late_ns_out), get(&self.late_ns_back))
        }

        /// A chunk of `bytes` handed over `at`, due at `release`.
        pub(in crate::net) fn written(
            &self,
            direction: Direction,
            release: Instant,
            at: Instant,
            bytes: usize,
        ) {
            let (b, chunks, late) = match direction {
                Direction::Out => (&self.bytes_out, &self.chunks_out, &self.late_ns_out),
                Direction::Back => (&self.bytes_back, &self.chunks_back, &self.late_ns_back),
            };
            b.fetch_add(bytes as u64, Ordering::Relaxed);
            chunks.fetch_add(1, Ordering::Relaxed);
            let sample = at.saturating_duration_since(release).as_nanos() as u64;
            let median = late.load(Ordering::Relaxed);
            let stepped = if sample > median {
                median + STEP_NS
            } else if sample < median {
                median.saturating_sub(STEP_NS)
            } else {
                median
            };
            late.store(stepped, Ordering::Relaxed);
        }
    }
}

#[cfg(not(feature = "test-util"))]
mod counting {
    use std::time::Instant;

    use super::Direction;

    /// Nothing counted: nothing but the tests reads the counts.
    #[derive(Debug, Default)]
    pub struct ProxyStats;

    impl ProxyStats {
        #[inline(always)]
        pub(in crate::net) fn written(&self, _: Direction, _: Instant, _: Instant, _: usize) {}
    }
}

pub use counting::ProxyStats;
