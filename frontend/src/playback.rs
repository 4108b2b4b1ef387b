//! The teaching view's playback: where in the runs' measured time the picture is, how fast it
//! moves, and how much time the canvas shows. Signals, created once in `App`; the timeline's
//! animation loop advances them, the controls and the keyboard change them.

use leptos::prelude::*;

use crate::connection::Connection;
use crate::drawn_runs;
use crate::timeaxis::{self, SPEED_DEFAULT, SPEED_MAX, ZOOM_MAX};
use crate::trace::{self, Trace, Trip};

/// A plan's runs and the presenter's choice of those drawn (`drawn_runs`).
#[derive(Clone, Copy)]
pub struct DrawnRuns {
    pub all: Memo<Vec<Trace>>,
    /// Runs chosen to be drawn; `None`, or none of them still there, draws the default.
    pub chosen: RwSignal<Option<Vec<u64>>>,
}

#[derive(Clone, Copy)]
pub struct Playback {
    /// Run time (µs from each run's start) the picture shows.
    pub position_us: RwSignal<f64>,
    pub playing: RwSignal<bool>,
    /// The slow-motion slider's position (`timeaxis::slowdown`).
    pub speed_step: RwSignal<u32>,
    /// The zoom slider's position, or `None` for the automatic window.
    pub zoom_step: RwSignal<Option<u32>>,
    /// The picture tracks the newest data (a run is coming in) instead of a playback position.
    pub live: RwSignal<bool>,

    /// The runs drawn (of a long plan, those `runs` chooses).
    pub traces: Memo<Vec<Trace>>,
    /// The teaching view's: every run of the plan and which are drawn (`None` for the observe
    /// view, which draws the connections chosen in its table).
    pub runs: Option<DrawnRuns>,
    /// Per trace, its round trips as the mode paid them (`None` while the mode is unknown).
    pub trips: Memo<Vec<Option<Vec<Trip>>>>,
    /// The last reply of any drawn run: where playback ends.
    pub extent_us: Memo<f64>,
    /// Where live mode puts the playhead: the newest reply of the run under way (or of any).
    pub live_edge_us: Memo<f64>,
    pub events: Memo<Vec<f64>>,
    /// The visible window's width (µs).
    pub window_us: Memo<f64>,
    pub slowdown: Memo<f64>,
}

impl Playback {
    /// The teaching view's: the runs of the page's session, a long plan's as chosen.
    pub fn new(conn: Connection) -> Self {
        let all = Memo::new(move |_| conn.session.with(|s| s.traces()));
        let chosen = RwSignal::new(None::<Vec<u64>>);
        let traces = Memo::new(move |_| {
            all.with(|all| {
                let drawn = chosen.with(|c| drawn_runs::drawn(all, c.as_deref()));
                all.iter()
                    .filter(|t| drawn.contains(&t.run))
                    .cloned()
                    .collect()
            })
        });
        let first_run = Memo::new(move |_| conn.run_ids.with(|ids| ids.first().copied()));
        Playback {
            runs: Some(DrawnRuns { all, chosen }),
            ..Self::of(traces, first_run, Signal::derive(move || conn.busy.get()))
        }
    }

    /// Playback of any `traces` (the observe view's connections too): a new `first` switches
    /// to live, following the data as it comes; once `busy` is false it settles.
    pub fn of(traces: Memo<Vec<Trace>>, first: Memo<Option<u64>>, busy: Signal<bool>) -> Self {
        let trips = Memo::new(move |_| traces.with(|t| t.iter().map(trace::round_trips).collect()));
        let extent_us =
            Memo::new(move |_| traces.with(|t| t.iter().map(Trace::extent_us).fold(0.0, f64::max)));
        let events = Memo::new(move |_| {
            traces.with(|t| {
                trace::events(
                    t.iter()
                        .flat_map(|t| [t.spans.as_slice(), t.sampled_beyond()]),
                )
            })
        });
        let live_edge_us = Memo::new(move |_| {
            traces.with(|t| {
                t.iter()
                    .find(|t| t.running.is_some())
                    .map(Trace::extent_us)
                    .unwrap_or_else(|| extent_us.get())
            })
        });
        let zoom_step = RwSignal::new(None::<u32>);
        let live = RwSignal::new(true);
        let window_us = Memo::new(move |_| {
            let extent = extent_us.get();
            match zoom_step.get() {
                Some(step) => timeaxis::zoom_window(step, extent),
                None => traces.with(|t| {
                    let running = t
                        .iter()
                        .find(|t| t.running.is_some())
                        .filter(|_| live.get());
                    running
                        .and_then(edge_window)
                        .unwrap_or_else(|| auto_window(t, extent))
                        .min(extent.max(timeaxis::MIN_WINDOW_US))
                }),
            }
        });
        let speed_step = RwSignal::new(SPEED_DEFAULT);
        let position_us = RwSignal::new(0.0);
        let playing = RwSignal::new(false);

        // A plan starting (new run ids) switches to live: show its data as it arrives.
        crate::erased::effect_with_previous(move |prev: Option<Option<u64>>| {
            let now = first.get();
            if prev.is_some_and(|p| p != now) && now.is_some() {
                playing.set(false);
                live.set(true);
            }
            now
        });
        // The plan is over (or a page opened after it): stop following the data and settle
        // where the lesson is, near the end of the automatic window: the pipelined run done,
        // the sequential one still ping-ponging. Play goes on from there; Replay starts over.
        crate::erased::effect(move || {
            let (busy, end, window) = (busy.get(), extent_us.get(), window_us.get());
            if live.get() && !busy && end > 0.0 {
                live.set(false);
                position_us.set((0.85 * window).min(end));
            }
        });
        // While live, the playhead sits at the newest reply of the run under way.
        crate::erased::effect(move || {
            let end = live_edge_us.get();
            if live.get() {
                position_us.set(end);
            }
        });

        Playback {
            position_us,
            playing,
            speed_step,
            zoom_step,
            live,
            traces,
            trips,
            extent_us,
            live_edge_us,
            runs: None,
            events,
            window_us,
            slowdown: Memo::new(move |_| timeaxis::slowdown(speed_step.get())),
        }
    }

