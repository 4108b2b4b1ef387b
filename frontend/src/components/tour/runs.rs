//! A tour step's runs as a table: writes beside wall times.

use leptos::prelude::*;

use crate::format;
use crate::tour::Tour;

/// This step's runs: writes beside wall times (what step 5 is about).
#[component]
pub fn StepRuns(tour: Tour, page: usize) -> impl IntoView {
    move || {
        tour.results.with(|all| {
            all.iter().find(|r| r.step == page).map(|r| {
                let rows = r
                    .runs
                    .iter()
                    .map(|(role, s)| {
                        view! {
                            <tr data-role=role.clone() data-mode=s.spec.mode.kind()>
                                <th scope="row">{s.spec.mode.label()}</th>
                                <td>{format::wall(s.wall_us)}</td>
                                <td>{format::rate(s.ops_per_sec)}</td>
                                <td>{format::group(s.round_trips)}</td>
                                <td>{format::group(s.writes)}</td>
                            </tr>
                        }
                    })
                    .collect_view();
                view! {
                    <table id="tour-runs" class="tour-runs">
                        <thead>
                            <tr>
                                <th scope="col">"Run"</th>
                                <th scope="col">"Wall time"</th>
                                <th scope="col">"ops/s"</th>
                                <th scope="col">"Round trips"</th>
                                <th scope="col">"Writes"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                }
            })
        })
    }
}
