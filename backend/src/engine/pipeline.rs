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
use std::sync::atomic::Ordering;
use std::time::Instant;

use shared::{Flush, Mode, RunSpec};

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
    // Commands per write.
    let per = match spec.mode {
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
    let mut out = Vec::with_capacity(per.min(100_000) as usize * 64);
    // When each write of the current batch began: the issue time of its commands. Filled by
    // the writer, read by the reader (a reply never comes before its command was written).
    let issued = RefCell::new(Vec::with_capacity(batch.div_ceil(per) as usize));

    while tally.done < spec.count {
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        let first = tally.done;
        let n = batch.min(spec.count - first);
        issued.borrow_mut().clear();
        tally.round_trips += 1;
        let write = async {
            let mut at = first;
            while at < first + n {
                let m = per.min(first + n - at);
                out.clear();
                enc.encode_range(&mut out, at, m);
                issued.borrow_mut().push(Instant::now());
                writer.write(&out, m, at + m).await?;
                at += m;
            }
            Ok(())
        };
        let read = read_batch(replies, first, n, per, &issued, ctx, tally);
        tokio::try_join!(write, read)?;
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
    while got < n {
        let read_at = replies.fill(first + got).await?;
        let before = got;
        while got < n && replies.next_ok(first + got)? {
            got += 1;
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
    Ok(())
}
