//! `pipescope cost …`: what one thing costs, each measured in rounds that rotate who goes
//! first and reported as medians with 95 % intervals.

pub mod capture_reading;
mod cluster;
mod observer;
pub mod observer_memory;
mod tls;

pub use cluster::{ClusterCostRow, cluster_cost};
pub use observer::{
    CapturedColumn, ObserveCost, ObservedRow, ProbeRow, TcpdumpReference, observe_overhead,
};
pub use tls::{TlsCostRow, tls_cost};
