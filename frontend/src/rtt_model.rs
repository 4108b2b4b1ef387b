//! One round trip broken into its parts, and the whole run's arithmetic, from two finished runs
//! (sequential and pipelined). Pure.
//!
//! Until the wire tap measures server-side times, only the RTT is measured: the parts are
//! estimates, and each says how it was made (`RttModel` documents every field's source).

use shared::{RoundTripSplit, RunSummary};

/// The bandwidth assumed for loopback when estimating transmission time: 10 Gbit/s.
pub const ASSUMED_BYTES_PER_SEC: f64 = 1.25e9;
pub const ASSUMED_BANDWIDTH_LABEL: &str = "10 Gbit/s";

/// Estimated transmission time of `bytes` at the assumed loopback bandwidth, µs.
pub fn transmission_us(bytes: f64) -> f64 {
    bytes / ASSUMED_BYTES_PER_SEC * 1e6
}

/// `+OK\r\n`: the reply to a SET.
pub const REPLY_BYTES: u64 = 5;

fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| d as u64 + 1)
}

/// RESP bulk string `$<len>\r\n<bytes>\r\n`.
fn bulk(len: u64) -> u64 {
    1 + digits(len) + 2 + len + 2
}

/// Bytes of `SET pipescope:<run>:k<i> v<i>` on the wire:
/// `*3\r\n$3\r\nSET\r\n$<len>\r\npipescope:<run>:k<i>\r\n$<len>\r\nv<i>\r\n`.
pub fn request_bytes(run: u64, i: u64) -> u64 {
    let key = "pipescope:".len() as u64 + digits(run) + ":k".len() as u64 + digits(i);
    let value = 1 + digits(i);
    4 + bulk(3) + bulk(key) + bulk(value)
}

