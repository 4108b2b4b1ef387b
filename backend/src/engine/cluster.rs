//! Sequential and pipelined runs on a Redis Cluster, as a cluster client sends them: one
//! connection per master, and each batch split by the master that serves each key's slot into
//! one sub-batch per master, sent side by side. The batch ends when every sub-batch is
//! answered, so a batch costs one round trip per master it touches, paid in parallel.
//!
//! A key whose slot moved is answered `MOVED` (the slot has a new master) or `ASK` (it is
//! migrating): that command did not run. Once the batch's replies are in, the redirected
//! commands go again where the replies said (after `ASKING` for ASK) in a further round
//! trip, and after a MOVED the slot map is read again, once, for the batches after it.
//!
//! The masters' connections are futures of the run's one task, as a pool's are
//! (`connections`).

use std::cell::RefCell;
use std::time::Instant;

use futures_util::future::join_all;
use shared::{ClusterRun, Flush, MasterShare, Mode, Redirected, RunSpec};

use super::encode::Encoder;
use super::keys::{namespace_in, write_key};
use super::wire::{Replies, Sent, Tally, Writer, write_buffer};
use super::{EngineError, RunContext, busy_poll};
use crate::cluster::{Redirect, SlotMap, key_slot};
use crate::resp;
use crate::target::RedisTarget;
use crate::tls::RedisStream;

/// Rounds of redirects one batch may take before the run gives up: a slot that keeps moving
/// is a cluster in trouble, not a migration. From the second on, each waits twice as long as
/// the one before (1 ms, 2 ms, …: 63 ms in all), for nodes still agreeing on a slot's owner
/// (one says MOVED to the other, which has not yet taken it).
const MAX_REDIRECT_ROUNDS: u32 = 7;

/// `ASKING`, encoded: sent before a command redirected by ASK.
const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";

/// The node the map was read from, to read it again after a MOVED.
pub struct Seed {
    pub admin: redis::aio::MultiplexedConnection,
    pub addr: String,
}

/// One connection per master of `map`, in its order.
pub async fn open(target: &RedisTarget, map: &SlotMap) -> Result<Vec<RedisStream>, EngineError> {
    let mut conns = Vec::with_capacity(map.masters().len());
    for m in map.masters() {
        conns.push(target.at(&m.host, m.port)?.connect_raw().await?);
    }
    Ok(conns)
}

/// Runs `spec` (sequential or pipelined) over the masters' connections opened by `open` for
/// `map`, recording each master's share and the redirects in `tally.cluster`.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    conns: &mut [RedisStream],
    mut map: SlotMap,
    mut seed: Seed,
    enc: &Encoder,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
) -> Result<(), EngineError> {
    let batch = spec.mode.batch() as u64;
    let per = commands_per_write(spec.mode, batch);
    let addrs: Vec<String> = map.masters().iter().map(|m| m.addr()).collect();
    let mut nodes = nodes(conns, &addrs, per, ctx, sent, busy_poll(spec.wait));
    // The map's master `m` is node `route[m]` (the map read again may list them otherwise).
    let mut route: Vec<usize> = (0..nodes.len()).collect();
    let mut stats = ClusterRun::default();
    let ns = namespace_in(ctx.run_id, spec.keys);
    let mut key = Vec::new();
    let tally = RefCell::new(tally);
    let result = async {
        loop {
            let next = tally.borrow().next_batch(batch, spec.count, ctx)?;
            let Some((first, n)) = next else {
                return Ok(());
            };
            for i in first..first + n {
                write_key(&mut key, &ns, i);
                let node = route[map.master_of(key_slot(&key))];
                nodes[node].requests.push(Request {
                    i,
                    asking: false,
                    redirect: None,
                });
            }
            let moved = rounds(&mut nodes, enc, per, ctx, &tally, &addrs, &mut stats).await?;
            if moved {
                map = SlotMap::discover(&mut seed.admin, &seed.addr).await?;
                stats.map_refreshes += 1;
                route = node_route(&map, &addrs)?;
            }
        }
    }
    .await;
    stats.masters = nodes.into_iter().map(|n| n.share).collect();
    tally.into_inner().cluster = Some(stats);
    result
}

