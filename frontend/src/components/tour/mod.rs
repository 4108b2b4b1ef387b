//! The guided tour's page (`/tour`, `/tour/<step>`): the step's panel (`step`) beside the
//! live stage (the timeline, the RTT diagram, the charts), one step at a time, each step a real
//! run driven by `crate::tour::Tour`. Next/Back (→/←), Run (Enter/Space), Cancel (Esc).
//! `prose` and `handout_chart` hold no component: they render a step's prose, and the
//! handout's chart as an SVG that exports to a PNG, for the views that do.

pub mod handout;
pub mod handout_chart;
pub mod nav;
pub mod prose;
pub mod rtt;
pub mod runs;
pub mod step;

use leptos::prelude::*;

use crate::components::charts::run_charts::Charts;
use crate::components::files::replay_banner::ReplayBanner;
use crate::components::frame::error_banner::ErrorBanner;
use crate::components::frame::header::Header;
use crate::components::round_trip::diagram::RttDiagram;
use crate::components::runs::results::Results;
use crate::components::shown::Shown;
use crate::components::timeline::teaching_view::TeachingView;
use crate::connection::Connection;
use crate::keyboard;
use crate::look::{Look, Theme};
use crate::playback::Playback;
use crate::tour::{self, Focus, RunState, STEPS, Tour};
use crate::url_state::UrlState;
use handout::Handout;
use nav::StepNav;
use rtt::OneTrip;
use step::StepPanel;

/// The tour page.
#[component]
pub fn TourPage(conn: Connection, url: UrlState, page: usize) -> impl IntoView {
    let look = Look::new(
        url.presenter,
        Theme::from_value(url.theme.as_deref().unwrap_or("light")),
    );
    let playback = Playback::new(conn);
    let search = window().location().search().unwrap_or_default();
    let url_count = tour::query_number(&search, "count");
    let url_delay = tour::query_number(&search, "delay").and_then(|d| u32::try_from(d).ok());
    let tour = Tour::new(conn, page, url_count, url_delay);
    // Registered first, so the tour's keys win over the playback's (→/← and Space).
    install_keys(tour);
    keyboard::install(playback, look);

    let run_button = NodeRef::<leptos::html::Button>::new();
    // Each step opens with Run focused, so Enter or Space runs it; without scrolling to it,
    // so a short screen (1280×720) still opens on the step's heading and its controls.
    crate::erased::effect(move || {
        tour.page.track();
        if tour.can_run()
            && let Some(b) = run_button.get()
        {
            let options = web_sys::FocusOptions::new();
            options.set_prevent_scroll(true);
            let _ = b.focus_with_options(&options);
        }
    });

    // The panel scrolls on its own (it stays in view beside the stage): show the measured
    // result as it arrives.
    let panel = NodeRef::<leptos::html::Section>::new();
    crate::erased::effect(move || {
        if tour.state() == RunState::Done
            && let Some(el) = panel.get()
        {
            el.set_scroll_top(el.scroll_height());
        }
    });

    view! {
        <Header conn=conn look=look />
        <main class="tour-main">
            <ErrorBanner conn=conn />
            <ReplayBanner conn=conn />
            <div class="tour-layout">
                <section
                    id="tour"
                    node_ref=panel
                    class="card tour"
                    aria-label="Guided tour"
                    data-step=move || (tour.page.get() + 1).to_string()
                    data-state=move || tour.state().as_str()
                    data-focus=move || focus(tour).map_or("handout", Focus::as_str)
                >
                    <StepNav tour=tour />
                    {move || {
                        let page = tour.page.get();
                        match STEPS.get(page) {
                            Some(step) => view! {
                                <StepPanel tour=tour conn=conn page=page step=step run_button=run_button />
                            }
                            .into_any(),
                            None => view! { <Handout tour=tour /> }.into_any(),
                        }
                    }}
                </section>
                {stage(tour, conn, playback, look)}
            </div>
        </main>
    }
}

/// The live stage beside the panel, the current step's part highlighted.
fn stage(tour: Tour, conn: Connection, playback: Playback, look: Look) -> impl IntoView {
    let focused = move |what: Focus| move || focus(tour) == Some(what);
    view! {
        <div class="tour-stage">
            <Shown when=focused(Focus::OneTrip)>
                <OneTrip tour=tour />
            </Shown>
            <div class="stage-part" class:focus=focused(Focus::Timeline)>
                <TeachingView conn=conn playback=playback look=look />
            </div>
            <div class="stage-part" class:focus=focused(Focus::Rtt)>
                <RttDiagram playback=playback />
            </div>
            <div class="stage-part" class:focus=focused(Focus::Results)>
                <Results conn=conn />
            </div>
            <div class="stage-part" class:focus=focused(Focus::Charts)>
                <Charts conn=conn />
            </div>
        </div>
    }
}

/// The part of the stage the current step is about (`None` on the handout).
fn focus(tour: Tour) -> Option<Focus> {
    STEPS.get(tour.page.get()).map(|s| s.focus)
}

/// →/← Next/Back, Enter/Space Run, Esc Cancel. A focused button keeps Enter and Space (they
/// click it); fields and sliders keep every key but Enter in the count field, which runs.
fn install_keys(tour: Tour) {
    keyboard::listen(move |key, target| {
        if target.is_typing() || target.slider {
            if key == "Enter" && target.id == "tour-count" {
                tour.run();
                return true;
            }
            return false;
        }
        let activates = matches!(key, "Enter" | " " | "Spacebar");
        if activates && target.clicks_on_enter() {
            return false;
        }
        match key {
            "ArrowRight" => tour.next(),
            "ArrowLeft" => tour.back(),
            "Escape" => tour.cancel(),
            _ if activates => tour.run(),
            _ => return false,
        }
        true
    });
}
