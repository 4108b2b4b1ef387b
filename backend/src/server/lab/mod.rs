//! The lab (`serve --lab`): a room of participants running their own experiments from their
//! own browsers on the one Redis, measured one at a time.
//!
//! - `room`: who is in: participants by the key their page keeps, their nicknames, the cap,
//!   the lock, removals and bans, idle ones expiring.
//! - `queue`: the one measurement lane: each participant's run waits its turn, fairly.

pub mod queue;
pub mod room;
