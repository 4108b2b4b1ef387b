use leptos::prelude::*;

use crate::connection::Connection;
use crate::inputs::{ModeChoice, Plan, runs};
use crate::look::Look;
use crate::url_state::UrlState;

/// Count, mode and batch, and the Run / Compare / Cancel buttons. Input is checked as it is
/// typed (shown inline) and again on click (shown in the banner); nothing invalid is sent.
/// The fields start from the URL query and keep it up to date, so a slide can link to a
/// prepared demonstration that opens with its button focused (Enter runs it).
#[component]
pub fn Controls(conn: Connection, look: Look, url: UrlState) -> impl IntoView {
    let count = RwSignal::new(url.count.clone().unwrap_or_else(|| "100000".into()));
    let mode = RwSignal::new(match url.mode.as_deref() {
        Some("sequential") => ModeChoice::Sequential,
        _ => ModeChoice::Pipelined,
    });
    let batch = RwSignal::new(url.batch.clone().unwrap_or_else(|| "1000".into()));
    // The button a linked demonstration is about; the last one clicked afterwards.
    let compare = RwSignal::new(url.mode.as_deref() == Some("compare"));
    let run_button = NodeRef::<leptos::html::Button>::new();
    let compare_button = NodeRef::<leptos::html::Button>::new();

    let plan = move |plan: Plan| runs(plan, &count.get(), mode.get(), &batch.get(), &conn.limits());
    let invalid = Memo::new(move |_| plan(Plan::Single).err());
    let sequential = move || mode.get() == ModeChoice::Sequential;
    let idle = move || conn.is_open() && !conn.busy.get();
    let submit = move |which: Plan| {
        compare.set(which == Plan::Compare);
        match plan(which) {
            Ok(runs) => conn.start(runs),
            Err(e) => conn.error.set(Some(e)),
        }
    };

    // Focus the prepared button once it can be pressed (it is disabled until connected).
    let focused = StoredValue::new(false);
    Effect::new(move |_| {
        if focused.get_value() || !idle() {
            return;
        }
        let button = if compare.get_untracked() {
            compare_button
        } else {
            run_button
        };
        if let Some(b) = button.get() {
            focused.set_value(true);
            let _ = b.focus();
        }
    });
    // The URL follows the fields, the plan and the look (replaceState: no history spam).
    Effect::new(move |_| {
        let query = UrlState {
            count: Some(count.get()),
            mode: Some(if compare.get() {
                "compare".into()
            } else {
                mode.get().value().into()
            }),
            batch: Some(batch.get()),
            presenter: look.presenter.get(),
            theme: Some(look.theme.get().as_str().into()),
            // Keep the presenter's token: it is what lets this page start runs.
            token: UrlState::parse(&window().location().search().unwrap_or_default()).token,
        }
        .to_query();
        let Ok(history) = window().history() else {
            return;
        };
        let path = window()
            .location()
            .pathname()
            .unwrap_or_else(|_| "/".into());
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{query}")),
        );
    });

    view! {
        <section class="card controls" aria-label="Run controls">
            <div class="fields">
                <label class="field">
                    <span>"Commands (SET)"</span>
                    <input
                        id="count"
                        type="number"
                        min="1"
                        step="1"
                        inputmode="numeric"
                        prop:value=move || count.get()
                        on:input=move |ev| count.set(event_target_value(&ev))
                    />
                </label>
                <label class="field">
                    <span>"Mode"</span>
                    <select
                        id="mode"
                        on:change=move |ev| {
                            compare.set(false);
                            mode.set(ModeChoice::from_value(&event_target_value(&ev)));
                        }
                    >
                        <option value="sequential" selected=sequential>
                            "sequential"
                        </option>
                        <option value="pipelined" selected=move || !sequential()>
                            "pipelined"
                        </option>
                    </select>
                </label>
                <label class="field" class:disabled=sequential>
                    <span>"Batch"</span>
                    <input
                        id="batch"
                        type="number"
                        min="1"
                        step="1"
                        inputmode="numeric"
                        disabled=sequential
                        prop:value=move || batch.get()
                        on:input=move |ev| batch.set(event_target_value(&ev))
                    />
                </label>
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
                        title="Sequential, then pipelined: same count, same batch"
                        on:click=move |_| submit(Plan::Compare)
                    >
                        "Compare"
                    </button>
                    <button
                        id="cancel"
                        disabled=move || !(conn.is_open() && conn.busy.get())
                        on:click=move |_| conn.cancel()
                    >
                        "Cancel"
                    </button>
                </div>
            </div>
            {move || invalid.get().map(|e| view! { <p class="field-error" role="status">{e}</p> })}
            <p class="explain">
                <strong>"Sequential"</strong>
                " sends one command and waits for its reply before the next: one network round trip per command. "
                <strong>"Pipelined"</strong>
                " writes a whole batch, then reads all the replies: one round trip per batch."
            </p>
        </section>
    }
}
