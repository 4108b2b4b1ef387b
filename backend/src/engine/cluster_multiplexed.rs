//! Multiplexed runs on a Redis Cluster over keys spread across its slots, as a cluster client
//! with a multiplexed connection per master serves `in_flight` concurrent callers (redis-rs's
//! cluster connection, Lettuce's cluster client): up to `in_flight` commands are outstanding
//! across all masters, each on the connection of the master serving its key's slot. Whenever a
//! read on one master's connection brings k replies, the k callers they freed issue their
//! next commands, each to its own key's master, written together per master.
//!
//! `round_trips` counts the reads that brought at least one reply, on any master (each master's
//! share counts its own). A key whose slot moved (MOVED, ASK) is not followed here: the run
//! fails with Redis's words, as a multiplexed window cannot wait for one redirected command.
//! Waiting on several sockets at once means one small allocation per read (the futures
//! raced), never per command.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures_util::future::select_all;
use shared::{ClusterRun, MasterShare, RunSpec};

use super::encode::Encoder;
use super::keys::{namespace_in, write_key};
use super::wire::{Replies, Sent, Tally, Writer, write_buffer};
use super::{EngineError, RunContext};
use crate::cluster::{SlotMap, key_slot};
use crate::tls::RedisStream;

/// A master's connection, its requests in flight (index, issue time; answered in order) and
/// the commands waiting to be written to it.
struct Node<'c> {
    writer: Writer<'c>,
    replies: Replies<'c>,
    in_flight: VecDeque<(u64, Instant)>,
    out: Vec<u8>,
    /// Commands in `out` and one past their largest index.
    queued: u64,
    upto: u64,
    share: MasterShare,
}

/// Runs `spec` (multiplexed) over the masters' connections opened by `cluster::open` for
/// `map`, recording each master's share in `tally.cluster`.
pub async fn run(
    conns: &mut [RedisStream],
    map: &SlotMap,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let window = spec.mode.batch() as u64;
    let mut nodes: Vec<Node> = conns
        .iter_mut()
        .zip(map.masters())
        .map(|(stream, m)| {
            let (r, w) = stream.split();
            Node {
                writer: Writer::new(w, ctx.response_timeout, sent),
                // Sleeps for replies: a busy-poll on one socket would hold off the others
                // (the engine refuses that combination before the run).
                replies: Replies::new(r, ctx.response_timeout, None),
                in_flight: VecDeque::with_capacity(window as usize),
                out: write_buffer(window),
                queued: 0,
                upto: 0,
                share: MasterShare {
                    addr: m.addr(),
                    ..MasterShare::default()
                },
            }
        })
        .collect();
    let ns = namespace_in(ctx.run_id, spec.keys);
    let mut key = Vec::new();
    let mut next = 0u64;
    let result = async {
        // The callers' first requests, all at once.
        let k = window.min(spec.count);
        issue(&mut nodes, map, enc, &ns, &mut key, next, k).await?;
        next += k;
        // Where the run ends: the count, or on cancel the commands already issued.
        let mut end = spec.count;
        while tally.done < end {
            let waiting: Vec<usize> = (0..nodes.len())
                .filter(|&n| !nodes[n].in_flight.is_empty())
                .collect();
            let fills = nodes
                .iter_mut()
                .filter(|n| !n.in_flight.is_empty())
                .map(|n| {
                    let oldest = n.in_flight[0].0;
                    Box::pin(n.replies.fill(oldest))
                });
            let (filled, which, _) = select_all(fills).await;
            let master = u16::try_from(waiting[which]).ok();
            let node = &mut nodes[waiting[which]];
            let read_at = filled.map_err(|e| master_failed(e, &node.share.addr))?;
            let mut got = 0u64;
            while let Some(&(i, issued)) = node.in_flight.front() {
                if !node.replies.next_ok(i)? {
                    break;
                }
                node.in_flight.pop_front();
                match master {
                    Some(m) => tally.answered_by(i, issued, read_at, m, None),
                    None => tally.answered_one(i, issued, read_at),
                }
                got += 1;
            }
            if got == 0 {
                continue; // part of a reply: keep reading
            }
            node.share.commands += got;
            node.share.round_trips += 1;
            tally.round_trips += 1;
            tally.publish(ctx);
            // On cancel no new command goes out, but those in flight are still answered (see
            // `multiplexed`).
            if end == spec.count && ctx.cancel.load(Ordering::Relaxed) {
                end = next;
            }
            let k = got.min(end - next);
            if k > 0 {
                issue(&mut nodes, map, enc, &ns, &mut key, next, k).await?;
                next += k;
            }
        }
        if end < spec.count {
            return Err(EngineError::Cancelled);
        }
        Ok(())
    }
    .await;
    tally.cluster = Some(ClusterRun {
        masters: nodes.into_iter().map(|n| n.share).collect(),
        ..ClusterRun::default()
    });
    result
}

/// Issues requests `first..first + k`, each to its key's master, one write per master.
async fn issue(
    nodes: &mut [Node<'_>],
    map: &SlotMap,
    enc: &Encoder,
    ns: &str,
    key: &mut Vec<u8>,
    first: u64,
    k: u64,
) -> Result<(), EngineError> {
    let now = Instant::now();
    for i in first..first + k {
        write_key(key, ns, i);
        let node = &mut nodes[map.master_of(key_slot(key))];
        enc.encode(&mut node.out, i);
        node.in_flight.push_back((i, now));
        node.queued += 1;
        node.upto = i + 1;
    }
    for node in nodes.iter_mut().filter(|n| n.queued > 0) {
        let result = node.writer.write(&node.out, node.queued, node.upto).await;
        node.out.clear();
        node.queued = 0;
        result.map_err(|e| master_failed(e, &node.share.addr))?;
    }
    Ok(())
}

/// A broken connection names its master; Redis's own refusal names its request.
pub(super) fn master_failed(e: EngineError, addr: &str) -> EngineError {
    match e {
        EngineError::Refused { .. } => e,
        e => EngineError::Master {
            addr: addr.to_string(),
            source: Box::new(e),
        },
    }
}
