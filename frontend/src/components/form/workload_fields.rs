use leptos::prelude::*;
use shared::{Command, KeyLayout};

use crate::components::number_field::NumberField;
use crate::inputs::Form;

/// What each request is: the command, how many, the value size, and how its keys are named
/// (on a Redis Cluster: spread over every slot, or all in one slot under the run's hash tag).
#[component]
pub fn WorkloadFields(form: RwSignal<Form>) -> impl IntoView {
    view! {
        <label class="field">
            <span>"Command"</span>
            <select
                id="command"
                on:change=crate::erased::handler(move |ev| {
                    if let Some(c) = Command::parse(&event_target_value(&ev)) {
                        form.update(|f| f.command = c);
                    }
                })
            >
                {Command::ALL
                    .into_iter()
                    .map(|c| {
                        view! {
                            <option
                                value=c.name().to_ascii_lowercase()
                                selected=move || form.with(|f| f.command == c)
                            >
                                {c.name()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </label>
        <NumberField form=form id="count" label="Commands" get=|f| &f.count set=|f, v| f.count = v />
        <NumberField
            form=form
            id="value-bytes"
            label="Value size (bytes)"
            get=|f| &f.value_bytes
            set=|f, v| f.value_bytes = v
            placeholder="v{i}"
            title="Empty: the classic values v0, v1, …"
        />
        <label
            class="field"
            title="pipescope:<run>:k<i> spreads over a cluster's slots; pipescope:{<run>}:k<i> puts every key in one slot, on one master (as MULTI/EXEC and MSET need there)"
        >
            <span>"Keys"</span>
            <select
                id="keys"
                on:change=crate::erased::handler(move |ev| {
                    if let Some(k) = KeyLayout::parse(&event_target_value(&ev)) {
                        form.update(|f| f.keys = k);
                    }
                })
            >
                {KeyLayout::ALL
                    .into_iter()
                    .map(|k| {
                        view! {
                            <option value=k.name() selected=move || form.with(|f| f.keys == k)>
                                {k.label()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </label>
    }
}
