//! The batch-size sweep: which runs to ask for, which finished results form one, and where its
//! knee is. The page's sweep and the tour's step use the same definition (`knee`). Pure.

pub use shared::sweep::series;
use shared::{Flush, Limits, Mode, RedisMemory, RunSummary};

/// A doubling of the batch "pays" when it multiplies throughput by at least this much. The knee
/// is the last batch size reached by a doubling that paid: beyond it no doubling paid any more,
/// so bigger batches buy little. Taking the last paying doubling, not the first one that did
/// not, keeps one noisy step early in a sweep from calling the knee too soon. Batches further
/// apart than a doubling (the sweep's 2 → 5, the tour's 1, 10, 100…) are judged per doubling: a tenfold step pays
/// when it multiplies throughput by at least `KNEE_GAIN` to the power log2(10).
pub const KNEE_GAIN: f64 = 1.5;

/// How many times a sweep runs each batch size, so each point has a spread (median, min, max).
pub const REPEATS: usize = 3;

/// Batch sizes of `series` up to `max` (inclusive when `max` is one of them), the whole series
/// `REPEATS` times over (rounds, not each batch back to back, so a slow moment of the machine
/// lands on several batch sizes rather than on all of one). Refused, in words, when `max` is
/// below 2 or above the batch limit, when the runs would hold fewer than the largest batch's
/// commands (`count`: every run must fill at least one batch), or when it needs more runs than
/// a start may have.
pub fn plan(max: u32, count: u64, limits: &Limits) -> Result<Vec<u32>, String> {
    shared::sweep::plan(max, count, REPEATS, limits)
        .map_err(|e| format!("{}.", crate::connection::capitalise(&e.to_string())))
}

/// One batch size of a sweep: its median run, and the spread of its runs' throughput.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub batch: u32,
    /// Runs at this batch size.
    pub runs: usize,
    /// The median run's throughput (with an even number of runs, the lower middle one: always
    /// a run that happened).
    pub ops_per_sec: f64,
    pub ops_min: f64,
    pub ops_max: f64,
    /// The median run's wall time ÷ commands, µs: what one command cost on average.
    pub cost_us: f64,
    /// The median run's wall time ÷ its round trips, µs.
    pub per_rt_us: f64,
    /// The median run's round trips ÷ commands.
    pub rt_per_cmd: f64,
    /// The median run's p99 latency per command, µs, measured by the engine: from the moment
    /// its batch's write began to the moment its reply was read.
    pub p99_us: f64,
    /// The median run's memory at Redis (`RedisMemory`: its connection's peak `tot-mem` …),
    /// when it was sampled.
    pub memory: Option<RedisMemory>,
}

/// The median run of `runs` by throughput (the lower middle one of an even number), `None` if
/// there are none.
pub fn median(runs: Vec<&RunSummary>) -> Option<&RunSummary> {
    // Sorts the throughputs alone, as `trace::events` sorts its moments: one sort in the WASM
    // instead of one per element type.
    let mut ops: Vec<f64> = runs.iter().map(|r| r.ops_per_sec).collect();
    ops.sort_unstable_by(f64::total_cmp);
    let mid = ops.len().checked_sub(1)? / 2;
    let m = ops[mid];
    // What a stable sort of the runs would put at `mid`: among the runs of that throughput, in
    // their order, the one as far in as `mid` is past the first of them.
    let first = ops.iter().position(|o| o.total_cmp(&m).is_eq())?;
    runs.into_iter()
        .filter(|r| r.ops_per_sec.total_cmp(&m).is_eq())
        .nth(mid - first)
}

/// A batch size's median run, with the spread of its runs' throughput.
fn point(batch: u32, runs: Vec<&RunSummary>) -> Point {
    let ops = |f: fn(f64, f64) -> f64| runs.iter().map(|s| s.ops_per_sec).reduce(f).unwrap_or(0.0);
    let (ops_min, ops_max) = (ops(f64::min), ops(f64::max));
    let count = runs.len();
    let m = median(runs).expect("a batch size has runs");
    Point {
        batch,
        runs: count,
        ops_per_sec: m.ops_per_sec,
        ops_min,
        ops_max,
        cost_us: m.wall_us as f64 / m.done as f64,
        per_rt_us: m.wall_us as f64 / m.round_trips.max(1) as f64,
        rt_per_cmd: m.round_trips as f64 / m.done as f64,
        p99_us: m.latency.p99_us,
        memory: m.redis_memory,
    }
}

