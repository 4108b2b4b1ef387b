//! The per-socket, per-thread accounting: records in time order become each TCP socket's
//! sends, receives and waits.
//!
//! A wait is counted at most once per gap between a thread's sends on a socket (and once
//! after its last send): the thread blocked until a reply was read, and its next send (or its
//! end) followed from that —
//! - by itself: a receive that returned data and was blocking (it slept in it, or the socket
//!   was in blocking mode), or a receive on a non-blocking socket after a poll, select or
//!   epoll wait it slept in until something other than its own process woke it (the network);
//! - or by another thread of its process, which received data on the socket after this
//!   thread's send and then woke it (the scheduler's `sched_waking`) while it was blocked in a
//!   syscall (a futex, an eventfd or pipe read, a poll).
//!
//! A reply read and then a wake-up by a thread of its own that had not read one (new work
//! handed to an event loop, a lock) leaves the next send not waiting for that reply: an event
//! loop that sends whatever its application hands it does not wait, though it blocks between.
//!
//! Not waits: a receive with `MSG_DONTWAIT`, or on a non-blocking socket without such a poll
//! before it; and a thread that only receives (a reader beside a sender), however long it
//! blocks.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

use shared::observe::SyscallEvidence;

use super::events::{Event, Record};
use super::sockets::{Known, Mode};

mod calls;

pub use calls::traced_syscalls;
use calls::{MSG_DONTWAIT, MSG_PEEK, could_block, is_poll, is_receive, is_send, receive_flags};

const FIONBIO: u64 = 0x5421;
const F_GETFL: u64 = 3;
const F_SETFL: u64 = 4;
const O_NONBLOCK: u64 = 0o4000;
const EAGAIN: i64 = 11;

/// One TCP socket of a traced process and what its syscalls showed.
#[derive(Debug, Clone)]
pub struct TracedSocket {
    pub pid: u32,
    /// Its own address and its peer's.
    pub local: SocketAddr,
    pub peer: SocketAddr,
    pub evidence: SyscallEvidence,
}

#[derive(Default)]
pub struct Accounting {
    /// Per process: its descriptors that are TCP sockets, and sockets just created (their
    /// mode, until a connect names their addresses).
    procs: HashMap<u32, Fds>,
    sockets: Vec<Socket>,
    threads: HashMap<u32, Thread>,
}

#[derive(Default)]
struct Fds {
    bound: HashMap<i64, Bound>,
    created: HashMap<i64, Mode>,
    /// Descriptors other than TCP sockets last written by a thread of the process (an
    /// eventfd through which an application hands its event loop work): what the writer
    /// knew then of replies read, per socket.
    handed: HashMap<i64, HashMap<usize, u64>>,
}

#[derive(Clone, Copy)]
struct Bound {
    socket: usize,
    mode: Mode,
}

struct Socket {
    pid: u32,
    local: SocketAddr,
    peer: SocketAddr,
    ev: SyscallEvidence,
    threads: HashSet<u32>,
    /// Per sending thread: its last send, and whether it has waited for a reply since.
    senders: HashMap<u32, Gap>,
    /// Per thread: the latest read of data on this socket it knows of — its own, or one by
    /// a thread that then woke it (or woke one that woke it, …) — by when it was read.
    known_at: HashMap<u32, u64>,
}

struct Gap {
    sent_at: u64,
    /// The reply it blocked for since, read (µs blocked; woken by another thread).
    replied: Option<(f64, bool)>,
    /// It read a reply found by a poll that only looked (a zero timeout).
    looked: bool,
    /// A non-blocking receive found data already there: whether it would have waited had
    /// the reply not come yet, its syscalls do not show.
    found: bool,
}

impl Gap {
    fn new(sent_at: u64) -> Gap {
        Gap {
            sent_at,
            replied: None,
            looked: false,
            found: false,
        }
    }

    /// The gap ends (a send, or the end of the trace): a wait, or one undecided.
    fn close(&self, ev: &mut SyscallEvidence) {
        match self.replied {
            Some((w, woken)) => ev.count_wait(w, woken),
            None if self.looked || self.found => ev.undecided_waits += 1,
            None => {}
        }
    }
}

#[derive(Default)]
struct Thread {
    call: Option<Call>,
    /// The last poll, select or epoll wait that could block and reported something ready:
    /// when it returned and how long it took.
    poll: Option<(u64, u64)>,
    /// The last one that only looked (a zero timeout) and reported something ready.
    looked: Option<u64>,
}

