use leptos::prelude::*;

use super::run_bar::RunBar;
use crate::components::shown::Shown;
use crate::connection::Connection;
use crate::state::{Outcome, RunView};

/// Plans of more runs than this (a sweep's 30) show one bar, the run under way's, and a strip
/// of a cell per run: 30 bars would push everything else off a projector's screen.
const BARS_AT_MOST: usize = 4;

/// One live bar per run of the current plan, plus the runs still queued behind them; for a
/// long plan, the bar of the run under way and a strip of them all.
#[component]
pub fn RunProgress(conn: Connection) -> impl IntoView {
    let any = move || !conn.run_ids.with(Vec::is_empty);
    let many = Memo::new(move |_| conn.session.with(|s| plan_size(&s.runs) > BARS_AT_MOST));
    // The bars shown: every run's, or for a long plan the one under way (else the latest).
    let barred = move || {
        let ids = conn.run_ids.get();
        if !many.get() {
            return ids;
        }
        conn.session.with(|s| {
            s.runs
                .iter()
                .find(|r| r.is_running())
                .or(s.runs.last())
                .map(|r| vec![r.run])
                .unwrap_or_default()
        })
    };
    view! {
        <Shown when=any>
            <section class="card progress" aria-label="Progress">
                <h2>"Progress"</h2>
                <For
                    each=barred
                    key=|id| *id
                    children=move |id| view! { <RunBar conn=conn run=id /> }
                />
                <Shown when=move || many.get()>
                    <RunStrip conn=conn />
                </Shown>
                {move || {
                    let queued = conn.queued.get();
                    (queued > 0 && !many.get())
                        .then(|| {
                            view! {
                                <p class="queued">
                                    {if queued == 1 {
                                        "1 more run queued".to_string()
                                    } else {
                                        format!("{queued} more runs queued")
                                    }}
                                </p>
                            }
                        })
                }}
            </section>
        </Shown>
    }
}

/// The plan's runs, started or not (`of` of its latest).
fn plan_size(runs: &[RunView]) -> usize {
    runs.last().map_or(0, |r| r.of.max(runs.len()))
}

/// A cell per run of a long plan, in order, each as far as it got (its label on hover), and
/// how many are done: "run 17 of 30 · 16 done".
#[component]
fn RunStrip(conn: Connection) -> impl IntoView {
    let cells = move || {
        conn.session.with(|s| {
            let mut cells: Vec<(String, &'static str, String)> = s
                .runs
                .iter()
                .map(|r| {
                    let state = match r.outcome {
                        Outcome::Finished(_) => "finished",
                        Outcome::Failed { .. } => "failed",
                        Outcome::Running => "running",
                    };
                    (r.label(), state, format!("{:.0}%", r.fraction() * 100.0))
                })
                .collect();
            cells.extend(
                (s.runs.len()..plan_size(&s.runs))
                    .map(|_| ("queued".to_string(), "queued", "0%".to_string())),
            );
            cells
        })
    };
    let caption = move || {
        conn.session.with(|s| {
            let of = plan_size(&s.runs);
            let done = s
                .runs
                .iter()
                .filter(|r| matches!(r.outcome, Outcome::Finished(_)))
                .count();
            match s.runs.iter().position(RunView::is_running) {
                Some(k) => format!("run {} of {of} · {done} done", k + 1),
                None => format!("{done} of {of} runs done"),
            }
        })
    };
    view! {
        <div class="run-strip-row">
            <ol class="run-strip" aria-label="Every run of the plan">
                {move || {
                    cells()
                        .into_iter()
                        .map(|(label, state, width)| {
                            view! {
                                <li class=format!("cell {state}") title=label>
                                    <span class="fill" style=format!("width: {width}")></span>
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ol>
            <span class="run-strip-caption">{caption}</span>
        </div>
    }
}
