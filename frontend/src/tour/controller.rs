//! The tour's controller: the signals of the page being shown, the step's run and what each
//! step measured, and the actions (Next, Back, Run, Cancel) the page's buttons and keys call.
//! It also publishes `window.__pipescope_tour` for the browser tests:
//! `{ page, step, state, steps: { "<step>": { "<role>": RunSummary } } }`.

use leptos::prelude::*;
use shared::{RunSpec, RunSummary};

use crate::address_bar;
use crate::connection::Connection;
use crate::state::{Outcome, RunView};
use crate::tour::{self, STEPS, StepResult};

/// Where the current step's run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Idle,
    Running,
    Done,
    Failed,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Idle => "idle",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Failed => "failed",
        }
    }
}

/// A plan the tour started and has not seen finish.
#[derive(Debug, Clone, PartialEq)]
struct Pending {
    step: usize,
    specs: Vec<RunSpec>,
    /// The session's run ids when it was started: the plan's runs are the new ones.
    before: Vec<u64>,
}

/// The tour's signals. `Copy`, like `Connection`.
#[derive(Clone, Copy)]
pub struct Tour {
    conn: Connection,
    /// 0-based; `STEPS.len()` is the handout.
    pub page: RwSignal<usize>,
    /// The latest measurement of each step, in the order they were made.
    pub results: RwSignal<Vec<StepResult>>,
    pending: RwSignal<Option<Pending>>,
    failed: RwSignal<Option<usize>>,
    /// Each measured step's runs as the stage drew them, to put back when the step is
    /// revisited (the session itself holds only the latest plan).
    stages: StoredValue<Vec<(usize, Vec<RunView>)>>,
    /// The count field (for steps whose count may change).
    pub count_text: RwSignal<String>,
    /// `?count=`: every adjustable step's default.
    url_count: Option<u64>,
    /// `?delay=`: every step's one-way delay, µs.
    pub url_delay: Option<u32>,
}

impl Tour {
    pub fn new(
        conn: Connection,
        page: usize,
        url_count: Option<u64>,
        url_delay: Option<u32>,
    ) -> Tour {
        let tour = Tour {
            conn,
            page: RwSignal::new(page.min(tour::pages() - 1)),
            results: RwSignal::new(Vec::new()),
            pending: RwSignal::new(None),
            failed: RwSignal::new(None),
            stages: StoredValue::new(Vec::new()),
            count_text: RwSignal::new(String::new()),
            url_count,
            url_delay,
        };
        // Each page opens with its default count.
        crate::erased::effect(move || {
            let page = tour.page.get();
            if let Some(step) = STEPS.get(page) {
                tour.count_text.set(step.count(tour.url_count).to_string());
            }
        });
        // The URL follows the page (replaceState: a reload opens the same step).
        crate::erased::effect(move || {
            address_bar::replace(&tour::path_of(tour.page.get()), &address_bar::search());
        });
        // A measured step revisited shows its own runs again, not the latest step's.
        crate::erased::effect(move || {
            let page = tour.page.get();
            if tour.conn.busy.get_untracked() {
                return;
            }
            let Some(runs) = tour.stages.with_value(|all| {
                all.iter()
                    .find(|(step, _)| *step == page)
                    .map(|(_, runs)| runs.clone())
            }) else {
                return;
            };
            let ids: Vec<u64> = runs.iter().map(|r| r.run).collect();
            if tour.conn.run_ids.get_untracked() != ids {
                tour.conn.session.update(|s| s.show_again(runs));
            }
        });
        tour.watch_runs();
        tour.fill_from_recording();
        tour.publish();
        tour
    }

