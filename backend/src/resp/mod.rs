//! RESP, the Redis serialization protocol: all of it that pipescope speaks, in one place.
//!
//! A client sends each command as an array of bulk strings and Redis answers each with one
//! value, in order, on the same connection:
//!
//! ```text
//! client → *3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n    SET k1 v1
//! Redis  → +OK\r\n
//! ```
//!
//! Pipelining is nothing more than writing the next commands before the replies to the first
//! ones have come back; the replies still come in order, so reading them is finding where each
//! one ends.
//!
//! # Layout
//!
//! - `frame`: the RESP type: what a value's first byte makes it (a line, a blob, an
//!   aggregate), the table both readers below go by.
//! - `encode`: the one encoder: commands (`encode_command`) and the pieces they are made of,
//!   appended to a caller's buffer. The engine's workload encoder (`engine::encode`) writes
//!   its keys and values with these.
//! - `scan`: reply scanning, for a caller that owns the read buffer (the engine, the other
//!   client, the connection handshake, the local server's readiness check): where the complete
//!   reply at the front of a buffer ends, found in place, and the few reads made of one.
//! - `framer`: the streaming framer, for bytes seen in passing (the delay line's wire tap,
//!   observe mode): it owns framing and buffering across reads that end anywhere, and keeps
//!   only what its caller reads of a message.
//!
//! Neither reader builds a value per message: on the hot path a batch of a million SETs is
//! encoded into one reused buffer and its million `+OK`s are counted where they landed.

mod encode;
mod frame;
pub mod framer;
mod scan;

pub use encode::{CRLF, array_header, bulk, bulk_header, bulk_of, encode_command};
pub use frame::ProtocolError;
pub use scan::{
    Elements, Reply, array_elements, bulk_bytes, error_text, integer, is_error, scan_reply,
};
