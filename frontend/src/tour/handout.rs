//! The handout's Markdown: each step's runs as the page exports them, and the one-trip step's
//! round trip taken apart.

use shared::RunSummary;

use super::result::StepResult;
use super::script::{Focus, STEPS};
use crate::format;

/// The results in step order; one step's results keep their order. An insertion sort: a
/// tour has a handful of steps, and the standard library's sorts each add kilobytes to the
/// page's WASM.
pub fn by_step(results: &[StepResult]) -> Vec<&StepResult> {
    let mut sorted: Vec<&StepResult> = results.iter().collect();
    for i in 1..sorted.len() {
        let mut j = i;
        while j > 0 && sorted[j - 1].step > sorted[j].step {
            sorted.swap(j - 1, j);
            j -= 1;
        }
    }
    sorted
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
    let trip = crate::rtt_model::TripBreakdown::of(run, s);
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