    /// A recording saved from the tour (served by `pipescope replay`) fills every step it
    /// measured, as if just run: the steps' prose, their runs on the stage, the handout.
    fn fill_from_recording(self) {
        // Only a new recording re-runs this: putting its runs on the stage changes the session.
        let recording = Memo::new(move |_| self.conn.session.with(|s| s.recording.clone()));
        crate::erased::effect(move || {
            let info = recording.get();
            let loaded = self.conn.session.with_untracked(|s| {
                let info = info.as_ref()?;
                let run = |id: &u64| s.recent.iter().position(|r| r.run == *id);
                let steps: Vec<(StepResult, Vec<RunView>)> = info
                    .tour
                    .iter()
                    .filter(|t| t.step < STEPS.len() && t.roles.len() == t.ids.len())
                    .filter_map(|t| {
                        let at: Vec<usize> = t.ids.iter().map(run).collect::<Option<_>>()?;
                        let runs = t
                            .roles
                            .iter()
                            .zip(&at)
                            .map(|(role, &i)| (role.clone(), s.recent[i].summary.clone()))
                            .collect();
                        let n = at.len();
                        let views = at
                            .iter()
                            .enumerate()
                            .map(|(k, &i)| RunView::from_record(&s.recent[i], k, n))
                            .collect();
                        let result = StepResult {
                            step: t.step,
                            runs,
                            ids: t.ids.clone(),
                        };
                        Some((result, views))
                    })
                    .collect();
                (!steps.is_empty()).then_some(steps)
            });
            let Some(steps) = loaded else {
                return;
            };
            let page = self.page.get_untracked();
            let here = steps
                .iter()
                .find(|(r, _)| r.step == page)
                .map(|(_, v)| v.clone());
            self.stages
                .set_value(steps.iter().map(|(r, v)| (r.step, v.clone())).collect());
            self.results
                .set(steps.into_iter().map(|(r, _)| r).collect());
            if let Some(views) = here {
                self.conn.session.update(|s| s.show_again(views));
            }
        });
    }

    /// Every step measured so far, with its runs and their timelines, as one recording.
    pub fn recording(self, now_ms: u64) -> shared::Recording {
        let all_results = self.results.get_untracked();
        let results = super::by_step(&all_results);
        let runs = self.stages.with_value(|all| {
            results
                .iter()
                .flat_map(|r| {
                    all.iter()
                        .filter(|(step, _)| *step == r.step)
                        .flat_map(|(_, views)| views.iter().filter_map(RunView::record))
                })
                .collect()
        });
        let mut recording = self.conn.recording_of(runs, now_ms);
        recording.tour = results
            .iter()
            .map(|r| shared::TourStepRecord {
                step: r.step,
                roles: r.runs.iter().map(|(role, _)| role.clone()).collect(),
                ids: r.ids.clone(),
            })
            .collect();
        recording
    }

    pub fn state(&self) -> RunState {
        let page = self.page.get();
        if self
            .pending
            .with(|p| p.as_ref().is_some_and(|p| p.step == page))
        {
            RunState::Running
        } else if self.failed.get() == Some(page) {
            RunState::Failed
        } else if self.results.with(|r| r.iter().any(|r| r.step == page)) {
            RunState::Done
        } else {
            RunState::Idle
        }
    }

    pub fn can_run(&self) -> bool {
        self.page.get() < STEPS.len() && self.conn.is_open() && !self.conn.busy.get()
    }

    pub fn next(&self) {
        self.page.update(|p| *p = (*p + 1).min(tour::pages() - 1));
    }

    pub fn back(&self) {
        self.page.update(|p| *p = p.saturating_sub(1));
    }

    pub fn go(&self, page: usize) {
        self.page.set(page.min(tour::pages() - 1));
    }

    /// Starts the current step's plan.
    pub fn run(&self) {
        let page = self.page.get_untracked();
        let Some(step) = STEPS.get(page) else {
            return;
        };
        if !self.conn.is_open() || self.conn.busy.get_untracked() {
            return;
        }
        let chosen = if step.adjustable() {
            match self
                .count_text
                .get_untracked()
                .trim()
                .replace(',', "")
                .parse::<u64>()
            {
                Ok(n) => Some(n),
                Err(_) => {
                    self.conn
                        .error
                        .set(Some("The count must be a whole number.".into()));
                    return;
                }
            }
        } else {
            None
        };
        let specs = step.specs(chosen, self.url_delay);
        let before = self.conn.run_ids.get_untracked();
        self.failed.set(None);
        self.pending.set(Some(Pending {
            step: page,
            specs: specs.clone(),
            before,
        }));
        self.conn.start(specs);
        if !self.conn.session.with_untracked(|s| s.awaiting_start) {
            // Refused before it was sent (validation, no connection): the banner says why.
            self.pending.set(None);
            self.failed.set(Some(page));
        }
    }

