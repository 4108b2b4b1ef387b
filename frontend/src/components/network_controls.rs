use leptos::prelude::*;
use shared::Network;

use crate::format;
use crate::inputs::{Form, SLIDER_MAX, slider_pos, slider_us};

/// The network between the engine and Redis: a one-way delay slider (log scale, 0 to 1 s) with
/// an exact µs field and the presets from `Network::PRESETS`, an optional different delay back,
/// jitter and a bandwidth cap. Writes into the controls' form; nothing here is stored twice.
#[component]
pub fn NetworkControls(form: RwSignal<Form>) -> impl IntoView {
    let delay_text = move || form.with(|f| f.delay_out.clone());
    let delay_us = move || form.with(|f| f.network().ok().map(|n| n.delay_out_us));
    let separate = move || form.with(|f| f.separate_back);
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
    let set_delay = move |us: u32| {
        form.update(|f| {
            f.delay_out = us.to_string();
            if !f.separate_back {
                f.delay_back = f.delay_out.clone();
            }
        })
    };

    let presets = Network::PRESETS
        .into_iter()
        .map(|(name, us)| {
            let pressed = move || form.with(|f| f.network().ok() == Some(Network::symmetric(us)));
            let title = if us == 0 {
                "No delay injected".to_string()
            } else {
                format!("{} each way", format::latency(us as f64))
            };
            view! {
                <button
                    type="button"
                    class="small preset"
                    data-us=us.to_string()
                    title=title
                    aria-pressed=move || pressed().to_string()
                    on:click=move |_| {
                        form.update(|f| {
                            f.set_network(Network {
                                jitter_us: 0,
                                bandwidth: None,
                                ..Network::symmetric(us)
                            })
                        })
                    }
                >
                    {if us == 0 {
                        name.to_string()
                    } else {
                        format!("{name} · {}", format::latency(us as f64))
                    }}
                </button>
            }
        })
        .collect_view();

    view! {
        <fieldset class="network" aria-label="Network">
            <legend>"Network "<span class="network-summary" id="network-summary">{summary}</span></legend>
            <div class="presets" role="group" aria-label="Network presets">{presets}</div>
            <div class="fields">
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
                        on:input=move |ev| {
                            if let Ok(p) = event_target_value(&ev).parse::<u32>() {
                                set_delay(slider_us(p));
                            }
                        }
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
                        prop:value=delay_text
                        on:input=move |ev| {
                            let v = event_target_value(&ev);
                            form.update(|f| {
                                if !f.separate_back {
                                    f.delay_back = v.clone();
                                }
                                f.delay_out = v;
                            })
                        }
                    />
                </label>
                <label class="check">
                    <input
                        id="separate-back"
                        type="checkbox"
                        prop:checked=separate
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            form.update(|f| {
                                f.separate_back = on;
                                if !on {
                                    f.delay_back = f.delay_out.clone();
                                }
                            })
                        }
                    />
                    "different delay back"
                </label>
                <Show when=separate>
                    <label class="field">
                        <span>"Back (µs)"</span>
                        <input
                            id="delay-back"
                            type="number"
                            min="0"
                            step="1"
                            inputmode="numeric"
                            prop:value=move || form.with(|f| f.delay_back.clone())
                            on:input=move |ev| {
                                form.update(|f| f.delay_back = event_target_value(&ev))
                            }
                        />
                    </label>
                </Show>
                <label class="field">
                    <span>"Jitter ± µs"</span>
                    <input
                        id="jitter"
                        type="number"
                        min="0"
                        step="1"
                        inputmode="numeric"
                        placeholder="none"
                        prop:value=move || form.with(|f| f.jitter.clone())
                        on:input=move |ev| form.update(|f| f.jitter = event_target_value(&ev))
                    />
                </label>
                <label class="field">
                    <span>"Bandwidth (Mbit/s)"</span>
                    <input
                        id="bandwidth"
                        type="number"
                        min="0"
                        step="any"
                        inputmode="decimal"
                        placeholder="unlimited"
                        prop:value=move || form.with(|f| f.bandwidth_mbit.clone())
                        on:input=move |ev| {
                            form.update(|f| f.bandwidth_mbit = event_target_value(&ev))
                        }
                    />
                </label>
            </div>
        </fieldset>
    }
}
