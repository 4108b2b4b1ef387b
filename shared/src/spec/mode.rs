//! How a run's commands travel: one at a time, pipelined, multiplexed, in transactions, as MSET,
//! or over a pool of connections.

use serde::{Deserialize, Serialize};

use super::Flush;

/// How the commands travel over the one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[serde(try_from = "crate::tagged::ModeFields")]
pub enum Mode {
    /// Send one command, wait for its reply, repeat: one round trip per command.
    Sequential,
    /// Issue `batch` commands without waiting, then wait for their replies: one round trip per
    /// batch. `flush` says how the batch is written.
    Pipelined {
        batch: u32,
        #[serde(default)]
        flush: Flush,
    },
    /// `in_flight` concurrent callers sharing one connection: whenever replies arrive, that
    /// many new commands go out together (auto-pipelining, as Lettuce and redis-rs's
    /// MultiplexedConnection do).
    Multiplexed { in_flight: u32 },
    /// `MULTI`, `batch` commands, `EXEC`, written together: one round trip per batch, applied
    /// atomically.
    Transaction { batch: u32 },
    /// One MSET (or MGET) of `batch` keys: one command and one round trip per batch.
    Mset { batch: u32 },
    /// A pool of `connections` connections, each sending its share one command at a time (as
    /// a client with a connection pool does, like the seed's Lettuce pool of 8): request `i`
    /// goes on connection `i % connections` (`Mode::connection_of`), so every connection
    /// pays one round trip per command and the connections wait in parallel.
    Connections { connections: u32 },
}

impl Mode {
    /// A pipeline that writes each batch at once.
    pub const fn pipelined(batch: u32) -> Mode {
        Mode::Pipelined {
            batch,
            flush: Flush::Batch,
        }
    }

    /// The most connections one `Connections` run may open: a pool far beyond any client's
    /// (redis-benchmark's default is 50), small enough not to exhaust Redis's `maxclients`
    /// or the engine's file descriptors.
    pub const MAX_CONNECTIONS: u32 = 256;

    /// Connections the run opens to Redis: the pool's size, else one.
    pub fn connections(self) -> u32 {
        match self {
            Mode::Connections { connections } => connections,
            _ => 1,
        }
    }

    /// The connection (from 0) that carries request `i`: the one place the split into shares
    /// is defined, so the engine, the wire tap and the page agree on it.
    pub fn connection_of(self, i: u64) -> u32 {
        (i % self.connections().max(1) as u64) as u32
    }

    /// Commands issued before the engine waits for replies (for `Multiplexed`, the window).
    pub fn batch(self) -> u32 {
        match self {
            Mode::Sequential => 1,
            Mode::Pipelined { batch, .. } | Mode::Transaction { batch } | Mode::Mset { batch } => {
                batch
            }
            Mode::Multiplexed { in_flight } => in_flight,
            // Each connection waits for every reply before its next command.
            Mode::Connections { .. } => 1,
        }
    }

    /// Every mode's `kind`, in the order the page lists them: the one list of mode names (the
    /// page's select, its links and its tables use these).
    pub const KINDS: [&'static str; 6] = [
        "sequential",
        "pipelined",
        "multiplexed",
        "transaction",
        "mset",
        "connections",
    ];

    /// One command, one round trip: the baseline the other modes are compared with.
    pub fn is_sequential(self) -> bool {
        matches!(self, Mode::Sequential)
    }

    /// A pipeline, however it flushes.
    pub fn is_pipelined(self) -> bool {
        matches!(self, Mode::Pipelined { .. })
    }

    /// Sends its commands in batches of `batch()` (a pipeline, MULTI/EXEC, MSET): a run of it
    /// must fill one whole batch, or it would be labelled with a batch that never ran.
    pub fn sends_batches(self) -> bool {
        matches!(
            self,
            Mode::Pipelined { .. } | Mode::Transaction { .. } | Mode::Mset { .. }
        )
    }

    /// A short name for tables and legends (one of `KINDS`).
    pub fn kind(self) -> &'static str {
        match self {
            Mode::Sequential => "sequential",
            Mode::Pipelined { .. } => "pipelined",
            Mode::Multiplexed { .. } => "multiplexed",
            Mode::Transaction { .. } => "transaction",
            Mode::Mset { .. } => "mset",
            Mode::Connections { .. } => "connections",
        }
    }

    pub fn label(self) -> String {
        match self {
            Mode::Sequential => "sequential".to_string(),
            Mode::Pipelined { batch, flush } => match flush {
                Flush::Batch => format!("pipelined (batch {batch})"),
                Flush::EachCommand => format!("pipelined (batch {batch}, flush each command)"),
                Flush::Buffered { commands } => {
                    format!("pipelined (batch {batch}, flush every {commands})")
                }
            },
            Mode::Multiplexed { in_flight } => format!("multiplexed ({in_flight} in flight)"),
            Mode::Transaction { batch } => format!("MULTI/EXEC (batch {batch})"),
            Mode::Mset { batch } => format!("MSET/MGET (batch {batch})"),
            Mode::Connections { connections: 1 } => "sequential on 1 connection".to_string(),
            Mode::Connections { connections } => {
                format!("sequential on {connections} connections")
            }
        }
    }

    /// Round trips a run of `count` commands pays in this mode (for `Multiplexed`, at least),
    /// summed over its connections.
    pub fn round_trips(self, count: u64) -> u64 {
        count.div_ceil(self.batch() as u64)
    }

    /// Round trips one after another: with several connections they wait side by side, so
    /// the busiest connection's share is what the run waits for.
    pub fn round_trips_in_series(self, count: u64) -> u64 {
        self.round_trips(count)
            .div_ceil(self.connections().max(1) as u64)
    }

    /// Writes (send syscalls) the engine makes for `count` commands, where the mode fixes it.
    /// `Multiplexed` writes whenever replies arrive, so its count is only known afterwards.
    pub fn writes(self, count: u64) -> Option<u64> {
        let batch = self.batch() as u64;
        match self {
            Mode::Multiplexed { .. } => None,
            Mode::Pipelined {
                flush: Flush::EachCommand,
                ..
            } => Some(count),
            Mode::Pipelined {
                flush: Flush::Buffered { commands },
                ..
            } => {
                let per = (commands.max(1) as u64).min(batch);
                let full = count / batch;
                let rest = count % batch;
                Some(full * batch.div_ceil(per) + rest.div_ceil(per))
            }
            _ => Some(count.div_ceil(batch)),
        }
    }
}
