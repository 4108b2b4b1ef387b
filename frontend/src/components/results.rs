use leptos::prelude::*;

use shared::Mode;

use crate::connection::Connection;
use crate::format;
use crate::state::{ResultRow, mode_kind};

/// The finished runs of the latest plan: time, throughput, latency percentiles, round trips
/// and speed-up over the sequential run. Rendered once at least one run has finished.
#[component]
pub fn Results(conn: Connection) -> impl IntoView {
    let row = move |r: ResultRow| {
        let s = r.summary;
        let speedup = conn.speedup.with(|up| match up {
            Some(up) if mode_kind(s.spec.mode) == "pipelined" && up.pipelined == s => {
                format::factor(up.factor)
            }
            Some(up) if mode_kind(s.spec.mode) == "sequential" && up.sequential == s => {
                "1×".to_string()
            }
            _ => "—".to_string(),
        });
        let detail = match s.spec.mode {
            Mode::Sequential => None,
            Mode::Multiplexed { in_flight } => {
                Some(format!("{} in flight", format::count(in_flight as u64)))
            }
            m => Some(format!("batch {}", format::count(m.batch() as u64))),
        };
        let detail = match (detail, r.partial) {
            (Some(d), true) => Some(format!("{d}, stopped")),
            (None, true) => Some("stopped".to_string()),
            (d, false) => d,
        };
        let count = if s.done == s.spec.count {
            format::count(s.done)
        } else {
            format!(
                "{} of {}",
                format::count(s.done),
                format::count(s.spec.count)
            )
        };
        let l = s.latency;
        view! {
            <tr
                class=if r.partial { "partial-row" } else { "result-row" }
                data-mode=mode_kind(s.spec.mode)
                data-run=r.key
            >
                <th scope="row">
                    <span class="mode-name">{mode_kind(s.spec.mode)}</span>
                    {detail.map(|d| view! { <span class="mode-detail">{d}</span> })}
                </th>
                <td>{count}</td>
                <td>{format::wall(s.wall_us)}</td>
                <td class="strong">{format::rate(s.ops_per_sec)}</td>
                <td>{format::latency(l.p50_us)}</td>
                <td>{format::latency(l.p90_us)}</td>
                <td>{format::latency(l.p99_us)}</td>
                <td>{format::latency(l.p999_us)}</td>
                <td>{format::latency(l.max_us)}</td>
                <td>{format::count(s.round_trips)}</td>
                <td class="strong">{speedup}</td>
            </tr>
        }
    };
    move || {
        let rows = conn.results.get();
        (!rows.is_empty()).then(|| {
            view! {
                <section class="card results" aria-label="Results">
                    <h2>"Results"</h2>
                    <div class="table-wrap">
                        <table id="results">
                            <thead>
                                <tr>
                                    <th scope="col">"Mode"</th>
                                    <th scope="col">"Commands"</th>
                                    <th scope="col">"Wall time"</th>
                                    <th scope="col">"ops/s"</th>
                                    <th scope="col">"p50"</th>
                                    <th scope="col">"p90"</th>
                                    <th scope="col">"p99"</th>
                                    <th scope="col">"p99.9"</th>
                                    <th scope="col">"max"</th>
                                    <th scope="col">"Round trips"</th>
                                    <th scope="col">"Speed-up"</th>
                                </tr>
                            </thead>
                            <tbody>{rows.into_iter().map(row).collect_view()}</tbody>
                        </table>
                    </div>
                    <p class="note">"Latency: from a command written to its reply read, per command."</p>
                </section>
            }
        })
    }
}
