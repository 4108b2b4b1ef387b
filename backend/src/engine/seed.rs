//! GET runs read keys that exist: the engine writes them first, untimed, on a connection of
//! its own, straight to Redis (never through the latency proxy: its wire tap follows the most
//! recent connection, and a bandwidth cap would make seeding crawl). That connection is closed
//! before the measured one opens, so the measured connection carries only measured commands,
//! and before the window Redis's counters are read over opens (`redis_time::open_window`), so
//! the run's Redis CPU, commands and connections hold none of it.
//! On a Redis Cluster each master is seeded with its own keys (`seed_cluster`).

use std::sync::atomic::Ordering;

use shared::RunSpec;

use super::encode::Encoder;
use super::keys::{namespace_in, write_key};
use super::wire::{Replies, Sent, Writer};
use super::{EngineError, RunContext};
use crate::cluster::{SlotMap, key_slot};
use crate::target::RedisTarget;

/// Seeding goes in pipelined batches of at most this many SETs or this many bytes.
const SEED_BATCH: u64 = 1_000;
const SEED_BYTES: usize = 1024 * 1024;

/// SETs keys `0..count` with the run's values. Seeded keys are noted in `sent.keys` as they
/// go, so a failed or cancelled seeding is cleaned up too.
pub async fn seed(
    target: &RedisTarget,
    enc: &Encoder,
    count: u64,
    ctx: &RunContext,
    sent: &Sent,
) -> Result<(), EngineError> {
    seed_on(target, enc, 0..count, ctx, |upto| sent.note_keys(upto)).await
}

/// `seed` on a Redis Cluster: each master, one after another, SETs the keys whose slots it
/// serves in `map`, on a connection of its own. All `count` keys are noted as sent first (a
/// key not yet seeded costs its cleanup's UNLINK nothing).
pub async fn seed_cluster(
    target: &RedisTarget,
    map: &SlotMap,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
) -> Result<(), EngineError> {
    sent.note_keys(spec.count);
    let ns = namespace_in(ctx.run_id, spec.keys);
    for (m, master) in map.masters().iter().enumerate() {
        let node = target.at(&master.host, master.port)?;
        let mut key = Vec::new();
        let ns = &ns;
        let mine = (0..spec.count).filter(move |&i| {
            write_key(&mut key, ns, i);
            map.master_of(key_slot(&key)) == m
        });
        seed_on(&node, enc, mine, ctx, |_| ())
            .await
            .map_err(|e| EngineError::Master {
                addr: node.addr(),
                source: Box::new(e),
            })?;
    }
    Ok(())
}

/// SETs the keys `indices` names on `target`, in pipelined batches, calling `note(upto)`
/// before each batch goes out (`upto`: one past its last index).
async fn seed_on(
    target: &RedisTarget,
    enc: &Encoder,
    mut indices: impl Iterator<Item = u64>,
    ctx: &RunContext,
    note: impl Fn(u64),
) -> Result<(), EngineError> {
    let mut stream = target.direct().connect_raw().await?;
    let seeding = Sent::default();
    let (r, w) = stream.split();
    let mut writer = Writer::new(w, ctx.response_timeout, &seeding);
    let mut replies = Replies::new(r, ctx.response_timeout, None);
    let mut out = Vec::with_capacity(SEED_BYTES + 64 * 1024);
    // This batch's indices, to name a request in an error.
    let mut batch = Vec::with_capacity(SEED_BATCH as usize);
    loop {
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        out.clear();
        batch.clear();
        while (batch.len() as u64) < SEED_BATCH && out.len() < SEED_BYTES {
            let Some(i) = indices.next() else { break };
            enc.encode_set(&mut out, i);
            batch.push(i);
        }
        let Some(&last) = batch.last() else {
            // Dropping the stream closes the seeding connection here, before the measured
            // one opens.
            return Ok(());
        };
        note(last + 1);
        let n = batch.len();
        let write = writer.write(&out, n as u64, last + 1);
        let read = async {
            let mut got = 0;
            while got < n {
                replies.fill(batch[got]).await?;
                while got < n && replies.next_ok(batch[got])? {
                    got += 1;
                }
            }
            Ok(())
        };
        tokio::try_join!(write, read)?;
    }
}
