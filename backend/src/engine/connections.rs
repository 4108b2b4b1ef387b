//! A pool of connections, as a client with a connection pool uses them (the seed's Lettuce
//! pool of 8, redis-benchmark's `-c`): `C` connections opened up front (through the network's
//! proxy when one is set, one after another so the proxy's taps are in connection order),
//! request `i` on connection `Mode::connection_of(i)` (`i % C`), each connection sending its
//! share one command at a time. The connections wait side by side, so the run pays a round
//! trip per command but only `count / C` of them one after another.
//!
//! The connections are futures of the run's one task (joined): one thread drives them all, as
//! the other modes' one connection, so what differs is only how the commands travel. A failure
//! on one connection stops the others at their next command; each connection's command in
//! flight is answered first, so nothing it sent can land after the run's cleanup.

use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::tls::RedisStream;
use futures_util::future::join_all;

use super::encode::Encoder;
use super::wire::{Replies, Sent, Tally, Writer, write_buffer};
use super::{EngineError, RunContext, busy_poll};
use crate::target::RedisTarget;
use shared::RunSpec;

/// Opens the pool: `spec.mode.connections()` connections, in order.
pub async fn open(target: &RedisTarget, spec: &RunSpec) -> Result<Vec<RedisStream>, EngineError> {
    let mut pool = Vec::with_capacity(spec.mode.connections() as usize);
    for _ in 0..spec.mode.connections() {
        pool.push(target.connect_raw().await?);
    }
    Ok(pool)
}

/// Runs `spec` over the `pool` opened by `open`.
pub async fn run(
    pool: &mut [RedisStream],
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let tally = RefCell::new(tally);
    let stop = Cell::new(false);
    let shares = pool.iter_mut().enumerate().map(|(k, stream)| {
        let (tally, stop) = (&tally, &stop);
        async move {
            let result = share(stream, k as u64, enc, spec, ctx, sent, tally, stop).await;
            if result.is_err() {
                stop.set(true);
            }
            result
        }
    });
    first_failure(join_all(shares).await)
}

/// The pool's outcome from its connections': the first failure that is not a connection
/// stopping because another failed (or the run was cancelled), else `Cancelled` if any
/// stopped.
pub(super) fn first_failure(results: Vec<Result<(), EngineError>>) -> Result<(), EngineError> {
    let mut stopped = false;
    for r in results {
        match r {
            Err(EngineError::Cancelled) => stopped = true,
            Err(e) => return Err(e),
            Ok(()) => {}
        }
    }
    if stopped {
        return Err(EngineError::Cancelled);
    }
    Ok(())
}

/// Connection `k`'s share: requests `k, k + C, k + 2C, …`, one at a time.
#[allow(clippy::too_many_arguments)]
async fn share(
    stream: &mut RedisStream,
    k: u64,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &RefCell<&mut Tally>,
    stop: &Cell<bool>,
) -> Result<(), EngineError> {
    let step = spec.mode.connections() as u64;
    let (r, w) = stream.split();
    let mut writer = Writer::new(w, ctx.response_timeout, sent);
    let mut replies = Replies::new(r, ctx.response_timeout, busy_poll(spec.wait));
    let mut out = write_buffer(1);
    let mut i = k;
    while i < spec.count {
        if stop.get() || ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        out.clear();
        enc.encode_range(&mut out, i, 1);
        let issued = Instant::now();
        writer.write(&out, 1, i + 1).await?;
        loop {
            let read_at = replies.fill(i).await?;
            if replies.next_ok(i)? {
                let mut tally = tally.borrow_mut();
                tally.round_trips += 1;
                tally.answered_one(i, issued, read_at);
                tally.publish(ctx);
                break;
            }
        }
        i += step;
    }
    Ok(())
}
