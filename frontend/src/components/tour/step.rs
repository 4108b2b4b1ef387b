//! One tour step's panel: its words, what Run starts, Run and Cancel, the progress, the result
//! sentences and the step's runs.

use leptos::html::Button;
use leptos::prelude::*;

use super::prose::{prose, template};
use super::runs::StepRuns;
use crate::components::runs::progress::RunProgress;
use crate::connection::Connection;
use crate::format;
use crate::tour::{self, RunState, STEPS, Step, Tour};

/// The step's words, its run row and its result.
#[component]
pub fn StepPanel(
    tour: Tour,
    conn: Connection,
    page: usize,
    step: &'static Step,
    run_button: NodeRef<Button>,
) -> impl IntoView {
    view! {
        <div class="tour-step">
            <p class="tour-kicker">{format!("Step {} of {}", page + 1, STEPS.len())}</p>
            <h2 id="tour-title">{step.title}</h2>
            <p class="tour-prose">{template(step.intro)}</p>
            <p class="tour-look"><span class="look-label">"Look at: "</span>{template(step.look_at)}</p>
            {run_row(tour, step, run_button)}
            <RunProgress conn=conn />
            <div id="tour-result" class="tour-result" aria-live="polite">{move || step_result(tour, page)}</div>
            <StepRuns tour=tour page=page />
            <p class="keys">"Keys: → next · ← back · Enter or Space run · Esc cancel · +/− speed · R replay · Z fit · P presenter · T theme"</p>
        </div>
    }
}

/// The count field (for an adjustable step), what Run starts, Run and Cancel.
fn run_row(tour: Tour, step: &'static Step, run_button: NodeRef<Button>) -> impl IntoView {
    view! {
        <div class="tour-run">
            {step.adjustable().then(|| view! {
                <label class="field">
                    <span>"Commands"</span>
                    <input
                        id="tour-count"
                        type="number"
                        min="1"
                        step="1"
                        inputmode="numeric"
                        prop:value=move || tour.count_text.get()
                        on:input=crate::erased::handler(move |ev| tour.count_text.set(event_target_value(&ev)))
                    />
                </label>
            })}
            <span class="tour-net">{move || what_runs(tour, step)}</span>
            <button
                id="tour-run"
                node_ref=run_button
                class="primary"
                disabled=move || !tour.can_run()
                on:click=crate::erased::handler(move |_| tour.run())
            >
                "Run"
            </button>
            <button
                id="tour-cancel"
                disabled=move || tour.state() != RunState::Running
                on:click=crate::erased::handler(move |_| tour.cancel())
            >
                "Cancel"
            </button>
        </div>
    }
}

/// What Run starts: the runs, their commands (as typed, for an adjustable step), the network.
fn what_runs(tour: Tour, step: &'static Step) -> String {
    let delay = format::latency(step.network(tour.url_delay).delay_out_us as f64);
    let runs = step.runs.len();
    let typed = tour.count_text.get();
    let chosen = typed.trim().replace(',', "").parse::<u64>().ok();
    let (count, raised) = match (step.adjustable(), chosen) {
        (true, None) => (typed.trim().to_string(), String::new()),
        (true, Some(n)) => {
            let runs_with = step.count(Some(n));
            let raised = if runs_with > n {
                format!(
                    " (not {}: a run must fill its largest batch, {})",
                    format::group(n),
                    format::group(step.fewest())
                )
            } else {
                String::new()
            };
            (format::group(runs_with), raised)
        }
        (false, _) => (format::group(step.count(None)), String::new()),
    };
    let command = step.command();
    let plural = if count == "1" { "" } else { "s" };
    let runs = if runs == 1 {
        String::new()
    } else {
        format!("{runs} runs × ")
    };
    format!("{runs}{count} {command}{plural}{raised} · {delay} each way")
}

/// The step's result sentences once measured, or what the step is waiting for.
fn step_result(tour: Tour, page: usize) -> AnyView {
    let sentences = tour.results.with(|all| {
        all.iter()
            .find(|r| r.step == page)
            .map(|r| tour::result_sentences(r, all))
    });
    match (sentences, tour.state()) {
        (_, RunState::Running) => view! {
            <p class="tour-wait">"Running against Redis…"</p>
        }
        .into_any(),
        (_, RunState::Failed) => view! {
            <p class="tour-wait">"That run did not finish (see the message above). Run it again, perhaps with a smaller count."</p>
        }
        .into_any(),
        (Some(sentences), _) => sentences
            .into_iter()
            .map(|s| view! { <p class="tour-sentence">{prose(s)}</p> })
            .collect_view()
            .into_any(),
        (None, _) => view! {
            <p class="tour-wait">"Press Run (Enter or Space) to measure it."</p>
        }
        .into_any(),
    }
}
