use leptos::prelude::*;
use shared::Network;

use super::delay_fields::DelayFields;
use super::preset::Preset;
use crate::components::number_field::NumberField;
use crate::format;
use crate::inputs::Form;

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
