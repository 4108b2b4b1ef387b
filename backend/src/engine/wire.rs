//! What every mode shares: the measured connection's two halves (a writer that counts its
//! write syscalls, a reader that scans replies in place), the tally of answered requests, and
//! the `Job` that hands all of it to a mode.

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use shared::{Redirected, RunSpec, Span};

use crate::tls::{ReadHalf, WriteHalf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::encode::Encoder;
use super::other_client::{Landed, RunCounter, counter_value};
use super::{EngineError, RunContext};
use crate::recorder::Recorder;
use crate::resp::{self, Reply, scan_reply};
use crate::spans::SpanStore;

const READ_BUFFER: usize = 64 * 1024;

/// What a mode's run works with: the measured connection's halves, the encoder, the spec,
/// the caller's context, and the tally it fills.
pub struct Job<'j, 'c> {
    pub writer: &'j mut Writer<'c>,
    pub replies: &'j mut Replies<'c>,
    pub enc: &'j Encoder,
    pub spec: RunSpec,
    pub ctx: &'j RunContext,
    pub tally: &'j mut Tally,
}

/// A reusable write buffer sized for `commands` commands of a typical size (at most 100,000
/// of them: beyond that it grows as needed), with room for a MULTI and an EXEC.
pub fn write_buffer(commands: u64) -> Vec<u8> {
    Vec::with_capacity(commands.min(100_000) as usize * 64 + 64)
}

/// What went out on the measured connection. Cells: a mode's writer and reader run as two
/// futures of one task (joined), and both may note what they did.
#[derive(Debug, Default)]
pub struct Sent {
    /// Write syscalls that moved bytes (a partial write and the rest are two); over TLS,
    /// writes into the TLS session, which sends each as one or more records.
    pub writes: Cell<u64>,
    /// Commands handed to Redis, as Redis counts them (MULTI and EXEC included).
    pub commands: Cell<u64>,
    /// Keys `0..keys` may exist (written, incremented, or seeded): what cleanup removes.
    pub keys: Cell<u64>,
}

impl Sent {
    pub fn note_keys(&self, upto: u64) {
        self.keys.set(self.keys.get().max(upto));
    }
}

pub struct Writer<'a> {
    half: WriteHalf<'a>,
    timeout: Duration,
    sent: &'a Sent,
}

impl<'a> Writer<'a> {
    pub fn new(half: WriteHalf<'a>, timeout: Duration, sent: &'a Sent) -> Self {
        Writer {
            half,
            timeout,
            sent,
        }
    }

    /// Writes all of `buf`, which holds `commands` commands touching keys below `keys_upto`.
    /// Every write call is counted; each one that cannot make progress for the timeout fails.
    pub async fn write(
        &mut self,
        mut buf: &[u8],
        commands: u64,
        keys_upto: u64,
    ) -> Result<(), EngineError> {
        // Counted before the bytes go: once any of them leave, Redis may act on them.
        self.sent.commands.set(self.sent.commands.get() + commands);
        self.sent.note_keys(keys_upto);
        while !buf.is_empty() {
            let n = tokio::time::timeout(self.timeout, self.half.write(buf))
                .await
                .map_err(|_| EngineError::Timeout(self.timeout, keys_upto.saturating_sub(1)))??;
            self.sent.writes.set(self.sent.writes.get() + 1);
            if n == 0 {
                return Err(EngineError::Closed(0));
            }
            buf = &buf[n..];
        }
        // TLS may hold the last record back when the socket was full; plain TCP has nothing
        // to flush.
        tokio::time::timeout(self.timeout, self.half.flush())
            .await
            .map_err(|_| EngineError::Timeout(self.timeout, keys_upto.saturating_sub(1)))??;
        Ok(())
    }
}

/// The reading half with its buffer: `fill` waits for bytes, `next` hands out complete replies
/// already read, without copying them.
pub struct Replies<'a> {
    half: ReadHalf<'a>,
    buf: Vec<u8>,
    pos: usize,
    timeout: Duration,
    /// Poll the socket for this long before sleeping until bytes arrive (`shared::Wait`).
    busy_poll: Option<Duration>,
}

