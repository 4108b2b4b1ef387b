use leptos::prelude::*;

use crate::connection::Connection;
use crate::format;
use crate::log_scale::Decades;
use crate::state::ResultRow;

const W: f64 = 560.0;
const H: f64 = 240.0;
const LEFT: f64 = 150.0;
const RIGHT: f64 = 90.0;
/// The latency chart's key lists each run up to this many (they fit over its bars).
const LEGEND_ROWS: usize = 6;

/// Throughput per run and each run's latency percentiles, as plain SVG bars (no chart crate:
/// two bar charts do not justify one).
#[component]
pub fn Charts(conn: Connection) -> impl IntoView {
    let rows = Memo::new(move |_| {
        conn.results
            .get()
            .into_iter()
            .filter(|r| !r.partial)
            .collect::<Vec<_>>()
    });
    move || {
        let rows = rows.get();
        (!rows.is_empty()).then(|| {
            view! {
                <section class="card charts" aria-label="Charts">
                    <div class="chart">
                        <h2>"Throughput (ops/s)"</h2>
                        {throughput(&rows)}
                    </div>
                    <div class="chart">
                        <h2>"Latency per command (log scale)"</h2>
                        {latency(&rows)}
                    </div>
                </section>
            }
        })
    }
}

/// A power of ten of µs as a grid label: `"10 µs"`, `"1 ms"`, `"100 ms"`, `"1 s"`.
fn decade(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.0} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.0} ms", us / 1e3)
    } else if us >= 1.0 {
        format!("{us:.0} µs")
    } else {
        // 0.1, 0.01: never rounded to a "0 µs" that a log axis cannot have.
        format!("{us} µs")
    }
}

fn label(r: &ResultRow) -> String {
    match r.summary.spec.mode {
        shared::Mode::Sequential => "sequential".to_string(),
        shared::Mode::Pipelined { batch, .. } => format!("pipelined ×{batch}"),
        mode => mode.label(),
    }
}

fn throughput(rows: &[ResultRow]) -> impl IntoView + use<> {
    let max = rows
        .iter()
        .map(|r| r.summary.ops_per_sec)
        .fold(1.0, f64::max);
    // A row per run, never thinner than its label: with many runs (three sweeps of ten) the
    // chart grows taller rather than its bars getting a negative height.
    let bar_h = ((H - 20.0) / rows.len() as f64).clamp(18.0, 56.0);
    let thick = (bar_h * 0.7).max(6.0);
    let bars = rows
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let y = 10.0 + k as f64 * bar_h;
            let w = ((W - LEFT - RIGHT) * r.summary.ops_per_sec / max).max(2.0);
            let kind = r.summary.spec.mode.kind();
            view! {
                <g class=format!("bar {kind}") data-mode=kind data-ops=r.summary.ops_per_sec.to_string()>
                    <text x=LEFT - 10.0 y=y + bar_h / 2.0 + 5.0 text-anchor="end" class="bar-label">{label(r)}</text>
                    <rect x=LEFT y=y + (bar_h - thick) / 2.0 width=w height=thick rx="4"></rect>
                    <text x=LEFT + w + 8.0 y=y + bar_h / 2.0 + 5.0 class="bar-value">{format::rate(r.summary.ops_per_sec)}</text>
                </g>
            }
        })
        .collect_view();
    let height = 20.0 + rows.len() as f64 * bar_h;
    view! {
        <svg class="chart-svg throughput" viewBox=format!("0 0 {W} {height}") role="img" aria-label="Throughput per run">
            {bars}
        </svg>
    }
}

fn latency(rows: &[ResultRow]) -> impl IntoView + use<> {
    let names = ["p50", "p90", "p99", "p99.9", "max"];
    let values = |r: &ResultRow| {
        let l = r.summary.latency;
        [l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us]
    };
    let all: Vec<f64> = rows.iter().flat_map(values).filter(|v| *v > 0.0).collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min).max(0.1);
    let hi = all.iter().copied().fold(1.0, f64::max);
    let decades = Decades::between(lo, hi);
    let (left, right, top, bottom) = (70.0, W - 10.0, 14.0, H - 34.0);
    let y = move |us: f64| decades.y(us, top, bottom);
    let grid = decades
        .powers()
        .map(|us| {
            view! {
                <g class="grid">
                    <line x1=left x2=right y1=y(us) y2=y(us)></line>
                    <text x=left - 6.0 y=y(us) + 4.0 text-anchor="end">{decade(us)}</text>
                </g>
            }
        })
        .collect_view();
    let group_w = (right - left) / names.len() as f64;
    let bar_w = (group_w - 16.0) / rows.len() as f64;
    let bars = names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let gx = left + k as f64 * group_w + 8.0;
            let bars = rows
                .iter()
                .enumerate()
                .map(|(j, r)| {
                    let v = values(r)[k];
                    let kind = r.summary.spec.mode.kind();
                    view! {
                        <rect
                            class=format!("bar {kind}")
                            x=gx + j as f64 * bar_w
                            y=y(v)
                            width=(bar_w - 3.0).max(1.0)
                            height=(bottom - y(v)).max(1.0)
                            rx="2"
                        >
                            <title>{format!("{} {name}: {}", label(r), format::latency(v))}</title>
                        </rect>
                    }
                })
                .collect_view();
            view! {
                <g>
                    {bars}
                    <text x=gx + (group_w - 16.0) / 2.0 y=bottom + 20.0 text-anchor="middle" class="bar-label">{*name}</text>
                </g>
            }
        })
        .collect_view();
    // A key per run while they fit; past that, a key per colour (mode), with how many runs
    // it stands for: the bars keep the runs' order within each percentile.
    let keys: Vec<(&'static str, String)> = if rows.len() <= LEGEND_ROWS {
        rows.iter()
            .map(|r| (r.summary.spec.mode.kind(), label(r)))
            .collect()
    } else {
        let mut kinds: Vec<(&'static str, u64)> = Vec::new();
        for r in rows {
            let kind = r.summary.spec.mode.kind();
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => kinds.push((kind, 1)),
            }
        }
        kinds
            .into_iter()
            .map(|(kind, n)| {
                (
                    kind,
                    format!("{kind}: {}, in run order", format::count(n, "run")),
                )
            })
            .collect()
    };
    let legend = keys
        .into_iter()
        .enumerate()
        .map(|(j, (kind, text))| {
            view! {
                <g class=format!("bar {kind}")>
                    <rect x=left + 12.0 y=top + j as f64 * 18.0 width="12" height="12" rx="2"></rect>
                    <text x=left + 30.0 y=top + 10.0 + j as f64 * 18.0 class="legend">{text}</text>
                </g>
            }
        })
        .collect_view();
    view! {
        <svg class="chart-svg latency" viewBox=format!("0 0 {W} {H}") role="img" aria-label="Latency percentiles per run">
            {grid}
            {bars}
            {legend}
        </svg>
    }
}
