//! The whole runs' arithmetic: N × the mean RTT against the sequential run's wall time, and
//! round trips × RTT plus a fitted per-command cost against the pipelined run's.

use shared::RunSummary;

/// The whole runs' arithmetic, from a sequential and a pipelined run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttModel {
    /// Commands in the sequential run.
    pub n: u64,
    /// Measured by the engine: the sequential run's mean latency.
    pub rtt_us: f64,
    /// Measured by the engine: its median, for contrast (N × p50 is what a median predicts).
    pub p50_us: f64,
    /// Measured by the engine: the slowest 1 % of round trips' share of their summed time.
    pub tail_share: f64,
    /// N × mean RTT.
    pub predicted_seq_us: f64,
    pub measured_seq_us: f64,
    /// Commands in the pipelined run.
    pub pipe_n: u64,
    pub batch: u32,
    /// Measured by the engine: the waits the pipelined run paid.
    pub pipe_round_trips: u64,
    /// Derived: round trips × the sequential mean RTT.
    pub pipe_rtt_time_us: f64,
    /// Fitted: (pipelined wall − round trips × RTT) ÷ N, never below 0. Not measured on its
    /// own: it is what makes the pipelined row add up.
    pub fitted_cost_us: f64,
    /// Derived: the round trips' share of the pipelined wall time.
    pub pipe_rtt_share: f64,
    /// Round trips × RTT + N × fitted cost: the measured time whenever the fit is not clamped.
    pub predicted_pipe_us: f64,
    pub measured_pipe_us: f64,
}

impl RttModel {
    pub fn new(seq: &RunSummary, pipe: &RunSummary) -> RttModel {
        let n = seq.done;
        let rtt_us = seq.latency.mean_us;
        let pipe_n = pipe.done.max(1);
        let pipe_rtt_time_us = pipe.round_trips as f64 * rtt_us;
        let wall = pipe.wall_us as f64;
        let fitted_cost_us = ((wall - pipe_rtt_time_us) / pipe_n as f64).max(0.0);
        RttModel {
            n,
            rtt_us,
            p50_us: seq.latency.p50_us,
            tail_share: seq.latency.slowest_1pct_share,
            predicted_seq_us: n as f64 * rtt_us,
            measured_seq_us: seq.wall_us as f64,
            pipe_n: pipe.done,
            batch: pipe.spec.mode.batch(),
            pipe_round_trips: pipe.round_trips,
            pipe_rtt_time_us,
            fitted_cost_us,
            pipe_rtt_share: if wall > 0.0 {
                pipe_rtt_time_us / wall
            } else {
                0.0
            },
            predicted_pipe_us: pipe_rtt_time_us + pipe.done as f64 * fitted_cost_us,
            measured_pipe_us: wall,
        }
    }

    /// What N × p50 would have predicted: the median's shortfall is the tail.
    pub fn p50_prediction_us(&self) -> f64 {
        self.n as f64 * self.p50_us
    }

    /// True when the round trips at the sequential RTT alone exceed the pipelined wall time
    /// (so the fitted cost was clamped to 0 and the row cannot add up).
    pub fn fit_clamped(&self) -> bool {
        self.pipe_rtt_time_us > self.measured_pipe_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt_model::fixtures::summary;
    use crate::testing::test;
    use shared::Mode;

    #[test]
    fn sequential_uses_the_mean_round_trip_and_names_the_tail() {
        let seq = summary(Mode::Sequential, 52_000, 50.0);
        let pipe = summary(Mode::pipelined(300), 2_000, 900.0);
        let m = RttModel::new(&seq, &pipe);
        assert_eq!(m.rtt_us, 50.0);
        // N × mean is the summed latency: the p50 would fall short by the tail.
        assert_eq!(m.predicted_seq_us, 50_000.0);
        assert_eq!(m.p50_prediction_us(), 30_000.0);
        assert_eq!(m.tail_share, 0.38);
        assert_eq!(m.measured_seq_us, 52_000.0);
    }

    #[test]
    fn the_pipelined_cost_is_fitted_so_the_round_trips_count_once() {
        let seq = summary(Mode::Sequential, 52_000, 50.0);
        let pipe = summary(Mode::pipelined(300), 2_000, 900.0);
        let m = RttModel::new(&seq, &pipe);
        assert_eq!(m.pipe_round_trips, 4, "the engine's count of waits");
        assert_eq!(m.pipe_rtt_time_us, 200.0);
        // (2,000 − 4 × 50) ÷ 1,000: the round trips are not in the per-command cost.
        assert!((m.fitted_cost_us - 1.8).abs() < 1e-12);
        // So the model adds up to the measurement, round trips counted once.
        assert!((m.predicted_pipe_us - m.measured_pipe_us).abs() < 1e-9);
        assert!((m.pipe_rtt_share - 0.1).abs() < 1e-12);
        assert!(!m.fit_clamped());
        // Round trips alone longer than the run: the fit is clamped and says so.
        let slow = summary(Mode::Sequential, 52_000, 1_000.0);
        let m = RttModel::new(&slow, &pipe);
        assert_eq!(m.fitted_cost_us, 0.0);
        assert!(m.fit_clamped());
    }
}
