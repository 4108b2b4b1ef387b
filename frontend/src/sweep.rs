//! The batch-size sweep: which runs to ask for, which finished results form one, and where its
//! knee is. Pure.

use shared::{Flush, Limits, Mode, RunSummary};

/// A doubling of the batch "pays" when it multiplies throughput by at least this much. The knee
/// is the last batch size reached by a doubling that paid: beyond it no doubling paid any more,
/// so bigger batches buy little (the per-command cost, not the round trip, dominates). Taking
/// the last paying doubling, not the first one that did not, keeps one noisy step early in a
/// sweep from calling the knee too soon.
pub const KNEE_GAIN: f64 = 1.5;

/// Batch sizes 1, 2, 4, … up to `max` (inclusive when `max` is a power of two), one run each.
/// Refused, in words, when `max` is below 2, above the batch limit, or needs more runs than a
/// start may have.
pub fn plan(max: u32, limits: &Limits) -> Result<Vec<u32>, String> {
    if max < 2 {
        return Err("A sweep needs a largest batch of at least 2.".into());
    }
    if max > limits.max_batch {
        return Err(format!(
            "The sweep's largest batch must be at most {}, got {max}.",
            limits.max_batch
        ));
    }
    let batches: Vec<u32> = std::iter::successors(Some(1u32), |b| b.checked_mul(2))
        .take_while(|b| *b <= max)
        .collect();
    if batches.len() > limits.max_runs {
        return Err(format!(
            "A sweep up to batch {max} needs {} runs, more than the {} one start may have; choose a largest batch of at most {}.",
            batches.len(),
            limits.max_runs,
            1u64 << (limits.max_runs - 1)
        ));
    }
    Ok(batches)
}

/// One finished run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub batch: u32,
    pub ops_per_sec: f64,
    /// Wall time ÷ commands, µs: what one command cost on average.
    pub cost_us: f64,
}

/// The results as a sweep, if they are one: at least two complete runs, all pipelined with one
/// write per batch, at batch 1, 2, 4, … in that order.
pub fn points(runs: &[RunSummary]) -> Option<Vec<Point>> {
    if runs.len() < 2 {
        return None;
    }
    let mut out = Vec::with_capacity(runs.len());
    for (k, s) in runs.iter().enumerate() {
        let Mode::Pipelined {
            batch,
            flush: Flush::Batch,
        } = s.spec.mode
        else {
            return None;
        };
        if k >= 32 || batch != 1 << k || s.done == 0 {
            return None;
        }
        out.push(Point {
            batch,
            ops_per_sec: s.ops_per_sec,
            cost_us: s.wall_us as f64 / s.done as f64,
        });
    }
    Some(out)
}

/// Throughput gained per doubling of the batch from `a` to `b`.
fn gain(a: &Point, b: &Point) -> f64 {
    let doublings = (b.batch as f64 / a.batch as f64).log2().max(1e-9);
    (b.ops_per_sec / a.ops_per_sec).powf(1.0 / doublings)
}

/// Index of the knee (see `KNEE_GAIN`): the last point reached by a doubling that multiplied
/// ops/s by at least `KNEE_GAIN`, when no later doubling did (the first point if none ever
/// did). `None` while the last doubling still paid: the knee lies beyond the sweep.
pub fn knee(points: &[Point]) -> Option<usize> {
    let paid: Vec<bool> = points
        .windows(2)
        .map(|w| gain(&w[0], &w[1]) >= KNEE_GAIN)
        .collect();
    match paid.last() {
        None | Some(true) => None,
        Some(false) => Some(paid.iter().rposition(|p| *p).map_or(0, |k| k + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{Latency, RunSpec};

    const L: Limits = Limits::DEFAULT;

    #[test]
    fn the_plan_doubles_up_to_the_max() {
        assert_eq!(plan(16, &L).unwrap(), [1, 2, 4, 8, 16]);
        assert_eq!(plan(20, &L).unwrap(), [1, 2, 4, 8, 16]);
        assert_eq!(plan(2, &L).unwrap(), [1, 2]);
        assert_eq!(plan(32_768, &L).unwrap().len(), 16);
        assert!(plan(1, &L).unwrap_err().contains("at least 2"));
        assert!(plan(65_536, &L).unwrap_err().contains("17 runs"));
        assert!(plan(200_000, &L).unwrap_err().contains("at most 100000"));
        let few = Limits { max_runs: 3, ..L };
        assert!(plan(8, &few).unwrap_err().contains("at most 4"));
    }

    fn run(mode: Mode, wall_us: u64) -> RunSummary {
        RunSummary {
            spec: RunSpec::set(1000, mode),
            done: 1000,
            wall_us,
            ops_per_sec: shared::report::ops_per_sec(1000, wall_us),
            round_trips: mode.round_trips(1000),
            writes: 0,
            wire_commands: 1000,
            latency: Latency::default(),
            split: None,
            redis_usec_per_call: None,
        }
    }

    /// Wall times of a typical sweep: halving while round trips dominate, then flat.
    fn sweep(walls: &[u64]) -> Vec<RunSummary> {
        walls
            .iter()
            .enumerate()
            .map(|(k, w)| run(Mode::pipelined(1 << k), *w))
            .collect()
    }

    #[test]
    fn only_a_doubling_series_of_batched_pipelines_is_a_sweep() {
        let p = points(&sweep(&[64_000, 32_000, 16_000])).unwrap();
        assert_eq!(p.iter().map(|p| p.batch).collect::<Vec<_>>(), [1, 2, 4]);
        assert_eq!(p[0].cost_us, 64.0);
        assert_eq!(p[2].ops_per_sec, 62_500.0);
        assert!(points(&sweep(&[1000])).is_none(), "one run is no sweep");
        let compare = [run(Mode::Sequential, 1000), run(Mode::pipelined(100), 100)];
        assert!(points(&compare).is_none());
        let mut gap = sweep(&[4, 2, 1]);
        gap.remove(1);
        assert!(points(&gap).is_none());
        let mut each = sweep(&[4, 2]);
        each[1].spec.mode = Mode::Pipelined {
            batch: 2,
            flush: Flush::EachCommand,
        };
        assert!(points(&each).is_none());
    }

    #[test]
    fn the_knee_is_where_doubling_stops_paying() {
        // 2×, 2×, 1.6×, 1.25×, 1.1×: the doubling after batch 8 pays only 1.25×.
        let p = points(&sweep(&[64_000, 32_000, 16_000, 10_000, 8_000, 7_300])).unwrap();
        assert_eq!(knee(&p), Some(3));
        assert_eq!(p[3].batch, 8);
        // Every doubling paid: no knee yet.
        let p = points(&sweep(&[8_000, 4_000, 2_000])).unwrap();
        assert_eq!(knee(&p), None);
        // A slower bigger batch (noise) is past the knee too.
        let p = points(&sweep(&[8_000, 9_000])).unwrap();
        assert_eq!(knee(&p), Some(0));
        // One noisy early step (1.4×) does not call the knee at batch 1: 2→4 still paid 2×.
        let p = points(&sweep(&[89_000, 63_000, 31_500, 22_000, 20_000])).unwrap();
        assert_eq!(knee(&p), Some(2));
    }
}