/// Complete pipelined runs with one write per batch, grouped by batch size (ascending): at
/// least two sizes. `None` if any run is something else.
pub fn group(runs: &[RunSummary]) -> Option<Vec<Point>> {
    let mut batches = Vec::new();
    for s in runs {
        let Mode::Pipelined {
            batch,
            flush: Flush::Batch,
        } = s.spec.mode
        else {
            return None;
        };
        if s.done == 0 {
            return None;
        }
        // Kept sorted as they come (a sweep has at most a few dozen runs): no library sort,
        // whose code is large in the page's WASM.
        if let Err(at) = batches.binary_search(&batch) {
            batches.insert(at, batch);
        }
    }
    if batches.len() < 2 {
        return None;
    }
    Some(
        batches
            .into_iter()
            .map(|b| {
                point(
                    b,
                    runs.iter().filter(|s| s.spec.mode.batch() == b).collect(),
                )
            })
            .collect(),
    )
}

/// The results as the page's sweep, if they are one: batch sizes 1, 2, 5, 10, … (`series`, at
/// least two), each run the same number of times.
pub fn points(runs: &[RunSummary]) -> Option<Vec<Point>> {
    let points = group(runs)?;
    let sweep = points
        .iter()
        .zip(series())
        .all(|(p, b)| p.batch == b && p.runs == points[0].runs);
    sweep.then_some(points)
}

/// Throughput gained per doubling of the batch from `a` to `b` (medians).
fn gain(a: &Point, b: &Point) -> f64 {
    let doublings = (b.batch as f64 / a.batch as f64).log2().max(1e-9);
    (b.ops_per_sec / a.ops_per_sec).powf(1.0 / doublings)
}

/// Index of the knee (see `KNEE_GAIN`): the last point reached by a step that multiplied the
/// median ops/s by at least `KNEE_GAIN` per doubling, when no later step did (the first point
/// if none ever did). `None` while the last step still paid: the knee lies beyond the sweep.
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

/// The round trips' share (0..=1) of point `k`'s time, derived: the smallest batch's time per
/// round trip × this batch's round trips per command ÷ its cost per command. An upper bound:
/// the smallest batch's round trip includes its own commands' work.
pub fn round_trip_share(points: &[Point], k: usize) -> f64 {
    let (first, p) = (points[0], points[k]);
    if p.cost_us <= 0.0 {
        return 0.0;
    }
    (first.per_rt_us * p.rt_per_cmd / p.cost_us).min(1.0)
}

