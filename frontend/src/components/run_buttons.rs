use leptos::prelude::*;

use crate::components::NumberField;
use crate::components::cluster_explainer::is_cluster_target;
use crate::connection::Connection;
use crate::inputs::{Form, POOL_PRESET, Plan};

/// The largest batch of a sweep, and Run / Compare / Sweep / Cancel. A plan is checked with the
/// backend's own validation before it is sent; what is wrong goes to the banner. The button of
/// the plan a link prepared is focused once it can be pressed.
#[component]
pub fn RunButtons(form: RwSignal<Form>, conn: Connection) -> impl IntoView {
    let run_button = NodeRef::<leptos::html::Button>::new();
    let compare_button = NodeRef::<leptos::html::Button>::new();
    let sweep_button = NodeRef::<leptos::html::Button>::new();
    let pool_button = NodeRef::<leptos::html::Button>::new();
    let layouts_button = NodeRef::<leptos::html::Button>::new();
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
    // Focus the prepared button once it can be pressed (it is disabled until connected), and
    // mark that moment for the load-time measurement (tests/page_load.rs, README).
    let focused = StoredValue::new(false);
    Effect::new(move |_| {
        if focused.get_value() || !idle() {
            return;
        }
        if let Some(p) = window().performance() {
            let _ = p.mark("pipescope-interactive");
        }
        let button = match form.with_untracked(|f| f.plan) {
            Plan::Single => run_button,
            Plan::Compare => compare_button,
            Plan::Sweep => sweep_button,
            Plan::Pool => pool_button,
            Plan::Layouts => layouts_button,
        };
        if let Some(b) = button.get() {
            focused.set_value(true);
            let _ = b.focus();
        }
    });

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
                    node_ref=run_button
                    class="primary"
                    disabled=move || !idle()
                    on:click=move |_| submit(Plan::Single)
                >
                    "Run"
                </button>
                <button
                    id="compare"
                    node_ref=compare_button
                    class="primary accent"
                    disabled=move || !idle()
                    title="Sequential, then the chosen mode: same count, same network"
                    on:click=move |_| submit(Plan::Compare)
                >
                    "Compare"
                </button>
                <button
                    id="compare-pool"
                    node_ref=pool_button
                    class="primary"
                    disabled=move || !idle()
                    title=format!(
                        "Compare preset: {} connections, each sending one command at a time (a connection pool), beside one connection pipelined at batch {}; same count, same network",
                        POOL_PRESET.0,
                        crate::format::count(POOL_PRESET.1 as u64),
                    )
                    on:click=move |_| submit(Plan::Pool)
                >
                    {format!("{} connections vs pipelined", POOL_PRESET.0)}
                </button>
                <button
                    id="compare-layouts"
                    node_ref=layouts_button
                    class="primary"
                    hidden=move || !on_cluster()
                    disabled=move || !idle()
                    title="On a Redis Cluster: the same pipelined run with its keys spread over every master, then all under one hash tag {run} (one master)"
                    on:click=move |_| submit(Plan::Layouts)
                >
                    "Spread vs one hash tag"
                </button>
                <button
                    id="sweep"
                    node_ref=sweep_button
                    class="primary"
                    disabled=move || !idle()
                    title="Pipelined runs at batch 1, 2, 4, … up to the largest batch"
                    on:click=move |_| submit(Plan::Sweep)
                >
                    "Sweep"
                </button>
                <button
                    id="cancel"
                    disabled=move || !(conn.is_open() && conn.busy.get() && can_control())
                    on:click=move |_| conn.cancel()
                >
                    "Cancel"
                </button>
            </div>
        </div>
    }
}
