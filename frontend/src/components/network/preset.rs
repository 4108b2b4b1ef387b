use leptos::prelude::*;
use shared::Network;

use crate::format;
use crate::inputs::Form;

/// A preset network (`us` each way, no jitter, no cap), pressed while the form says exactly it.
#[component]
pub fn Preset(form: RwSignal<Form>, name: &'static str, us: u32) -> impl IntoView {
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
