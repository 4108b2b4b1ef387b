//! One run of the current plan, as far as the page has seen it: its progress, its spans and,
//! once over, its outcome.

use shared::{RunRecord, RunSpec, RunSummary, Span, Timeline};

use crate::trace::Trace;

/// One run of the current plan, as far as the page has seen it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunView {
    pub run: u64,
    /// Position in its plan (`index` of `of`). A run first seen through `Progress` (the page
    /// connected mid-run) is taken as `0 of 1` until told otherwise.
    pub index: usize,
    pub of: usize,
    /// Unknown for a run first seen through `Progress`, until `Finished` brings it.
    pub spec: Option<RunSpec>,
    pub done: u64,
    pub total: u64,
    pub elapsed_us: u64,
    pub ops_per_sec: f64,
    pub outcome: Outcome,
    /// The run's first requests, every one, in order of `i` (live from `Spans`, then replaced
    /// by the `Finished` timeline).
    pub spans: Vec<Span>,
    /// Every `stride`-th request of the run (drawn beyond `spans`, marked as a sample): live
    /// from `Sampled` as the run goes on, then replaced by the `Finished` timeline's.
    pub sampled: Vec<Span>,
    pub stride: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Running,
    Finished(RunSummary),
    Failed {
        reason: String,
        partial: Option<RunSummary>,
    },
}

impl RunView {
    pub(super) fn new(run: u64, index: usize, of: usize, spec: Option<RunSpec>) -> Self {
        RunView {
            run,
            index,
            of,
            spec,
            done: 0,
            total: spec.map_or(0, |s| s.count),
            elapsed_us: 0,
            ops_per_sec: 0.0,
            outcome: Outcome::Running,
            spans: Vec::new(),
            sampled: Vec::new(),
            stride: 1,
        }
    }

    pub fn label(&self) -> String {
        match self.spec {
            Some(spec) => spec.mode.label() + spec.keys.suffix(),
            None => format!("run #{}", self.run),
        }
    }

    /// Appends live spans, keeping them in order: a frame a lagging page missed leaves a gap,
    /// never a duplicate or a reordering.
    pub(super) fn add_spans(&mut self, spans: Vec<Span>) {
        for s in spans {
            if self.spans.last().is_none_or(|last| s.i > last.i) {
                self.spans.push(s);
            }
        }
    }

    /// Puts live sampled spans in place (in order of `i`; a pool's connections answer out of
    /// order), once each.
    pub(super) fn add_sampled(&mut self, stride: u64, spans: Vec<Span>) {
        self.stride = stride;
        for s in spans {
            let at = self.sampled.partition_point(|k| k.i < s.i);
            if self.sampled.get(at).is_none_or(|k| k.i != s.i) {
                self.sampled.insert(at, s);
            }
        }
    }

    /// The final timeline is complete where the live frames may have gaps.
    /// Its sample covers the rest of the run.
    pub(super) fn take_timeline(&mut self, timeline: Timeline) {
        if timeline.first.len() >= self.spans.len() {
            self.spans = timeline.first;
        }
        self.sampled = timeline.sampled;
        self.stride = timeline.stride;
    }

    pub fn trace(&self) -> Trace {
        Trace {
            run: self.run,
            mode: self.spec.map(|s| s.mode),
            network: self.spec.map(|s| s.network),
            spans: self.spans.clone(),
            sampled: self.sampled.clone(),
            stride: self.stride,
            count: self.total,
            summary: match &self.outcome {
                Outcome::Finished(s) => Some(s.clone()),
                _ => None,
            },
            observed: None,
            captured: false,
            running: matches!(self.outcome, Outcome::Running)
                .then_some((self.done, self.elapsed_us)),
        }
    }

    /// A finished run as a recording keeps it (`None` unless finished).
    pub fn record(&self) -> Option<RunRecord> {
        match &self.outcome {
            Outcome::Finished(summary) => Some(RunRecord {
                run: self.run,
                summary: summary.clone(),
                timeline: Timeline {
                    first: self.spans.clone(),
                    sampled: self.sampled.clone(),
                    stride: self.stride,
                },
            }),
            _ => None,
        }
    }

    /// A recorded run, finished, as `index` of `of` of its plan.
    pub fn from_record(record: &RunRecord, index: usize, of: usize) -> RunView {
        let summary = record.summary.clone();
        let mut view = RunView::new(record.run, index, of, Some(summary.spec));
        view.take_timeline(record.timeline.clone());
        view.done = summary.done;
        view.elapsed_us = summary.wall_us;
        view.ops_per_sec = summary.ops_per_sec;
        view.outcome = Outcome::Finished(summary);
        view
    }

    pub fn is_running(&self) -> bool {
        matches!(self.outcome, Outcome::Running)
    }

    /// Fraction done, 0..=1.
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            (self.done as f64 / self.total as f64).clamp(0.0, 1.0)
        }
    }
}