/// Mean of `request_bytes(run, i)` over `i` in `0..n`, summed by digit count (exact, O(log n)).
pub fn mean_request_bytes(run: u64, n: u64) -> f64 {
    if n == 0 {
        return request_bytes(run, 0) as f64;
    }
    let mut total = 0u64;
    let mut lo = 0u64;
    while lo < n {
        let hi = if lo == 0 { 10 } else { lo.saturating_mul(10) }.min(n);
        total += (hi - lo) * request_bytes(run, lo);
        lo = hi;
    }
    total as f64 / n as f64
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttModel {
    /// Commands in the sequential run.
    pub n: u64,
    pub batch: u32,
    /// ⌈N / batch⌉.
    pub pipe_round_trips: u64,
    /// Measured: the sequential run's p50 latency.
    pub rtt_us: f64,
    /// Estimated: the pipelined run's wall time per command.
    pub per_cmd_us: f64,
    pub request_bytes: f64,
    pub reply_bytes: f64,
    /// Estimated: (request + reply bytes) / the assumed loopback bandwidth.
    pub t1_us: f64,
    /// Estimated: what is left of the RTT, halved (one way).
    pub t2_us: f64,
    /// Estimated: the per-command cost of the pipelined run (queuing + processing at Redis).
    pub t3_us: f64,
    /// Measured by the latency proxy's wire tap (the sequential run's medians): out (t1 + t2),
    /// at Redis (t3) and back. When present the diagram draws these instead of the estimates.
    pub split: Option<RoundTripSplit>,
    /// N × RTT.
    pub predicted_seq_us: f64,
    pub measured_seq_us: f64,
    /// ⌈N / batch⌉ × RTT + N × per-command cost.
    pub predicted_pipe_us: f64,
    pub measured_pipe_us: f64,
}

impl RttModel {
    pub fn new(seq_run: u64, seq: &RunSummary, pipe: &RunSummary) -> RttModel {
        let n = seq.done;
        let batch = pipe.spec.mode.batch();
        let pipe_n = pipe.done.max(1);
        let rtt_us = seq.latency.p50_us;
        let per_cmd_us = pipe.wall_us as f64 / pipe_n as f64;
        let request_bytes = mean_request_bytes(seq_run, n);
        let reply_bytes = REPLY_BYTES as f64;
        let t1_us = transmission_us(request_bytes + reply_bytes);
        let t3_us = per_cmd_us;
        let t2_us = ((rtt_us - t1_us - t3_us) / 2.0).max(0.0);
        let pipe_round_trips = pipe.done.div_ceil(batch.max(1) as u64);
        RttModel {
            n,
            batch,
            pipe_round_trips,
            rtt_us,
            per_cmd_us,
            request_bytes,
            reply_bytes,
            t1_us,
            t2_us,
            t3_us,
            split: seq.split.filter(|s| s.samples > 0),
            predicted_seq_us: n as f64 * rtt_us,
            measured_seq_us: seq.wall_us as f64,
            predicted_pipe_us: pipe_round_trips as f64 * rtt_us + pipe.done as f64 * per_cmd_us,
            measured_pipe_us: pipe.wall_us as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{Latency, Mode, RunSpec};

    #[test]
    fn request_bytes_follow_the_resp_encoding() {
        let key = "pipescope:7:k42";
        let expected = format!(
            "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$3\r\nv42\r\n",
            key.len()
        );
        assert_eq!(request_bytes(7, 42), expected.len() as u64);
        assert_eq!(request_bytes(7, 0), request_bytes(7, 9));
        assert_eq!(request_bytes(7, 10), request_bytes(7, 9) + 2);
        assert_eq!(REPLY_BYTES, "+OK\r\n".len() as u64);
    }

    #[test]
    fn mean_bytes_sum_by_digits() {
        for n in [1, 9, 10, 11, 100, 1234] {
            let brute: u64 = (0..n).map(|i| request_bytes(3, i)).sum();
            assert!((mean_request_bytes(3, n) - brute as f64 / n as f64).abs() < 1e-9);
        }
    }

    fn summary(mode: Mode, wall_us: u64, p50_us: f64) -> RunSummary {
        RunSummary {
            spec: RunSpec::set(1000, mode),
            done: 1000,
            wall_us,
            ops_per_sec: shared::report::ops_per_sec(1000, wall_us),
            round_trips: mode.round_trips(1000),
            writes: mode.round_trips(1000),
            wire_commands: 1000,
            latency: Latency {
                p50_us,
                ..Latency::default()
            },
            split: None,
            redis_usec_per_call: None,
        }
    }

    #[test]
    fn the_arithmetic_uses_the_measured_rtt() {
        let seq = summary(Mode::Sequential, 52_000, 50.0);
        let pipe = summary(Mode::pipelined(300), 2_000, 900.0);
        let m = RttModel::new(1, &seq, &pipe);
        assert_eq!(m.rtt_us, 50.0);
        assert_eq!(m.predicted_seq_us, 50_000.0);
        assert_eq!(m.measured_seq_us, 52_000.0);
        assert_eq!(m.pipe_round_trips, 4);
        assert_eq!(m.per_cmd_us, 2.0);
        assert_eq!(m.t3_us, 2.0);
        assert_eq!(m.predicted_pipe_us, 4.0 * 50.0 + 1000.0 * 2.0);
        assert!(m.t1_us > 0.0 && m.t1_us < 1.0);
        assert!((2.0 * m.t2_us + m.t1_us + m.t3_us - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_measured_split_is_kept() {
        let mut seq = summary(Mode::Sequential, 52_000, 50.0);
        let pipe = summary(Mode::pipelined(300), 2_000, 900.0);
        assert_eq!(RttModel::new(1, &seq, &pipe).split, None);
        let split = RoundTripSplit {
            out_us: 20.0,
            server_us: 5.0,
            back_us: 22.0,
            samples: 1000,
            ..Default::default()
        };
        seq.split = Some(split);
        assert_eq!(RttModel::new(1, &seq, &pipe).split, Some(split));
        seq.split = Some(RoundTripSplit {
            samples: 0,
            ..split
        });
        assert_eq!(
            RttModel::new(1, &seq, &pipe).split,
            None,
            "no samples, no split"
        );
    }

    #[test]
    fn propagation_never_goes_negative() {
        let seq = summary(Mode::Sequential, 5_000, 1.0);
        let pipe = summary(Mode::pipelined(10), 9_000, 1.0);
        assert_eq!(RttModel::new(1, &seq, &pipe).t2_us, 0.0);
    }
}
