use leptos::prelude::*;

use crate::playback::Playback;
use crate::timeaxis::{self, SPEED_MAX, ZOOM_MAX};

/// Slider resolution of the scrub bar.
const SCRUB_STEPS: f64 = 10_000.0;

/// Play/pause, step, replay, the slow-motion slider, the scrub bar and the zoom: RaftScope's
/// controls for the measured runs. Each has a keyboard shortcut (see `keyboard`).
#[component]
pub fn PlaybackControls(playback: Playback) -> impl IntoView {
    let p = playback;
    let has_data = Memo::new(move |_| p.extent_us.get() > 0.0);
    view! {
        <div class="playback" role="toolbar" aria-label="Playback">
            {transport(p, has_data)}
            {speed_slider(p)}
            {scrub_slider(p, has_data)}
            {zoom_slider(p)}
        </div>
    }
}

/// Step back, play/pause, step forward, replay.
fn transport(p: Playback, has_data: Memo<bool>) -> impl IntoView {
    let playing = move || p.playing.get();
    view! {
        <div class="transport">
            <button
                id="step-back"
                title="Step back one event (←)"
                aria-label="Step back"
                disabled=move || !has_data.get()
                on:click=crate::erased::handler(move |_| p.step_back())
            >
                "◀ Step"
            </button>
            <button
                id="play"
                class="primary"
                aria-pressed=move || playing().to_string()
                title="Play / pause (Space)"
                disabled=move || !has_data.get()
                on:click=crate::erased::handler(move |_| p.toggle_play())
            >
                {move || if playing() { "❚❚ Pause" } else { "▶ Play" }}
            </button>
            <button
                id="step-forward"
                title="Step forward one event (→)"
                aria-label="Step forward"
                disabled=move || !has_data.get()
                on:click=crate::erased::handler(move |_| p.step_forward())
            >
                "Step ▶"
            </button>
            <button
                id="replay"
                title="Replay from the start (R)"
                disabled=move || !has_data.get()
                on:click=crate::erased::handler(move |_| p.replay())
            >
                "↺ Replay"
            </button>
        </div>
    }
}

/// The slow-motion slider (right is slower).
fn speed_slider(p: Playback) -> impl IntoView {
    view! {
        <label class="slider speed">
            <span>
                "Slow motion "
                <b id="speed-label">{move || timeaxis::speed_label(p.slowdown.get())}</b>
            </span>
            <input
                id="speed"
                type="range"
                min="0"
                max=SPEED_MAX.to_string()
                step="1"
                title="Slower ← → faster is reversed: right is slower (− / +)"
                prop:value=move || p.speed_step.get().to_string()
                on:input=crate::erased::handler(move |ev| {
                    if let Ok(v) = event_target_value(&ev).parse() {
                        p.speed_step.set(v);
                    }
                })
            />
        </label>
    }
}

/// The scrub bar: the playback position in the run.
fn scrub_slider(p: Playback, has_data: Memo<bool>) -> impl IntoView {
    let scrub_value = move || {
        let end = p.extent_us.get();
        if end > 0.0 {
            (p.position_us.get() / end * SCRUB_STEPS)
                .round()
                .to_string()
        } else {
            "0".to_string()
        }
    };
    // A run under way: live is the engine's time and count (the picture is drawn to its newest
    // reply streamed, a tick behind).
    let under_way = move || {
        p.traces.with(|traces| {
            traces.iter().find_map(|t| {
                let (done, elapsed_us) = t.running?;
                (done > 0).then_some((done, t.count, elapsed_us))
            })
        })
    };
    let position = move || match under_way().filter(|_| p.live.get()) {
        Some((done, count, elapsed_us)) => format!(
            "{} live: {} of {} done, drawn to {}",
            timeaxis::duration(elapsed_us as f64),
            crate::format::group(done),
            crate::format::group(count),
            timeaxis::duration(p.live_edge_us.get())
        ),
        None if !has_data.get() => "nothing run yet".to_string(),
        None => format!(
            "{} / {}",
            timeaxis::duration(p.position_us.get()),
            timeaxis::duration(p.extent_us.get())
        ),
    };
    view! {
        <label class="slider scrub">
            <span>
                "Run time " <b id="position">{position}</b>
                {move || (p.live.get() && under_way().is_none() && has_data.get()).then(|| view! { <em class="live-tag">" live"</em> })}
            </span>
            <input
                id="scrub"
                type="range"
                min="0"
                max=SCRUB_STEPS.to_string()
                step="1"
                disabled=move || !has_data.get()
                prop:value=scrub_value
                on:input=crate::erased::handler(move |ev| {
                    // The slider's steps are whole numbers (`step="1"`).
                    if let Ok(v) = event_target_value(&ev).parse::<u32>() {
                        p.seek(f64::from(v) / SCRUB_STEPS * p.extent_us.get_untracked());
                    }
                })
            />
        </label>
    }
}

/// The window's width, and Fit run / Auto zoom.
fn zoom_slider(p: Playback) -> impl IntoView {
    let zoom_value = move || {
        p.zoom_step
            .get()
            .unwrap_or_else(|| timeaxis::zoom_step(p.window_us.get(), p.extent_us.get()))
            .to_string()
    };
    view! {
        <label class="slider zoom">
            <span>"Window " <b>{move || timeaxis::duration(p.window_us.get())}</b></span>
            <input
                id="zoom"
                type="range"
                min="0"
                max=ZOOM_MAX.to_string()
                step="1"
                prop:value=zoom_value
                on:input=crate::erased::handler(move |ev| {
                    if let Ok(v) = event_target_value(&ev).parse() {
                        p.zoom_step.set(Some(v));
                    }
                })
            />
        </label>
        <button
            id="zoom-fit"
            class="small"
            title="Whole run ↔ the pipelined run's span (Z)"
            aria-pressed=move || (p.zoom_step.get() == Some(ZOOM_MAX)).to_string()
            on:click=crate::erased::handler(move |_| p.toggle_fit())
        >
            {move || if p.zoom_step.get() == Some(ZOOM_MAX) { "Auto zoom" } else { "Fit run" }}
        </button>
    }
}
