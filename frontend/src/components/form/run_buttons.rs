use leptos::html::Button;
use leptos::prelude::*;

use crate::components::number_field::NumberField;
use crate::components::runs::cluster_explainer::is_cluster_target;
use crate::connection::Connection;
use crate::inputs::{Form, POOL_PRESET, Plan};

/// The largest batch of a sweep, and Run / Compare / Sweep / Cancel. A plan is checked with the
/// backend's own validation before it is sent; what is wrong goes to the banner. The button of
/// the plan a link prepared is focused once it can be pressed.
#[component]
pub fn RunButtons(form: RwSignal<Form>, conn: Connection) -> impl IntoView {
    let buttons = PlanButtons::new();
    let on_cluster = move || {
        conn.server
            .with(|s| s.as_ref().is_some_and(|s| is_cluster_target(&s.target)))
    };
    let can_control = move || conn.can_control();
    let idle = move || conn.is_open() && !conn.busy.get() && can_control();
    let submit = move |plan: Plan| {
        form.update(|f| f.plan = plan);
        match form.with_untracked(|f| f.runs(plan, &conn.limits())) {
            Ok(runs) => conn.start(runs),
            Err(e) => conn.error.set(Some(e)),
        }
    };
    focus_prepared(form, buttons, idle);

    view! {
        <div class="fields actions">
            <NumberField
                form=form
                id="sweep-max"
                label="Sweep up to batch"
                get=|f| &f.sweep_max
                set=|f, v| f.sweep_max = v
                min="2"
                title="Pipelined runs at batch 1, 2, 5, 10, 20, 50, … up to this, each 3 times; every run needs at least this many commands"
            />
            <div class="buttons">
                <button
                    id="run"
                    node_ref=buttons.run
                    class="primary"
                    disabled=move || !idle()
                    on:click=crate::erased::handler(move |_| submit(Plan::Single))
                >
                    "Run"
                </button>
                <button
                    id="compare"
                    node_ref=buttons.compare
                    class="primary accent"
                    disabled=move || !idle()
                    title="Sequential, then the chosen mode: same count, same network"
                    on:click=crate::erased::handler(move |_| submit(Plan::Compare))
                >
                    "Compare"
                </button>
                <button
                    id="compare-pool"
                    node_ref=buttons.pool
                    class="primary"
                    disabled=move || !idle()
                    title=pool_title()
                    on:click=crate::erased::handler(move |_| submit(Plan::Pool))
                >
                    {format!("{} connections vs pipelined", POOL_PRESET.0)}
                </button>
                <button
                    id="compare-layouts"
                    node_ref=buttons.layouts
                    class="primary"
                    hidden=move || !on_cluster()
                    disabled=move || !idle()
                    title="On a Redis Cluster: the same pipelined run with its keys spread over every master, then all under one hash tag {run} (one master)"
                    on:click=crate::erased::handler(move |_| submit(Plan::Layouts))
                >
                    "Spread vs one hash tag"
                </button>
                <button
                    id="sweep"
                    node_ref=buttons.sweep
                    class="primary"
                    disabled=move || !idle()
                    title="Pipelined runs at batch 1, 2, 5, 10, 20, 50, … up to the largest batch, each 3 times"
                    on:click=crate::erased::handler(move |_| submit(Plan::Sweep))
                >
                    "Sweep"
                </button>
                <button
                    id="cancel"
                    disabled=move || !(conn.is_open() && conn.busy.get() && can_control())
                    on:click=crate::erased::handler(move |_| conn.cancel())
                >
                    "Cancel"
                </button>
            </div>
        </div>
    }
}

/// The button each plan is started by.
#[derive(Clone, Copy)]
struct PlanButtons {
    run: NodeRef<Button>,
    compare: NodeRef<Button>,
    pool: NodeRef<Button>,
    layouts: NodeRef<Button>,
    sweep: NodeRef<Button>,
}

impl PlanButtons {
    fn new() -> Self {
        PlanButtons {
            run: NodeRef::new(),
            compare: NodeRef::new(),
            pool: NodeRef::new(),
            layouts: NodeRef::new(),
            sweep: NodeRef::new(),
        }
    }

    fn of(self, plan: Plan) -> NodeRef<Button> {
        match plan {
            Plan::Single => self.run,
            Plan::Compare => self.compare,
            Plan::Sweep => self.sweep,
            Plan::Pool => self.pool,
            Plan::Layouts => self.layouts,
        }
    }
}

/// Focuses the prepared plan's button once it can be pressed (it is disabled until connected),
/// and marks that moment for the load-time measurement (backend/tests/page/load.rs, README).
fn focus_prepared(form: RwSignal<Form>, buttons: PlanButtons, idle: impl Fn() -> bool + 'static) {
    let focused = StoredValue::new(false);
    crate::erased::effect(move || {
        if focused.get_value() || !idle() {
            return;
        }
        if let Some(p) = window().performance() {
            let _ = p.mark("pipescope-interactive");
        }
        if let Some(b) = buttons.of(form.with_untracked(|f| f.plan)).get() {
            focused.set_value(true);
            let _ = b.focus();
        }
    });
}

/// The pool preset's button says what it compares.
fn pool_title() -> String {
    format!(
        "Compare preset: {} connections, each sending one command at a time (a connection pool), beside one connection pipelined at batch {}; same count, same network",
        POOL_PRESET.0,
        crate::format::group(POOL_PRESET.1 as u64),
    )
}
