//! What the page knows, rebuilt from the server's messages by pure reducers: the runs (a
//! `Session`) and observe mode's connections (an `ObserveState`). No signals and no browser
//! here: `connection` holds each in a signal and feeds it every `ServerMsg`; the views read
//! them through memos. Unit-testable on the host.
//!
//! # Layout
//!
//! - `run_view`: one run of the current plan as far as the page has seen it.
//! - `session`: the reducer: the plan's runs, what the server said last, and whether a run
//!   can start.
//! - `results`: what the views read off a session: the results table, the timeline's traces
//!   and the speed-up.
//! - `observe`: observe mode (an application's own connections through the observing proxy,
//!   or a capture's), its reducer, and what its view derives: a connection's name, its
//!   verdict in a word, its timeline as a `Trace`, the connection a file opens on.

pub mod observe;
mod results;
mod run_view;
mod session;

pub use observe::ObserveState;
pub use results::{ResultRow, Speedup, speedup_of};
pub use run_view::{Outcome, RunView};
pub use session::Session;

#[cfg(test)]
mod tests;
