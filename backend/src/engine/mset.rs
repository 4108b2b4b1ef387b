//! MSET/MGET runs: the batch's keys in one command (`MSET k v k v …` or `MGET k k …`), one
//! write and one reply per batch. Every key of the batch is answered by that one reply.

use std::sync::atomic::Ordering;
use std::time::Instant;

use shared::RunSpec;

use super::encode::Encoder;
use super::wire::{Replies, Tally, Writer};
use super::{EngineError, RunContext};

pub async fn run(
    writer: &mut Writer<'_>,
    replies: &mut Replies<'_>,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let batch = spec.mode.batch() as u64;
    let mut out = Vec::with_capacity(batch.min(100_000) as usize * 64 + 64);
    while tally.done < spec.count {
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        let first = tally.done;
        let n = batch.min(spec.count - first);
        out.clear();
        if enc.encode_multi_key(&mut out, first, n).is_none() {
            return Err(EngineError::NoMultiKey(enc.command().name()));
        }
        tally.round_trips += 1;
        let issued = Instant::now();
        let write = writer.write(&out, 1, first + n);
        let read = async {
            loop {
                let read_at = replies.fill(first).await?;
                if replies.next_ok(first)? {
                    tally.answered(first, n, issued, read_at);
                    tally.publish(ctx);
                    return Ok(());
                }
            }
        };
        tokio::try_join!(write, read)?;
    }
    Ok(())
}
