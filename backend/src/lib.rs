//! pipescope's backend: the workload engine, the run hub, the websocket and the page.
//!
//! - `target`: the Redis a run talks to (URL, the engine's raw connection, admin connections);
//! - `resp`: just enough RESP, shared by the engine, the connection handshake and the wire tap;
//! - `engine`: runs a `RunSpec` over one raw connection and measures every request;
//!   `recorder` and `spans` keep what it measures;
//! - `net`: the delay-line proxy between the engine and Redis, and its wire tap;
//! - `hub`, `ws`, `server`, `assets`: one run at a time, streamed to every page;
//! - `bench`, `versus`: the same engine headless (`pipescope bench`);
//! - `median`, `local_redis`: small shared pieces.

pub mod assets;
pub mod bench;
pub mod engine;
pub mod hub;
pub mod local_redis;
pub mod median;
pub mod net;
pub mod recorder;
pub mod resp;
pub mod server;
pub mod spans;
pub mod target;
pub mod versus;
pub mod ws;