    pub fn cancel(&self) {
        if self.pending.with_untracked(Option::is_some) {
            self.conn.cancel();
        }
    }

    /// Folds the pending plan's outcome in once the session is idle again.
    fn watch_runs(self) {
        crate::erased::effect(move || {
            let busy = self.conn.busy.get();
            let Some(p) = self.pending.get() else {
                return;
            };
            if busy {
                return;
            }
            let outcome = self.conn.session.with(|s| {
                let runs: Vec<_> = s
                    .runs
                    .iter()
                    .filter(|r| !p.before.contains(&r.run))
                    .collect();
                if !s.started_here || runs.is_empty() {
                    return None;
                }
                let summaries: Vec<(u64, RunSummary)> = runs
                    .iter()
                    .filter_map(|r| match &r.outcome {
                        Outcome::Finished(s) => Some((r.run, s.clone())),
                        _ => None,
                    })
                    .collect();
                let complete = summaries.len() == p.specs.len()
                    && summaries
                        .iter()
                        .zip(&p.specs)
                        .all(|((_, s), spec)| s.spec == *spec);
                complete.then_some(summaries)
            });
            self.pending.set(None);
            match outcome {
                Some(summaries) => {
                    let ids: Vec<u64> = summaries.iter().map(|(id, _)| *id).collect();
                    let views = self.conn.session.with_untracked(|s| {
                        s.runs
                            .iter()
                            .filter(|r| ids.contains(&r.run))
                            .cloned()
                            .collect()
                    });
                    self.stages.update_value(|all| {
                        all.retain(|(step, _)| *step != p.step);
                        all.push((p.step, views));
                    });
                    let result = StepResult {
                        step: p.step,
                        runs: STEPS[p.step]
                            .runs
                            .iter()
                            .zip(&summaries)
                            .map(|(def, (_, s))| (def.role.to_string(), s.clone()))
                            .collect(),
                        ids,
                    };
                    self.results.update(|all| {
                        all.retain(|r| r.step != p.step);
                        all.push(result);
                    });
                }
                None => self.failed.set(Some(p.step)),
            }
        });
    }

    /// `window.__pipescope_tour` for the browser tests.
    fn publish(self) {
        crate::erased::effect(move || {
            let page = self.page.get();
            let state = self.state();
            // Written as text with the serialiser the page's other JSON uses (a recording's),
            // not through `serde_json::Value`: a second serialiser of every summary field
            // would add kilobytes to the WASM.
            macro_rules! json {
                ($v:expr) => {
                    serde_json::to_string($v).unwrap_or_default()
                };
            }
            let mut steps = Vec::new();
            let mut ids = Vec::new();
            self.results.with(|all| {
                for r in all {
                    let runs: Vec<String> = r
                        .runs
                        .iter()
                        .map(|(role, s)| format!("{}:{}", json!(role), json!(s)))
                        .collect();
                    steps.push(format!("\"{}\":{{{}}}", r.step + 1, runs.join(",")));
                    ids.push(format!("\"{}\":{}", r.step + 1, json!(&r.ids)));
                }
            });
            let page_kind = if page < STEPS.len() {
                "step"
            } else {
                "handout"
            };
            let value = format!(
                "{{\"page\":\"{page_kind}\",\"step\":{},\"state\":{},\"steps\":{{{}}},\"ids\":{{{}}}}}",
                page + 1,
                json!(&state.as_str()),
                steps.join(","),
                ids.join(","),
            );
            if let Ok(obj) = js_sys::JSON::parse(&value) {
                let _ = js_sys::Reflect::set(&window(), &"__pipescope_tour".into(), &obj);
            }
        });
    }
}
