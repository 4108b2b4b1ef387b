//! pipescope's page: Leptos (client-side rendered) in WASM.
//!
//! # Layout
//!
//! Data flows one way: websocket → `connection` (signals) → `state` (a pure reducer folds each
//! server message into what the page knows) → `playback` and the pure models → `components/`
//! (one component per file, in a folder by what the user sees) → the DOM and the timeline's
//! canvas. The only way back to the
//! server is a `ClientMsg` sent by the controls or the tour.
//!
//! - `app`: the page's root: the connection, the look and the routes (`/`, `/tour`, `/observe`).
//! - `connection`: the websocket, reconnects, and the signals it feeds (or, in a one-file
//!   page, the message the file carries, down the same path).
//! - `state`: runs, progress and results, and observe mode (an application's own connections
//!   through the observing proxy, or a capture's), rebuilt from server messages, and what
//!   their views derive (pure, host-tested); observe mode's views are in `components::observe`.
//! - `inputs`, `url_state`, `address_bar`, `form_of_runs`: the controls' form → run specs, the
//!   form ↔ the URL query, the browser's address bar kept in step with both, and run specs →
//!   the form (a recording's runs).
//! - `trace`, `drawn_runs`, `playback`, `timeaxis`, `timeline`: a run's spans as round trips and
//!   events, which of a long plan's runs are drawn, the playback clock, time ↔ pixels, and
//!   drawing the timeline on a canvas.
//! - `rtt_model`, `sweep`, `export`: the round trip taken apart, the batch sweep and its knee,
//!   and finished runs as JSON / CSV / Markdown (pure).
//! - `tour`: the guided tour: its script, routes, templating and handout (pure) and its
//!   controller (signals); its views are in `components::tour`.
//! - `log_scale`: the charts' whole-decade log axes.
//! - `format`, `look`, `keyboard`: numbers for people, presenter mode and theme, shortcuts.
//! - `erased`: effects and event handlers over boxed closures, so Leptos's machinery for them
//!   is compiled once rather than once per closure.
//! - `components`: the views, each reading signals and the models above, in a folder by what
//!   the user sees (the runs' form, the runs, the timeline, the round trip, the charts, files,
//!   observe mode, the tour).

pub mod address_bar;
pub mod app;
pub mod components;
pub mod connection;
pub mod drawn_runs;
pub mod erased;
pub mod export;
pub mod form_of_runs;
pub mod format;
pub mod inputs;
pub mod keyboard;
pub mod log_scale;
pub mod look;
pub mod playback;
pub mod rtt_model;
pub mod state;
pub mod sweep;
pub mod timeaxis;
pub mod timeline;
pub mod tour;
pub mod trace;
pub mod url_state;

pub use app::App;

/// The unit tests' `#[test]`: in wasm32, where the page runs and where `scripts/test` runs
/// them (in Node, through wasm-bindgen-test's runner), wasm-bindgen-test's; natively, libtest's.
#[cfg(test)]
mod testing {
    #[cfg(not(target_family = "wasm"))]
    pub use core::prelude::v1::test;
    #[cfg(target_family = "wasm")]
    pub use wasm_bindgen_test::wasm_bindgen_test as test;
}
