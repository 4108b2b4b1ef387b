use leptos::prelude::*;
use shared::Command;

use crate::components::NumberField;
use crate::inputs::Form;

/// What each request is: the command, how many, and the value size.
#[component]
pub fn WorkloadFields(form: RwSignal<Form>) -> impl IntoView {
    view! {
        <label class="field">
            <span>"Command"</span>
            <select
                id="command"
                on:change=move |ev| {
                    if let Some(c) = Command::parse(&event_target_value(&ev)) {
                        form.update(|f| f.command = c);
                    }
                }
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
    }
}
