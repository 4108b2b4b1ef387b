//! A run's specification and its validation. The page validates before sending and the backend
//! validates again on receipt, with the same code, so both refuse the same things.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::keys::KeyLayout;

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

/// The network between the engine and Redis, dialled in by the latency proxy. All zero is the
/// plain connection (no proxy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Network {
    /// One-way delay engine → Redis, µs.
    #[serde(default)]
    pub delay_out_us: u32,
    /// One-way delay Redis → engine, µs.
    #[serde(default)]
    pub delay_back_us: u32,
    /// Each chunk's delay varies within ± this many µs (never reordered).
    #[serde(default)]
    pub jitter_us: u32,
    /// Bytes per second each way; `None` is unlimited.
    #[serde(default)]
    pub bandwidth: Option<u64>,
}

impl Network {
    pub const LOOPBACK: Network = Network::symmetric(0);

    /// The presets offered on the page: name and one-way delay.
    pub const PRESETS: [(&'static str, u32); 4] = [
        ("loopback", 0),
        ("same rack", 100),
        ("same region", 500),
        ("cross-country", 30_000),
    ];

    pub const fn symmetric(delay_us: u32) -> Network {
        Network {
            delay_out_us: delay_us,
            delay_back_us: delay_us,
            jitter_us: 0,
            bandwidth: None,
        }
    }

    /// True when nothing is injected, so the engine talks to Redis directly.
    pub fn is_loopback(&self) -> bool {
        *self == Network::LOOPBACK
    }

    /// Injected round-trip time, µs (without transmission time).
    pub fn round_trip_us(&self) -> u64 {
        self.delay_out_us as u64 + self.delay_back_us as u64
    }

    pub fn label(&self) -> String {
        if self.is_loopback() {
            return "loopback".to_string();
        }
        let mut s = if self.delay_out_us == self.delay_back_us {
            format!("one-way delay {} µs", self.delay_out_us)
        } else {
            format!(
                "one-way delay {} µs out, {} µs back",
                self.delay_out_us, self.delay_back_us
            )
        };
        if self.jitter_us > 0 {
            s += &format!(", jitter ±{} µs", self.jitter_us);
        }
        if let Some(bw) = self.bandwidth {
            s += &format!(", {bw} B/s");
        }
        s
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    #[serde(default)]
    pub command: Command,
    pub count: u64,
    pub mode: Mode,
    /// Bytes per value (SET and the GET seed); `None` is the classic `v{i}`.
    #[serde(default)]
    pub value_bytes: Option<u32>,
    #[serde(default)]
    pub network: Network,
    /// How the engine waits for replies.
    #[serde(default)]
    pub wait: Wait,
    /// A second client INCRs the run's shared counter one command at a time while the run
    /// goes, so Redis's replies show where its commands landed among the run's (atomicity,
    /// measured). Needs INCR and a pipelined or MULTI/EXEC run; every command of the run then
    /// INCRs that one counter (`keys::counter`) instead of `k{i}`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub other_client: bool,
    /// How the run's keys are named, hence which Redis Cluster slots they fall in
    /// (`keys::KeyLayout`): spread over every slot, or all under one hash tag.
    #[serde(default, skip_serializing_if = "KeyLayout::is_spread")]
    pub keys: KeyLayout,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    #[error("count must be between 1 and {max}, got {got}")]
    Count { got: u64, max: u64 },
    #[error("{what} must be between 1 and {max}, got {got}")]
    Batch {
        what: &'static str,
        got: u32,
        max: u32,
    },
    #[error("flush every {got} commands must be between 1 and the batch ({batch})")]
    Buffered { got: u32, batch: u32 },
    #[error("a start needs between 1 and {max} runs, got {got}")]
    Runs { got: usize, max: usize },
    #[error("value size must be between 1 and {max} bytes, got {got}")]
    ValueBytes { got: u32, max: u32 },
    #[error(
        "count × value size is {got} bytes, more than the {max} bytes one run may store; lower the count or the value size"
    )]
    TotalBytes { got: u64, max: u64 },
    #[error("{what} must be at most {max} µs, got {got}")]
    Delay {
        what: &'static str,
        got: u32,
        max: u32,
    },
    #[error("bandwidth must be between {min} and {max} bytes/s, got {got}")]
    Bandwidth { got: u64, min: u64, max: u64 },
    #[error("busy-poll must be between 1 and {max} µs, got {got}")]
    BusyPoll { got: u32, max: u32 },
    #[error("connections must be between 1 and {max}, got {got}")]
    Connections { got: u32, max: u32 },
    #[error("{command} has no one-command-many-keys form; use SET or GET with MSET mode")]
    NoMultiKey { command: &'static str },
    #[error(
        "the other client INCRs one counter shared with a pipelined or MULTI/EXEC run of INCRs; got {command} in {mode} mode: choose INCR and pipelined or MULTI/EXEC"
    )]
    OtherClient {
        command: &'static str,
        mode: &'static str,
    },
    #[error(
        "{what} on a Redis Cluster needs every key in one slot (a cluster runs it on one master and refuses keys of several slots): choose keys: one hash tag {{run}} (--keys one-tag)"
    )]
    OneSlot { what: &'static str },
    #[error("the sweep's largest batch must be between 2 and {max}, got {got}")]
    SweepMax { got: u32, max: u32 },
    #[error(
        "a sweep up to batch {largest} needs at least {largest} commands per run (one whole batch), got {count}: raise the count or lower the largest batch"
    )]
    SweepCount { largest: u32, count: u64 },
    #[error(
        "a sweep up to batch {largest} needs {runs} runs ({sizes} batch sizes, each {repeats} times), more than the {max_runs} one start may have; choose a largest batch of at most {fits}"
    )]
    SweepRuns {
        largest: u32,
        runs: usize,
        sizes: usize,
        repeats: usize,
        max_runs: usize,
        fits: u32,
    },
    #[error(
        "this run would spend at least {secs} s waiting on the injected delay ({round_trips} round trips × {rtt_us} µs), more than the {max} s allowed; lower the count or the delay, or pipeline"
    )]
    TooSlow {
        secs: u64,
        round_trips: u64,
        rtt_us: u64,
        max: u64,
    },
}

