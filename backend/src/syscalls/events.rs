//! The traced events.

use std::net::SocketAddr;

/// One traced event, in the context of thread `tid` of process `pid`.
#[derive(Debug, Clone)]
pub struct Record {
    /// CLOCK_MONOTONIC, ns.
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub event: Event,
}

#[derive(Debug, Clone)]
pub enum Event {
    /// A syscall entered, with its arguments.
    Enter { nr: i64, args: [u64; 6] },
    /// A syscall returned (a negative `ret` is -errno).
    Exit { nr: i64, ret: i64 },
    /// The CPU switched away from thread `prev`; `slept` unless it was only preempted.
    Switch { prev: u32, slept: bool },
    /// This thread woke thread `wakee`.
    Waking { wakee: u32 },
    /// A TCP socket read in this thread's syscall (`tcp_rcv_space_adjust`, which every
    /// TCP receive passes through), with its addresses: at the thread's first receive on it
    /// at least.
    TcpAddrs { local: SocketAddr, peer: SocketAddr },
}
