use leptos::prelude::*;

use crate::inputs::{FlushChoice, Form};

/// A pipeline's flush policy: one write per batch, per command, or every n commands.
#[component]
pub fn FlushField(form: RwSignal<Form>) -> impl IntoView {
    view! {
        <label class="field">
            <span>"Flush"</span>
            <select
                id="flush"
                on:change=crate::erased::handler(move |ev| {
                    if let Some(fl) = FlushChoice::parse(&event_target_value(&ev)) {
                        form.update(|f| f.flush = fl);
                    }
                })
            >
                {FlushChoice::ALL
                    .into_iter()
                    .map(|fl| {
                        view! {
                            <option value=fl.value() selected=move || form.with(|f| f.flush == fl)>
                                {fl.label()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </label>
    }
}
