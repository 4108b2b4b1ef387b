use leptos::prelude::*;

use crate::connection::Connection;
use crate::inputs::{ModeChoice, Plan, runs};

/// Count, mode and batch, and the Run / Compare / Cancel buttons. Input is checked as it is
/// typed (shown inline) and again on click (shown in the banner); nothing invalid is sent.
#[component]
pub fn Controls(conn: Connection) -> impl IntoView {
    let count = RwSignal::new(String::from("100000"));
    let mode = RwSignal::new(ModeChoice::Pipelined);
    let batch = RwSignal::new(String::from("1000"));

    let plan = move |plan: Plan| runs(plan, &count.get(), mode.get(), &batch.get(), &conn.limits());
    let invalid = Memo::new(move |_| plan(Plan::Single).err());
    let sequential = move || mode.get() == ModeChoice::Sequential;
    let idle = move || conn.is_open() && !conn.busy.get();
    let submit = move |which: Plan| match plan(which) {
        Ok(runs) => conn.start(runs),
        Err(e) => conn.error.set(Some(e)),
    };

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
                        on:change=move |ev| mode.set(ModeChoice::from_value(&event_target_value(&ev)))
                    >
                        <option value="sequential">"sequential"</option>
                        <option value="pipelined" selected=true>"pipelined"</option>
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
                        class="primary"
                        disabled=move || !idle()
                        on:click=move |_| submit(Plan::Single)
                    >
                        "Run"
                    </button>
                    <button
                        id="compare"
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
