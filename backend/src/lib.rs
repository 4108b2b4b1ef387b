//! pipescope's backend: the workload engine, the run hub, the websocket and the page.

pub mod assets;
pub mod bench;
pub mod engine;
pub mod hub;
pub mod latency;
pub mod local_redis;
pub mod recorder;
pub mod server;
pub mod spans;
pub mod target;
pub mod versus;
pub mod ws;