impl<'a> Replies<'a> {
    pub fn new(half: ReadHalf<'a>, timeout: Duration, busy_poll: Option<Duration>) -> Self {
        Replies {
            half,
            buf: Vec::with_capacity(READ_BUFFER),
            pos: 0,
            timeout,
            busy_poll,
        }
    }

    /// Reads what the socket holds right now without waiting, polling for up to `budget`.
    /// `Ok(0)` means nothing came in time. Bypasses tokio's readiness (which only the reactor
    /// updates, so a busy loop on it would never see new bytes); the socket is non-blocking,
    /// so each attempt is one `recv` that returns at once.
    fn poll_for(&mut self, budget: Duration) -> std::io::Result<usize> {
        // Plain TCP only: the engine refuses busy-polling over TLS (`BusyPollOverTls`).
        let Some(fd) = self.half.plain_fd() else {
            return Ok(0);
        };
        let began = Instant::now();
        loop {
            let spare = self.buf.spare_capacity_mut();
            // SAFETY: recv writes at most `spare.len()` bytes into the buffer's spare capacity
            // and reports how many; only those are then marked initialised.
            let n = unsafe {
                libc::recv(
                    fd,
                    spare.as_mut_ptr().cast(),
                    spare.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if n > 0 {
                unsafe { self.buf.set_len(self.buf.len() + n as usize) };
                return Ok(n as usize);
            }
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::WouldBlock {
                return Err(err);
            }
            if began.elapsed() >= budget {
                return Ok(0);
            }
            std::hint::spin_loop();
        }
    }

    /// Waits for more bytes (request `waiting_for` is the oldest unanswered, for the error
    /// message) and returns when they were read: the reply time of every reply they complete.
    pub async fn fill(&mut self, waiting_for: u64) -> Result<Instant, EngineError> {
        // Keep only the unparsed tail, so the buffer never grows with the batch.
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if self.buf.capacity() - self.buf.len() < READ_BUFFER / 4 {
            self.buf.reserve(READ_BUFFER);
        }
        if let Some(budget) = self.busy_poll {
            match self.poll_for(budget) {
                Ok(0) => {}
                Ok(_) => return Ok(Instant::now()),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    return Err(EngineError::Closed(waiting_for));
                }
                Err(e) => return Err(e.into()),
            }
        }
        let read = tokio::time::timeout(self.timeout, self.half.read_buf(&mut self.buf))
            .await
            .map_err(|_| EngineError::Timeout(self.timeout, waiting_for))??;
        let at = Instant::now();
        if read == 0 {
            return Err(EngineError::Closed(waiting_for));
        }
        Ok(at)
    }

    /// The next complete reply already read (its bytes), or `None` until more arrive.
    #[inline]
    pub fn next(&mut self) -> Result<Option<&[u8]>, resp::ProtocolError> {
        let start = self.pos;
        match scan_reply(&self.buf[start..])? {
            Some(reply) => {
                self.pos += reply.len();
                Ok(Some(&self.buf[start..self.pos]))
            }
            None => Ok(None),
        }
    }

    /// Like `next`, for replies the caller only counts: error replies become `Refused` for
    /// request `index`.
    #[inline]
    pub fn next_ok(&mut self, index: u64) -> Result<bool, EngineError> {
        match scan_reply(&self.buf[self.pos..])? {
            Some(Reply::Ok { len }) => {
                self.pos += len;
                Ok(true)
            }
            Some(Reply::Error { len }) => Err(EngineError::Refused {
                index,
                message: resp::error_text(&self.buf[self.pos..self.pos + len]),
            }),
            None => Ok(false),
        }
    }

    /// Like `next_ok`, for an integer reply whose value the caller keeps (INCRs of the shared
    /// counter): `None` until it is complete.
    #[inline]
    pub fn next_integer(&mut self, index: u64) -> Result<Option<u64>, EngineError> {
        match self.next()? {
            None => Ok(None),
            Some(reply) if resp::is_error(reply) => Err(EngineError::Refused {
                index,
                message: resp::error_text(reply),
            }),
            Some(reply) => Ok(Some(counter_value(reply)?)),
        }
    }
}

/// What the run measured: answered requests, their latencies and spans, and round trips.
pub struct Tally {
    pub recorder: Recorder,
    pub spans: Option<SpanStore>,
    /// With the other client: the run's batches' counter values, and what the other client saw.
    pub counter: Option<RunCounter>,
    pub other: Option<Landed>,
    /// Requests answered: `0..done` on one connection, where replies arrive in order; with
    /// several connections (`answered_one`), how many.
    pub done: u64,
    pub round_trips: u64,
    pub started: Instant,
    /// On a cluster: each master's share and the redirects (`super::cluster`).
    pub cluster: Option<shared::ClusterRun>,
    /// On a cluster run whose keys share one slot (`super::one_slot`): the master serving it,
    /// an index into `cluster`'s masters, named on every span.
    pub node: Option<u16>,
    instrument: bool,
}

impl Tally {
    /// For a run of `count` requests.
    pub fn new(ctx: &RunContext, count: u64) -> Tally {
        Tally {
            recorder: Recorder::new(),
            spans: (ctx.record_spans && ctx.instrument)
                .then(|| SpanStore::new(count, ctx.span_outbox.clone())),
            counter: None,
            other: None,
            done: 0,
            round_trips: 0,
            started: Instant::now(),
            cluster: None,
            node: None,
            instrument: ctx.instrument,
        }
    }