impl RunSpec {
    /// SET `count` times in `mode` over loopback with classic values.
    pub fn set(count: u64, mode: Mode) -> RunSpec {
        RunSpec {
            command: Command::Set,
            count,
            mode,
            value_bytes: None,
            network: Network::LOOPBACK,
            wait: Wait::Sleep,
            other_client: false,
            keys: KeyLayout::Spread,
        }
    }

    /// `count` INCRs of one shared counter in `mode` while the other client INCRs it too.
    pub fn with_other_client(count: u64, mode: Mode) -> RunSpec {
        RunSpec {
            command: Command::Incr,
            other_client: true,
            ..RunSpec::set(count, mode)
        }
    }

    pub fn with_network(self, network: Network) -> RunSpec {
        RunSpec { network, ..self }
    }

    pub fn validate(&self, limits: &Limits) -> Result<(), SpecError> {
        if self.count == 0 || self.count > limits.max_count {
            return Err(SpecError::Count {
                got: self.count,
                max: limits.max_count,
            });
        }
        if let Mode::Connections { connections } = self.mode
            && !(1..=Mode::MAX_CONNECTIONS).contains(&connections)
        {
            return Err(SpecError::Connections {
                got: connections,
                max: Mode::MAX_CONNECTIONS,
            });
        }
        let batch = self.mode.batch();
        if batch == 0 || batch > limits.max_batch {
            let what = match self.mode {
                Mode::Multiplexed { .. } => "in-flight requests",
                _ => "batch",
            };
            return Err(SpecError::Batch {
                what,
                got: batch,
                max: limits.max_batch,
            });
        }
        if let Mode::Pipelined {
            flush: Flush::Buffered { commands },
            ..
        } = self.mode
            && (commands == 0 || commands > batch)
        {
            return Err(SpecError::Buffered {
                got: commands,
                batch,
            });
        }
        if self.other_client
            && (self.command != Command::Incr
                || !matches!(self.mode, Mode::Pipelined { .. } | Mode::Transaction { .. }))
        {
            return Err(SpecError::OtherClient {
                command: self.command.name(),
                mode: self.mode.kind(),
            });
        }
        if let Mode::Mset { .. } = self.mode
            && self.command.multi_key().is_none()
        {
            return Err(SpecError::NoMultiKey {
                command: self.command.name(),
            });
        }
        if let Some(bytes) = self.value_bytes {
            if bytes == 0 || bytes > limits.max_value_bytes {
                return Err(SpecError::ValueBytes {
                    got: bytes,
                    max: limits.max_value_bytes,
                });
            }
            let total = self.count.saturating_mul(bytes as u64);
            if total > limits.max_total_bytes {
                return Err(SpecError::TotalBytes {
                    got: total,
                    max: limits.max_total_bytes,
                });
            }
        }
        if let Wait::BusyPoll { us } = self.wait
            && !(1..=Wait::MAX_BUSY_POLL_US).contains(&us)
        {
            return Err(SpecError::BusyPoll {
                got: us,
                max: Wait::MAX_BUSY_POLL_US,
            });
        }
        self.validate_network(limits)
    }

