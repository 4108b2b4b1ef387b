use leptos::prelude::*;
use shared::Wait;

use crate::inputs::Form;

/// Whether the engine busy-polls for replies rather than sleeping until one arrives.
#[component]
pub fn BusyPollBox(form: RwSignal<Form>) -> impl IntoView {
    view! {
        <label
            class="check"
            title="Client libraries sleep until a reply arrives, so every round trip includes the client being woken up again. Busy-polling tries the socket for up to 2 ms first: the round trip then measures the network and Redis, at the price of a CPU kept busy."
        >
            <input
                id="busy-poll"
                type="checkbox"
                prop:checked=move || form.with(|f| !f.busy_poll_us.trim().is_empty())
                on:change=crate::erased::handler(move |ev| {
                    let on = event_target_checked(&ev);
                    form.update(|f| {
                        f.busy_poll_us = if on {
                            Wait::DEFAULT_BUSY_POLL_US.to_string()
                        } else {
                            String::new()
                        };
                    })
                })
            />
            "busy-poll for replies"
        </label>
    }
}
