use leptos::prelude::*;
use shared::{Command, Wait};

use crate::components::NetworkControls;
use crate::connection::Connection;
use crate::inputs::{FlushChoice, Form, ModeChoice, Plan};
use crate::look::Look;
use crate::url_state::UrlState;

/// A text field bound to one of the form's strings.
fn text_field(
    form: RwSignal<Form>,
    get: fn(&Form) -> &String,
    set: fn(&mut Form, String),
) -> (
    impl Fn() -> String + Copy,
    impl Fn(leptos::ev::Event) + Copy,
) {
    (
        move || form.with(|f| get(f).clone()),
        move |ev| form.update(|f| set(f, event_target_value(&ev))),
    )
}

/// Everything a `RunSpec` can say (command, count, value size, mode and its parameters, the
/// network), and the Run / Compare / Sweep / Cancel buttons. The form is one signal of strings
/// as typed: input is checked as it is typed (shown inline) and again on click (shown in the
/// banner) with the backend's own validation; nothing invalid is sent and nothing typed is
/// lost. The form starts from the URL query (else the server's network) and keeps the query up
/// to date, so a slide can link to a prepared run that opens with its button focused.
#[component]
pub fn Controls(conn: Connection, look: Look, url: UrlState) -> impl IntoView {
    let form = RwSignal::new(Form::from_url(&url));
    let run_button = NodeRef::<leptos::html::Button>::new();
    let compare_button = NodeRef::<leptos::html::Button>::new();
    let sweep_button = NodeRef::<leptos::html::Button>::new();

    let invalid = Memo::new(move |_| {
        let limits = conn.limits();
        form.with(|f| f.runs(f.plan, &limits).err())
    });
    let mode = move || form.with(|f| f.mode);
    let batch_name = move || mode().batch_name();
    let pipelined = move || mode() == ModeChoice::Pipelined;
    let buffered = move || pipelined() && form.with(|f| f.flush == FlushChoice::Buffered);
    let can_control = move || conn.can_control();
    let known = move || conn.server.with(Option::is_some);
    let idle = move || conn.is_open() && !conn.busy.get() && can_control();
    let submit = move |plan: Plan| {
        form.update(|f| f.plan = plan);
        match form.with_untracked(|f| f.runs(plan, &conn.limits())) {
            Ok(runs) => conn.start(runs),
            Err(e) => conn.error.set(Some(e)),
        }
    };

    // The server's network is the starting point, unless the link chose one.
    let network_taken = StoredValue::new(Form::network_in_url(&url));
    Effect::new(move |_| {
        if network_taken.get_value() {
            return;
        }
        if let Some(network) = conn.server.with(|s| s.as_ref().map(|s| s.network)) {
            network_taken.set_value(true);
            form.update(|f| f.set_network(network));
        }
    });
    // Focus the prepared button once it can be pressed (it is disabled until connected).
    let focused = StoredValue::new(false);
    Effect::new(move |_| {
        if focused.get_value() || !idle() {
            return;
        }
        let button = match form.with_untracked(|f| f.plan) {
            Plan::Single => run_button,
            Plan::Compare => compare_button,
            Plan::Sweep => sweep_button,
        };
        if let Some(b) = button.get() {
            focused.set_value(true);
            let _ = b.focus();
        }
    });
    // The URL follows the form and the look (replaceState: no history spam).
    Effect::new(move |_| {
        let mut state = UrlState {
            presenter: look.presenter.get(),
            theme: Some(look.theme.get().as_str().into()),
            // Keep the presenter's token: it is what lets this page start runs.
            token: UrlState::parse(&window().location().search().unwrap_or_default()).token,
            ..UrlState::default()
        };
        form.with(|f| f.write_url(&mut state));
        let Ok(history) = window().history() else {
            return;
        };
        let path = window()
            .location()
            .pathname()
            .unwrap_or_else(|_| "/".into());
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{}", state.to_query())),
        );
    });

    let (count, on_count) = text_field(form, |f| &f.count, |f, v| f.count = v);
    let (value, on_value) = text_field(form, |f| &f.value_bytes, |f, v| f.value_bytes = v);
    let (batch, on_batch) = text_field(form, |f| &f.batch, |f, v| f.batch = v);
    let (every, on_every) = text_field(form, |f| &f.flush_every, |f, v| f.flush_every = v);
    let (sweep_max, on_sweep_max) = text_field(form, |f| &f.sweep_max, |f, v| f.sweep_max = v);

    view! {
        <section class="card controls" aria-label="Run controls">
            <div class="fields">
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
                                        value=c.name().to_lowercase()
                                        selected=move || form.with(|f| f.command == c)
                                    >
                                        {c.name()}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </label>
                <label class="field">
                    <span>"Commands"</span>
                    <input
                        id="count"
                        type="number"
                        min="1"
                        step="1"
                        inputmode="numeric"
                        prop:value=count
                        on:input=on_count
                    />
                </label>
                <label class="field">
                    <span>"Value size (bytes)"</span>
                    <input
                        id="value-bytes"
                        type="number"
                        min="1"
                        step="1"
                        inputmode="numeric"
                        placeholder="v{i}"
                        title="Empty: the classic values v0, v1, …"
                        prop:value=value
                        on:input=on_value
                    />
                </label>
                <label class="field">
                    <span>"Mode"</span>
                    <select
                        id="mode"
                        on:change=move |ev| {
                            let m = ModeChoice::from_value(&event_target_value(&ev));
                            form.update(|f| {
                                f.mode = m;
                                f.plan = Plan::Single;
                            });
                        }
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
                        prop:value=batch
                        on:input=on_batch
                    />
                </label>
                <Show when=pipelined>
                    <label class="field">
                        <span>"Flush"</span>
                        <select
                            id="flush"
                            on:change=move |ev| {
                                let v = event_target_value(&ev);
                                if let Some(fl) = FlushChoice::parse(&v) {
                                    form.update(|f| f.flush = fl);
                                }
                            }
                        >
                            {FlushChoice::ALL
                                .into_iter()
                                .map(|fl| {
                                    view! {
                                        <option
                                            value=fl.value()
                                            selected=move || form.with(|f| f.flush == fl)
                                        >
                                            {fl.label()}
                                        </option>
                                    }
                                })
                                .collect_view()}
                        </select>
                    </label>
                </Show>
                <Show when=buffered>
                    <label class="field">
                        <span>"Write every"</span>
                        <input
                            id="flush-every"
                            type="number"
                            min="1"
                            step="1"
                            inputmode="numeric"
                            title="Commands per write"
                            prop:value=every
                            on:input=on_every
                        />
                    </label>
                </Show>
                <label
                    class="check"
                    title="Client libraries sleep until a reply arrives, so every round trip includes the client being woken up again. Busy-polling tries the socket for up to 2 ms first: the round trip then measures the network and Redis, at the price of a CPU kept busy."
                >
                    <input
                        id="busy-poll"
                        type="checkbox"
                        prop:checked=move || form.with(|f| !f.busy_poll_us.trim().is_empty())
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            form.update(|f| {
                                f.busy_poll_us = if on {
                                    Wait::DEFAULT_BUSY_POLL_US.to_string()
                                } else {
                                    String::new()
                                };
                            })
                        }
                    />
                    "busy-poll for replies"
                </label>
            </div>
            <NetworkControls form=form />
            <div class="fields actions">
                <label class="field">
                    <span>"Sweep up to batch"</span>
                    <input
                        id="sweep-max"
                        type="number"
                        min="2"
                        step="1"
                        inputmode="numeric"
                        title="Pipelined runs at batch 1, 2, 4, … up to this"
                        prop:value=sweep_max
                        on:input=on_sweep_max
                    />
                </label>
                <div class="buttons">
                    <button
                        id="run"
                        node_ref=run_button
                        class="primary"
                        disabled=move || !idle()
                        on:click=move |_| submit(Plan::Single)
                    >
                        "Run"
                    </button>
                    <button
                        id="compare"
                        node_ref=compare_button
                        class="primary accent"
                        disabled=move || !idle()
                        title="Sequential, then the chosen mode: same count, same network"
                        on:click=move |_| submit(Plan::Compare)
                    >
                        "Compare"
                    </button>
                    <button
                        id="sweep"
                        node_ref=sweep_button
                        class="primary"
                        disabled=move || !idle()
                        title="Pipelined runs at batch 1, 2, 4, … up to the largest batch"
                        on:click=move |_| submit(Plan::Sweep)
                    >
                        "Sweep"
                    </button>
                    <button
                        id="cancel"
                        disabled=move || !(conn.is_open() && conn.busy.get() && can_control())
                        on:click=move |_| conn.cancel()
                    >
                        "Cancel"
                    </button>
                </div>
            </div>
            <Show when=move || known() && !can_control()>
                <p id="watch-only" class="watch-only" role="status">
                    "This page can only watch: starting or cancelling runs needs the presenter's link (with its token), printed when pipescope started."
                </p>
            </Show>
            {move || invalid.get().map(|e| view! { <p class="field-error" role="status">{e}</p> })}
            <p class="explain">
                <strong>"Sequential"</strong>
                " waits for each reply: one round trip per command. "
                <strong>"Pipelined"</strong>
                " writes a batch, then reads its replies: one round trip per batch. "
                <strong>"Multiplexed"</strong>
                " keeps n callers' commands in flight on one connection. "
                <strong>"MULTI/EXEC"</strong>
                " wraps each batch in a transaction; "
                <strong>"MSET/MGET"</strong>
                " sends one command for a batch of keys."
            </p>
        </section>
    }
}
