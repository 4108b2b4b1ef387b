//! Types shared verbatim by the backend and the page: what a run is (`spec`), what the two
//! sides say to each other (`protocol`), and what a run produced (`report`).
//! Compiles for native and wasm32; no I/O here.

pub mod protocol;
pub mod report;
pub mod spec;

pub use protocol::{ClientMsg, ServerMsg, PROTOCOL_VERSION};
pub use report::{Latency, RunSummary};
pub use spec::{validate_runs, Command, Limits, Mode, RunSpec, SpecError};
