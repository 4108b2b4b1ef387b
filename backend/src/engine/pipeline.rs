//! Sequential and pipelined runs: issue a batch of commands, then wait for exactly its replies
//! before the next batch. Sequential is a batch of one, so the only difference between the two
//! measurements is the round trips.
//!
//! How a batch reaches the socket is the flush policy: all at once (one write), one write per
//! command as it is issued (Lettuce's default inside Spring's `executePipelined`), or a write
//! every `commands` commands. Either way the writer and the reader run at once: replies start
//! arriving before a big batch is fully written, and reading them keeps both sides' buffers
//! from filling up.

use std::cell::RefCell;
use std::time::Instant;

use shared::{Flush, Mode};

use super::wire::{Job, Replies, Tally, write_buffer};
use super::{EngineError, RunContext};

pub async fn run(job: Job<'_, '_>) -> Result<(), EngineError> {
    let batch = job.spec.mode.batch() as u64;
    // Commands per write.
    let per = match job.spec.mode {
        Mode::Pipelined {
            flush: Flush::EachCommand,
            ..
        } => 1,
        Mode::Pipelined {
            flush: Flush::Buffered { commands },
            ..
        } => (commands.max(1) as u64).min(batch),
        _ => batch,
    };
    let mut out = write_buffer(per);
    // With one write per batch, the next batch is encoded while Redis works on this one, so
    // encoding costs no round-trip time (Redis takes longer per command than encoding it).
    // `ahead` holds it; `out` holds the batch being written.
    let whole = per >= batch;
    let mut ahead: Vec<u8> = Vec::with_capacity(if whole { out.capacity() } else { 0 });
    let mut encoded_ahead = false;
    // When each write of the current batch began: the issue time of its commands. Filled by
    // the writer, read by the reader (a reply never comes before its command was written).
    let issued = RefCell::new(Vec::with_capacity(batch.div_ceil(per) as usize));

    while let Some((first, n)) = job.tally.next_batch(batch, job.spec.count, job.ctx)? {
        issued.borrow_mut().clear();
        job.tally.round_trips += 1;
        let ready = std::mem::take(&mut encoded_ahead);
        let write = async {
            let mut at = first;
            while at < first + n {
                let m = per.min(first + n - at);
                if !(whole && ready) {
                    out.clear();
                    job.enc.encode_range(&mut out, at, m);
                }
                issued.borrow_mut().push(Instant::now());
                job.writer.write(&out, m, at + m).await?;
                at += m;
            }
            let next = first + n;
            if whole && next < job.spec.count {
                ahead.clear();
                job.enc
                    .encode_range(&mut ahead, next, batch.min(job.spec.count - next));
                return Ok::<_, EngineError>(true);
            }
            Ok(false)
        };
        let read = read_batch(job.replies, first, n, per, &issued, job.ctx, job.tally);
        let (next_ready, ()) = tokio::try_join!(write, read)?;
        if next_ready {
            std::mem::swap(&mut out, &mut ahead);
            encoded_ahead = true;
        }
    }
    Ok(())
}

/// Reads the `n` replies of the batch starting at `first`, stamping each with the moment its
/// bytes were read and its write's issue time (`per` commands per write).
async fn read_batch(
    replies: &mut Replies<'_>,
    first: u64,
    n: u64,
    per: u64,
    issued: &RefCell<Vec<Instant>>,
    ctx: &RunContext,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let mut got = 0u64;
    // With the shared counter: the batch's first and last values.
    let (mut low, mut high) = (0, 0);
    while got < n {
        let read_at = replies.fill(first + got).await?;
        let before = got;
        if tally.counter.is_some() {
            while got < n {
                let Some(v) = replies.next_integer(first + got)? else {
                    break;
                };
                if got == 0 {
                    low = v;
                }
                high = v;
                got += 1;
            }
        } else {
            while got < n && replies.next_ok(first + got)? {
                got += 1;
            }
        }
        // Tally what this read completed, one group per write it spans.
        let issued = issued.borrow();
        let mut k = before;
        while k < got {
            let write = k / per;
            let end = got.min((write + 1) * per);
            let at = issued.get(write as usize).copied().unwrap_or(read_at);
            tally.answered(first + k, end - k, at, read_at);
            k = end;
        }
        if got > before {
            tally.publish(ctx);
        }
    }
    if let Some(counter) = &mut tally.counter {
        counter.batch(low, high, n);
    }
    Ok(())
}