/// A node per connection, the masters' in order (`addrs` their addresses).
fn nodes<'c>(
    conns: &'c mut [RedisStream],
    addrs: &[String],
    per: u64,
    ctx: &RunContext,
    sent: &'c Sent,
    busy_poll: Option<std::time::Duration>,
) -> Vec<Node<'c>> {
    conns
        .iter_mut()
        .zip(addrs)
        .enumerate()
        .map(|(index, (stream, addr))| {
            let (r, w) = stream.split();
            Node {
                // A cluster has at most 16,384 masters (one per slot).
                index: index as u16,
                writer: Writer::new(w, ctx.response_timeout, sent),
                replies: Replies::new(r, ctx.response_timeout, busy_poll),
                requests: Vec::new(),
                redirected: Vec::new(),
                out: write_buffer(per),
                share: MasterShare {
                    addr: addr.clone(),
                    ..MasterShare::default()
                },
            }
        })
        .collect()
}

/// Sends the nodes' requests, then what they redirected, round after round until none is
/// (at most `MAX_REDIRECT_ROUNDS`): whether any was MOVED.
async fn rounds(
    nodes: &mut [Node<'_>],
    enc: &Encoder,
    per: u64,
    ctx: &RunContext,
    tally: &RefCell<&mut Tally>,
    addrs: &[String],
    stats: &mut ClusterRun,
) -> Result<bool, EngineError> {
    let mut moved = false;
    for round in 0.. {
        send_round(nodes, enc, per, ctx, tally).await?;
        let redirected: Vec<(u64, Redirect)> = nodes
            .iter_mut()
            .flat_map(|n| n.redirected.drain(..))
            .collect();
        if redirected.is_empty() {
            break;
        }
        if round == MAX_REDIRECT_ROUNDS {
            let (i, r) = &redirected[0];
            return Err(EngineError::Refused {
                index: *i,
                message: format!(
                    "still redirected after {MAX_REDIRECT_ROUNDS} rounds ({r}): the cluster's slots keep moving"
                ),
            });
        }
        if round > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(1 << (round - 1))).await;
        }
        moved |= requeue(nodes, addrs, redirected, stats)?;
    }
    Ok(moved)
}

