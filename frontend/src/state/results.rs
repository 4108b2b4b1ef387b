//! What the views read off a session: the results table's rows, the runs the timeline draws,
//! and the headline speed-up.

use shared::RunSummary;

use crate::trace::Trace;

use super::run_view::{Outcome, RunView};
use super::session::Session;

/// A row of the results table.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    /// Stable key: the run id, or the position for summaries from `Welcome`.
    pub key: String,
    pub summary: RunSummary,
    /// True for what a failed or cancelled run measured before it stopped.
    pub partial: bool,
}

/// The headline comparison: the latest plan's pipelined run against its sequential run.
#[derive(Debug, Clone, PartialEq)]
pub struct Speedup {
    pub factor: f64,
    pub sequential: RunSummary,
    pub pipelined: RunSummary,
}

impl Session {
    /// The results table: the current plan's finished runs (and what failed runs measured), or,
    /// before any plan started on this page, the summaries `Welcome` brought.
    pub fn results(&self) -> Vec<ResultRow> {
        if self.runs.is_empty() {
            return self
                .recent
                .iter()
                .enumerate()
                .map(|(i, r)| ResultRow {
                    key: format!("recent-{i}"),
                    summary: r.summary.clone(),
                    partial: false,
                })
                .collect();
        }
        self.runs
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Finished(s) => Some(ResultRow {
                    key: r.run.to_string(),
                    summary: s.clone(),
                    partial: false,
                }),
                Outcome::Failed {
                    partial: Some(s), ..
                } if s.done > 0 => Some(ResultRow {
                    key: r.run.to_string(),
                    summary: s.clone(),
                    partial: true,
                }),
                _ => None,
            })
            .collect()
    }

    /// The runs the timeline draws: the current plan's, or before any plan started on this
    /// page, the ones `Welcome` brought (so a reloaded page can replay them).
    pub fn traces(&self) -> Vec<Trace> {
        if self.runs.is_empty() {
            return self
                .recent
                .iter()
                .map(|r| Trace {
                    run: r.run,
                    mode: Some(r.summary.spec.mode),
                    network: Some(r.summary.spec.network),
                    spans: r.timeline.first.clone(),
                    sampled: r.timeline.sampled.clone(),
                    stride: r.timeline.stride,
                    count: r.summary.spec.count,
                    summary: Some(r.summary.clone()),
                    observed: None,
                    captured: false,
                    running: None,
                })
                .collect();
        }
        self.runs.iter().map(RunView::trace).collect()
    }

    /// The latest plan's speed-up, once it has both a finished sequential and a finished
    /// pipelined run (the last of each).
    pub fn speedup(&self) -> Option<Speedup> {
        speedup_of(&self.results())
    }
}

/// Pipelined over sequential (ops/s ratio) among complete rows: the latest pipelined run and
/// the latest sequential one like it, differing only in how it was sent (the same command,
/// count, value size, network and other client), so a session of several comparisons (a
/// tour: 100,000 SETs at one step, INCRs at another) never sets unlike runs side by side.
pub fn speedup_of(rows: &[ResultRow]) -> Option<Speedup> {
    let complete = || rows.iter().rev().filter(|r| !r.partial).map(|r| &r.summary);
    let (sequential, pipelined) =
        complete()
            .filter(|p| p.spec.mode.is_pipelined())
            .find_map(|p| {
                complete()
                    .find(|s| s.spec.mode.is_sequential() && alike(&s.spec, &p.spec))
                    .map(|s| (s.clone(), p.clone()))
            })?;
    let factor = pipelined.speedup_over(&sequential);
    factor.is_finite().then_some(Speedup {
        factor,
        sequential,
        pipelined,
    })
}

/// Two runs that differ only in how their commands were sent.
fn alike(a: &shared::RunSpec, b: &shared::RunSpec) -> bool {
    a.command == b.command
        && a.count == b.count
        && a.value_bytes == b.value_bytes
        && a.network == b.network
        && a.other_client == b.other_client
}
