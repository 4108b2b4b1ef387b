use leptos::prelude::*;
use shared::Mode;

use super::atomicity::AtomicityLines;
use super::cluster_shares::ClusterShares;
use crate::connection::Connection;
use crate::export;
use crate::format;
use crate::state::ResultRow;

const SPEEDUP_TITLE: &str = "Derived: this run's ops/s over the first complete sequential run's";

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
            format::group(n.div_ceil(connections.max(1) as u64))
        ),
        _ => "waits for replies, one per batch (counted by the engine)".to_string(),
    };
    view! {
        <td class="round-trips" data-head="Round trips" title=title>
            {format::group(n)}
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
                data-head="Connections"
                data-connections=l.connections_received.to_string()
                title=format!(
                    "Measured by Redis: connections it accepted during the run (INFO stats total_connections_received, read once the run's set-up was done and after its last reply, less the reading's own). The engine opened {opened}; a GET run's seeding and the other client connect before, so they are not counted; another program's connection meanwhile would be."
                )
            >
                {format::group(l.connections_received)}
            </td>
        }
        .into_any(),
        None => view! {
            <td class="connections" data-head="Connections" title=format!("Redis did not say (INFO stats); the engine opened {opened}")>
                "—"
            </td>
        }
        .into_any(),
    }
}

/// Redis's CPU time per command across the run, as Redis counts it; for MSET/MGET, where one
/// command carries a batch of keys, per key and per command.
fn redis_cpu_cell(s: &shared::RunSummary) -> AnyView {
    let Some(l) = s.redis_load else {
        return view! { <td class="redis-cpu" data-head="Redis CPU / cmd" title="Redis did not say (INFO cpu)">"—"</td> }.into_any();
    };
    let command = s.spec.command.multi_key().unwrap_or(s.spec.command.name());
    let per_key = s.per_key(l.cpu_us_per_command);
    let other = s
        .interleaving
        .as_ref()
        .map(|i| {
            format!(
                " The other client's {} INCRs ran in the same window and are in it.",
                format::group(i.other_commands)
            )
        })
        .unwrap_or_default();
    let title = format!(
        "Measured by Redis: its CPU time from the end of the run's set-up (a GET run's seeding is before it) to its last reply (INFO cpu, used_cpu_user + used_cpu_sys: {}) over the {} commands on the wire{}. The whole server's CPU: anything else it did meanwhile counts too.{other}",
        format::latency(l.cpu_us),
        format::group(s.wire_commands),
        match per_key {
            Some(_) => format!(", and over the {} keys they carried", format::group(s.done)),
            None => String::new(),
        }
    );
    view! {
        <td
            class="redis-cpu"
            data-head="Redis CPU / cmd"
            data-cpu-us=l.cpu_us_per_command.to_string()
            data-cpu-us-per-key=per_key.map(|k| k.to_string())
            title=title
        >
            {match per_key {
                Some(k) => view! {
                    <span class="line">{cpu_per_command(k)}<span class="unit">" / key"</span></span>
                    <span class="line">
                        {cpu_per_command(l.cpu_us_per_command)}
                        <span class="unit">{format!(" / {command}")}</span>
                    </span>
                }
                .into_any(),
                None => cpu_per_command(l.cpu_us_per_command).into_any(),
            }}
        </td>
    }
    .into_any()
}

/// p50, p99 and the slowest, one under another.
fn latency_cell(l: shared::Latency) -> impl IntoView {
    let line = |name: &'static str, us: f64| {
        view! { <span class="line"><span class="unit">{name}</span>" "{format::latency(us)}</span> }
    };
    view! {
        <td class="latency" data-head="Latency" title=LATENCY_TITLE>
            {line("p50", l.p50_us)}
            {line("p99", l.p99_us)}
            {line("max", l.max_us)}
        </td>
    }
}

/// Writes and commands on the wire, one under the other.
fn sends_cell(s: &shared::RunSummary) -> impl IntoView + use<> {
    view! {
        <td class="sends" data-head="Writes · wire cmds" title=SENDS_TITLE>
            <span class="line writes">{format::known_count(s.writes)}</span>
            <span class="line wire-commands">{format::known_count(s.wire_commands)}</span>
        </td>
    }
}

const LATENCY_TITLE: &str = "Measured by the engine: from a command written to its reply read; p50, p99 and the slowest (p90 and p99.9 are in the latency chart)";
const SENDS_TITLE: &str = "Counted by the engine: send syscalls it made, then commands on the wire as Redis sees them (MULTI and EXEC included; one MSET/MGET per batch of keys)";

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
            detail += &format!(" · {} B values", format::group(bytes as u64));
        }
        if let Some(wait) = s.spec.wait.label() {
            detail += &format!(" · {wait}");
        }
        if r.partial {
            detail += " · stopped";
        }
        let count = if s.done == s.spec.count {
            format::group(s.done)
        } else {
            format!(
                "{} of {}",
                format::group(s.done),
                format::group(s.spec.count)
            )
        };
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
                <td data-head="Commands" title="Commands answered, counted by the engine (MSET/MGET: keys)">{count}</td>
                <td data-head="Wall time" title="Measured by the engine: first write to last reply">{format::wall(s.wall_us)}</td>
                <td class="strong" data-head="ops/s" title="Derived: commands ÷ wall time">{format::rate(s.ops_per_sec)}</td>
                {latency_cell(s.latency)}
                {round_trips_cell(s.spec.mode, s.round_trips)}
                {sends_cell(&s)}
                {connections_cell(&s)}
                {redis_cpu_cell(&s)}
                <td class="strong speed-up" data-head="Speed-up" title=SPEEDUP_TITLE>{speedup}</td>
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
                                    <th scope="col" title="Commands answered, counted by the engine (MSET/MGET: keys)">"Com\u{ad}mands"</th>
                                    <th scope="col">"Wall time"</th>
                                    <th scope="col">"ops/s"</th>
                                    <th scope="col" title=LATENCY_TITLE>"Latency"</th>
                                    <th scope="col" title=ROUND_TRIPS_TITLE>"Round trips"</th>
                                    <th scope="col" title=SENDS_TITLE>"Writes · wire cmds"</th>
                                    // A soft hyphen: the one long word may break.
                                    <th scope="col" title="Connections Redis accepted during the run, its set-up left out, measured by Redis (INFO stats)">"Connec\u{ad}tions"</th>
                                    <th scope="col" title="Redis's CPU time over the commands (MSET/MGET: per key and per command), its set-up left out, measured by Redis (INFO cpu)">"Redis CPU / cmd"</th>
                                    <th scope="col" title=SPEEDUP_TITLE>"Speed-up"</th>
                                </tr>
                            </thead>
                            <tbody>{rows.into_iter().map(row).collect_view()}</tbody>
                        </table>
                    </div>
                    <p class="note">"Latency: from a command written to its reply read, per command (p90 and p99.9 are in the latency chart). Round trips: counted by the engine. Connections and Redis CPU / cmd: measured by Redis, from INFO stats (connections it accepted during the run) and INFO cpu (its user + system CPU time over the commands on the wire; MSET/MGET per key and per command) read once each run's set-up was done (a GET run's seeding, the other client's connection: not counted) and after its last reply; the whole server's counters, so another client's work meanwhile counts too, and so does pipescope's own memory sampling of a one-connection run (CLIENT LIST and INFO every 2 ms; its connection is not counted)."</p>
                    <ClusterShares conn=conn />
                    <AtomicityLines conn=conn />
                </section>
            }
        })
    }
}
