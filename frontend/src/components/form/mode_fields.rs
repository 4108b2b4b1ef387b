use leptos::prelude::*;
use shared::{Command, Wait};

use super::number_field::NumberField;
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

/// The other client: a second connection INCRing the run's counter while the run INCRs it
/// too, to see whether the run's batches let it in. Checking it makes the command INCR.
#[component]
fn OtherClientBox(form: RwSignal<Form>) -> impl IntoView {
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

/// A pipeline's flush policy: one write per batch, per command, or every n commands.
#[component]
fn FlushField(form: RwSignal<Form>) -> impl IntoView {
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

#[component]
fn BusyPollBox(form: RwSignal<Form>) -> impl IntoView {
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
