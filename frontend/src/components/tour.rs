//! The guided tour's page (`/tour`, `/tour/<step>`): the script of `crate::tour` beside the
//! live stage (the timeline, the RTT diagram, the charts), one step at a time, each step a real
//! run. Next/Back (→/←), Run (Enter/Space), Cancel (Esc).
//!
//! For the browser tests the page publishes `window.__pipescope_tour`:
//! `{ page, step, state, steps: { "<step>": { "<role>": RunSummary } } }`, and every number in
//! the prose is a `.tour-num[data-key][data-value]`.

use leptos::prelude::*;
use shared::{RunSpec, RunSummary};
use wasm_bindgen::{JsCast, closure::Closure};
use web_sys::{HtmlElement, KeyboardEvent};

use crate::components::{
    Charts, ErrorBanner, Header, Results, RttDiagram, RunProgress, TeachingView,
    tour_handout::Handout, tour_rtt::OneTrip,
};
use crate::connection::Connection;
use crate::format;
use crate::look::{Look, Theme};
use crate::playback::Playback;
use crate::state::{Outcome, RunView};
use crate::tour::{self, Piece, STEPS, StepResult};
use crate::url_state::UrlState;

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
        Effect::new(move |_| {
            let page = tour.page.get();
            if let Some(step) = STEPS.get(page) {
                tour.count_text.set(step.count(tour.url_count).to_string());
            }
        });
        // The URL follows the page (replaceState: a reload opens the same step).
        Effect::new(move |_| {
            let path = tour::path_of(tour.page.get());
            let location = window().location();
            let search = location.search().unwrap_or_default();
            if location.pathname().ok().as_deref() != Some(path.as_str())
                && let Ok(history) = window().history()
            {
                let _ = history.replace_state_with_url(
                    &wasm_bindgen::JsValue::NULL,
                    "",
                    Some(&format!("{path}{search}")),
                );
            }
        });
        // A measured step revisited shows its own runs again, not the latest step's.
        Effect::new(move |_| {
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
        tour.publish();
        tour
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
        Effect::new(move |_| {
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
        Effect::new(move |_| {
            let page = self.page.get();
            let state = self.state();
            let steps: serde_json::Map<String, serde_json::Value> = self.results.with(|all| {
                all.iter()
                    .map(|r| {
                        let runs = r
                            .runs
                            .iter()
                            .map(|(role, s)| {
                                (role.clone(), serde_json::to_value(s).unwrap_or_default())
                            })
                            .collect::<serde_json::Map<_, _>>();
                        ((r.step + 1).to_string(), serde_json::Value::Object(runs))
                    })
                    .collect()
            });
            let ids: serde_json::Map<String, serde_json::Value> = self.results.with(|all| {
                all.iter()
                    .map(|r| ((r.step + 1).to_string(), serde_json::json!(r.ids)))
                    .collect()
            });
            let value = serde_json::json!({
                "page": if page < STEPS.len() { "step" } else { "handout" },
                "step": page + 1,
                "state": state.as_str(),
                "steps": steps,
                "ids": ids,
            });
            if let Ok(obj) = js_sys::JSON::parse(&value.to_string()) {
                let _ = js_sys::Reflect::set(&window(), &"__pipescope_tour".into(), &obj);
            }
        });
    }
}

/// Renders template pieces: marks as coloured spans, numbers as `.tour-num`.
pub fn prose(pieces: Vec<Piece>) -> impl IntoView {
    pieces
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => t.into_any(),
            Piece::Mark { class, text } => view! { <span class=class>{text}</span> }.into_any(),
            Piece::Num {
                key,
                value,
                text,
                class,
            } => view! {
                <b
                    class=format!("tour-num {}", class.unwrap_or_default())
                    data-key=key
                    data-value=value.to_string()
                >
                    {text}
                </b>
            }
            .into_any(),
        })
        .collect_view()
}

fn template(text: &str) -> impl IntoView + use<> {
    prose(tour::render(text, None).unwrap_or_else(|| vec![Piece::Text(text.to_string())]))
}

