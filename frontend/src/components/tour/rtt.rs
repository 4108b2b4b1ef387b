//! Step 1's figure: the one SET's round trip taken apart, drawn like the RTT diagram
//! (`trip_figure::trip_svg`) from the same model (`TripBreakdown`): each part labelled measured
//! (by the engine, the wire tap or Redis), derived or assumed.

use leptos::prelude::*;

use crate::components::round_trip::trip_figure::{parts_legend, trip_svg};
use crate::rtt_model::TripBreakdown;
use crate::tour::Tour;

#[component]
pub fn OneTrip(tour: Tour) -> impl IntoView {
    let trip = Memo::new(move |_| {
        tour.results.with(|all| {
            let r = all.iter().find(|r| r.step == 0)?;
            let (_, s) = r.runs.first()?;
            Some(TripBreakdown::of(r.ids.first().copied().unwrap_or(0), s))
        })
    });
    move || {
        match trip.get() {
        None => view! {
            <section class="card one-trip-card stage-part focus" aria-label="One round trip">
                <h2>"One round trip"</h2>
                <p class="placeholder">"Run the step: its SET's round trip appears here, taken apart."</p>
            </section>
        }
        .into_any(),
        Some(t) => view! {
            <section class="card one-trip-card stage-part focus" aria-label="One round trip">
                <h2>"One SET's round trip, taken apart"</h2>
                {trip_svg("one-trip".into(), &t)}
                {parts_legend("one-trip-legend".into(), &t)}
            </section>
        }
        .into_any(),
    }
    }
}
