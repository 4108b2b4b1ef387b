//! The engine against a real redis-server: what each mode sends is what Redis executed, the
//! delay line and the wire tap, atomicity, TLS, and what Redis counts and holds for a run.

#[path = "../support/mod.rs"]
mod support;

mod atomicity;
mod fidelity;
mod latency;
mod modes;
mod redis_load;
mod redis_memory;
mod runs;
mod tls;