struct Call {
    nr: i64,
    args: [u64; 6],
    enter: u64,
    slept: bool,
    /// Woken by a thread of its own process (not by the network).
    woken_by_own: bool,
}

impl Accounting {
    /// A socket already connected when tracing began (read from /proc).
    pub fn known(&mut self, k: Known) {
        let socket = self.new_socket(k.pid, k.local, k.peer);
        self.procs.entry(k.pid).or_default().bound.insert(
            k.fd,
            Bound {
                socket,
                mode: k.mode,
            },
        );
    }

    fn new_socket(&mut self, pid: u32, local: SocketAddr, peer: SocketAddr) -> usize {
        self.sockets.push(Socket {
            pid,
            local,
            peer,
            ev: SyscallEvidence {
                pid,
                ..SyscallEvidence::default()
            },
            threads: HashSet::new(),
            senders: HashMap::new(),
            known_at: HashMap::new(),
        });
        self.sockets.len() - 1
    }

    /// Records must come in time order.
    pub fn record(&mut self, r: &Record) {
        match &r.event {
            Event::Enter { nr, args } => {
                self.threads.entry(r.tid).or_default().call = Some(Call {
                    nr: *nr,
                    args: *args,
                    enter: r.time,
                    slept: false,
                    woken_by_own: false,
                });
            }
            Event::Exit { nr, ret } => {
                let Some(call) = self.threads.entry(r.tid).or_default().call.take() else {
                    return;
                };
                if call.nr == *nr {
                    self.exit(r, &call, *ret);
                }
            }
            Event::Switch { prev, slept } => {
                if let Some(call) = self.threads.get_mut(prev).and_then(|t| t.call.as_mut()) {
                    call.slept |= *slept;
                }
            }
            Event::Waking { wakee } => self.woken(r, *wakee),
            Event::TcpAddrs { local, peer } => {
                let fd = match self.threads.get(&r.tid).and_then(|t| t.call.as_ref()) {
                    Some(c) if is_receive(c.nr) => c.args[0] as i64,
                    _ => return,
                };
                if let Some(socket) = self.socket_of(r.pid, fd) {
                    let s = &mut self.sockets[socket];
                    s.local = *local;
                    s.peer = *peer;
                }
            }
        }
    }

    /// The socket behind descriptor `fd`: one known, or a TCP socket created since tracing
    /// began, accounted from its first use (its addresses come with its first receive).
    fn socket_of(&mut self, pid: u32, fd: i64) -> Option<usize> {
        let fds = self.procs.entry(pid).or_default();
        if let Some(b) = fds.bound.get(&fd) {
            return Some(b.socket);
        }
        let mode = fds.created.remove(&fd)?;
        let unknown = SocketAddr::from(([0, 0, 0, 0], 0));
        let socket = self.new_socket(pid, unknown, unknown);
        self.procs
            .entry(pid)
            .or_default()
            .bound
            .insert(fd, Bound { socket, mode });
        Some(socket)
    }

