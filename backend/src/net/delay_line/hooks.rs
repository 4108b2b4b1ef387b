//! What the proxy does with a connection's traffic (its hooks), how it ended, the wire tap's hooks.

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::hold::Holding;
use crate::net::wire_tap::WireTap;
use crate::resp::framer::{Framer, Side};

/// Sees a chunk as it arrives: when, and its bytes.
pub type OnRead = Box<dyn FnMut(Instant, &[u8]) + Send>;
/// Sees a chunk as it leaves: when it was due, when it was handed over, and its bytes.
pub type OnWritten = Box<dyn FnMut(Instant, Instant, &[u8]) + Send>;

/// Told once a connection is over.
pub type OnEnded = Box<dyn FnOnce(Ended) + Send>;

/// Given a handle on the client's socket as the connection starts (to ask the kernel what
/// arrived on it: `TCP_INFO`).
pub type OnClientSocket = Box<dyn FnOnce(TcpStream) + Send>;

/// What the proxy does as one connection's chunks cross it. Each direction's two hooks run on
/// that direction's own threads (or thread), so they may hold per-direction state (a framer).
pub struct Hooks {
    /// A chunk read from the client, when it arrived.
    pub client_read: OnRead,
    /// A chunk handed to Redis: when it was due, when it was handed over.
    pub to_server: OnWritten,
    /// A chunk read from Redis, when it arrived.
    pub server_read: OnRead,
    /// A chunk handed to the client: when it was due, when it was handed over.
    pub to_client: OnWritten,
    /// The connection is over (both directions): who ended it first.
    pub ended: OnEnded,
    /// Handed a clone of the client's socket, if wanted.
    pub client_socket: Option<OnClientSocket>,
    /// Asked before each chunk from Redis is handed to the client whether to hold it back
    /// (observe mode's probe); `None`: never.
    pub hold: Option<Holding>,
}

impl Hooks {
    /// Hooks that do nothing: the proxy as a plain relay (to measure what relaying alone
    /// costs, beside what observing adds).
    pub fn none() -> Hooks {
        Hooks {
            client_read: Box::new(|_, _| {}),
            to_server: Box::new(|_, _, _| {}),
            server_read: Box::new(|_, _| {}),
            to_client: Box::new(|_, _, _| {}),
            ended: Box::new(|_| {}),
            client_socket: None,
            hold: None,
        }
    }
}

/// How a proxied connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    ByClient,
    ByRedis,
    /// An I/O error on one side, or Redis could not be reached.
    Error(String),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::ByClient => f.write_str("closed by the client"),
            Ended::ByRedis => f.write_str("closed by Redis"),
            Ended::Error(e) => f.write_str(e),
        }
    }
}

/// Decides, for each connection accepted, its hooks, or refuses it with a message the client
/// gets as a RESP error.
pub type Admit = Box<dyn FnMut(SocketAddr) -> Result<Hooks, String> + Send>;

/// The wire tap's hooks: count and stamp the commands handed to Redis and the replies read
/// from it.
pub(super) fn tap_hooks(tap: Arc<WireTap>) -> Hooks {
    let (tap_read, tap_out, tap_back) = (tap.clone(), tap.clone(), tap);
    let mut commands = Framer::new(Side::Commands);
    let mut replies = Framer::new(Side::Replies);
    Hooks {
        client_read: Box::new(move |_, _| {
            tap_read.in_flight.fetch_add(1, Ordering::AcqRel);
        }),
        to_server: Box::new(move |_, at, bytes| {
            // Commands whose last byte has just been handed to Redis; none when the
            // connection is TLS, which the tap says rather than counting ciphertext.
            let n = commands.count(bytes);
            if commands.encrypted() {
                tap_out.encrypted();
            }
            tap_out.delivered(at, n);
            tap_out.in_flight.fetch_sub(1, Ordering::AcqRel);
        }),
        server_read: Box::new(move |at, bytes| tap_back.replied(at, replies.count(bytes))),
        to_client: Box::new(|_, _, _| {}),
        ended: Box::new(|_| {}),
        client_socket: None,
        hold: None,
    }
}
