//! MSET/MGET runs: the batch's keys in one command (`MSET k v k v …` or `MGET k k …`), one
//! write and one reply per batch. Every key of the batch is answered by that one reply.

use std::time::Instant;

use super::EngineError;
use super::wire::{Job, write_buffer};

pub async fn run(job: Job<'_, '_>) -> Result<(), EngineError> {
    let batch = job.spec.mode.batch() as u64;
    let mut out = write_buffer(batch);
    while let Some((first, n)) = job.tally.next_batch(batch, job.spec.count, job.ctx)? {
        out.clear();
        if job.enc.encode_multi_key(&mut out, first, n).is_none() {
            return Err(EngineError::NoMultiKey(job.enc.command().name()));
        }
        job.tally.round_trips += 1;
        let issued = Instant::now();
        let write = job.writer.write(&out, 1, first + n);
        let read = async {
            loop {
                let read_at = job.replies.fill(first).await?;
                if job.replies.next_ok(first)? {
                    job.tally.answered(first, n, issued, read_at);
                    job.tally.publish(job.ctx);
                    return Ok(());
                }
            }
        };
        tokio::try_join!(write, read)?;
    }
    Ok(())
}