/// The tour page.
#[component]
pub fn TourPage(conn: Connection, url: UrlState, page: usize) -> impl IntoView {
    let look = Look::new(
        url.presenter,
        Theme::from_value(url.theme.as_deref().unwrap_or("light")),
    );
    let playback = Playback::new(conn);
    let search = window().location().search().unwrap_or_default();
    let url_count = tour::query_number(&search, "count");
    let url_delay = tour::query_number(&search, "delay").and_then(|d| u32::try_from(d).ok());
    let tour = Tour::new(conn, page, url_count, url_delay);
    // Registered first, so the tour's keys win over the playback's (→/← and Space).
    install_keys(tour);
    crate::keyboard::install(playback, look);

    let run_button = NodeRef::<leptos::html::Button>::new();
    // Each step opens with Run focused, so Enter or Space runs it.
    Effect::new(move |_| {
        tour.page.track();
        if tour.can_run()
            && let Some(b) = run_button.get()
        {
            let _ = b.focus();
        }
    });

    // The panel scrolls on its own (it stays in view beside the stage): show the measured
    // result as it arrives.
    let panel = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        if tour.state() == RunState::Done
            && let Some(el) = panel.get()
        {
            el.set_scroll_top(el.scroll_height());
        }
    });

    let focus = move || STEPS.get(tour.page.get()).map(|s| s.focus.as_str());
    let focused = move |what: &'static str| move || focus() == Some(what);

    view! {
        <Header conn=conn look=look />
        <main class="tour-main">
            <ErrorBanner conn=conn />
            <div class="tour-layout">
                <section
                    id="tour"
                    node_ref=panel
                    class="card tour"
                    aria-label="Guided tour"
                    data-step=move || (tour.page.get() + 1).to_string()
                    data-state=move || tour.state().as_str()
                    data-focus=move || focus().unwrap_or("handout")
                >
                    <StepNav tour=tour />
                    {move || {
                        let page = tour.page.get();
                        match STEPS.get(page) {
                            Some(step) => step_panel(tour, conn, page, step, run_button).into_any(),
                            None => view! { <Handout tour=tour /> }.into_any(),
                        }
                    }}
                </section>
                <div class="tour-stage">
                    <Show when=focused("one-trip")>
                        <OneTrip tour=tour />
                    </Show>
                    <div class="stage-part" class:focus=focused("timeline")>
                        <TeachingView conn=conn playback=playback look=look />
                    </div>
                    <div class="stage-part" class:focus=focused("rtt")>
                        <RttDiagram playback=playback />
                    </div>
                    <div class="stage-part" class:focus=focused("results")>
                        <Results conn=conn />
                    </div>
                    <div class="stage-part" class:focus=focused("charts")>
                        <Charts conn=conn />
                    </div>
                </div>
            </div>
        </main>
    }
}

