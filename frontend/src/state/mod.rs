//! What the page knows about the runs, rebuilt from the server's messages by one pure reducer.
//! No signals and no browser here: `connection` holds a `Session` in a signal and feeds it
//! every `ServerMsg`; the view reads it through memos. Unit-testable on the host.
//!
//! # Layout
//!
//! - `run_view`: one run of the current plan as far as the page has seen it.
//! - `session`: the reducer: the plan's runs, what the server said last, and whether a run
//!   can start.
//! - `results`: what the views read off a session: the results table, the timeline's traces
//!   and the speed-up.

mod results;
mod run_view;
mod session;

pub use results::{ResultRow, Speedup, speedup_of};
pub use run_view::{Outcome, RunView};
pub use session::Session;

#[cfg(test)]
mod tests;