    /// Leaves live mode at `position_us`, paused.
    pub fn seek(&self, position_us: f64) {
        self.live.set(false);
        self.playing.set(false);
        let end = self.extent_us.get_untracked();
        self.position_us.set(position_us.clamp(0.0, end.max(0.0)));
    }

    pub fn toggle_play(&self) {
        if self.playing.get_untracked() {
            self.playing.set(false);
            return;
        }
        self.live.set(false);
        // Playing from the end starts over: that is what a room expects.
        if self.position_us.get_untracked() >= self.extent_us.get_untracked() {
            self.position_us.set(0.0);
        }
        self.playing.set(true);
    }

    pub fn replay(&self) {
        self.live.set(false);
        self.position_us.set(0.0);
        self.playing.set(true);
    }

    pub fn step_forward(&self) {
        let next = self
            .events
            .with_untracked(|e| trace::step_forward(e, self.position_us.get_untracked()));
        self.seek(next);
    }

    pub fn step_back(&self) {
        let prev = self
            .events
            .with_untracked(|e| trace::step_back(e, self.position_us.get_untracked()));
        self.seek(prev);
    }

    pub fn faster(&self) {
        self.speed_step
            .update(|s| *s = s.saturating_sub(5).min(SPEED_MAX));
    }

    pub fn slower(&self) {
        self.speed_step.update(|s| *s = (*s + 5).min(SPEED_MAX));
    }

    /// Toggles between the whole run and the automatic window.
    pub fn toggle_fit(&self) {
        self.zoom_step.update(|z| {
            *z = match z {
                Some(ZOOM_MAX) => None,
                _ => Some(ZOOM_MAX),
            }
        });
    }

    /// Called by the animation loop with the wall time since the last frame.
    pub fn tick(&self, elapsed_ms: f64) {
        if !self.playing.get_untracked() {
            return;
        }
        let end = self.extent_us.get_untracked();
        let next = timeaxis::advance(
            self.position_us.get_untracked(),
            elapsed_ms,
            self.slowdown.get_untracked(),
            end,
        );
        self.position_us.set(next);
        if next >= end {
            self.playing.set(false);
        }
    }
}

/// Round trips the window shows at a live run's edge: enough to see the rhythm, few enough to
/// tell each one apart.
const EDGE_TRIPS: f64 = 40.0;
/// Requests drawn in that window at least, where only a sample of them is.
const EDGE_DRAWN: f64 = 12.0;

/// The window that follows a run under way at its edge: `EDGE_TRIPS` of its latest round trips
/// (the median time its newest drawn requests took), widened where its newest part is sampled
/// so some `EDGE_DRAWN` drawn requests show. `None` before it has any.
fn edge_window(t: &Trace) -> Option<f64> {
    const NEWEST: usize = 33;
    let newest: Vec<&shared::Span> = t
        .spans
        .iter()
        .chain(t.sampled_beyond())
        .rev()
        .take(NEWEST)
        .collect();
    if newest.is_empty() {
        return None;
    }
    let median = |mut v: Vec<f64>| {
        v.sort_unstable_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let trip = median(newest.iter().map(|s| s.replied_us - s.issued_us).collect());
    let gaps: Vec<f64> = newest
        .windows(2)
        .map(|w| (w[0].issued_us - w[1].issued_us).abs())
        .collect();
    let gap = if gaps.is_empty() { 0.0 } else { median(gaps) };
    Some(
        (EDGE_TRIPS * trip)
            .max(EDGE_DRAWN * gap)
            .max(timeaxis::MIN_WINDOW_US),
    )
}

/// The window a comparison opens with: the pipelined run's whole time and a little more, so it is
/// visibly finished while the sequential run is still ping-ponging. One run alone: all of it.
fn auto_window(traces: &[Trace], extent_us: f64) -> f64 {
    let pipelined = traces
        .iter()
        .filter(|t| t.is_pipelined())
        .map(Trace::extent_us)
        .fold(0.0, f64::max);
    let has_sequential = traces.iter().any(Trace::is_sequential);
    let window = if has_sequential && pipelined > 0.0 {
        pipelined * 1.3
    } else {
        extent_us
    };
    window.clamp(
        timeaxis::MIN_WINDOW_US,
        extent_us.max(timeaxis::MIN_WINDOW_US),
    )
}
