//! MULTI/EXEC runs: per batch, `MULTI`, the batch's commands and `EXEC` in one write. Redis
//! answers `+OK`, `+QUEUED` per command, then EXEC's array of the commands' replies; nothing
//! is applied before EXEC, so every command of the batch is answered when EXEC's reply is read.
//!
//! A command refused while queuing (unknown command, out of memory, no permission…) makes
//! Redis discard the whole transaction (`-EXECABORT`); a command failing inside EXEC (e.g.
//! INCR of a non-number) is an error element of EXEC's array. Both fail the run, naming the
//! request and Redis's own words.

use std::time::Instant;

use super::other_client::counter_value;
use super::wire::{Job, Replies, Tally, write_buffer};
use super::{EngineError, RunContext};
use crate::resp::{self, array_elements};

pub async fn run(job: Job<'_, '_>) -> Result<(), EngineError> {
    let batch = job.spec.mode.batch() as u64;
    let mut out = write_buffer(batch);
    while let Some((first, n)) = job.tally.next_batch(batch, job.spec.count, job.ctx)? {
        out.clear();
        out.extend_from_slice(b"*1\r\n$5\r\nMULTI\r\n");
        job.enc.encode_range(&mut out, first, n);
        out.extend_from_slice(b"*1\r\n$4\r\nEXEC\r\n");
        job.tally.round_trips += 1;
        let issued = Instant::now();
        let write = job.writer.write(&out, n + 2, first + n);
        let read = read_transaction(job.replies, first, n, issued, job.ctx, job.tally);
        tokio::try_join!(write, read)?;
    }
    Ok(())
}

/// Reads MULTI's, the `n` QUEUED and EXEC's replies; the batch is answered at EXEC's.
async fn read_transaction(
    replies: &mut Replies<'_>,
    first: u64,
    n: u64,
    issued: Instant,
    ctx: &RunContext,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let aborted = |message: String| EngineError::Transaction {
        first,
        last: first + n - 1,
        message,
    };
    // Reply 0 is MULTI's, 1..=n the QUEUED ones, n + 1 EXEC's.
    let mut seen = 0u64;
    // The first command refused while queuing: the reason EXEC will abort.
    let mut refused: Option<String> = None;
    loop {
        let read_at = replies.fill(first).await?;
        while let Some(reply) = replies.next()? {
            if seen <= n {
                if resp::is_error(reply) && refused.is_none() {
                    let text = resp::error_text(reply);
                    refused = Some(if seen == 0 {
                        format!("MULTI was refused: {text}")
                    } else {
                        format!("request {} was refused: {text}", first + seen - 1)
                    });
                }
                seen += 1;
                continue;
            }
            // EXEC's reply.
            if resp::is_error(reply) {
                let exec = resp::error_text(reply);
                return Err(aborted(match refused {
                    Some(why) => format!("{exec} ({why})"),
                    None => exec,
                }));
            }
            let Some(elements) = array_elements(reply)? else {
                return Err(aborted(
                    "EXEC returned nil: the transaction did not run".into(),
                ));
            };
            let mut count = 0u64;
            // With the shared counter: the batch's first and last values.
            let (mut low, mut high) = (0, 0);
            for (k, element) in elements.enumerate() {
                let element = element?;
                if tally.counter.is_some() && !resp::is_error(element) {
                    high = counter_value(element)?;
                    if k == 0 {
                        low = high;
                    }
                }
                if resp::is_error(element) {
                    return Err(EngineError::Refused {
                        index: first + k as u64,
                        message: format!(
                            "{} (inside MULTI/EXEC; the rest of the batch was applied)",
                            resp::error_text(element)
                        ),
                    });
                }
                count += 1;
            }
            if count != n {
                return Err(
                    resp::ProtocolError("EXEC answered a different number of commands").into(),
                );
            }
            if let Some(counter) = &mut tally.counter {
                counter.batch(low, high, n);
            }
            tally.answered(first, n, issued, read_at);
            tally.publish(ctx);
            return Ok(());
        }
    }
}
