use leptos::prelude::*;
use shared::observe::{Vantage, Words};

use super::figure_rows::figure_rows;
use super::what_if::what_if_figure;
use crate::components::round_trip::trip_figure::{parts_legend, trip_svg};
use crate::connection::Connection;
use crate::rtt_model::TripBreakdown;
use crate::state::observe::title;

/// One chosen connection: its verdict, its wall time taken apart (each figure says whether it
/// was measured, and by what, or derived, and from what), what if it pipelined (drawn, when
/// it waits on round trips), its mean round trip drawn as the proxy saw it, and what the same
/// commands cost pipelined by pipescope's own engine (measured on request, by the presenter;
/// a capture has no Redis here to measure it against). The sentences come worded by the
/// server with the connection (`Words`).
#[component]
pub fn ObservedFigures(conn: Connection, id: u64) -> impl IntoView {
    let c = Memo::new(move |_| conn.observe.with(|o| o.connections.get(&id).cloned()));
    let measuring = move || conn.observe.with(|o| o.measuring.is_some());
    let may = move || conn.is_open() && conn.can_control();
    move || {
        c.get().map(|c| {
            let Words {
                split,
                help,
                equivalent,
                probe,
                what_if,
                ..
            } = c.words.clone().unwrap_or_default();
            let what_if = what_if.map(|w| what_if_figure(id, w));
            let probe = probe
                .map(|p| view! { <p class="probe-line" id=format!("probe-{id}")>{p}</p> });
            let captured = c.vantage == Vantage::Capture;
            let rows = figure_rows(split);
            let help = help.map(|h| {
                view! {
                    <div class="what-would-help" id=format!("help-{id}")>
                        <b>"What would help: "</b>
                        <span class="change">{h.change}</span>
                        {h.projection.map(|p| view! { <p class="projection">{p}</p> })}
                    </div>
                }
            });
            let trip = TripBreakdown::observed(&c).map(|t| {
                view! {
                    <figure class="rtt observed-rtt">
                        {trip_svg(format!("observed-rtt-{id}"), &t)}
                        {parts_legend(format!("observed-rtt-legend-{id}"), &t)}
                    </figure>
                }
            });
            view! {
                <article class="observed-figures" id=format!("figures-{id}")>
                    <h3>{title(&c)}</h3>
                    <p class="verdict-line">{c.verdict.lead().to_string()}</p>
                    {(!c.verdict.headline.is_empty())
                        .then(|| {
                            view! { <p class="verdict-detail">{c.verdict.text.clone()}</p> }
                        })}
                    {probe}
                    <table class="time-split">
                        <tbody>{rows}</tbody>
                    </table>
                    {help}
                    {what_if}
                    {trip}
                    <div class="equivalent">
                        {(!captured)
                            .then(|| {
                                view! {
                                    <button
                                        id=format!("equivalent-{id}")
                                        class="small"
                                        disabled=move || !may() || measuring()
                                        on:click=crate::erased::handler(move |_| conn.measure_equivalent(id))
                                    >
                                        {move || if measuring() { "Measuring…" } else { "Measure the pipelined equivalent" }}
                                    </button>
                                }
                            })}
                        <span class="equivalent-result" id=format!("equivalent-result-{id}")>
                            {if captured {
                                "No pipelined equivalent for a capture: pipescope measures one through a relay like the observer's to the Redis it observes, and a capture's Redis is not reached.".to_string()
                            } else {
                                equivalent.unwrap_or_else(|| {
                                    "the same number of commands, pipelined by pipescope's engine through a relay like the observer's: not measured yet".into()
                                })
                            }}
                        </span>
                    </div>
                </article>
            }
        })
    }
}
