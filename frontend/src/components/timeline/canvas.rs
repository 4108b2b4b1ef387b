use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue, closure::Closure};
use web_sys::CanvasRenderingContext2d;

use crate::look::{Look, Theme};
use crate::playback::Playback;
use crate::timeaxis;
use crate::timeline::{self, Frame};

/// The animation loop's callback, which schedules itself again from inside.
type FrameLoop = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

/// Draw times kept for `frame.avg_ms`.
const FRAME_WINDOW: usize = 120;

#[derive(Default)]
struct FrameStats {
    count: u64,
    recent: VecDeque<f64>,
    max_ms: f64,
}

impl FrameStats {
    fn record(&mut self, took_ms: f64) {
        self.count += 1;
        self.recent.push_back(took_ms);
        if self.recent.len() > FRAME_WINDOW {
            self.recent.pop_front();
        }
        self.max_ms = self.max_ms.max(took_ms);
    }
}

/// What a frame depends on: redraw only when it changes (or while playing).
#[derive(Clone, Copy, PartialEq)]
struct FrameKey {
    version: u64,
    position_us: f64,
    start_us: f64,
    window_us: f64,
    size: (u32, u32),
    dark: bool,
    presenter: bool,
    // Not drawn, but published on `window.__pipescope` with the frame.
    playing: bool,
    slowdown: f64,
}

/// The sequence diagram on one canvas, redrawn on an animation frame when something changed.
/// It also advances playback (the animation loop lives here) and publishes what it drew on
/// `window.__pipescope` for the browser tests.
#[component]
pub fn Timeline(playback: Playback, look: Look) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    // Bumped whenever the data changes, so the loop knows to redraw.
    let version = StoredValue::new(0u64);
    crate::erased::effect(move || {
        playback.traces.track();
        version.update_value(|v| *v += 1);
    });
    let start_us = StoredValue::new(0.0f64);
    let stats = StoredValue::new(FrameStats::default());

    crate::erased::effect(move || {
        let Some(el) = canvas.get() else { return };
        let Ok(Some(ctx)) = el.get_context("2d") else {
            return;
        };
        let Ok(ctx) = ctx.dyn_into::<CanvasRenderingContext2d>() else {
            return;
        };
        let el: web_sys::HtmlCanvasElement = el;
        let last_key = Rc::new(RefCell::new(None::<FrameKey>));
        let last_time = Rc::new(RefCell::new(None::<f64>));
        let handle: FrameLoop = Rc::new(RefCell::new(None));
        let next = handle.clone();
        *handle.borrow_mut() = Some(Closure::new(move |now: f64| {
            // The component is gone: stop (the closure is left to be dropped with the page).
            if version.try_get_value().is_none() {
                return;
            }
            let elapsed = last_time.borrow().map_or(0.0, |t| (now - t).min(100.0));
            *last_time.borrow_mut() = Some(now);
            playback.tick(elapsed);

            let dpr = window().device_pixel_ratio().max(1.0);
            let (css_w, css_h) = (
                el.client_width().max(1) as f64,
                el.client_height().max(1) as f64,
            );
            let size = ((css_w * dpr).round() as u32, (css_h * dpr).round() as u32);
            let extent = playback.extent_us.get_untracked();
            let window_us = playback.window_us.get_untracked();
            let position_us = playback.position_us.get_untracked();
            let start = timeaxis::follow(start_us.get_value(), window_us, position_us, extent);
            start_us.set_value(start);
            let key = FrameKey {
                version: version.get_value(),
                position_us,
                start_us: start,
                window_us,
                size,
                dark: look.theme.get_untracked() == Theme::Dark,
                presenter: look.presenter.get_untracked(),
                playing: playback.playing.get_untracked(),
                slowdown: playback.slowdown.get_untracked(),
            };
            if *last_key.borrow() != Some(key) {
                *last_key.borrow_mut() = Some(key);
                if (el.width(), el.height()) != size {
                    el.set_width(size.0);
                    el.set_height(size.1);
                }
                let t0 = now_ms();
                let drawn = draw_frame(&ctx, playback, &key, (css_w, css_h), dpr);
                let took = now_ms() - t0;
                stats.update_value(|s| s.record(took));
                publish(playback, &drawn, stats);
            }
            if let Some(f) = next.borrow().as_ref() {
                let _ = window().request_animation_frame(f.as_ref().unchecked_ref());
            }
        }));
        if let Some(f) = handle.borrow().as_ref() {
            let _ = window().request_animation_frame(f.as_ref().unchecked_ref());
        }
    });

    view! {
        <canvas
            id="timeline"
            node_ref=canvas
            // Its height grows with the runs (the stylesheet's rule), so a sweep's many
            // panels each keep room for their title and lanes.
            style=move || format!("--runs: {}", playback.traces.with(Vec::len))
            role="img"
            aria-label="Sequence diagram: each request an arrow from the client to Redis, each reply an arrow back, at measured times"
        ></canvas>
    }
}

