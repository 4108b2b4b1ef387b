//! The lab (`serve --lab`): a room of participants running their own experiments from their
//! own browsers on the one Redis, measured one at a time.
//!
//! - `queue`: the one measurement lane: each participant's run waits its turn, fairly.

pub mod queue;