    /// Requests `first..first + n`, issued (written) at `issued`, answered at `replied`.
    #[inline]
    pub fn answered(&mut self, first: u64, n: u64, issued: Instant, replied: Instant) {
        self.done = first + n;
        self.measured(first, n, issued, replied);
    }

    /// Request `i` alone, answered in any order relative to the others (one of several
    /// connections): `done` counts it.
    #[inline]
    pub fn answered_one(&mut self, i: u64, issued: Instant, replied: Instant) {
        self.done += 1;
        self.measured(i, 1, issued, replied);
    }

    /// Request `i` alone, as `answered_one`, answered by the cluster's master `node` (an
    /// index into `cluster`'s masters), after `redirect` if Redis sent it there: its span says so.
    #[inline]
    pub fn answered_by(
        &mut self,
        i: u64,
        issued: Instant,
        replied: Instant,
        node: u16,
        redirect: Option<Redirected>,
    ) {
        self.done += 1;
        self.measured_marked(i, 1, issued, replied, |i, at, back| Span {
            node: Some(node),
            redirect,
            ..Span::new(i, at, back)
        });
    }

    #[inline]
    fn measured(&mut self, first: u64, n: u64, issued: Instant, replied: Instant) {
        match self.node {
            None => self.measured_marked(first, n, issued, replied, Span::new),
            Some(node) => self.measured_marked(first, n, issued, replied, |i, at, back| Span {
                node: Some(node),
                ..Span::new(i, at, back)
            }),
        }
    }

    #[inline]
    fn measured_marked(
        &mut self,
        first: u64,
        n: u64,
        issued: Instant,
        replied: Instant,
        span: impl Fn(u64, f64, f64) -> Span,
    ) {
        if self.instrument {
            self.recorder.record(replied - issued, n);
            if let Some(spans) = &mut self.spans {
                let us = |t: Instant| (t - self.started).as_nanos() as f64 / 1000.0;
                spans.record_marked(first, n, us(issued), us(replied), span);
            }
        }
    }

    /// The next batch, `(first, n)`: up to `batch` requests after those answered, or `None`
    /// once all `count` are. A raised cancel flag fails the run here, at a batch boundary.
    #[inline]
    pub fn next_batch(
        &self,
        batch: u64,
        count: u64,
        ctx: &RunContext,
    ) -> Result<Option<(u64, u64)>, EngineError> {
        if self.done >= count {
            return Ok(None);
        }
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        Ok(Some((self.done, batch.min(count - self.done))))
    }

    /// Publishes progress (after a read's replies are tallied, not per reply).
    #[inline]
    pub fn publish(&self, ctx: &RunContext) {
        if self.instrument {
            ctx.progress.update(self.done, self.started.elapsed());
        }
    }
}