/// Draws the traces as `key` says (CSS pixels scaled by `dpr`); returns the arrows drawn per
/// trace and the labels painted.
fn draw_frame(
    ctx: &CanvasRenderingContext2d,
    playback: Playback,
    key: &FrameKey,
    (width, height): (f64, f64),
    dpr: f64,
) -> timeline::Drawn {
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    playback.traces.with_untracked(|traces| {
        playback.trips.with_untracked(|trips| {
            timeline::draw(
                ctx,
                &Frame {
                    width,
                    height,
                    scale: presenter_scale(key.presenter, height),
                    palette: if key.dark {
                        &timeline::DARK
                    } else {
                        &timeline::LIGHT
                    },
                    traces,
                    trips,
                    start_us: key.start_us,
                    window_us: key.window_us,
                    position_us: key.position_us,
                },
            )
        })
    })
}

/// Presenter mode's larger type, as large as the canvas's height leaves room for: a short
/// canvas (a 720-line screen) keeps its lanes apart rather than its type large.
fn presenter_scale(presenter: bool, height: f64) -> f64 {
    if presenter {
        (height / 440.0).clamp(1.0, 1.35)
    } else {
        1.0
    }
}

fn now_ms() -> f64 {
    window().performance().map_or(0.0, |p| p.now())
}

fn set(obj: &js_sys::Object, key: &str, value: impl Into<JsValue>) {
    let _ = js_sys::Reflect::set(obj, &key.into(), &value.into());
}

/// `window.__pipescope = { runs: [{ run, mode, spans, sampled, unstamped, arrows_drawn,
/// client_lanes, redis_lanes, master_spans }], playback: {…}, frame: {…}, labels: [{ text, x,
/// y, w, h }] }` (`sampled`: sampled requests drawn beyond the first `spans`; `unstamped`:
/// drawn requests the wire tap did not stamp; `client_lanes`: the client lanes drawn, one per
/// connection; `redis_lanes`: one per master on a cluster; `master_spans`: requests drawn to
/// each master's lane; `redirect_marks`: requests drawn with a MOVED/ASK mark; `labels`: every text painted, its box in CSS pixels of the canvas).
fn publish(playback: Playback, drawn: &timeline::Drawn, stats: StoredValue<FrameStats>) {
    let root = js_sys::Object::new();
    let runs = js_sys::Array::new();
    playback.traces.with_untracked(|traces| {
        for (k, t) in traces.iter().enumerate() {
            let r = js_sys::Object::new();
            set(&r, "run", t.run as f64);
            set(&r, "mode", t.kind());
            set(&r, "spans", t.spans.len() as f64);
            set(&r, "sampled", t.sampled_beyond().len() as f64);
            set(&r, "unstamped", t.unstamped() as f64);
            set(&r, "count", t.count as f64);
            let d = drawn.traces.get(k).copied().unwrap_or_default();
            set(&r, "arrows_drawn", d.arrows as f64);
            set(&r, "client_lanes", d.client_lanes as f64);
            set(&r, "redis_lanes", d.redis_lanes as f64);
            let per_master = js_sys::Array::new();
            for n in d.master_spans.iter().take(d.redis_lanes as usize) {
                per_master.push(&JsValue::from(*n as f64));
            }
            set(&r, "master_spans", per_master);
            set(&r, "redirect_marks", d.redirect_marks as f64);
            if let Some(i) = t.summary.as_ref().and_then(|s| s.interleaving.as_ref()) {
                // The other client's lane: its INCRs drawn, and those inside a batch.
                let inside = i
                    .other_first
                    .iter()
                    .filter(|o| i.batch_holding(o.value).is_some())
                    .count();
                set(&r, "other_lane", i.other_first.len() as f64);
                set(&r, "other_lane_inside", inside as f64);
            }
            if let Some(summary) = &t.summary {
                set(&r, "done", summary.done as f64);
                set(&r, "wall_us", summary.wall_us as f64);
                set(&r, "p50_us", summary.latency.p50_us);
            }
            runs.push(&r);
        }
    });
    set(&root, "runs", runs);
    let p = js_sys::Object::new();
    set(&p, "position_us", playback.position_us.get_untracked());
    set(&p, "playing", playback.playing.get_untracked());
    set(&p, "speed", playback.slowdown.get_untracked());
    set(&p, "live", playback.live.get_untracked());
    set(&p, "extent_us", playback.extent_us.get_untracked());
    set(&p, "window_us", playback.window_us.get_untracked());
    set(&root, "playback", p);
    let f = js_sys::Object::new();
    stats.with_value(|s| {
        let avg = if s.recent.is_empty() {
            0.0
        } else {
            s.recent.iter().sum::<f64>() / s.recent.len() as f64
        };
        set(&f, "count", s.count as f64);
        set(&f, "avg_ms", avg);
        set(&f, "max_ms", s.max_ms);
    });
    set(&root, "frame", f);
    let labels = js_sys::Array::new();
    for l in &drawn.labels {
        let o = js_sys::Object::new();
        set(&o, "text", l.text.as_str());
        set(&o, "x", l.x);
        set(&o, "y", l.y);
        set(&o, "w", l.w);
        set(&o, "h", l.h);
        labels.push(&o);
    }
    set(&root, "labels", labels);
    set(&window(), "__pipescope", root);
}
