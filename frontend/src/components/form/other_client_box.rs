use leptos::prelude::*;
use shared::Command;

use crate::inputs::Form;

/// The other client: a second connection INCRing the run's counter while the run INCRs it
/// too, to see whether the run's batches let it in. Checking it makes the command INCR.
#[component]
pub fn OtherClientBox(form: RwSignal<Form>) -> impl IntoView {
    view! {
        <label
            class="check"
            title="A second client INCRs one shared counter, one command at a time, while every command of this run INCRs it too. Redis's replies (the counter's values) show whether its commands ran inside the run's batches."
        >
            <input
                id="other-client"
                type="checkbox"
                prop:checked=move || form.with(|f| f.other_client)
                on:change=crate::erased::handler(move |ev| {
                    let on = event_target_checked(&ev);
                    form.update(|f| {
                        f.other_client = on;
                        if on {
                            f.command = Command::Incr;
                        }
                    })
                })
            />
            "other client (atomicity)"
        </label>
    }
}
