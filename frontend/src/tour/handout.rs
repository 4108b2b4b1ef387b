//! The handout's Markdown: each step's runs as the page exports them, and the one-trip step's
//! round trip taken apart.

use shared::RunSummary;

use super::result::StepResult;
use super::script::{Focus, STEPS};
use crate::format;

/// The results in step order; one step's results keep their order. (Sorted by step and
/// position with an unstable sort: the page has no stable sort, whose code is large.)
pub fn by_step(results: &[StepResult]) -> Vec<&StepResult> {
    let mut sorted: Vec<(usize, &StepResult)> = results.iter().enumerate().collect();
    sorted.sort_unstable_by_key(|&(i, r)| (r.step, i));
    sorted.into_iter().map(|(_, r)| r).collect()
}

/// The session's measurements for the handout: a section per step with its runs as the page's
/// Markdown export shows them (`export::markdown`: the speed-up column is over the step's own
/// sequential run, when it has one).
pub fn handout_markdown(results: &[StepResult]) -> String {
    let mut out = String::from("# pipescope tour: what we measured\n");
    for r in by_step(results) {
        let runs: Vec<RunSummary> = r.runs.iter().map(|(_, s)| s.clone()).collect();
        out += &format!(
            "\n## Step {}: {}\n\n{}",
            r.step + 1,
            STEPS[r.step].title,
            crate::export::markdown(&runs)
        );
        if let (Some(FocusTrip { run, summary }), Focus::OneTrip) =
            (FocusTrip::of(r), STEPS[r.step].focus)
        {
            out += &trip_markdown(run, summary);
        }
    }
    out
}

/// The run a one-trip step takes apart.
struct FocusTrip<'a> {
    run: u64,
    summary: &'a RunSummary,
}

impl FocusTrip<'_> {
    fn of(r: &StepResult) -> Option<FocusTrip<'_>> {
        Some(FocusTrip {
            run: r.ids.first().copied().unwrap_or(0),
            summary: &r.runs.first()?.1,
        })
    }
}

/// A round trip's parts as a list, each with its source (as the figure labels them).
pub fn trip_markdown(run: u64, s: &RunSummary) -> String {
    let trip = crate::rtt_model::Trip::of(run, s);
    let mut out = format!(
        "\nThe round trip, taken apart:\n\n- RTT {} (mean, measured by the engine)\n",
        format::latency(trip.rtt_us)
    );
    for p in &trip.parts {
        out += &format!(
            "- {} {} ({})\n",
            p.name,
            crate::timeaxis::duration(p.us),
            p.source.describe()
        );
    }
    out
}
