//! GET runs read keys that exist: the engine writes them first, untimed, on a connection of
//! its own, straight to Redis (never through the latency proxy: its wire tap follows the most
//! recent connection, and a bandwidth cap would make seeding crawl). That connection is closed
//! before the measured one opens, so the measured connection carries only measured commands.

use std::sync::atomic::Ordering;

use super::encode::Encoder;
use super::wire::{Replies, Sent, Writer};
use super::{EngineError, RunContext};
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
    let mut stream = target.direct().connect_raw().await?;
    let seeding = Sent::default();
    let (r, w) = stream.split();
    let mut writer = Writer::new(w, ctx.response_timeout, &seeding);
    let mut replies = Replies::new(r, ctx.response_timeout, None);
    let mut out = Vec::with_capacity(SEED_BYTES + 64 * 1024);
    let mut next = 0u64;
    while next < count {
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        let first = next;
        out.clear();
        while next < count && next - first < SEED_BATCH && out.len() < SEED_BYTES {
            enc.encode_set(&mut out, next);
            next += 1;
        }
        sent.note_keys(next);
        let n = next - first;
        let write = writer.write(&out, n, next);
        let read = async {
            let mut got = 0;
            while got < n {
                replies.fill(first + got).await?;
                while got < n && replies.next_ok(first + got)? {
                    got += 1;
                }
            }
            Ok(())
        };
        tokio::try_join!(write, read)?;
    }
    // Dropping the stream closes the seeding connection here, before the measured one opens.
    Ok(())
}
