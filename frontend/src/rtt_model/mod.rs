//! The round trip taken apart, and the whole runs' arithmetic from a sequential and a pipelined
//! run. Pure.
//!
//! Every part carries its `Source`: measured (by the engine, the wire tap or Redis), derived
//! (from which figures) or assumed (which value). The labels print it; they never say more.
//!
//! # Layout
//!
//! - `wire_bytes`: a request's and a reply's bytes on the wire, and their assumed
//!   transmission time.
//! - `part`: one named part of a round trip, how it was obtained and its colour.
//! - `breakdown`: one round trip of a run (or of an observed connection) cut into its parts.
//! - `wait_comparison`: the hosts' time of a sleeping run beside a busy-polling one.
//! - `run_model`: N × RTT against the sequential run, round trips × RTT plus a fitted
//!   per-command cost against the pipelined one.

mod breakdown;
mod part;
mod run_model;
mod wait_comparison;
mod wire_bytes;

pub use breakdown::{TripBreakdown, Vantage};
pub use part::{Part, Segment, Source, Tint};
pub use run_model::RttModel;
pub use wait_comparison::WaitComparison;
pub use wire_bytes::{
    ASSUMED_BANDWIDTH_LABEL, ASSUMED_BYTES_PER_SEC, REPLY_BYTES, mean_request_bytes, request_bytes,
    transmission_us,
};

/// Run summaries the model's tests take apart.
#[cfg(test)]
mod fixtures {
    use shared::{Latency, Mode, RunSpec, RunSummary};

    /// A finished SET run of 1,000 commands in `mode`, `wall_us` long, its mean round trip
    /// `mean_us` (the median 0.6 of it, the slowest 1 % 38 % of the summed time).
    pub(super) fn summary(mode: Mode, wall_us: u64, mean_us: f64) -> RunSummary {
        RunSummary {
            spec: RunSpec::set(1000, mode),
            done: 1000,
            wall_us,
            ops_per_sec: shared::report::ops_per_sec(1000, wall_us),
            round_trips: mode.round_trips(1000),
            writes: mode.round_trips(1000),
            wire_commands: 1000,
            latency: Latency {
                mean_us,
                p50_us: mean_us * 0.6,
                slowest_1pct_share: 0.38,
                ..Latency::default()
            },
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        }
    }
}
