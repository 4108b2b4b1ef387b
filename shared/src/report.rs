//! What a run produced: the summary sent in `Finished` and printed by `pipescope bench`.

use serde::{Deserialize, Serialize};

use crate::spec::RunSpec;

/// Request latency (reply parsed − request issued) in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Latency {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub spec: RunSpec,
    /// Commands that got their reply (equals `spec.count` unless the run was cut short).
    pub done: u64,
    pub wall_us: u64,
    pub ops_per_sec: f64,
    /// Times the engine waited for the network: one per command or one per batch.
    pub round_trips: u64,
    pub latency: Latency,
}

impl RunSummary {
    pub fn wall_ms(&self) -> f64 {
        self.wall_us as f64 / 1000.0
    }

    /// How many times faster this run was than `baseline` (wall time ratio).
    pub fn speedup_over(&self, baseline: &RunSummary) -> f64 {
        if self.wall_us == 0 {
            return f64::INFINITY;
        }
        // Compare throughput so runs of different counts still compare fairly.
        self.ops_per_sec / baseline.ops_per_sec
    }
}

/// Operations per second from a count and a duration in microseconds.
pub fn ops_per_sec(done: u64, elapsed_us: u64) -> f64 {
    if elapsed_us == 0 {
        return 0.0;
    }
    done as f64 * 1e6 / elapsed_us as f64
}
