//! The network dialled in between the engine and Redis: a delay-line proxy, not a latency
//! histogram. How the pieces fit:
//!
//! - `route`: a run asks `Proxies` for the route to Redis over its spec's network. Loopback
//!   goes straight to Redis; anything else through a `DelayProxy` started for that network
//!   (and kept for the runs after it).
//! - `delay_line`: the proxy. Each connection is copied in both directions by a reader thread
//!   that stamps a chunk's arrival and a writer thread that releases it on time, so any number
//!   of chunks are in flight: a pipeline pays one delay per batch, a sequential run one per
//!   command. What a direction holds is bounded in bytes; a full budget stops its reader, so
//!   a slow reader backpressures the sender.
//! - `schedule`: when a chunk leaves: arrival + transmission at the bandwidth cap + delay ±
//!   jitter, less the compensation; never before it arrived, never out of order.
//! - `calibration`: what forwarding through the proxy costs by itself (two extra loopback
//!   hops, thread wake-ups), measured with the engine through a raw proxy before a route's
//!   proxy starts; that proxy releases chunks that much earlier (`Compensation`) so a round
//!   trip through it costs 2·D plus the direct one.
//! - `wire_tap`: as the proxy forwards, it counts RESP commands and replies and stamps when
//!   each reached Redis and left it. After a run (`Route::run`) those stamps, less the
//!   connection's handshake (AUTH, SELECT), land on its spans and split a round trip into
//!   engine → Redis, proxy → Redis → proxy, and Redis → engine, reported beside the
//!   compensation each leg was released early by.
//! - `stats`: bytes, chunks and release lateness per direction, counted only for the
//!   integration tests (feature `test-util`).

mod calibration;
mod delay_line;
mod route;
mod schedule;
mod stats;
mod wire_tap;

pub use delay_line::{Admit, DelayProxy, Ended, Gate, Hold, Holding, Hooks, direction_budget};
pub use route::{Proxies, Route};
pub use schedule::Compensation;
#[cfg(feature = "test-util")]
pub use stats::ProxyStats;
pub use wire_tap::{TAP_STAMPS, TapLog, WireTap, stamp_timeline, stamps_per_tap};
