//! The tour's last page: what the session measured, as a Markdown table to take home and a PNG
//! of its chart (`handout_chart`), and the whole session as a recording to show again.

use leptos::prelude::*;

use super::handout_chart::{W, chart_body, height, to_png};
use crate::components::files::download::download;
use crate::tour::{self, Tour};

#[component]
pub fn Handout(tour: Tour) -> impl IntoView {
    let sorted = Memo::new(move |_| {
        tour.results
            .with(|all| tour::by_step(all).into_iter().cloned().collect::<Vec<_>>())
    });
    let markdown = Memo::new(move |_| sorted.with(|r| tour::handout_markdown(r)));
    let md_href = move || {
        format!(
            "data:text/markdown;charset=utf-8,{}",
            String::from(js_sys::encode_uri_component(&markdown.get()))
        )
    };
    let png = RwSignal::new(None::<String>);
    let chart = NodeRef::<leptos::svg::Svg>::new();
    // Re-export whenever the chart changes.
    crate::erased::effect(move || {
        sorted.track();
        png.set(None);
        if let Some(svg) = chart.get() {
            to_png(&svg, png);
        }
    });
    view! {
        <div class="tour-step handout" id="handout">
            <p class="tour-kicker">"Handout"</p>
            <h2 id="tour-title">"What we measured"</h2>
            {move || {
                if sorted.with(Vec::is_empty) {
                    view! {
                        <p class="tour-wait">"Nothing measured yet: go back and run a step."</p>
                    }
                        .into_any()
                } else {
                    view! {
                        <p class="tour-prose">
                            "Every run of this session, against real Redis. Take the table (Markdown) and the chart (PNG) home."
                        </p>
                    }
                        .into_any()
                }
            }}
            <div class="handout-actions">
                <button
                    id="tour-save-session"
                    class="button"
                    disabled=move || sorted.with(Vec::is_empty)
                    on:click=crate::erased::handler(move |_| save(tour))
                >
                    "Save session (.pipescope.json)"
                </button>
                <a id="handout-md-link" class="button" download="pipescope-tour.md" href=md_href>
                    "Download the table (.md)"
                </a>
                <a
                    id="handout-png"
                    class="button"
                    download="pipescope-tour.png"
                    href=move || png.get().unwrap_or_default()
                    class:disabled=move || png.with(Option::is_none)
                    data-ready=move || png.with(Option::is_some).to_string()
                >
                    "Download the chart (.png)"
                </a>
            </div>
            <svg
                id="handout-chart"
                node_ref=chart
                xmlns="http://www.w3.org/2000/svg"
                viewBox=move || format!("0 0 {W} {}", height(&sorted.get()))
                width=W
                height=move || height(&sorted.get())
                role="img"
                aria-label="Throughput of every run of the tour"
            >
                {move || chart_body(&sorted.get())}
            </svg>
            <pre id="handout-md" class="handout-md">{markdown}</pre>
        </div>
    }
}

/// Every measured step's runs with their timelines as one recording, which `pipescope replay`
/// serves back to this tour, steps and handout filled.
fn save(tour: Tour) {
    let recording = tour.recording(js_sys::Date::now() as u64);
    let name = format!(
        "pipescope-tour-{}{}",
        recording.saved_at.replace(':', "-"),
        shared::recording::RECORDING_SUFFIX
    );
    if let Err(e) = download(&name, "application/json", &recording.to_json()) {
        leptos::logging::warn!("the browser refused the download: {e:?}");
    }
}