/// Step dots, Back and Next.
#[component]
fn StepNav(tour: Tour) -> impl IntoView {
    let dots = (0..tour::pages())
        .map(|k| {
            let label = if k < STEPS.len() {
                (k + 1).to_string()
            } else {
                "✎".to_string()
            };
            let title = STEPS.get(k).map_or("Handout", |s| s.title);
            let measured = move || tour.results.with(|r| r.iter().any(|r| r.step == k));
            view! {
                <button
                    class="dot"
                    class:current=move || tour.page.get() == k
                    class:measured=measured
                    title=title
                    aria-label=format!("Go to: {title}")
                    aria-current=move || (tour.page.get() == k).then_some("step")
                    on:click=move |_| tour.go(k)
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    view! {
        <nav class="tour-nav" aria-label="Tour steps">
            <button
                id="tour-back"
                disabled=move || tour.page.get() == 0
                on:click=move |_| tour.back()
            >
                "← Back"
            </button>
            <div class="dots">{dots}</div>
            <button
                id="tour-next"
                disabled=move || { tour.page.get() + 1 >= tour::pages() }
                on:click=move |_| tour.next()
            >
                "Next →"
            </button>
        </nav>
    }
}

fn step_panel(
    tour: Tour,
    conn: Connection,
    page: usize,
    step: &'static tour::Step,
    run_button: NodeRef<leptos::html::Button>,
) -> impl IntoView {
    let delay = format::latency(step.network(tour.url_delay).delay_out_us as f64);
    let runs = step.runs.len();
    // What Run starts: the runs, their commands (as typed, for an adjustable step), the network.
    let network = move || {
        let count = if step.adjustable() {
            tour.count_text.get().trim().to_string()
        } else {
            format::count(step.count(None))
        };
        let plural = if count == "1" { "" } else { "s" };
        let runs = if runs == 1 {
            String::new()
        } else {
            format!("{runs} runs × ")
        };
        format!("{runs}{count} SET{plural} · {delay} each way")
    };
    let result = move || {
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
    };
    view! {
        <div class="tour-step">
            <p class="tour-kicker">{format!("Step {} of {}", page + 1, STEPS.len())}</p>
            <h2 id="tour-title">{step.title}</h2>
            <p class="tour-prose">{template(step.intro)}</p>
            <p class="tour-look"><span class="look-label">"Look at: "</span>{template(step.look_at)}</p>
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
                            on:input=move |ev| tour.count_text.set(event_target_value(&ev))
                        />
                    </label>
                })}
                <span class="tour-net">{network}</span>
                <button
                    id="tour-run"
                    node_ref=run_button
                    class="primary"
                    disabled=move || !tour.can_run()
                    on:click=move |_| tour.run()
                >
                    "Run"
                </button>
                <button
                    id="tour-cancel"
                    disabled=move || tour.state() != RunState::Running
                    on:click=move |_| tour.cancel()
                >
                    "Cancel"
                </button>
            </div>
            <RunProgress conn=conn />
            <div id="tour-result" class="tour-result" aria-live="polite">{result}</div>
            <StepRuns tour=tour page=page />
            <p class="keys">"Keys: → next · ← back · Enter or Space run · Esc cancel · +/− speed · R replay · Z fit · P presenter · T theme"</p>
        </div>
    }
}

/// This step's runs: writes beside wall times (what step 5 is about).
#[component]
fn StepRuns(tour: Tour, page: usize) -> impl IntoView {
    move || {
        tour.results.with(|all| {
            all.iter().find(|r| r.step == page).map(|r| {
                let rows = r
                    .runs
                    .iter()
                    .map(|(role, s)| {
                        view! {
                            <tr data-role=role.clone() data-mode=s.spec.mode.kind()>
                                <th scope="row">{s.spec.mode.label()}</th>
                                <td>{format::wall(s.wall_us)}</td>
                                <td>{format::rate(s.ops_per_sec)}</td>
                                <td>{format::count(s.round_trips)}</td>
                                <td>{format::count(s.writes)}</td>
                            </tr>
                        }
                    })
                    .collect_view();
                view! {
                    <table id="tour-runs" class="tour-runs">
                        <thead>
                            <tr>
                                <th scope="col">"Run"</th>
                                <th scope="col">"Wall time"</th>
                                <th scope="col">"ops/s"</th>
                                <th scope="col">"Round trips"</th>
                                <th scope="col">"Writes"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                }
            })
        })
    }
}

/// →/← Next/Back, Enter/Space Run, Esc Cancel. A focused button keeps Enter and Space (they
/// click it); fields keep every key but Enter in the count field, which runs.
fn install_keys(tour: Tour) {
    let on_key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |ev: KeyboardEvent| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.default_prevented() {
            return;
        }
        let target = ev.target().and_then(|t| t.dyn_into::<HtmlElement>().ok());
        let tag = target.as_ref().map(|t| t.tag_name()).unwrap_or_default();
        let id = target.as_ref().map(|t| t.id()).unwrap_or_default();
        let key = ev.key();
        if tag == "INPUT" || tag == "SELECT" || tag == "TEXTAREA" {
            if key == "Enter" && id == "tour-count" {
                tour.run();
                ev.prevent_default();
            }
            return;
        }
        let activates = matches!(key.as_str(), "Enter" | " " | "Spacebar");
        if activates && (tag == "BUTTON" || tag == "A") {
            return;
        }
        match key.as_str() {
            "ArrowRight" => tour.next(),
            "ArrowLeft" => tour.back(),
            "Escape" => tour.cancel(),
            _ if activates => tour.run(),
            _ => return,
        }
        ev.prevent_default();
    });
    let _ = window().add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
    on_key.forget();
}
