use leptos::prelude::*;

use crate::components::number_field::NumberField;
use crate::components::shown::Shown;
use crate::format;
use crate::inputs::{Form, SLIDER_MAX, slider_pos, slider_us};

/// The one-way delay as a log-scale slider and an exact field, and the delay back: the same
/// unless "different delay back" is ticked.
#[component]
pub fn DelayFields(form: RwSignal<Form>) -> impl IntoView {
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
