use leptos::prelude::*;

use crate::connection::Connection;
use crate::format;
use crate::log_scale::Decades;
use crate::sweep::{self, KNEE_GAIN, Point};

use super::sweep_cost_chart::SweepCostChart;

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = W - 78.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = H - 46.0;

/// The batch sweep: ops/s (left axis, each batch's median run with its runs' min–max) and
/// per-command cost, wall ÷ commands (right axis), against the batch size, all on log scales
/// (hand-written SVG like `Charts`). Marks the knee (`sweep::knee`, the tour's definition too).
/// Beside it, what bigger batches cost (`SweepCostChart`: p99 per command and Redis's memory).
/// Shown when the finished runs form a sweep (`sweep::points`); derived, never stored.
#[component]
pub fn SweepChart(conn: Connection) -> impl IntoView {
    let points = Memo::new(move |_| {
        conn.results.with(|rows| {
            let complete: Vec<_> = rows
                .iter()
                .filter(|r| !r.partial)
                .map(|r| r.summary.clone())
                .collect();
            sweep::points(&complete)
        })
    });
    move || {
        points.get().map(|p| {
            view! {
                <section class="card sweep-card" aria-label="Batch sweep">
                    <h2>"Batch sweep: throughput and cost per command (log–log)"</h2>
                    <div class="sweep-charts">
                        {chart(&p)}
                        <SweepCostChart points=p.clone() />
                    </div>
                    {explain(&p)}
                </section>
            }
        })
    }
}

/// A power of ten of ops/s: `"1k"`, `"100k"`, `"1M"`.
fn ops_label(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.0}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// The chart's axes: batch on a log₂ scale, ops/s and cost per command on decades.
#[derive(Clone, Copy)]
struct Scales {
    max_log2: f64,
    ops: Decades,
    cost: Decades,
}

impl Scales {
    fn of(points: &[Point]) -> Scales {
        Scales {
            max_log2: (points[points.len() - 1].batch as f64).log2().max(1.0),
            ops: Decades::spanning(points.iter().flat_map(|p| [p.ops_min, p.ops_max])),
            cost: Decades::spanning(points.iter().map(|p| p.cost_us)),
        }
    }

    fn x(self, batch: u32) -> f64 {
        LEFT + (batch as f64).log2() / self.max_log2 * (RIGHT - LEFT)
    }

    fn y_ops(self, v: f64) -> f64 {
        self.ops.y(v, TOP, BOTTOM)
    }

    fn y_cost(self, v: f64) -> f64 {
        self.cost.y(v, TOP, BOTTOM)
    }
}

