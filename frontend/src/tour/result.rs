//! What a step measured, and the batch sweep's runs read from it (the knee, the best, the largest
//! batch) by the page's own sweep definitions (`crate::sweep`).

use shared::RunSummary;

use crate::sweep;

/// What a step measured: its runs' summaries by role.
#[derive(Debug, Clone, PartialEq)]
pub struct StepResult {
    /// Index into `STEPS`.
    pub step: usize,
    pub runs: Vec<(String, RunSummary)>,
    /// The runs' ids, in the same order (their keys are named after them).
    pub ids: Vec<u64>,
}

impl StepResult {
    pub fn get(&self, role: &str) -> Option<&RunSummary> {
        self.runs.iter().find(|(r, _)| r == role).map(|(_, s)| s)
    }

    /// The runs of `role` and of its repeats (`b1`, `b1_2`, `b1_3`).
    pub fn runs_of(&self, role: &str) -> Vec<&RunSummary> {
        self.runs
            .iter()
            .filter(|(r, _)| same_role(r, role))
            .map(|(_, s)| s)
            .collect()
    }
}

/// True when `run_role` is `role` or one of its repeats (`b1_2` for `b1`).
fn same_role(run_role: &str, role: &str) -> bool {
    run_role == role
        || run_role
            .strip_prefix(role)
            .and_then(|r| r.strip_prefix('_'))
            .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// The step's runs as a sweep (`sweep::group`): its median run at `pick`'s point.
fn sweep_run_at(
    result: &StepResult,
    pick: impl Fn(&[sweep::Point]) -> Option<usize>,
) -> Option<&RunSummary> {
    let runs: Vec<RunSummary> = result.runs.iter().map(|(_, s)| s.clone()).collect();
    let points = sweep::group(&runs)?;
    let batch = points[pick(&points)?].batch;
    sweep::median(
        result
            .runs
            .iter()
            .map(|(_, s)| s)
            .filter(|s| s.spec.mode.batch() == batch)
            .collect(),
    )
}

/// The median run at the batch with the best median throughput.
pub fn best(result: &StepResult) -> Option<&RunSummary> {
    sweep_run_at(result, sweep::best)
}

/// The median run at the knee (`sweep::knee`: the page's sweep's definition).
pub fn knee(result: &StepResult) -> Option<&RunSummary> {
    sweep_run_at(result, sweep::knee)
}

/// The median run at the largest batch, when every step still paid (no knee in the sweep).
pub fn beyond(result: &StepResult) -> Option<&RunSummary> {
    sweep_run_at(result, |p| sweep::knee(p).is_none().then(|| p.len() - 1))
}

/// The round trips' share of the knee's time (`sweep::round_trip_share`).
pub fn knee_round_trip_share(result: &StepResult) -> Option<f64> {
    let runs: Vec<RunSummary> = result.runs.iter().map(|(_, s)| s.clone()).collect();
    let points = sweep::group(&runs)?;
    Some(sweep::round_trip_share(&points, sweep::knee(&points)?))
}