    fn exit(&mut self, r: &Record, call: &Call, ret: i64) {
        let nr = call.nr;
        let fd = call.args[0] as i64;
        let us = (r.time.saturating_sub(call.enter)) as f64 / 1e3;
        let fds = self.procs.entry(r.pid).or_default();
        match nr {
            libc::SYS_socket
                if ret >= 0
                    && matches!(call.args[0] as i32, libc::AF_INET | libc::AF_INET6)
                    && call.args[1] as i32 & 0xf == libc::SOCK_STREAM =>
            {
                let nonblocking = call.args[1] & libc::SOCK_NONBLOCK as u64 != 0;
                fds.created.insert(ret, Mode::known(nonblocking));
            }
            libc::SYS_close if ret == 0 => {
                fds.bound.remove(&fd);
                fds.created.remove(&fd);
                fds.handed.remove(&fd);
            }
            libc::SYS_dup if ret >= 0 => {
                if let Some(b) = fds.bound.get(&fd).copied() {
                    fds.bound.insert(ret, b);
                }
            }
            libc::SYS_dup2 | libc::SYS_dup3 if ret >= 0 => {
                match fds.bound.get(&fd).copied() {
                    Some(b) => fds.bound.insert(ret, b),
                    None => fds.bound.remove(&ret),
                };
            }
            libc::SYS_fcntl if ret >= 0 => {
                if let Some(b) = fds.bound.get_mut(&fd) {
                    match call.args[1] {
                        F_SETFL => b.mode = Mode::known(call.args[2] & O_NONBLOCK != 0),
                        F_GETFL => b.mode = Mode::known(ret as u64 & O_NONBLOCK != 0),
                        _ => {}
                    }
                }
            }
            libc::SYS_ioctl if ret == 0 && call.args[1] == FIONBIO => {
                // Its value is behind a pointer the tracepoint does not show: taken as a
                // switch of mode (as Python's settimeout(0) then back does); the next
                // EAGAIN or blocked receive corrects it.
                if let Some(b) = fds.bound.get_mut(&fd) {
                    b.mode = b.mode.flipped();
                }
            }
            _ if is_poll(nr) && ret > 0 && could_block(call) && !call.woken_by_own => {
                self.threads.entry(r.tid).or_default().poll =
                    Some((r.time, r.time.saturating_sub(call.enter)));
            }
            _ if is_poll(nr) && ret > 0 && !could_block(call) => {
                self.threads.entry(r.tid).or_default().looked = Some(r.time);
            }
            _ if is_send(nr) => {
                let Some(socket) = self.socket_of(r.pid, fd) else {
                    if ret > 0 {
                        let known = self.known_by(r.pid, r.tid);
                        self.procs
                            .entry(r.pid)
                            .or_default()
                            .handed
                            .insert(fd, known);
                    }
                    return;
                };
                if ret <= 0 {
                    return;
                }
                let s = &mut self.sockets[socket];
                s.ev.sends += 1;
                // sendmmsg returns messages, not bytes.
                if nr != libc::SYS_sendmmsg {
                    s.ev.sent_bytes += ret as u64;
                }
                s.ev.send_us += us;
                s.threads.insert(r.tid);
                if let Some(ended) = s.senders.insert(r.tid, Gap::new(r.time)) {
                    ended.close(&mut s.ev);
                }
            }
            _ if is_receive(nr) => {
                if self.socket_of(r.pid, fd).is_none() {
                    let fds = self.procs.entry(r.pid).or_default();
                    if let Some(known) = fds.handed.get(&fd).filter(|_| ret > 0).cloned() {
                        self.handed_over(r.pid, r.tid, &known);
                    }
                    return;
                }
                let b = self
                    .procs
                    .entry(r.pid)
                    .or_default()
                    .bound
                    .get_mut(&fd)
                    .unwrap();
                let flags = receive_flags(nr, &call.args);
                let dontwait = flags & MSG_DONTWAIT != 0;
                if flags & MSG_PEEK != 0 {
                    // It reads nothing: a look whether a reply is there (phpredis's before
                    // each command) or, blocking, a wait for one as a poll is.
                    let blocking =
                        !dontwait && (call.slept || !matches!(b.mode, Mode::Nonblocking));
                    if ret > 0 && blocking {
                        self.threads.entry(r.tid).or_default().poll =
                            Some((r.time, r.time.saturating_sub(call.enter)));
                    }
                    return;
                }
                if ret == -EAGAIN {
                    if !dontwait {
                        b.mode = Mode::Nonblocking;
                    }
                    self.sockets[b.socket].ev.empty_receives += 1;
                    return;
                }
                if ret <= 0 {
                    return;
                }
                if call.slept && !dontwait {
                    b.mode = Mode::Blocking;
                }
                let mode = b.mode;
                let s = &mut self.sockets[b.socket];
                s.ev.receives += 1;
                if nr != libc::SYS_recvmmsg {
                    s.ev.received_bytes += ret as u64;
                }
                s.ev.receive_us += us;
                s.threads.insert(r.tid);
                s.known_at.insert(r.tid, r.time);
                let gap = s.senders.get_mut(&r.tid);
                let sent_at = gap.as_ref().map(|g| g.sent_at).unwrap_or(0);
                let poll = self
                    .threads
                    .get(&r.tid)
                    .and_then(|t| t.poll)
                    .filter(|&(at, _)| at >= sent_at);
                let looked = self
                    .threads
                    .get(&r.tid)
                    .and_then(|t| t.looked)
                    .is_some_and(|at| at >= sent_at);
                // How long it blocked for this reply, if it did: in the receive itself, or
                // in a poll since its send that could block, whatever the receive's flags
                // (redis-rb and phpredis poll, then read with MSG_DONTWAIT).
                let blocking_read =
                    !dontwait && (call.slept || matches!(mode, Mode::Blocking | Mode::Unknown));
                let waited_us = if blocking_read {
                    Some(us)
                } else {
                    poll.map(|(_, ns)| ns as f64 / 1e3 + us)
                };
                match (waited_us, gap) {
                    (None, gap) => {
                        s.ev.nonblocking_receives += 1;
                        if let Some(g) = gap {
                            // Found there without blocking: had it not been, the client
                            // may have polled for it (a wait) or sent on (none).
                            g.found = true;
                            g.looked |= looked && !dontwait;
                        }
                    }
                    (Some(w), Some(g)) if g.replied.is_none() => g.replied = Some((w, false)),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// Thread `r.tid` woke `wakee`: what the waker knows of replies read passes to `wakee`
    /// (an event loop reads a reply and wakes the application thread waiting for it, which
    /// then hands the loop its next command). If `wakee` was blocked in a syscall: on each
    /// socket where the waker knows of a reply read after `wakee`'s last send there, `wakee`
    /// waited for that reply; on the others, what it sends next follows from the waker's
    /// work, not from a reply it read.
    fn woken(&mut self, r: &Record, wakee: u32) {
        if wakee == r.tid {
            return;
        }
        for s in self.sockets.iter_mut().filter(|s| s.pid == r.pid) {
            if let Some(&read_at) = s.known_at.get(&r.tid) {
                let known = s.known_at.entry(wakee).or_insert(read_at);
                *known = (*known).max(read_at);
            }
        }
        let Some(call) = self.threads.get_mut(&wakee).and_then(|t| t.call.as_mut()) else {
            return;
        };
        call.woken_by_own = true;
        // Blocked waiting for events (a poll, or a read of an eventfd or pipe): woken with
        // work to do. In a futex (a lock, a condition) it may hold a reply it read before.
        let for_work = is_poll(call.nr) || is_receive(call.nr);
        let blocked_us = r.time.saturating_sub(call.enter) as f64 / 1e3;
        for s in self.sockets.iter_mut().filter(|s| s.pid == r.pid) {
            let Some(g) = s.senders.get_mut(&wakee) else {
                continue;
            };
            let informed = s
                .known_at
                .get(&r.tid)
                .is_some_and(|&read_at| read_at > g.sent_at);
            if informed {
                g.replied.get_or_insert((blocked_us, true));
            } else if for_work {
                g.replied = None;
            }
        }
    }

    /// What thread `tid` knows of replies read, per socket of process `pid`.
    fn known_by(&self, pid: u32, tid: u32) -> HashMap<usize, u64> {
        self.sockets
            .iter()
            .enumerate()
            .filter(|(_, s)| s.pid == pid)
            .filter_map(|(k, s)| Some((k, *s.known_at.get(&tid)?)))
            .collect()
    }

    /// Thread `tid` read what another wrote to an eventfd (work handed over, without a
    /// wake-up if it was not blocked): as `woken`, what the writer knew passes to it, and its
    /// next send follows from a reply only if the writer knew of one read after its last.
    fn handed_over(&mut self, pid: u32, tid: u32, known: &HashMap<usize, u64>) {
        for (k, s) in self.sockets.iter_mut().enumerate() {
            if s.pid != pid {
                continue;
            }
            let read_at = known.get(&k).copied();
            if let Some(at) = read_at {
                let mine = s.known_at.entry(tid).or_insert(at);
                *mine = (*mine).max(at);
            }
            if let Some(g) = s.senders.get_mut(&tid) {
                if read_at.is_some_and(|at| at > g.sent_at) {
                    g.replied.get_or_insert((0.0, true));
                } else {
                    g.replied = None;
                }
            }
        }
    }

    /// Every socket that sent or received anything (a reply waited for after a thread's last
    /// send counted as a wait).
    pub fn finish(self) -> Vec<TracedSocket> {
        self.sockets
            .into_iter()
            .filter(|s| !s.threads.is_empty())
            .map(|mut s| {
                for g in s.senders.values() {
                    g.close(&mut s.ev);
                }
                s
            })
            .map(|s| TracedSocket {
                pid: s.pid,
                local: s.local,
                peer: s.peer,
                evidence: SyscallEvidence {
                    threads: s.threads.len() as u64,
                    ..s.ev
                },
            })
            .collect()
    }
}

trait CountWait {
    fn count_wait(&mut self, us: f64, woken: bool);
}

impl CountWait for SyscallEvidence {
    fn count_wait(&mut self, us: f64, woken: bool) {
        self.waits += 1;
        self.wait_us += us;
        if woken {
            self.woken_waits += 1;
        }
    }
}

#[cfg(test)]
mod tests;