fn chart(points: &[Point]) -> impl IntoView + use<> {
    let n = points.len();
    let s = Scales::of(points);
    let line = |f: &dyn Fn(&Point) -> (f64, f64)| {
        points
            .iter()
            .map(|p| {
                let (a, b) = f(p);
                format!("{a:.1},{b:.1}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let ops_line = line(&|p| (s.x(p.batch), s.y_ops(p.ops_per_sec)));
    let cost_line = line(&|p| (s.x(p.batch), s.y_cost(p.cost_us)));
    let dots = points.iter().map(|p| point_marks(p, s)).collect_view();
    let knee_batch = sweep::knee(points).map(|k| points[k].batch.to_string());

    view! {
        <svg
            id="sweep-chart"
            class="chart-svg sweep"
            viewBox=format!("0 0 {W} {H}")
            role="img"
            aria-label="Throughput and cost per command against batch size, log–log"
            data-points=n.to_string()
            data-knee=knee_batch
        >
            {axes(points, s)}
            <polyline class="ops-line" points=ops_line></polyline>
            <polyline class="cost-line" points=cost_line></polyline>
            {dots}
            {knee_mark(points, s)}
            <text x=LEFT - 8.0 y=TOP - 8.0 text-anchor="end" class="axis-title ops">"ops/s"</text>
            <text x=W - 4.0 y=TOP - 8.0 text-anchor="end" class="axis-title cost">"cost / cmd"</text>
            <text x=(LEFT + RIGHT) / 2.0 y=H - 8.0 text-anchor="middle" class="axis-title">"batch size (commands per round trip)"</text>
        </svg>
    }
}

/// The ops/s grid, a line per batch, and the cost axis's ticks.
fn axes(points: &[Point], s: Scales) -> impl IntoView + use<> {
    let grid = s.ops
        .powers()
        .map(|v| {
            view! {
                <g class="grid">
                    <line x1=LEFT x2=RIGHT y1=s.y_ops(v) y2=s.y_ops(v)></line>
                    <text x=LEFT - 8.0 y=s.y_ops(v) + 4.0 text-anchor="end" class="axis-ops">{ops_label(v)}</text>
                </g>
            }
        })
        .collect_view();
    let cost_ticks = s.cost
        .powers()
        .map(|v| {
            view! {
                <text x=RIGHT + 8.0 y=s.y_cost(v) + 4.0 class="axis-cost">{format::latency(v)}</text>
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
    (grid, x_ticks, cost_ticks)
}

/// A batch's runs: their ops/s spread, the median's ops/s and its cost per command.
fn point_marks(p: &Point, s: Scales) -> impl IntoView + use<> {
    view! {
        <line
            class="spread"
            x1=s.x(p.batch)
            x2=s.x(p.batch)
            y1=s.y_ops(p.ops_min)
            y2=s.y_ops(p.ops_max)
            data-batch=p.batch.to_string()
            data-min=p.ops_min.to_string()
            data-max=p.ops_max.to_string()
        ></line>
        <circle
            class="sweep-point"
            cx=s.x(p.batch)
            cy=s.y_ops(p.ops_per_sec)
            r="5"
            data-batch=p.batch.to_string()
            data-ops=p.ops_per_sec.to_string()
            data-runs=p.runs.to_string()
        >
            <title>{format!(
                "batch {}: {} ops/s (median of {} runs; {}–{})",
                p.batch,
                format::rate(p.ops_per_sec),
                p.runs,
                format::rate(p.ops_min),
                format::rate(p.ops_max),
            )}</title>
        </circle>
        <rect
            class="cost-point"
            x=s.x(p.batch) - 4.0
            y=s.y_cost(p.cost_us) - 4.0
            width="8"
            height="8"
            data-batch=p.batch.to_string()
            data-cost-us=p.cost_us.to_string()
        >
            <title>{format!("batch {}: {} per command (median run)", p.batch, format::latency(p.cost_us))}</title>
        </rect>
    }
}

/// The knee's line and label, when the sweep has one.
fn knee_mark(points: &[Point], s: Scales) -> impl IntoView + use<> {
    sweep::knee(points).map(|k| {
        let p = points[k];
        let kx = s.x(p.batch);
        let anchor = if kx > (LEFT + RIGHT) / 2.0 { "end" } else { "start" };
        let tx = if anchor == "end" { kx - 6.0 } else { kx + 6.0 };
        view! {
            <g class="knee" data-batch=p.batch.to_string()>
                <line x1=kx x2=kx y1=TOP - 6.0 y2=BOTTOM></line>
                <text x=tx y=TOP + 8.0 text-anchor=anchor>{format!("knee · batch {}", format::batch_label(p.batch))}</text>
            </g>
        }
    })
}

/// What the knee means here, with the round trips' share the numbers give (never a claim
/// they do not make).
fn knee_text(points: &[Point]) -> String {
    let Some(k) = sweep::knee(points) else {
        return format!(
            "The last step still multiplied the median throughput by at least {KNEE_GAIN}× per doubling of the batch: round trips still dominate; sweep to a larger batch to find the knee."
        );
    };
    let share = sweep::round_trip_share(points, k);
    let verdict = if share >= 0.5 {
        "round trips are still the larger part, but each doubling now buys less than"
    } else {
        "the work per command is now the larger part, and each doubling buys less than"
    };
    format!(
        "Knee at batch {}: the last step that multiplied the median throughput by at least {KNEE_GAIN}× per doubling of the batch led there; none did beyond it. There round trips take about {:.0} % of the time (derived: batch {}'s time per round trip × batch {}'s round trips ÷ its wall time) and {} a command: {verdict} {KNEE_GAIN}×.",
        points[k].batch,
        share * 100.0,
        points[0].batch,
        points[k].batch,
        format::latency(points[k].cost_us),
    )
}

fn explain(points: &[Point]) -> impl IntoView + use<> {
    let k = sweep::knee(points);
    let share = k.map(|k| sweep::round_trip_share(points, k).to_string());
    view! {
        <p class="note sweep-note" data-knee-rt-share=share>
            <span class="key ops">"● ops/s: median run, bar min–max"</span>
            " "
            <span class="key cost">"■ cost per command (wall ÷ commands)"</span>
            {format!(" · each batch run {} times · ", points[0].runs)}
            {knee_text(points)}
        </p>
    }
}
