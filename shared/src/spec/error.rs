//! Why a run or a start request was refused.

use thiserror::Error;

use crate::digits::group;

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
    #[error(
        "a batch of {} needs at least {} commands (one whole batch), got {}: raise the count or lower the batch",
        group(u64::from(*batch)),
        group(u64::from(*batch)),
        group(*count)
    )]
    BatchOverCount { batch: u32, count: u64 },
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