    /// Whether every key the run touches is in one cluster slot: all under one hash tag, or
    /// the other client's one counter.
    pub fn keys_in_one_slot(&self) -> bool {
        self.keys == KeyLayout::OneTag || self.other_client
    }

    /// What a Redis Cluster refuses beyond `validate`: a MULTI/EXEC or an MSET/MGET spanning
    /// several slots (Redis answers `CROSSSLOT`), caught before anything runs.
    pub fn validate_on_cluster(&self) -> Result<(), SpecError> {
        let what = match self.mode {
            Mode::Transaction { .. } => "MULTI/EXEC",
            Mode::Mset { .. } => match self.command {
                Command::Get => "MGET",
                _ => "MSET",
            },
            _ => return Ok(()),
        };
        match self.keys_in_one_slot() {
            true => Ok(()),
            false => Err(SpecError::OneSlot { what }),
        }
    }

    fn validate_network(&self, limits: &Limits) -> Result<(), SpecError> {
        let n = &self.network;
        for (what, got) in [
            ("one-way delay out", n.delay_out_us),
            ("one-way delay back", n.delay_back_us),
            ("jitter", n.jitter_us),
        ] {
            if got > limits.max_delay_us {
                return Err(SpecError::Delay {
                    what,
                    got,
                    max: limits.max_delay_us,
                });
            }
        }
        if let Some(bw) = n.bandwidth
            && !(limits.min_bandwidth..=limits.max_bandwidth).contains(&bw)
        {
            return Err(SpecError::Bandwidth {
                got: bw,
                min: limits.min_bandwidth,
                max: limits.max_bandwidth,
            });
        }
        let round_trips = self.mode.round_trips_in_series(self.count);
        let rtt_us = n.round_trip_us();
        let secs = round_trips.saturating_mul(rtt_us) / 1_000_000;
        if secs > limits.max_network_secs {
            return Err(SpecError::TooSlow {
                secs,
                round_trips,
                rtt_us,
                max: limits.max_network_secs,
            });
        }
        Ok(())
    }

    /// The classic demonstration: the same SETs one at a time, then pipelined.
    pub fn comparison(count: u64, batch: u32) -> Vec<RunSpec> {
        vec![
            RunSpec::set(count, Mode::Sequential),
            RunSpec::set(count, Mode::pipelined(batch)),
        ]
    }
}

