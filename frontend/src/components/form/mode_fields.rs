use leptos::prelude::*;

use super::busy_poll_box::BusyPollBox;
use super::flush_field::FlushField;
use super::other_client_box::OtherClientBox;
use crate::components::number_field::NumberField;
use crate::components::shown::Shown;
use crate::inputs::{FlushChoice, Form, ModeChoice, Plan};

/// How the commands travel: the mode, its batch (or callers in flight), a pipeline's flush
/// policy, and whether the engine busy-polls for replies.
#[component]
pub fn ModeFields(form: RwSignal<Form>) -> impl IntoView {
    let mode = move || form.with(|f| f.mode);
    let batch_name = move || mode().batch_name();
    let pipelined = move || mode() == ModeChoice::Pipelined;
    let buffered = move || pipelined() && form.with(|f| f.flush == FlushChoice::Buffered);
    view! {
        <label class="field">
            <span>"Mode"</span>
            <select
                id="mode"
                on:change=crate::erased::handler(move |ev| {
                    let m = ModeChoice::from_value(&event_target_value(&ev));
                    form.update(|f| {
                        f.mode = m;
                        f.plan = Plan::Single;
                    });
                })
            >
                {ModeChoice::ALL
                    .into_iter()
                    .map(|m| {
                        view! {
                            <option value=m.value() selected=move || mode() == m>
                                {m.label()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </label>
        <label class="field" class:disabled=move || batch_name().is_none()>
            <span>
                {move || match batch_name() {
                    Some("in flight") => "In flight",
                    Some("connections") => "Connections",
                    _ => "Batch",
                }}
            </span>
            <input
                id="batch"
                type="number"
                min="1"
                step="1"
                inputmode="numeric"
                disabled=move || batch_name().is_none()
                prop:value=move || form.with(|f| f.batch.clone())
                on:input=crate::erased::handler(move |ev| form.update(|f| f.batch = event_target_value(&ev)))
            />
        </label>
        <Shown when=pipelined>
            <FlushField form=form />
        </Shown>
        <Shown when=buffered>
            <NumberField
                form=form
                id="flush-every"
                label="Write every"
                get=|f| &f.flush_every
                set=|f, v| f.flush_every = v
                title="Commands per write"
            />
        </Shown>
        <Shown when=move || matches!(mode(), ModeChoice::Pipelined | ModeChoice::Transaction)>
            <OtherClientBox form=form />
        </Shown>
        <BusyPollBox form=form />
    }
}
