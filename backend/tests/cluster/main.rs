//! Redis Cluster: the local cluster and its slots, every mode and key layout on it, a delay
//! line per master, TLS, and `versus redis-benchmark` against it.

#[path = "../support/mod.rs"]
mod support;

mod capture;
mod delay;
mod local;
mod modes;
mod tls;
mod versus;
