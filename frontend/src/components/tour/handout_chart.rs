//! The handout's chart: every run's throughput as a bar on a log scale, an SVG with its colours
//! inline (no stylesheet needed) so it can be drawn onto a canvas and exported with `toDataURL`.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue, closure::Closure};

use crate::format;
use crate::log_scale::Decades;
use crate::tour::StepResult;

pub const W: f64 = 900.0;
const LEFT: f64 = 250.0;
const RIGHT: f64 = 120.0;
const ROW: f64 = 30.0;
const FONT: &str = "system-ui, 'DejaVu Sans', Arial, sans-serif";

/// The page's colours (style.css), inline so the exported image keeps them.
fn colour(mode: shared::Mode) -> &'static str {
    match mode {
        shared::Mode::Sequential => "#d9480f",
        shared::Mode::Pipelined {
            flush: shared::Flush::EachCommand,
            ..
        } => "#b45309",
        shared::Mode::Multiplexed { .. } => "#1d4ed8",
        _ => "#0b7a75",
    }
}

/// A label that fits beside a bar: `pipelined ×1000, flush each`.
fn short(mode: shared::Mode) -> String {
    match mode {
        shared::Mode::Sequential => "sequential".to_string(),
        shared::Mode::Pipelined { batch, flush } => match flush {
            shared::Flush::Batch => format!("pipelined ×{batch}"),
            shared::Flush::EachCommand => format!("pipelined ×{batch}, flush each"),
            shared::Flush::Buffered { commands } => {
                format!("pipelined ×{batch}, flush /{commands}")
            }
        },
        shared::Mode::Multiplexed { in_flight: 1 } => "multiplexed, 1 caller".to_string(),
        shared::Mode::Multiplexed { in_flight } => format!("multiplexed, {in_flight} callers"),
        m => m.label(),
    }
}

fn rows(results: &[StepResult]) -> usize {
    results.iter().map(|r| r.runs.len()).sum()
}

pub fn height(results: &[StepResult]) -> f64 {
    60.0 + rows(results).max(1) as f64 * ROW
}

pub fn chart_body(results: &[StepResult]) -> impl IntoView + use<> {
    let max = results
        .iter()
        .flat_map(|r| r.runs.iter().map(|(_, s)| s.ops_per_sec))
        .fold(1.0, f64::max);
    // Log scale: throughputs span five orders of magnitude between steps.
    let decades = Decades::between(1.0, max);
    let x = move |ops: f64| LEFT + decades.fraction(ops) * (W - LEFT - RIGHT);
    let bars = results
        .iter()
        .flat_map(|r| r.runs.iter().map(move |(role, s)| (r.step, role.clone(), s.clone())))
        .enumerate()
        .map(|(k, (step, role, s))| {
            let y = 40.0 + k as f64 * ROW;
            let w = (x(s.ops_per_sec) - LEFT).max(2.0);
            view! {
                <g data-step=(step + 1).to_string() data-role=role>
                    <text x=LEFT - 10.0 y=y + 19.0 text-anchor="end" font-size="14" font-family=FONT fill="#0f1722">
                        {format!("{} · {}", step + 1, short(s.spec.mode))}
                    </text>
                    <rect x=LEFT y=y + 5.0 width=w height=ROW - 10.0 rx="3" fill=colour(s.spec.mode)></rect>
                    <text x=LEFT + w + 8.0 y=y + 19.0 font-size="14" font-family=FONT fill="#0f1722">
                        {format!("{} ops/s", format::rate(s.ops_per_sec))}
                    </text>
                </g>
            }
        })
        .collect_view();
    let grid = decades
        .powers()
        .map(|v| {
            let gx = x(v);
            view! {
                <line x1=gx x2=gx y1="32" y2=height(results) - 16.0 stroke="#e6e9ee"></line>
                <text x=gx y="28" text-anchor="middle" font-size="11" font-family=FONT fill="#556070">
                    {format::rate(v)}
                </text>
            }
        })
        .collect_view();
    view! {
        <rect x="0" y="0" width=W height=height(results) fill="#ffffff"></rect>
        <text x="12" y="18" font-size="15" font-weight="bold" font-family=FONT fill="#0f1722">
            {format!("pipescope tour: throughput of {} runs (ops/s, log scale)", rows(results))}
        </text>
        {grid}
        {bars}
    }
}

/// Draws the SVG onto a canvas (twice its size, for projectors and print) and puts the PNG's
/// data URL in `out`.
pub fn to_png(svg: &web_sys::SvgElement, out: RwSignal<Option<String>>) {
    // Small enough to keep in JS: serialise, load as an image, draw, export.
    const BODY: &str = r#"
        const xml = new XMLSerializer().serializeToString(svg);
        const img = new Image();
        img.onload = () => {
            const w = svg.width.baseVal.value, h = svg.height.baseVal.value;
            const c = document.createElement('canvas');
            c.width = 2 * w; c.height = 2 * h;
            const ctx = c.getContext('2d');
            ctx.fillStyle = '#ffffff';
            ctx.fillRect(0, 0, c.width, c.height);
            ctx.drawImage(img, 0, 0, c.width, c.height);
            done(c.toDataURL('image/png'));
        };
        img.onerror = () => done('');
        img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(xml);
    "#;
    let done = Closure::once_into_js(move |url: JsValue| {
        let url = url.as_string().filter(|u| u.starts_with("data:image/png"));
        // The page may have moved on: the signal may be gone.
        let _ = out.try_set(url);
    });
    let f = js_sys::Function::new_with_args("svg, done", BODY);
    let svg: &JsValue = svg.unchecked_ref();
    if f.call2(&JsValue::NULL, svg, &done).is_err() {
        out.set(None);
    }
}
