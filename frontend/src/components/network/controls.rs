use leptos::prelude::*;
use shared::Network;

use crate::components::form::number_field::NumberField;
use crate::components::shown::Shown;
use crate::format;
use crate::inputs::{Form, SLIDER_MAX, slider_pos, slider_us};

/// The network between the engine and Redis: a one-way delay slider (log scale, 0 to 1 s) with
/// an exact µs field and the presets from `Network::PRESETS`, an optional different delay back,
/// jitter and a bandwidth cap. Writes into the controls' form; nothing here is stored twice.
#[component]
pub fn NetworkControls(form: RwSignal<Form>) -> impl IntoView {
    let summary = move || {
        form.with(|f| match f.network() {
            Ok(n) if n.is_loopback() => "loopback: nothing injected".to_string(),
            Ok(n) => format!(
                "{} · round trip {}",
                n.label(),
                format::latency(n.round_trip_us() as f64)
            ),
            Err(_) => "—".to_string(),
        })
    };
    view! {
        <fieldset class="network" aria-label="Network">
            <legend>"Network "<span class="network-summary" id="network-summary">{summary}</span></legend>
            <div class="presets" role="group" aria-label="Network presets">
                {Network::PRESETS
                    .into_iter()
                    .map(|(name, us)| view! { <Preset form=form name=name us=us /> })
                    .collect_view()}
            </div>
            <div class="fields">
                <DelayFields form=form />
                <NumberField
                    form=form
                    id="jitter"
                    label="Jitter ± µs"
                    get=|f| &f.jitter
                    set=|f, v| f.jitter = v
                    min="0"
                    placeholder="none"
                />
                <NumberField
                    form=form
                    id="bandwidth"
                    label="Bandwidth (Mbit/s)"
                    get=|f| &f.bandwidth_mbit
                    set=|f, v| f.bandwidth_mbit = v
                    min="0"
                    step="any"
                    placeholder="unlimited"
                />
            </div>
        </fieldset>
    }
}

/// A preset network (`us` each way, no jitter, no cap), pressed while the form says exactly it.
#[component]
fn Preset(form: RwSignal<Form>, name: &'static str, us: u32) -> impl IntoView {
    let pressed = move || form.with(|f| f.network().ok() == Some(Network::symmetric(us)));
    let (title, text) = if us == 0 {
        ("No delay injected".to_string(), name.to_string())
    } else {
        let each_way = format::latency(us as f64);
        (
            format!("{each_way} each way"),
            format!("{name} · {each_way}"),
        )
    };
    view! {
        <button
            type="button"
            class="small preset"
            data-us=us.to_string()
            title=title
            aria-pressed=move || pressed().to_string()
            on:click=crate::erased::handler(move |_| {
                form.update(|f| {
                    f.set_network(Network {
                        jitter_us: 0,
                        bandwidth: None,
                        ..Network::symmetric(us)
                    })
                })
            })
        >
            {text}
        </button>
    }
}

/// The one-way delay as a log-scale slider and an exact field, and the delay back: the same
/// unless "different delay back" is ticked.
#[component]
fn DelayFields(form: RwSignal<Form>) -> impl IntoView {
    let delay_us = move || form.with(|f| f.network().ok().map(|n| n.delay_out_us));
    let separate = move || form.with(|f| f.separate_back);
    // Sets the delay out, and back too unless it is set apart.
    let set_delay = move |text: String| {
        form.update(|f| {
            if !f.separate_back {
                f.delay_back = text.clone();
            }
            f.delay_out = text;
        })
    };
    view! {
        <label class="field delay">
            <span>
                "One-way delay "
                <b>{move || delay_us().map(|us| format::latency(us as f64)).unwrap_or_default()}</b>
            </span>
            <input
                id="delay-slider"
                type="range"
                min="0"
                max=SLIDER_MAX.to_string()
                step="1"
                aria-label="One-way delay (log scale, 0 to 1 s)"
                prop:value=move || delay_us().map(slider_pos).unwrap_or(0).to_string()
                on:input=crate::erased::handler(move |ev| {
                    if let Ok(p) = event_target_value(&ev).parse::<u32>() {
                        set_delay(slider_us(p).to_string());
                    }
                })
            />
        </label>
        <label class="field">
            <span>"µs"</span>
            <input
                id="delay-us"
                type="number"
                min="0"
                step="1"
                inputmode="numeric"
                prop:value=move || form.with(|f| f.delay_out.clone())
                on:input=crate::erased::handler(move |ev| set_delay(event_target_value(&ev)))
            />
        </label>
        <label class="check">
            <input
                id="separate-back"
                type="checkbox"
                prop:checked=separate
                on:change=crate::erased::handler(move |ev| {
                    let on = event_target_checked(&ev);
                    form.update(|f| {
                        f.separate_back = on;
                        if !on {
                            f.delay_back = f.delay_out.clone();
                        }
                    })
                })
            />
            "different delay back"
        </label>
        <Shown when=separate>
            <NumberField
                form=form
                id="delay-back"
                label="Back (µs)"
                get=|f| &f.delay_back
                set=|f, v| f.delay_back = v
                min="0"
            />
        </Shown>
    }
}