/// The point with the highest median throughput.
pub fn best(points: &[Point]) -> Option<usize> {
    (0..points.len()).max_by(|&a, &b| points[a].ops_per_sec.total_cmp(&points[b].ops_per_sec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;
    use shared::report::ops_per_sec;
    use shared::{Latency, RunSpec};

    const L: Limits = Limits::DEFAULT;

    #[test]
    fn the_plan_repeats_the_series_up_to_100k() {
        let four = [1, 2, 5, 10];
        assert_eq!(plan(10, 1000, &L).unwrap(), four.repeat(REPEATS));
        assert_eq!(plan(16, 1000, &L).unwrap(), four.repeat(REPEATS));
        assert_eq!(plan(2, 1000, &L).unwrap(), [1, 2].repeat(REPEATS));
        let full = plan(100_000, 100_000, &L).unwrap();
        assert_eq!(full.len(), 16 * REPEATS);
        assert!(full.len() <= L.max_runs);
        assert_eq!(full[15], 100_000);
        assert!(
            plan(1, 1000, &L)
                .unwrap_err()
                .contains("between 2 and 100000, got 1")
        );
        assert!(
            plan(200_000, 1_000_000, &L)
                .unwrap_err()
                .contains("between 2 and 100000, got 200000")
        );
        assert!(
            plan(100_000, 99_999, &L)
                .unwrap_err()
                .contains("at least 100000 commands per run")
        );
        assert!(
            plan(16, 5, &L)
                .unwrap_err()
                .contains("up to batch 10 needs at least 10")
        );
        let few = Limits { max_runs: 9, ..L };
        let err = plan(10, 1000, &few).unwrap_err();
        assert!(
            err.contains("12 runs") && err.contains("at most 5"),
            "{err}"
        );
        assert_eq!(plan(5, 1000, &few).unwrap().len(), 9);
        let err = plan(100_000, 100_000, &Limits { max_runs: 47, ..L }).unwrap_err();
        assert!(
            err.contains("48 runs") && err.contains("at most 50000"),
            "{err}"
        );
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
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        }
    }

    /// A sweep's runs (batches 1, 2, 5, …) with these wall times.
    fn sweep(walls: &[u64]) -> Vec<RunSummary> {
        walls
            .iter()
            .zip(series())
            .map(|(w, b)| run(Mode::pipelined(b), *w))
            .collect()
    }

    #[test]
    fn the_median_is_the_one_a_stable_sort_puts_in_the_middle() {
        // Equal throughputs, told apart by their batch: the stable sort's pick is kept.
        let runs: Vec<RunSummary> = [(30, 1), (10, 2), (30, 3), (10, 4), (20, 5)]
            .iter()
            .map(|&(wall, batch)| run(Mode::pipelined(batch), wall))
            .collect();
        for n in 1..=runs.len() {
            let some: Vec<&RunSummary> = runs[..n].iter().collect();
            let mut sorted = some.clone();
            sorted.sort_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
            assert_eq!(median(some), Some(sorted[(n - 1) / 2]), "{n} runs");
        }
        assert_eq!(median(Vec::new()), None);
    }

    #[test]
    fn only_the_series_of_batched_pipelines_is_a_sweep() {
        let p = points(&sweep(&[64_000, 32_000, 16_000])).unwrap();
        assert_eq!(p.iter().map(|p| p.batch).collect::<Vec<_>>(), [1, 2, 5]);
        assert_eq!(p[0].cost_us, 64.0);
        assert_eq!(p[2].ops_per_sec, 62_500.0);
        assert!(points(&sweep(&[1000])).is_none(), "one run is no sweep");
        let compare = [run(Mode::Sequential, 1000), run(Mode::pipelined(100), 100)];
        assert!(points(&compare).is_none());
        let mut gap = sweep(&[4, 2, 1]);
        gap.remove(1);
        assert!(points(&gap).is_none());
        assert!(
            group(&gap).is_some(),
            "the tour's decades group all the same"
        );
        let mut each = sweep(&[4, 2]);
        each[1].spec.mode = Mode::Pipelined {
            batch: 2,
            flush: Flush::EachCommand,
        };
        assert!(points(&each).is_none());
        let mut uneven = sweep(&[4, 2]);
        uneven.push(run(Mode::pipelined(1), 4));
        assert!(points(&uneven).is_none(), "batch 1 twice, batch 2 once");
    }

    #[test]
    fn each_point_is_the_median_run_with_its_spread() {
        // Rounds as the plan orders them: 1, 2, 1, 2, 1, 2.
        let walls = [64_000, 30_000, 60_000, 32_000, 70_000, 34_000];
        let runs: Vec<RunSummary> = walls
            .iter()
            .enumerate()
            .map(|(k, w)| run(Mode::pipelined(1 << (k % 2)), *w))
            .collect();
        let p = points(&runs).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].runs, 3);
        assert_eq!(p[0].ops_per_sec, ops_per_sec(1000, 64_000));
        assert_eq!(p[0].ops_min, ops_per_sec(1000, 70_000));
        assert_eq!(p[0].ops_max, ops_per_sec(1000, 60_000));
        assert_eq!(p[0].cost_us, 64.0, "the median run's own cost");
        assert_eq!(p[1].ops_per_sec, ops_per_sec(1000, 32_000));
        assert!(p[1].ops_min <= p[1].ops_per_sec && p[1].ops_per_sec <= p[1].ops_max);
    }

    #[test]
    fn the_round_trip_share_is_derived_from_the_smallest_batch() {
        // Batch 1: 64 µs a round trip. Batch 10: 100 round trips in 10 ms, 10 µs a command,
        // of which 64 ÷ 10 = 6.4 µs is round trip: 64 %.
        let p = points(&sweep(&[64_000, 32_000, 16_000, 10_000])).unwrap();
        assert_eq!(round_trip_share(&p, 0), 1.0);
        assert!((round_trip_share(&p, 3) - 0.64).abs() < 1e-12);
        assert_eq!(best(&p), Some(3));
    }

    #[test]
    fn the_knee_is_where_doubling_stops_paying() {
        // Per doubling: 2×, 2× (2.5× over 2 → 5), 1.6×, 1.14×, 1.06×: the doubling after
        // batch 10 pays only 1.14×.
        let p = points(&sweep(&[64_000, 32_000, 12_800, 8_000, 7_000, 6_500])).unwrap();
        assert_eq!(knee(&p), Some(3));
        assert_eq!(p[3].batch, 10);
        // Every step paid: no knee yet.
        let p = points(&sweep(&[8_000, 4_000, 1_600])).unwrap();
        assert_eq!(knee(&p), None);
        // A slower bigger batch (noise) is past the knee too.
        let p = points(&sweep(&[8_000, 9_000])).unwrap();
        assert_eq!(knee(&p), Some(0));
        // One noisy early step (1.4×) does not call the knee at batch 1: 2→5 still paid 2× per
        // doubling.
        let p = points(&sweep(&[89_000, 63_000, 25_200, 17_000, 16_000])).unwrap();
        assert_eq!(knee(&p), Some(2));
    }
}
