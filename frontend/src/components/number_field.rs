use leptos::prelude::*;

use crate::inputs::Form;

/// A labelled number field bound to one of the form's strings. The string is kept as typed:
/// the form explains what is wrong with it instead of dropping it.
#[component]
pub fn NumberField(
    form: RwSignal<Form>,
    id: &'static str,
    label: &'static str,
    get: fn(&Form) -> &String,
    set: fn(&mut Form, String),
    #[prop(default = "1")] min: &'static str,
    #[prop(default = "1")] step: &'static str,
    #[prop(optional)] placeholder: &'static str,
    #[prop(optional)] title: &'static str,
) -> impl IntoView {
    let decimal = step == "any";
    view! {
        <label class="field">
            <span>{label}</span>
            <input
                id=id
                type="number"
                min=min
                step=step
                inputmode=if decimal { "decimal" } else { "numeric" }
                placeholder=(!placeholder.is_empty()).then_some(placeholder)
                title=(!title.is_empty()).then_some(title)
                prop:value=move || form.with(|f| get(f).clone())
                on:input=crate::erased::handler(move |ev| form.update(|f| set(f, event_target_value(&ev))))
            />
        </label>
    }
}
