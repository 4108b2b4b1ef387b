use leptos::prelude::*;

use crate::inputs::Form;

/// The controls folded into one line (presenter mode): what the buttons will run, and Edit to
/// open the fields. The buttons themselves stay on this line (the stylesheet places them).
#[component]
pub fn ControlsBar(form: RwSignal<Form>, editing: RwSignal<bool>) -> impl IntoView {
    let summary = Memo::new(move |_| form.with(Form::summary));
    view! {
        <div class="controls-bar">
            <span id="controls-summary" class="controls-summary" title=move || summary.get()>
                {move || summary.get()}
            </span>
            <button
                id="edit-controls"
                class="small"
                aria-expanded=move || editing.get().to_string()
                on:click=crate::erased::handler(move |_| editing.update(|e| *e = !*e))
            >
                {move || if editing.get() { "Done" } else { "Edit" }}
            </button>
        </div>
    }
}
