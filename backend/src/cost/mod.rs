//! `pipescope cost …`: what one thing costs, each measured in rounds that rotate who goes
//! first and reported as medians with 95 % intervals.

mod accuracy;
pub mod capture_reading;
mod cluster;
mod observer;
pub mod observer_memory;
mod tls;

pub use accuracy::{ACCURACY_DELAYS, Accuracy, accuracy};
pub use cluster::{ClusterCostRow, cluster_cost};
pub use observer::{
    CapturedColumn, ObserveCost, ObservedRow, ProbeRow, TcpdumpReference, observe_overhead,
};
pub use tls::{TlsCostRow, tls_cost};
