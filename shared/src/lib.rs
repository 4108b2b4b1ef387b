//! Types shared verbatim by the backend and the page. Compiles for native and wasm32; no I/O
//! here.
//!
//! # Layout
//!
//! - `spec`: what a run is, and its validation.
//! - `protocol`: what the two sides say to each other.
//! - `report`: what a run produced.
//! - `keys`: the keys a run writes.
//! - `interleave`: where another client's commands landed among a run's.
//! - `trips`: how a run's requests grouped into round trips.
//! - `observe`: what observe mode saw of an application's connections, and their verdicts.
//! - `observe_report`: an observation exported.
//! - `sweep`: the batch sizes a sweep steps through.
//! - `lab`: the lab's messages on `/lab/ws`, and what a participant's run may be (the presenter's ceilings).
//! - `recording`: finished runs saved to a file to show later.
//! - `tagged`: the spec's tagged enums (`Mode`, `Flush`, `Wait`) read through one flat struct.
//! - `digits`: counts with their digits grouped by thousands, as every side writes them for
//!   people.
//! - `objects`: the server's messages decoded with structs read only from JSON objects (the
//!   page's WASM is smaller).

pub mod digits;
pub mod interleave;
pub mod keys;
pub mod lab;
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
