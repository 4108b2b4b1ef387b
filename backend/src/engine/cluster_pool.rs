//! A pool of connections on a Redis Cluster, over keys spread across its masters: `C` callers
//! as in `connections` (request `i` is caller `i % C`'s, each caller one command at a time),
//! each caller holding a connection to every master, as a pooled cluster client does. A
//! request goes to the master serving its key's slot, so a caller's round trips land on
//! whichever master each key lives on, and the masters serve the callers side by side.
//!
//! A slot that moves mid-run is answered `MOVED` or `ASK`, and the run fails with Redis's
//! words: only sequential and pipelined runs follow a resharding (`cluster`).

use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures_util::future::join_all;
use shared::{ClusterRun, MasterShare, RunSpec};

use super::cluster_multiplexed::master_failed;
use super::encode::Encoder;
use super::keys::{namespace_in, write_key};
use super::wire::{Replies, Sent, Tally, Writer, write_buffer};
use super::{EngineError, RunContext, busy_poll, cluster, connections};
use crate::cluster::{SlotMap, key_slot};
use crate::target::RedisTarget;
use crate::tls::RedisStream;

/// Opens the pool: for each of `spec`'s callers, one connection per master of `map`.
pub async fn open(
    target: &RedisTarget,
    map: &SlotMap,
    spec: &RunSpec,
) -> Result<Vec<Vec<RedisStream>>, EngineError> {
    let mut pool = Vec::with_capacity(spec.mode.connections() as usize);
    for _ in 0..spec.mode.connections() {
        pool.push(cluster::open(target, map).await?);
    }
    Ok(pool)
}

/// Runs `spec` (a pool) over the callers' connections opened by `open`, recording each
/// master's share in `tally.cluster`.
pub async fn run(
    pool: &mut [Vec<RedisStream>],
    map: &SlotMap,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let shares = RefCell::new(
        map.masters()
            .iter()
            .map(|m| MasterShare {
                addr: m.addr(),
                ..MasterShare::default()
            })
            .collect::<Vec<_>>(),
    );
    let tally = RefCell::new(tally);
    let stop = Cell::new(false);
    let callers = pool.iter_mut().enumerate().map(|(k, streams)| {
        let (tally, stop, shares) = (&tally, &stop, &shares);
        async move {
            let result = caller(
                streams, k as u64, map, enc, spec, ctx, sent, tally, shares, stop,
            )
            .await;
            if result.is_err() {
                stop.set(true);
            }
            result
        }
    });
    let results = join_all(callers).await;
    tally.borrow_mut().cluster = Some(ClusterRun {
        masters: shares.into_inner(),
        ..ClusterRun::default()
    });
    connections::first_failure(results)
}

/// Caller `k`'s share: requests `k, k + C, k + 2C, …`, one at a time, each on the caller's
/// connection to its key's master.
#[allow(clippy::too_many_arguments)]
async fn caller(
    streams: &mut [RedisStream],
    k: u64,
    map: &SlotMap,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &RefCell<&mut Tally>,
    shares: &RefCell<Vec<MasterShare>>,
    stop: &Cell<bool>,
) -> Result<(), EngineError> {
    let step = spec.mode.connections() as u64;
    let mut ends: Vec<(Writer<'_>, Replies<'_>)> = streams
        .iter_mut()
        .map(|s| {
            let (r, w) = s.split();
            (
                Writer::new(w, ctx.response_timeout, sent),
                Replies::new(r, ctx.response_timeout, busy_poll(spec.wait)),
            )
        })
        .collect();
    let ns = namespace_in(ctx.run_id, spec.keys);
    let mut key = Vec::new();
    let mut out = write_buffer(1);
    let mut i = k;
    while i < spec.count {
        if stop.get() || ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        write_key(&mut key, &ns, i);
        let m = map.master_of(key_slot(&key));
        let (writer, replies) = &mut ends[m];
        out.clear();
        enc.encode_range(&mut out, i, 1);
        let issued = Instant::now();
        let addr = || shares.borrow()[m].addr.clone();
        writer
            .write(&out, 1, i + 1)
            .await
            .map_err(|e| master_failed(e, &addr()))?;
        loop {
            let read_at = replies
                .fill(i)
                .await
                .map_err(|e| master_failed(e, &addr()))?;
            if replies.next_ok(i)? {
                let node = u16::try_from(m).ok();
                let mut tally = tally.borrow_mut();
                tally.round_trips += 1;
                match node {
                    Some(node) => tally.answered_by(i, issued, read_at, node, None),
                    None => tally.answered_one(i, issued, read_at),
                }
                tally.publish(ctx);
                let mut shares = shares.borrow_mut();
                shares[m].commands += 1;
                shares[m].round_trips += 1;
                break;
            }
        }
        i += step;
    }
    Ok(())
}