/// Queues each redirected command on the node its redirect names (after `ASKING` for ASK),
/// counting the redirects in `stats`: whether any was MOVED.
fn requeue(
    nodes: &mut [Node<'_>],
    addrs: &[String],
    redirected: Vec<(u64, Redirect)>,
    stats: &mut ClusterRun,
) -> Result<bool, EngineError> {
    let mut moved = false;
    for (i, redirect) in redirected {
        let (addr, asking, why) = match &redirect {
            Redirect::Moved { addr, .. } => {
                stats.moved += 1;
                moved = true;
                (addr, false, Redirected::Moved)
            }
            Redirect::Ask { addr, .. } => {
                stats.ask += 1;
                (addr, true, Redirected::Ask)
            }
        };
        let Some(node) = addrs.iter().position(|a| a == addr) else {
            return Err(EngineError::Refused {
                index: i,
                message: format!(
                    "{redirect}: a node that was not a master when the run began (new masters mid-run are not followed)"
                ),
            });
        };
        nodes[node].requests.push(Request {
            i,
            asking,
            redirect: Some(why),
        });
    }
    Ok(moved)
}

/// For each master of `map`, its node among `addrs` (the masters when the run began).
fn node_route(map: &SlotMap, addrs: &[String]) -> Result<Vec<usize>, EngineError> {
    map.masters()
        .iter()
        .map(|m| {
            addrs
                .iter()
                .position(|a| *a == m.addr())
                .ok_or_else(|| EngineError::Refused {
                    index: 0,
                    message: format!(
                        "{} became a master mid-run (new masters mid-run are not followed)",
                        m.addr()
                    ),
                })
        })
        .collect()
}

/// Every node with requests sends them and reads their replies, side by side.
async fn send_round(
    nodes: &mut [Node<'_>],
    enc: &Encoder,
    per: u64,
    ctx: &RunContext,
    tally: &RefCell<&mut Tally>,
) -> Result<(), EngineError> {
    let touched = nodes.iter().filter(|n| !n.requests.is_empty()).count();
    tally.borrow_mut().round_trips += touched as u64;
    let sub_batches = nodes
        .iter_mut()
        .filter(|n| !n.requests.is_empty())
        .map(|n| async {
            let addr = n.share.addr.clone();
            n.sub_batch(enc, per, ctx, tally)
                .await
                .map_err(|e| match e {
                    // Redis's own refusal names its request; a broken connection names the node.
                    EngineError::Refused { .. } => e,
                    e => EngineError::Master {
                        addr,
                        source: Box::new(e),
                    },
                })
        });
    for result in join_all(sub_batches).await {
        result?;
    }
    Ok(())
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

/// A request for a node: its index, whether it goes after ASKING, and why it came here
/// again (its span's mark; the latest redirect when there were several).
#[derive(Debug, Clone, Copy)]
struct Request {
    i: u64,
    asking: bool,
    redirect: Option<Redirected>,
}

/// A master's connection and its share of the round in flight.
struct Node<'c> {
    /// Its place among the run's masters (`ClusterRun::masters`): what its spans carry.
    index: u16,
    writer: Writer<'c>,
    replies: Replies<'c>,
    /// This round's requests for it, in order.
    requests: Vec<Request>,
    /// Those it answered MOVED or ASK.
    redirected: Vec<(u64, Redirect)>,
    out: Vec<u8>,
    share: MasterShare,
}

impl Node<'_> {
    /// Writes this node's requests (`per` to a write) while reading their replies; then
    /// forgets them.
    async fn sub_batch(
        &mut self,
        enc: &Encoder,
        per: u64,
        ctx: &RunContext,
        tally: &RefCell<&mut Tally>,
    ) -> Result<(), EngineError> {
        let Node {
            index,
            writer,
            replies,
            requests,
            redirected,
            out,
            share,
        } = self;
        let reqs = &*requests;
        // When each write began: its commands' issue time (the reader never gets ahead of it).
        let issued = RefCell::new(Vec::with_capacity(reqs.len().div_ceil(per as usize)));
        let write = async {
            for chunk in reqs.chunks(per as usize) {
                out.clear();
                let mut commands = 0;
                for r in chunk {
                    if r.asking {
                        out.extend_from_slice(ASKING);
                        commands += 1;
                    }
                    enc.encode(out, r.i);
                    commands += 1;
                }
                issued.borrow_mut().push(Instant::now());
                let upto = chunk.iter().map(|r| r.i + 1).max().unwrap_or(0);
                writer.write(out, commands, upto).await?;
            }
            Ok::<_, EngineError>(())
        };
        let read = async {
            let mut got = 0usize;
            // The ASKING before request `got` has been answered.
            let mut asked = false;
            while got < reqs.len() {
                let read_at = replies.fill(reqs[got].i).await?;
                let issued = issued.borrow();
                let mut tally = tally.borrow_mut();
                let before = got;
                while got < reqs.len() {
                    let Request {
                        i,
                        asking,
                        redirect,
                    } = reqs[got];
                    let Some(reply) = replies.next()? else { break };
                    if asking && !asked {
                        if resp::is_error(reply) {
                            return Err(EngineError::Refused {
                                index: i,
                                message: format!("ASKING: {}", resp::error_text(reply)),
                            });
                        }
                        asked = true;
                        continue;
                    }
                    asked = false;
                    if resp::is_error(reply) {
                        let message = resp::error_text(reply);
                        match Redirect::parse(message.as_bytes()) {
                            Some(r) => redirected.push((i, r)),
                            None => return Err(EngineError::Refused { index: i, message }),
                        }
                    } else {
                        share.commands += 1;
                        let write = got / per as usize;
                        let at = issued.get(write).copied().unwrap_or(read_at);
                        tally.answered_by(i, at, read_at, *index, redirect);
                    }
                    got += 1;
                }
                if got > before {
                    tally.publish(ctx);
                }
            }
            Ok::<_, EngineError>(())
        };
        tokio::try_join!(write, read)?;
        share.round_trips += 1;
        requests.clear();
        Ok(())
    }
}