/// Validates a whole start request: the number of runs and every run in it.
pub fn validate_runs(runs: &[RunSpec], limits: &Limits) -> Result<(), SpecError> {
    if runs.is_empty() || runs.len() > limits.max_runs {
        return Err(SpecError::Runs {
            got: runs.len(),
            max: limits.max_runs,
        });
    }
    runs.iter().try_for_each(|r| r.validate(limits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(count: u64, mode: Mode) -> RunSpec {
        RunSpec::set(count, mode)
    }

    #[test]
    fn kinds_list_every_mode_once() {
        let modes = [
            Mode::Sequential,
            Mode::pipelined(2),
            Mode::Multiplexed { in_flight: 2 },
            Mode::Transaction { batch: 2 },
            Mode::Mset { batch: 2 },
            Mode::Connections { connections: 2 },
        ];
        let kinds: Vec<&str> = modes.iter().map(|m| m.kind()).collect();
        assert_eq!(kinds, Mode::KINDS);
    }

    #[test]
    fn predicates_name_their_variant() {
        let modes = [
            Mode::Sequential,
            Mode::pipelined(2),
            Mode::Pipelined {
                batch: 2,
                flush: Flush::EachCommand,
            },
            Mode::Multiplexed { in_flight: 2 },
            Mode::Transaction { batch: 2 },
            Mode::Mset { batch: 2 },
        ];
        for m in modes {
            assert_eq!(m.is_sequential(), m.kind() == "sequential", "{m:?}");
            assert_eq!(m.is_pipelined(), m.kind() == "pipelined", "{m:?}");
        }
    }

    #[test]
    fn accepts_the_bounds() {
        let l = Limits::DEFAULT;
        assert!(spec(1, Mode::Sequential).validate(&l).is_ok());
        assert!(
            spec(l.max_count, Mode::pipelined(l.max_batch))
                .validate(&l)
                .is_ok()
        );
        for mode in [
            Mode::Multiplexed { in_flight: 50 },
            Mode::Transaction { batch: 100 },
            Mode::Mset { batch: 100 },
            Mode::Pipelined {
                batch: 100,
                flush: Flush::Buffered { commands: 100 },
            },
        ] {
            assert_eq!(spec(1000, mode).validate(&l), Ok(()), "{mode:?}");
        }
    }

    #[test]
    fn refuses_out_of_range_count_and_batch() {
        let l = Limits::DEFAULT;
        assert_eq!(
            spec(0, Mode::Sequential).validate(&l),
            Err(SpecError::Count {
                got: 0,
                max: l.max_count
            })
        );
        assert!(matches!(
            spec(l.max_count + 1, Mode::Sequential).validate(&l),
            Err(SpecError::Count { .. })
        ));
        assert!(matches!(
            spec(10, Mode::pipelined(0)).validate(&l),
            Err(SpecError::Batch { got: 0, .. })
        ));
        assert!(matches!(
            spec(10, Mode::pipelined(l.max_batch + 1)).validate(&l),
            Err(SpecError::Batch { .. })
        ));
        assert!(matches!(
            spec(10, Mode::Multiplexed { in_flight: 0 }).validate(&l),
            Err(SpecError::Batch {
                what: "in-flight requests",
                ..
            })
        ));
        assert!(matches!(
            spec(
                10,
                Mode::Pipelined {
                    batch: 10,
                    flush: Flush::Buffered { commands: 11 }
                }
            )
            .validate(&l),
            Err(SpecError::Buffered { .. })
        ));
    }

    #[test]
    fn refuses_bad_values_and_networks() {
        let l = Limits::DEFAULT;
        let base = spec(1000, Mode::pipelined(100));
        let with = |f: &dyn Fn(&mut RunSpec)| {
            let mut s = base;
            f(&mut s);
            s.validate(&l)
        };
        assert!(matches!(
            with(&|s| s.value_bytes = Some(0)),
            Err(SpecError::ValueBytes { .. })
        ));
        assert!(matches!(
            with(&|s| s.value_bytes = Some(l.max_value_bytes + 1)),
            Err(SpecError::ValueBytes { .. })
        ));
        assert!(matches!(
            with(&|s| {
                s.count = 10_000_000;
                s.value_bytes = Some(1024)
            }),
            Err(SpecError::TotalBytes { .. })
        ));
        assert!(matches!(
            with(&|s| s.network.delay_back_us = l.max_delay_us + 1),
            Err(SpecError::Delay {
                what: "one-way delay back",
                ..
            })
        ));
        assert!(matches!(
            with(&|s| s.network.bandwidth = Some(10)),
            Err(SpecError::Bandwidth { .. })
        ));
        assert!(matches!(
            with(&|s| {
                s.command = Command::Incr;
                s.mode = Mode::Mset { batch: 10 }
            }),
            Err(SpecError::NoMultiKey { command: "INCR" })
        ));
        // 1,000,000 sequential round trips of 30 ms each way: 16 hours.
        assert!(matches!(
            with(&|s| {
                s.count = 1_000_000;
                s.mode = Mode::Sequential;
                s.network = Network::symmetric(30_000)
            }),
            Err(SpecError::TooSlow { .. })
        ));
        assert_eq!(
            with(&|s| s.network = Network::symmetric(30_000)),
            Ok(()),
            "10 round trips of 60 ms are fine"
        );
    }

    #[test]
    fn refuses_empty_or_oversized_run_lists() {
        let l = Limits::DEFAULT;
        assert!(validate_runs(&[], &l).is_err());
        let many = vec![spec(1, Mode::Sequential); l.max_runs + 1];
        assert!(matches!(
            validate_runs(&many, &l),
            Err(SpecError::Runs { .. })
        ));
        assert!(validate_runs(&RunSpec::comparison(100, 10), &l).is_ok());
    }

    #[test]
    fn round_trips_and_writes_follow_the_mode() {
        assert_eq!(Mode::Sequential.round_trips(100_000), 100_000);
        assert_eq!(Mode::pipelined(1000).round_trips(100_000), 100);
        assert_eq!(Mode::pipelined(1000).round_trips(100_001), 101);
        assert_eq!(Mode::pipelined(1000).writes(100_001), Some(101));
        let each = Mode::Pipelined {
            batch: 1000,
            flush: Flush::EachCommand,
        };
        assert_eq!(each.writes(100_001), Some(100_001));
        let buffered = Mode::Pipelined {
            batch: 1000,
            flush: Flush::Buffered { commands: 300 },
        };
        // Each full batch: 300+300+300+100 → 4 writes; the last 1 command: 1 write.
        assert_eq!(buffered.writes(2_001), Some(2 * 4 + 1));
        assert_eq!(Mode::Multiplexed { in_flight: 8 }.writes(100), None);
        assert_eq!(Mode::Transaction { batch: 10 }.writes(95), Some(10));
    }

    #[test]
    fn busy_poll_is_bounded_and_sleeping_is_the_default() {
        let l = Limits::DEFAULT;
        let with = |wait| {
            RunSpec {
                wait,
                ..spec(10, Mode::Sequential)
            }
            .validate(&l)
        };
        assert_eq!(with(Wait::Sleep), Ok(()));
        assert_eq!(with(Wait::BusyPoll { us: 1 }), Ok(()));
        assert_eq!(
            with(Wait::BusyPoll {
                us: Wait::MAX_BUSY_POLL_US
            }),
            Ok(())
        );
        for us in [0, Wait::MAX_BUSY_POLL_US + 1] {
            let err = with(Wait::BusyPoll { us }).unwrap_err();
            assert!(err.to_string().starts_with("busy-poll must be"), "{err}");
        }
        // A spec without the field (an older page, a hand-written request) sleeps.
        let parsed: RunSpec =
            serde_json::from_str(r#"{"count":5,"mode":{"kind":"sequential"}}"#).unwrap();
        assert_eq!(parsed.wait, Wait::Sleep);
        let json = serde_json::to_string(&Wait::BusyPoll { us: 2000 }).unwrap();
        assert_eq!(json, r#"{"kind":"busy_poll","us":2000}"#);
    }

    #[test]
    fn connections_are_bounded_and_share_the_requests_round_robin() {
        let l = Limits::DEFAULT;
        let with = |connections| spec(1000, Mode::Connections { connections }).validate(&l);
        assert_eq!(with(1), Ok(()));
        assert_eq!(with(Mode::MAX_CONNECTIONS), Ok(()));
        for got in [0, Mode::MAX_CONNECTIONS + 1] {
            let err = with(got).unwrap_err();
            assert_eq!(
                err,
                SpecError::Connections {
                    got,
                    max: Mode::MAX_CONNECTIONS
                }
            );
            assert!(
                err.to_string()
                    .starts_with("connections must be between 1 and 256")
            );
        }
        let pool = Mode::Connections { connections: 8 };
        assert_eq!(pool.connections(), 8);
        assert_eq!(Mode::pipelined(1000).connections(), 1);
        let on: Vec<u32> = (0..10).map(|i| pool.connection_of(i)).collect();
        assert_eq!(on, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
        // One round trip per command, eight of them at a time.
        assert_eq!(pool.round_trips(1_000_000), 1_000_000);
        assert_eq!(pool.round_trips_in_series(1_000_000), 125_000);
        assert_eq!(pool.writes(1_000), Some(1_000));
        assert_eq!(pool.label(), "sequential on 8 connections");
        // The delay limit counts the round trips the run waits for one after another: 100,000
        // commands at 60 ms a round trip are 100 minutes on one connection, 12.5 on eight.
        let far = |mode| {
            spec(100_000, mode)
                .with_network(Network::symmetric(30_000))
                .validate(&l)
        };
        assert!(matches!(
            far(Mode::Sequential),
            Err(SpecError::TooSlow { .. })
        ));
        assert_eq!(far(pool), Ok(()));
    }

    #[test]
    fn a_connections_spec_round_trips_through_json() {
        let s = spec(1_000_000, Mode::Connections { connections: 8 });
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.contains(r#""mode":{"kind":"connections","connections":8}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<RunSpec>(&json).unwrap(), s);
    }

    #[test]
    fn the_other_client_needs_incr_and_a_pipeline_or_transaction() {
        let l = Limits::DEFAULT;
        for mode in [Mode::pipelined(100), Mode::Transaction { batch: 100 }] {
            assert_eq!(RunSpec::with_other_client(1000, mode).validate(&l), Ok(()));
        }
        for mode in [
            Mode::Sequential,
            Mode::Multiplexed { in_flight: 8 },
            Mode::Mset { batch: 100 },
        ] {
            let err = RunSpec::with_other_client(1000, mode)
                .validate(&l)
                .unwrap_err();
            assert!(matches!(err, SpecError::OtherClient { .. }), "{mode:?}");
        }
        let set = RunSpec {
            command: Command::Set,
            ..RunSpec::with_other_client(1000, Mode::pipelined(100))
        };
        assert_eq!(
            set.validate(&l),
            Err(SpecError::OtherClient {
                command: "SET",
                mode: "pipelined"
            })
        );
    }

    #[test]
    fn the_other_client_is_off_unless_asked_and_round_trips() {
        // Absent (an older page), it is off, and off it is not written at all.
        let parsed: RunSpec =
            serde_json::from_str(r#"{"count":5,"mode":{"kind":"sequential"}}"#).unwrap();
        assert!(!parsed.other_client);
        let plain = serde_json::to_string(&RunSpec::set(5, Mode::Sequential)).unwrap();
        assert!(!plain.contains("other_client"), "{plain}");
        let on = RunSpec::with_other_client(5, Mode::Transaction { batch: 5 });
        let json = serde_json::to_string(&on).unwrap();
        assert!(json.contains(r#""other_client":true"#), "{json}");
        assert_eq!(serde_json::from_str::<RunSpec>(&json).unwrap(), on);
    }

    #[test]
    fn commands_parse_by_name() {
        assert_eq!(Command::parse("get"), Some(Command::Get));
        assert_eq!(Command::parse("INCR"), Some(Command::Incr));
        assert_eq!(Command::parse("DEL"), None);
    }

    #[test]
    fn the_key_layout_is_spread_unless_asked_and_round_trips() {
        let parsed: RunSpec =
            serde_json::from_str(r#"{"count":5,"mode":{"kind":"sequential"}}"#).unwrap();
        assert_eq!(parsed.keys, KeyLayout::Spread);
        let plain = serde_json::to_string(&RunSpec::set(5, Mode::Sequential)).unwrap();
        assert!(!plain.contains("keys"), "{plain}");
        let tagged = RunSpec {
            keys: KeyLayout::OneTag,
            ..RunSpec::set(5, Mode::pipelined(5))
        };
        let json = serde_json::to_string(&tagged).unwrap();
        assert!(json.contains(r#""keys":"one-tag""#), "{json}");
        assert!(serde_json::from_str::<KeyLayout>(r#""tagged""#).is_err());
        assert_eq!(serde_json::from_str::<RunSpec>(&json).unwrap(), tagged);
        assert_eq!(tagged.validate(&Limits::DEFAULT), Ok(()));
    }

    #[test]
    fn a_cluster_refuses_multi_key_modes_over_spread_keys_and_names_the_fix() {
        for (mode, command, what) in [
            (Mode::Transaction { batch: 10 }, Command::Set, "MULTI/EXEC"),
            (Mode::Mset { batch: 10 }, Command::Set, "MSET"),
            (Mode::Mset { batch: 10 }, Command::Get, "MGET"),
        ] {
            let spread = RunSpec {
                command,
                ..RunSpec::set(100, mode)
            };
            let err = spread.validate_on_cluster().unwrap_err();
            assert_eq!(err, SpecError::OneSlot { what });
            assert!(err.to_string().contains("one hash tag {run}"), "{err}");
            let tagged = RunSpec {
                keys: KeyLayout::OneTag,
                ..spread
            };
            assert_eq!(tagged.validate_on_cluster(), Ok(()));
        }
        // The other client's one counter is one slot whatever the layout.
        let other = RunSpec::with_other_client(100, Mode::Transaction { batch: 10 });
        assert_eq!(other.validate_on_cluster(), Ok(()));
        for mode in [
            Mode::Sequential,
            Mode::pipelined(10),
            Mode::Multiplexed { in_flight: 4 },
        ] {
            assert_eq!(RunSpec::set(100, mode).validate_on_cluster(), Ok(()));
        }
    }
}
