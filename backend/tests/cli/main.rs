//! The `pipescope` binary as a user runs it: its jobs, Ctrl-C and SIGTERM, bad input and the
//! words that come back, and recordings.

#[path = "../support/mod.rs"]
mod support;

mod cancel;
mod cost;
mod errors;
mod help;
mod jobs;
mod recording;
