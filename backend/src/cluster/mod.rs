//! Redis Cluster.
//!
//! - `slot`: where a key lives.
//! - `map`: which master serves it, and how a node says it moved.
//! - `local`: a cluster of pipescope's own to run against.
//!
//! A cluster splits the key space into 16,384 hash slots, each served by one master. A
//! pipeline that spans slots on several masters is, on the wire, one batch per master: each
//! pays its own round trip, and they can run in parallel. Hash tags (`{user}:a`, `{user}:b`)
//! put keys in one slot on purpose, which is what MULTI/EXEC and MSET across keys need.

pub mod local;
pub mod map;
pub mod slot;

pub use local::{LocalCluster, LocalClusterError};
pub use map::{ClusterError, Master, Redirect, SlotMap};
pub use slot::{SLOTS, key_slot};
