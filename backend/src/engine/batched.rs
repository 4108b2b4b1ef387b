//! The one loop behind both modes: write a batch of commands, then read exactly that many
//! replies, stamping them as they arrive. Batch 1 is the sequential mode.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use shared::{Command, RunSpec};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::keys::{namespace, write_key, write_value};
use super::resp::{Reply, encode_command, scan_reply};
use super::{EngineError, RunContext, RunFailure, RunOutcome};
use crate::recorder::Recorder;
use crate::spans::SpanStore;
use crate::target::RedisTarget;

const READ_BUFFER: usize = 64 * 1024;

struct State {
    recorder: Recorder,
    spans: Option<SpanStore>,
    done: u64,
    written: u64,
    round_trips: u64,
    started: Instant,
}

pub async fn run(
    target: &RedisTarget,
    spec: RunSpec,
    ctx: RunContext,
) -> Result<RunOutcome, RunFailure> {
    let mut state = State {
        recorder: Recorder::new(),
        spans: (ctx.record_spans && ctx.instrument)
            .then(|| SpanStore::new(ctx.span_outbox.clone())),
        done: 0,
        written: 0,
        round_trips: 0,
        started: Instant::now(),
    };
    let result = match target.connect_raw().await {
        Ok(mut stream) => {
            state.started = Instant::now();
            drive(&mut stream, spec, &ctx, &mut state).await
        }
        Err(e) => Err(e.into()),
    };
    let wall = state.started.elapsed();
    ctx.progress.update(state.done, wall);
    let summary = state
        .recorder
        .summary(spec, state.done, wall, state.round_trips);
    let timeline = state
        .spans
        .map(SpanStore::into_timeline)
        .unwrap_or_default();
    match result {
        Ok(()) => Ok(RunOutcome {
            summary,
            timeline,
            written: state.written,
            started: state.started,
        }),
        Err(error) => Err(RunFailure {
            error,
            partial: summary,
            timeline,
            written: state.written,
            started: state.started,
        }),
    }
}

async fn drive(
    stream: &mut tokio::net::TcpStream,
    spec: RunSpec,
    ctx: &RunContext,
    state: &mut State,
) -> Result<(), EngineError> {
    let batch = spec.mode.batch() as u64;
    let ns = namespace(ctx.run_id);
    let (mut key, mut value) = (Vec::with_capacity(64), Vec::with_capacity(32));
    let mut out = Vec::with_capacity((batch as usize).min(100_000) * 64);
    let mut inbuf = Vec::with_capacity(READ_BUFFER);
    // Borrowed halves: no lock between the writer and the reader of one socket.
    let (reader, writer) = &mut stream.split();

    while state.done < spec.count {
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        let first = state.done;
        let n = batch.min(spec.count - first);
        out.clear();
        for i in first..first + n {
            match spec.command {
                Command::Set => {
                    write_key(&mut key, &ns, i);
                    write_value(&mut value, i);
                    encode_command(&mut out, &[b"SET", &key, &value]);
                }
                // The new commands and modes are wired in by the engine work that follows.
                Command::Get | Command::Incr => {
                    write_key(&mut key, &ns, i);
                    encode_command(&mut out, &[spec.command.name().as_bytes(), &key]);
                }
            }
        }
        let issued = Instant::now();
        state.written = first + n;
        state.round_trips += 1;
        // Write and read at once: replies start arriving before a big batch is fully written,
        // and reading them keeps both sides' buffers from filling up.
        let write = write_all_within(writer, &out, ctx.response_timeout);
        let read = read_replies(reader, &mut inbuf, n, issued, ctx, state);
        let (w, r) = tokio::join!(write, read);
        w?;
        r?;
    }
    Ok(())
}

async fn write_all_within<W: AsyncWrite + Unpin>(
    w: &mut W,
    mut buf: &[u8],
    limit: Duration,
) -> Result<(), EngineError> {
    while !buf.is_empty() {
        let n = tokio::time::timeout(limit, w.write(buf))
            .await
            .map_err(|_| EngineError::Timeout(limit, 0))??;
        if n == 0 {
            return Err(EngineError::Closed(0));
        }
        buf = &buf[n..];
    }
    Ok(())
}

/// Reads `n` replies, recording each one's latency at the moment its bytes were read.
async fn read_replies<R: AsyncRead + Unpin>(
    reader: &mut R,
    inbuf: &mut Vec<u8>,
    n: u64,
    issued: Instant,
    ctx: &RunContext,
    state: &mut State,
) -> Result<(), EngineError> {
    let first = state.done;
    let mut got = 0u64;
    let mut pos = 0usize;
    inbuf.clear();
    while got < n {
        let read = tokio::time::timeout(ctx.response_timeout, reader.read_buf(inbuf))
            .await
            .map_err(|_| EngineError::Timeout(ctx.response_timeout, first + got))??;
        let read_at = Instant::now();
        if read == 0 {
            return Err(EngineError::Closed(first + got));
        }
        let before = got;
        while got < n {
            match scan_reply(&inbuf[pos..])? {
                Some(Reply::Ok { len }) => {
                    pos += len;
                    got += 1;
                }
                Some(Reply::Error { len }) => {
                    let message =
                        String::from_utf8_lossy(&inbuf[pos + 1..pos + len - 2]).into_owned();
                    return Err(EngineError::Refused {
                        index: first + got,
                        message,
                    });
                }
                None => break,
            }
        }
        if got > before {
            state.done = first + got;
            if ctx.instrument {
                state.recorder.record(read_at - issued, got - before);
                let started = state.started;
                if let Some(spans) = &mut state.spans {
                    let us = |t: Instant| (t - started).as_nanos() as f64 / 1000.0;
                    spans.record(first + before, got - before, us(issued), us(read_at));
                }
                ctx.progress.update(state.done, state.started.elapsed());
            }
        }
        // Keep only the unparsed tail so the buffer never grows with the batch.
        if pos > 0 {
            inbuf.drain(..pos);
            pos = 0;
        }
        if inbuf.capacity() - inbuf.len() < READ_BUFFER / 4 {
            inbuf.reserve(READ_BUFFER);
        }
    }
    Ok(())
}
