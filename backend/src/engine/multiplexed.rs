//! Many callers sharing one connection, as redis-rs's MultiplexedConnection or Lettuce do with
//! `in_flight` concurrent requests: up to `in_flight` commands are outstanding at any time, and
//! whenever a read brings k replies, the k callers they freed issue their next commands
//! together in one write (auto-pipelining). There are no batch boundaries: the window slides.
//!
//! `round_trips` here counts the reads that brought at least one reply: each is one time the
//! engine waited on the network. With a window of W it is at least count / W, and more when
//! replies trickle in a few at a time.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::EngineError;
use super::encode::Encoder;
use super::wire::{Job, Writer, write_buffer};

pub async fn run(job: Job<'_, '_>) -> Result<(), EngineError> {
    let window = job.spec.mode.batch() as u64;
    let mut out = write_buffer(window);
    // Outstanding writes, oldest first: when each was written and how many of its commands
    // are still unanswered. At most `window` of them (each holds at least one command).
    let mut writes: VecDeque<(Instant, u64)> = VecDeque::with_capacity(window as usize);
    let mut next = 0u64;

    // The callers' first requests, all at once.
    let k = window.min(job.spec.count);
    issue(job.writer, job.enc, &mut out, &mut writes, next, k).await?;
    next += k;

    // Where the run ends: the count, or on cancel the commands already issued.
    let mut end = job.spec.count;
    while job.tally.done < end {
        let read_at = job.replies.fill(job.tally.done).await?;
        let mut got = 0u64;
        while job.replies.next_ok(job.tally.done + got)? {
            got += 1;
        }
        if got == 0 {
            continue; // part of a reply: keep reading
        }
        job.tally.round_trips += 1;
        // Each reply is stamped with its own write's issue time.
        let mut left = got;
        while left > 0 {
            let Some(oldest) = writes.front_mut() else {
                return Err(crate::resp::ProtocolError("more replies than requests").into());
            };
            let take = oldest.1.min(left);
            job.tally.answered(job.tally.done, take, oldest.0, read_at);
            oldest.1 -= take;
            left -= take;
            if oldest.1 == 0 {
                writes.pop_front();
            }
        }
        job.tally.publish(job.ctx);
        // Checked once per read, i.e. every few replies. On cancel no new command goes out,
        // but the outstanding ones are still answered (within one round trip): a command left
        // unread in Redis's socket buffer could otherwise create its key after the caller's
        // cleanup has run.
        if end == job.spec.count && job.ctx.cancel.load(Ordering::Relaxed) {
            end = next;
        }
        let k = got.min(end - next);
        if k > 0 {
            issue(job.writer, job.enc, &mut out, &mut writes, next, k).await?;
            next += k;
        }
    }
    if end < job.spec.count {
        return Err(EngineError::Cancelled);
    }
    Ok(())
}

/// Writes requests `first..first + k` in one go and remembers when.
///
/// The write is not raced against reading (unlike a pipeline batch): Redis never stops
/// reading a client while its replies wait to be sent (a normal client's output buffer is
/// unbounded), so a large write always drains.
async fn issue(
    writer: &mut Writer<'_>,
    enc: &Encoder,
    out: &mut Vec<u8>,
    writes: &mut VecDeque<(Instant, u64)>,
    first: u64,
    k: u64,
) -> Result<(), EngineError> {
    out.clear();
    enc.encode_range(out, first, k);
    writes.push_back((Instant::now(), k));
    writer.write(out, k, first + k).await
}
