//! Which of a plan's runs the timeline draws. Every one while they fit; a long plan (a sweep's
//! 30 runs, three rounds of ten batch sizes) would give each run a few pixels of lane, so it
//! draws a few: by default the latest run of its first and of its last kind (batch 1 and batch
//! 1,000), and the run under way; the presenter adds or removes kinds. Pure.

use crate::trace::Trace;

/// Runs drawn at most without choosing: more do not fit a projector's screen.
pub const DRAWN_AT_MOST: usize = 4;

/// A run's kind as the chooser names it: its mode's label ("pipelined (batch 20)").
fn kind_of(t: &Trace) -> String {
    t.mode
        .map_or_else(|| format!("run #{}", t.run), |m| m.label())
}

/// One choice per kind of run, in the plan's order: its name and its latest run.
pub fn choices(all: &[Trace]) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for t in all {
        let kind = kind_of(t);
        match out.iter_mut().find(|(k, _)| *k == kind) {
            Some(choice) => choice.1 = t.run,
            None => out.push((kind, t.run)),
        }
    }
    out
}

/// The runs of `all` to draw, in its order: all of them when they fit; else those of
/// `chosen` still there, or by default the latest run of the first and of the last kind and
/// the run under way.
pub fn drawn(all: &[Trace], chosen: Option<&[u64]>) -> Vec<u64> {
    if all.len() <= DRAWN_AT_MOST {
        return all.iter().map(|t| t.run).collect();
    }
    if let Some(chosen) = chosen {
        let kept: Vec<u64> = all
            .iter()
            .map(|t| t.run)
            .filter(|r| chosen.contains(r))
            .collect();
        if !kept.is_empty() {
            return kept;
        }
    }
    let choices = choices(all);
    let mut runs: Vec<u64> = [choices.first(), choices.last()]
        .into_iter()
        .flatten()
        .map(|(_, run)| *run)
        .collect();
    runs.extend(all.iter().filter(|t| t.running.is_some()).map(|t| t.run));
    all.iter()
        .map(|t| t.run)
        .filter(|r| runs.contains(r))
        .collect()
}

/// The choices' names, shortened where they share their mode: a sweep's "pipelined (batch
/// 20)" reads "batch 20".
pub fn short_names(choices: &[(String, u64)]) -> Vec<String> {
    let inner = |name: &str| -> Option<(String, String)> {
        let (mode, rest) = name.split_once(" (")?;
        Some((mode.to_string(), rest.strip_suffix(')')?.to_string()))
    };
    let split: Vec<Option<(String, String)>> = choices.iter().map(|(n, _)| inner(n)).collect();
    let one_mode = split.iter().all(|s| {
        s.as_ref()
            .zip(split[0].as_ref())
            .is_some_and(|(a, b)| a.0 == b.0)
    });
    choices
        .iter()
        .zip(split)
        .map(|((name, _), s)| match s {
            Some((_, inside)) if one_mode => inside,
            _ => name.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;
    use shared::Mode;

    fn run(run: u64, batch: u32, running: bool) -> Trace {
        Trace {
            run,
            mode: Some(Mode::pipelined(batch)),
            network: None,
            spans: vec![],
            sampled: vec![],
            stride: 1,
            count: 100,
            summary: None,
            running: running.then_some((1, 1)),
            observed: None,
            captured: false,
        }
    }

    /// Three rounds of batches 1, 10, 100 (runs 1..=9); run `live` under way.
    fn sweep(live: Option<u64>) -> Vec<Trace> {
        (1..=9)
            .map(|r| run(r, [1, 10, 100][(r as usize - 1) % 3], Some(r) == live))
            .collect()
    }

    #[test]
    fn a_plan_that_fits_is_drawn_whole() {
        let two = vec![run(1, 1, false), run(2, 1000, false)];
        assert_eq!(drawn(&two, None), [1, 2]);
        assert_eq!(drawn(&two, Some(&[2])), [1, 2]);
    }

    #[test]
    fn a_sweep_draws_the_latest_of_its_first_and_last_batch_and_the_run_under_way() {
        assert_eq!(drawn(&sweep(None), None), [7, 9]);
        assert_eq!(drawn(&sweep(Some(5)), None), [5, 7, 9]);
        assert_eq!(
            choices(&sweep(None))
                .iter()
                .map(|c| c.1)
                .collect::<Vec<_>>(),
            [7, 8, 9]
        );
    }

    #[test]
    fn a_choice_holds_while_its_runs_are_there() {
        assert_eq!(drawn(&sweep(None), Some(&[8, 2])), [2, 8]);
        // Another plan's runs: back to the default.
        assert_eq!(drawn(&sweep(None), Some(&[42])), [7, 9]);
    }

    #[test]
    fn names_shared_by_one_mode_are_shortened() {
        let names = short_names(&choices(&sweep(None)));
        assert_eq!(names, ["batch 1", "batch 10", "batch 100"]);
        let mixed = vec![
            ("sequential".to_string(), 1),
            ("pipelined (batch 10)".to_string(), 2),
        ];
        assert_eq!(short_names(&mixed), ["sequential", "pipelined (batch 10)"]);
    }
}
