use leptos::prelude::*;
use shared::Mode;

use crate::components::{AtomicityLines, ClusterShares};
use crate::connection::Connection;
use crate::export;
use crate::format;
use crate::state::ResultRow;

/// What the engine counted as a round trip, per mode.
const ROUND_TRIPS_TITLE: &str = "Waits for replies the engine paid: one per batch, however it was written (flushed per command or buffered); multiplexed: the reads that brought replies";

/// A run's round trips; a multiplexed run's are the reads that brought replies, and say so.
fn round_trips_cell(mode: Mode, n: u64) -> impl IntoView {
    let reads = matches!(mode, Mode::Multiplexed { .. });
    let title = match mode {
        Mode::Multiplexed { .. } => {
            "reads that brought replies: this mode's round trips (counted by the engine)"
                .to_string()
        }
        Mode::Connections { connections } => format!(
            "waits for replies, one per command, counted by the engine: {connections} connections wait side by side, so about {} one after another",
            format::count(n.div_ceil(connections.max(1) as u64))
        ),
        _ => "waits for replies, one per batch (counted by the engine)".to_string(),
    };
    view! {
        <td class="round-trips" title=title>
            {format::count(n)}
            {reads.then(|| view! { <span class="unit">" reads"</span> })}
        </td>
    }
}

/// Connections Redis accepted while the run went, as Redis counts them.
fn connections_cell(s: &shared::RunSummary) -> AnyView {
    let opened = s.spec.mode.connections();
    match s.redis_load {
        Some(l) => view! {
            <td
                class="connections"
                data-connections=l.connections_received.to_string()
                title=format!(
                    "Measured by Redis: connections it accepted during the run (INFO stats total_connections_received, less the reading's own). The engine opened {opened}; another client's (or a GET run's seeding) would count too."
                )
            >
                {format::count(l.connections_received)}
            </td>
        }
        .into_any(),
        None => view! {
            <td class="connections" title=format!("Redis did not say (INFO stats); the engine opened {opened}")>
                "—"
            </td>
        }
        .into_any(),
    }
}

/// Redis's CPU time per command across the run, as Redis counts it.
fn redis_cpu_cell(s: &shared::RunSummary) -> AnyView {
    match s.redis_load {
        Some(l) => view! {
            <td
                class="redis-cpu"
                data-cpu-us=l.cpu_us_per_command.to_string()
                title=format!(
                    "Measured by Redis: its CPU time across the run (INFO cpu, used_cpu_user + used_cpu_sys: {}) over the {} commands on the wire. The whole server's CPU: anything else it did meanwhile counts too.",
                    format::latency(l.cpu_us),
                    format::count(s.wire_commands)
                )
            >
                {cpu_per_command(l.cpu_us_per_command)}
            </td>
        }
        .into_any(),
        None => view! { <td class="redis-cpu" title="Redis did not say (INFO cpu)">"—"</td> }.into_any(),
    }
}

/// CPU µs per command with the digits a fraction of a µs needs: "0.47 µs", "10.2 µs".
pub fn cpu_per_command(us: f64) -> String {
    if !us.is_finite() || us < 0.0 {
        "—".to_string()
    } else if us < 10.0 {
        format!("{us:.2} µs")
    } else if us < 1000.0 {
        format!("{us:.1} µs")
    } else {
        format::latency(us)
    }
}

/// The finished runs of the latest plan: time, throughput, latency percentiles, round trips
/// writes, commands on the wire and speed-up over the first sequential run; each run labelled
/// with its mode, command and network. Rendered once at least one run has finished.
#[component]
pub fn Results(conn: Connection) -> impl IntoView {
    // Speed-up over the first complete sequential run (as in the exports).
    let baseline = Memo::new(move |_| {
        conn.results.with(|rows| {
            rows.iter()
                .find(|r| {
                    !r.partial && export::baseline(std::slice::from_ref(&r.summary)).is_some()
                })
                .map(|r| r.summary.clone())
        })
    });
    let row = move |r: ResultRow| {
        let s = r.summary;
        let speedup = baseline.with(|b| match b {
            Some(b) if !r.partial => format::factor(s.speedup_over(b)),
            _ => "—".to_string(),
        });
        let mut detail = format!(
            "{}{} · {}",
            s.spec.command.name(),
            s.spec.keys.suffix(),
            s.spec.network.label()
        );
        if let Some(bytes) = s.spec.value_bytes {
            detail += &format!(" · {} B values", format::count(bytes as u64));
        }
        if let Some(wait) = s.spec.wait.label() {
            detail += &format!(" · {wait}");
        }
        if r.partial {
            detail += " · stopped";
        }
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
                data-mode=s.spec.mode.kind()
                data-run=r.key
                data-label=s.spec.mode.label()
                data-ops=s.ops_per_sec.to_string()
            >
                <th scope="row">
                    <span class="mode-name">{s.spec.mode.label()}</span>
                    <span class="mode-detail">{detail}</span>
                </th>
                <td>{count}</td>
                <td>{format::wall(s.wall_us)}</td>
                <td class="strong">{format::rate(s.ops_per_sec)}</td>
                <td>{format::latency(l.p50_us)}</td>
                <td>{format::latency(l.p99_us)}</td>
                <td>{format::latency(l.max_us)}</td>
                {round_trips_cell(s.spec.mode, s.round_trips)}
                <td class="writes">{format::known_count(s.writes)}</td>
                <td class="wire-commands">{format::known_count(s.wire_commands)}</td>
                {connections_cell(&s)}
                {redis_cpu_cell(&s)}
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
                                    <th scope="col">"p99"</th>
                                    <th scope="col">"max"</th>
                                    <th scope="col" title=ROUND_TRIPS_TITLE>"Round trips"</th>
                                    <th scope="col" title="Send syscalls the engine made">"Writes"</th>
                                    <th scope="col" title="Commands Redis saw, MULTI and EXEC included">"Wire cmds"</th>
                                    <th scope="col" title="Connections Redis accepted during the run, measured by Redis (INFO stats)">"Connections"</th>
                                    <th scope="col" title="Redis's CPU time over the commands, measured by Redis (INFO cpu)">"Redis CPU / cmd"</th>
                                    <th scope="col">"Speed-up"</th>
                                </tr>
                            </thead>
                            <tbody>{rows.into_iter().map(row).collect_view()}</tbody>
                        </table>
                    </div>
                    <p class="note">"Latency: from a command written to its reply read, per command (p90 and p99.9 are in the latency chart). Round trips: counted by the engine. Connections and Redis CPU / cmd: measured by Redis, from INFO stats (connections it accepted during the run) and INFO cpu (its user + system CPU time over the commands on the wire) read before and after each run; the whole server's counters, so another client's work meanwhile counts too, and so does pipescope's own memory sampling of a one-connection run (CLIENT LIST and INFO every 2 ms; its connection is not counted)."</p>
                    <ClusterShares conn=conn />
                    <AtomicityLines conn=conn />
                </section>
            }
        })
    }
}
