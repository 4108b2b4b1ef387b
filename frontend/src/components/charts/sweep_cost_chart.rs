use leptos::prelude::*;

use crate::format;
use crate::log_scale::Decades;
use crate::sweep::Point;

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = W - 78.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = H - 46.0;

/// What bigger batches cost, beside the sweep's throughput: each batch's median run's p99
/// latency per command (left axis; measured by the engine, from its batch's write to its reply)
/// and Redis's memory for that run's connection (right axis; measured: the peak `tot-mem` of
/// `CLIENT LIST` sampled while the run was in flight), against the batch size, on log scales.
/// Runs without a memory sample (older recordings) draw p99 alone and say so.
#[component]
pub fn SweepCostChart(points: Vec<Point>) -> impl IntoView {
    let s = Scales::of(&points);
    let line = |f: &dyn Fn(&Point) -> Option<(f64, f64)>| {
        points
            .iter()
            .filter_map(f)
            .map(|(a, b)| format!("{a:.1},{b:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let p99_line = line(&|p| Some((s.x(p.batch), s.y_p99(p.p99_us))));
    let mem_line = line(&|p| Some((s.x(p.batch), s.y_mem(p.memory?.client_tot_mem_peak as f64))));
    let marks = points.iter().map(|p| marks(p, s)).collect_view();
    let sampled = points.iter().filter(|p| p.memory.is_some()).count();
    view! {
        <figure class="sweep-cost">
            <svg
                id="sweep-cost-chart"
                class="chart-svg sweep"
                viewBox=format!("0 0 {W} {H}")
                role="img"
                aria-label="p99 latency per command and Redis's memory for the connection against batch size, log–log"
                data-points=points.len().to_string()
                data-memory-points=sampled.to_string()
            >
                {axes(&points, s)}
                <polyline class="p99-line" points=p99_line></polyline>
                <polyline class="mem-line" points=mem_line></polyline>
                {marks}
                <text x=LEFT - 8.0 y=TOP - 8.0 text-anchor="end" class="axis-title p99">"p99 / cmd"</text>
                <text x=W - 4.0 y=TOP - 8.0 text-anchor="end" class="axis-title mem">"Redis memory"</text>
                <text x=(LEFT + RIGHT) / 2.0 y=H - 8.0 text-anchor="middle" class="axis-title">"batch size (commands per round trip)"</text>
            </svg>
            <figcaption class="note sweep-note">{caption(&points)}</figcaption>
        </figure>
    }
}

/// How each series was measured, with the sampling the memory figures rest on.
fn caption(points: &[Point]) -> impl IntoView + use<> {
    let samples: Vec<u32> = points
        .iter()
        .filter_map(|p| Some(p.memory?.samples))
        .collect();
    let interval_ms = points
        .iter()
        .find_map(|p| p.memory)
        .map(|m| m.interval_us as f64 / 1000.0);
    let memory = match (samples.iter().min(), samples.iter().max(), interval_ms) {
        (Some(lo), Some(hi), Some(ms)) => format!(
            ", measured: CLIENT LIST tot-mem (query buffer, arguments and replies waiting to be sent), peak of {lo}–{hi} samples every {ms} ms while the run was in flight (median run)."
        ),
        _ => ": not sampled for these runs.".to_string(),
    };
    view! {
        <span class="key p99">"◆ p99 per command"</span>
        ", measured by pipescope: from its batch's write to its reply (median run). "
        <span class="key mem">"■ Redis memory for this connection"</span>
        {memory}
    }
}

/// The chart's axes: batch on a log₂ scale, p99 and memory on decades.
#[derive(Clone, Copy)]
struct Scales {
    max_log2: f64,
    p99: Decades,
    mem: Decades,
}

impl Scales {
    fn of(points: &[Point]) -> Scales {
        Scales {
            max_log2: (points[points.len() - 1].batch as f64).log2().max(1.0),
            p99: Decades::spanning(points.iter().map(|p| p.p99_us)),
            mem: Decades::spanning(
                points
                    .iter()
                    .filter_map(|p| Some(p.memory?.client_tot_mem_peak as f64)),
            ),
        }
    }

    fn x(self, batch: u32) -> f64 {
        LEFT + (batch as f64).log2() / self.max_log2 * (RIGHT - LEFT)
    }

    fn y_p99(self, us: f64) -> f64 {
        self.p99.y(us, TOP, BOTTOM)
    }

    fn y_mem(self, bytes: f64) -> f64 {
        self.mem.y(bytes, TOP, BOTTOM)
    }
}

/// The p99 grid, the memory axis's ticks, and a line per batch.
fn axes(points: &[Point], s: Scales) -> impl IntoView + use<> {
    let grid = s
        .p99
        .powers()
        .map(|v| {
            view! {
                <g class="grid">
                    <line x1=LEFT x2=RIGHT y1=s.y_p99(v) y2=s.y_p99(v)></line>
                    <text x=LEFT - 8.0 y=s.y_p99(v) + 4.0 text-anchor="end" class="axis-p99">{format::latency(v)}</text>
                </g>
            }
        })
        .collect_view();
    let has_memory = points.iter().any(|p| p.memory.is_some());
    let mem_ticks = s
        .mem
        .powers()
        .filter(move |_| has_memory)
        .map(|v| {
            view! {
                <text x=RIGHT + 8.0 y=s.y_mem(v) + 4.0 class="axis-mem">{format::bytes(v as u64)}</text>
            }
        })
        .collect_view();
    let x_ticks = points
        .iter()
        .map(|p| {
            view! {
                <g class="grid x">
                    <line x1=s.x(p.batch) x2=s.x(p.batch) y1=TOP y2=BOTTOM></line>
                    <text x=s.x(p.batch) y=BOTTOM + 18.0 text-anchor="middle">{format::batch_label(p.batch)}</text>
                </g>
            }
        })
        .collect_view();
    (grid, x_ticks, mem_ticks)
}

/// A batch's median run: its p99 (a diamond) and its memory peak (a square).
fn marks(p: &Point, s: Scales) -> impl IntoView + use<> {
    let (x, y) = (s.x(p.batch), s.y_p99(p.p99_us));
    let diamond = format!(
        "{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}",
        y - 6.0,
        x + 6.0,
        y + 6.0,
        x - 6.0
    );
    let memory = p.memory.map(|m| {
        let y = s.y_mem(m.client_tot_mem_peak as f64);
        view! {
            <rect
                class="mem-point"
                x=x - 4.5
                y=y - 4.5
                width="9"
                height="9"
                data-batch=p.batch.to_string()
                data-mem=m.client_tot_mem_peak.to_string()
                data-omem=m.client_omem_peak.to_string()
                data-samples=m.samples.to_string()
            >
                <title>{format!(
                    "batch {}: Redis held up to {} for this connection ({} of it replies waiting), peak of {} samples (median run)",
                    p.batch,
                    format::bytes(m.client_tot_mem_peak),
                    format::bytes(m.client_omem_peak),
                    m.samples,
                )}</title>
            </rect>
        }
    });
    view! {
        <polygon
            class="p99-point"
            points=diamond
            data-batch=p.batch.to_string()
            data-p99-us=p.p99_us.to_string()
        >
            <title>{format!("batch {}: p99 {} per command (median run)", p.batch, format::latency(p.p99_us))}</title>
        </polygon>
        {memory}
    }
}
