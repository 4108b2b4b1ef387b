//! Sequential and pipelined runs on a Redis Cluster, as a cluster client sends them: one
//! connection per master, and each batch split by the master that serves each key's slot into
//! one sub-batch per master, sent side by side. The batch ends when every sub-batch is
//! answered, so a batch costs one round trip per master it touches, paid in parallel; each
//! request is answered in the caller's order within its master.
//!
//! The masters' connections are futures of the run's one task, as a pool's are
//! (`connections`). A key whose slot moved answers MOVED or ASK, which fails the run with
//! Redis's words: the map is read once, before the run.

use std::cell::RefCell;
use std::time::Instant;

use futures_util::future::join_all;
use shared::{Flush, Mode, RunSpec};

use super::encode::Encoder;
use super::keys::{namespace, write_key};
use super::wire::{Replies, Sent, Tally, Writer, write_buffer};
use super::{EngineError, RunContext, busy_poll};
use crate::cluster::{SlotMap, key_slot};
use crate::target::RedisTarget;
use crate::tls::RedisStream;

/// One connection per master of `map`, in its order.
pub async fn open(target: &RedisTarget, map: &SlotMap) -> Result<Vec<RedisStream>, EngineError> {
    let mut conns = Vec::with_capacity(map.masters().len());
    for m in map.masters() {
        conns.push(target.at(&m.host, m.port)?.connect_raw().await?);
    }
    Ok(conns)
}

/// Runs `spec` (sequential or pipelined) over the masters' connections opened by `open`.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    conns: &mut [RedisStream],
    map: &SlotMap,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let batch = spec.mode.batch() as u64;
    let per = commands_per_write(spec.mode, batch);
    let mut masters: Vec<Master> = conns
        .iter_mut()
        .map(|stream| {
            let (r, w) = stream.split();
            Master {
                writer: Writer::new(w, ctx.response_timeout, sent),
                replies: Replies::new(r, ctx.response_timeout, busy_poll(spec.wait)),
                requests: Vec::new(),
                out: write_buffer(per),
            }
        })
        .collect();
    let ns = namespace(ctx.run_id);
    let mut key = Vec::new();
    let tally = RefCell::new(tally);
    loop {
        let next = tally.borrow().next_batch(batch, spec.count, ctx)?;
        let Some((first, n)) = next else {
            return Ok(());
        };
        for m in &mut masters {
            m.requests.clear();
        }
        for i in first..first + n {
            write_key(&mut key, &ns, i);
            masters[map.master_of(key_slot(&key))].requests.push(i);
        }
        let touched = masters.iter().filter(|m| !m.requests.is_empty()).count();
        tally.borrow_mut().round_trips += touched as u64;
        let sub_batches = masters
            .iter_mut()
            .filter(|m| !m.requests.is_empty())
            .map(|m| m.sub_batch(enc, per, ctx, &tally));
        for result in join_all(sub_batches).await {
            result?;
        }
    }
}

/// Commands per write: the flush policy, as in `pipeline`.
fn commands_per_write(mode: Mode, batch: u64) -> u64 {
    match mode {
        Mode::Pipelined {
            flush: Flush::EachCommand,
            ..
        } => 1,
        Mode::Pipelined {
            flush: Flush::Buffered { commands },
            ..
        } => (commands.max(1) as u64).min(batch),
        _ => batch,
    }
}

/// A master's connection and its share of the batch in flight.
struct Master<'c> {
    writer: Writer<'c>,
    replies: Replies<'c>,
    /// The batch's requests whose keys this master serves, in order.
    requests: Vec<u64>,
    out: Vec<u8>,
}

impl Master<'_> {
    /// Writes this master's requests (`per` to a write) while reading their replies.
    async fn sub_batch(
        &mut self,
        enc: &Encoder,
        per: u64,
        ctx: &RunContext,
        tally: &RefCell<&mut Tally>,
    ) -> Result<(), EngineError> {
        let Master {
            writer,
            replies,
            requests,
            out,
        } = self;
        let requests = &*requests;
        // When each write began: its commands' issue time (the reader never gets ahead of it).
        let issued = RefCell::new(Vec::with_capacity(requests.len().div_ceil(per as usize)));
        let write = async {
            for chunk in requests.chunks(per as usize) {
                out.clear();
                for &i in chunk {
                    enc.encode(out, i);
                }
                issued.borrow_mut().push(Instant::now());
                let upto = chunk.last().map_or(0, |&i| i + 1);
                writer.write(out, chunk.len() as u64, upto).await?;
            }
            Ok::<_, EngineError>(())
        };
        let read = async {
            let mut got = 0usize;
            while got < requests.len() {
                let read_at = replies.fill(requests[got]).await?;
                let before = got;
                while got < requests.len() && replies.next_ok(requests[got])? {
                    got += 1;
                }
                if got > before {
                    let issued = issued.borrow();
                    let mut tally = tally.borrow_mut();
                    for (k, &i) in requests[before..got].iter().enumerate() {
                        let write = (before + k) / per as usize;
                        let at = issued.get(write).copied().unwrap_or(read_at);
                        tally.answered_one(i, at, read_at);
                    }
                    tally.publish(ctx);
                }
            }
            Ok::<_, EngineError>(())
        };
        tokio::try_join!(write, read)?;
        Ok(())
    }
}
