//! `pipescope cost …`: what one thing costs, each measured in rounds that rotate who goes
//! first and reported as medians with 95 % intervals. A module per job:
//!
//! - `tls` (`cost tls`): our engine over plain TCP and over TLS to one server.
//! - `cluster` (`cost cluster`): our engine on one server and on a cluster of three.
//! - `probe` (`cost probe`): a waiting client through the observing proxy, probe off and on.
//! - `observer` (`cost observer`): what observe mode's proxy adds, and a live capture, beside
//!   tcpdump; the round-trip probe direct, relayed and observed.
//! - `observer_memory` (`cost observer-memory`): whether `pipescope observe`'s memory stays
//!   flat as a connection runs on.
//! - `capture_reading` (`cost capture-reading`): how fast a capture file is read, beside tshark.
//! - `accuracy` (`cost accuracy`): the delay line against its promise.
//! - `observed_file` (`cost html --observed`): an observation of several connections written as
//!   one HTML file, to be weighed and opened.
//! - `pid` (`cost pid`): what tracing a client's syscalls (`observe --pid`) costs it, beside
//!   strace's cost.
//!
//! - `observe_child` (no job of its own): `pipescope observe` as a child process, for the costs that measure it
//!   from outside.
//!
//! Each job is its module's `measure`. The first three run in `versus`'s rounds (`versus::Bench`).

pub mod accuracy;
pub mod capture_reading;
pub mod cluster;
mod observe_child;
pub mod observed_file;
pub mod observer;
pub mod observer_memory;
pub mod pid;
pub mod probe;
pub mod tls;

pub use accuracy::Accuracy;
pub use cluster::ClusterCostRow;
pub use observer::{CapturedColumn, ObserveCost, ObservedRow, ProbeRow, TcpdumpReference};
pub use pid::PidCost;
pub use tls::TlsCostRow;
