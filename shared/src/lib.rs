//! Types shared verbatim by the backend and the page: what a run is (`spec`), what the two
//! sides say to each other (`protocol`), what a run produced (`report`), the keys it writes
//! (`keys`), where another client's commands landed among a run's (`interleave`), how its
//! requests grouped into round trips (`trips`), what observe mode saw of an application's
//! connections (`observe`, and `observe_report` to export it), the batch sizes a sweep
//! steps through (`sweep`), finished runs saved to a file to show later (`recording`), and
//! counts with their digits grouped, as every side writes them for people (`digits`).
//! `tagged` reads the spec's tagged enums (`Mode`, `Flush`, `Wait`); `objects` decodes the
//! server's messages with structs read only from JSON objects (the page's WASM is smaller).
//! Compiles for native and wasm32; no I/O here.

pub mod digits;
pub mod interleave;
pub mod keys;
pub mod objects;
pub mod observe;
pub mod observe_report;
pub mod protocol;
pub mod recording;
pub mod report;
pub mod spec;
pub mod sweep;
mod tagged;
pub mod trips;

pub use keys::KeyLayout;
pub use protocol::{ClientMsg, PROTOCOL_VERSION, ServerMsg};
pub use recording::{RECORDING_VERSION, Recording, RecordingError, ReplayInfo, TourStepRecord};
pub use report::{
    ClusterRun, Latency, MasterShare, Redirected, RedisLoad, RedisMemory, RoundTripSplit,
    RunRecord, RunSummary, Span, Timeline, csv_field,
};
pub use spec::{Command, Flush, Limits, Mode, Network, RunSpec, SpecError, Wait, validate_runs};
