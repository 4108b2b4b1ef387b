//! A run's specification and its validation. The page validates before sending and the backend
//! validates again on receipt, with the same code, so both refuse the same things.
//!
//! - `run`: a run and its validation against the limits and the server it goes to.
//! - `mode`: how a run's commands travel.
//! - `network`: the network the delay line puts between the engine and Redis.
//! - `error`: why a run or a start request was refused.

mod error;
mod mode;
mod network;
mod run;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use error::SpecError;
pub use mode::Mode;
pub use network::Network;
pub use run::{RunSpec, validate_runs};

/// Hard limits on what a client may ask for. Sent to the page in `Welcome`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub max_count: u64,
    pub max_batch: u32,
    pub max_runs: usize,
    /// Bytes per value.
    pub max_value_bytes: u32,
    /// count × value bytes: what one run may store in Redis at once.
    pub max_total_bytes: u64,
    /// One-way delay, each direction, and jitter.
    pub max_delay_us: u32,
    /// Bandwidth cap range, bytes per second.
    pub min_bandwidth: u64,
    pub max_bandwidth: u64,
    /// A run whose round trips alone (round trips × injected delay) would take longer is refused.
    pub max_network_secs: u64,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_count: 10_000_000,
        max_batch: 100_000,
        max_runs: 48,
        max_value_bytes: 1024 * 1024,
        max_total_bytes: 512 * 1024 * 1024,
        max_delay_us: 1_000_000,
        min_bandwidth: 1_000,
        max_bandwidth: 100_000_000_000,
        max_network_secs: 3_600,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The Redis command a run repeats on key `k{i}`. SET writes value `v{i}` (or `value_bytes`
/// bytes), like the classic demonstration; GET reads keys the engine wrote beforehand (untimed);
/// INCR counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Command {
    #[default]
    Set,
    Get,
    Incr,
}

impl Command {
    pub const ALL: [Command; 3] = [Command::Set, Command::Get, Command::Incr];

    pub fn name(self) -> &'static str {
        match self {
            Command::Set => "SET",
            Command::Get => "GET",
            Command::Incr => "INCR",
        }
    }

    /// The one-command-many-keys form used by `Mode::Mset`, if the command has one.
    pub fn multi_key(self) -> Option<&'static str> {
        match self {
            Command::Set => Some("MSET"),
            Command::Get => Some("MGET"),
            Command::Incr => None,
        }
    }

    pub fn parse(s: &str) -> Option<Command> {
        Command::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
    }
}

/// When a pipeline hands its commands to the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case")]
#[serde(try_from = "crate::tagged::FlushFields")]
pub enum Flush {
    /// The whole batch in one write: one syscall, as few packets as the batch needs.
    #[default]
    Batch,
    /// A write per command as soon as it is issued, replies read as they come (what Spring
    /// Data Redis with Lettuce does inside `executePipelined` by default: `flushEachCommand`).
    EachCommand,
    /// A write every `commands` commands (Lettuce's buffered flushing).
    Buffered { commands: u32 },
}

/// How the engine waits for each reply.
///
/// Client libraries sleep in the kernel until bytes arrive, so every round trip includes the
/// client being woken up again; on a virtual machine that wake-up can be most of a loopback
/// round trip. Busy-polling keeps the engine on its CPU, trying the socket, for up to `us`
/// before it sleeps: the round trip then measures the network and Redis, not the client's
/// scheduler, at the price of a CPU kept busy while waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[serde(try_from = "crate::tagged::WaitFields")]
pub enum Wait {
    #[default]
    Sleep,
    BusyPoll {
        us: u32,
    },
}

impl Wait {
    /// The longest busy-poll a run may ask for before sleeping.
    pub const MAX_BUSY_POLL_US: u32 = 10_000;
    /// What the page and `bench --busy-poll-us` offer by default: more than a loopback round
    /// trip or a pipelined batch of 1,000 takes here, so a loopback run never sleeps.
    pub const DEFAULT_BUSY_POLL_US: u32 = 2_000;

    pub fn label(&self) -> Option<String> {
        match self {
            Wait::Sleep => None,
            Wait::BusyPoll { us } => Some(format!("busy-poll {us} µs")),
        }
    }
}
