//! The guided tour for workshops (`/tour`, `/tour/<step>`): a preset plan per step, each a real
//! run, with prose that quotes the numbers just measured.
//!
//! - `script`: the steps: words, plans, counts, delays, the part of the stage each is about.
//! - `route`: `/tour/<step>` ↔ page, and `?count=` / `?delay=`.
//! - `result`: what a step measured, and its sweep's knee, best and largest batch.
//! - `template`: the prose's placeholders and colour marks, resolved against the results.
//! - `handout`: the closing page's Markdown.
//! - `controller`: the tour's signals and actions (Next, Back, Run, Cancel).
//!
//! All but the controller are pure (no signals, no browser). The views are
//! `components::tour` (the page, its step panel, handout and one-trip figure).

mod controller;
mod handout;
mod result;
mod route;
mod script;
mod template;
#[cfg(test)]
mod tests;

pub use controller::{RunState, Tour};
pub use handout::{by_step, handout_markdown, trip_markdown};
pub use result::{StepResult, best, beyond, knee, knee_round_trip_share};
pub use route::{page_from_path, pages, path_of, query_number};
pub use script::{Focus, RunDef, STEPS, Step, StepCount, TOUR_DELAY_US};
pub use template::{Context, Piece, field, plain, render, result_sentences};
