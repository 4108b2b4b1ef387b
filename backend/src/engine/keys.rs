//! Where a run's keys live and how they are removed. Everything the engine writes is under
//! `pipescope:<run-id>:` (or `pipescope:{<run-id>}:`, the one-tag layout); nothing else in the
//! database is ever touched.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::future::join_all;

use crate::target::{RedisTarget, TargetError};

/// Keys removed per UNLINK, and UNLINKs sent per pipeline: big enough to be quick, small
/// enough never to block Redis noticeably.
const UNLINK_CHUNK: u64 = 1000;
const UNLINKS_PER_PIPELINE: u64 = 16;

/// Run ids start at the wall clock in ms, so key namespaces differ across restarts.
pub fn first_run_id() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(1)
}

/// Runs whose keys may be in Redis now (started, not yet cleaned up), in this process: what a
/// second Ctrl-C names in the command it prints (`crate::cancel`). Process-wide, as signals are.
static IN_FLIGHT: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());

/// Marks a run in flight (`in_flight`) until dropped.
pub struct InFlight(u64);

impl InFlight {
    pub fn new(run_id: u64) -> InFlight {
        IN_FLIGHT.lock().expect("runs in flight").insert(run_id);
        InFlight(run_id)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.lock().expect("runs in flight").remove(&self.0);
    }
}

/// The runs in flight now, oldest first.
pub fn in_flight() -> Vec<u64> {
    IN_FLIGHT
        .lock()
        .expect("runs in flight")
        .iter()
        .copied()
        .collect()
}

use shared::keys::{KeyLayout, PREFIX, run_id_of};
pub use shared::keys::{namespace, namespace_in};

/// Writes `<namespace>k<i>` (`shared::keys::key`) into `out`, reusing its allocation.
pub fn write_key(out: &mut Vec<u8>, namespace: &str, i: u64) {
    out.clear();
    out.extend_from_slice(namespace.as_bytes());
    out.push(b'k');
    out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
}

/// Removes keys `0..written` of a run with spread keys, then sweeps with SCAN for anything
/// else of the run (in either layout). Returns how many keys were removed.
pub async fn remove_run_keys(
    target: &RedisTarget,
    run_id: u64,
    written: u64,
) -> Result<u64, TargetError> {
    remove_laid_out_keys(target, run_id, KeyLayout::Spread, written).await
}

/// The SCAN pattern of every key of run `run_id`, in either layout (`pipescope:<id>:…`,
/// `pipescope:{<id>}:…`); it matches a few others too (`pipescope:1<id>:…`), which `is_run`
/// leaves alone. One pattern, so the sweep walks the keyspace once.
fn run_pattern(run_id: u64) -> String {
    format!("{PREFIX}*{run_id}[:}}]*")
}

fn is_run(run_id: u64) -> impl Fn(&[u8]) -> bool {
    move |k| run_id_of(k) == Some(run_id)
}

/// Removes keys `0..written` of a run, named as `layout` says, then sweeps with SCAN for
/// anything else of the run (in either layout). Returns how many keys were removed.
pub async fn remove_laid_out_keys(
    target: &RedisTarget,
    run_id: u64,
    layout: KeyLayout,
    written: u64,
) -> Result<u64, TargetError> {
    if target.is_cluster() {
        return remove_cluster_run_keys(target, run_id, layout, written).await;
    }
    let redis_err = |source| TargetError::Redis {
        addr: target.addr(),
        error: source,
    };
    let mut con = target.admin_connection().await?;
    let ns = namespace_in(run_id, layout);
    let mut removed = 0u64;
    let mut key = Vec::new();
    let mut start = 0u64;
    while start < written {
        let mut pipe = redis::pipe();
        for _ in 0..UNLINKS_PER_PIPELINE {
            if start >= written {
                break;
            }
            let end = (start + UNLINK_CHUNK).min(written);
            let mut cmd = redis::cmd("UNLINK");
            for i in start..end {
                write_key(&mut key, &ns, i);
                cmd.arg(&key[..]);
            }
            pipe.add_command(cmd);
            start = end;
        }
        let counts: Vec<u64> = pipe.query_async(&mut con).await.map_err(redis_err)?;
        removed += counts.iter().sum::<u64>();
    }
    // Anything left of the run (there should be nothing) goes too.
    removed += unlink_matching(&mut con, &run_pattern(run_id), is_run(run_id))
        .await
        .map_err(redis_err)?;
    Ok(removed)
}

/// `remove_run_keys` on a cluster. The names `0..written` are walked once, `SLOT_WINDOW` at a
/// time: each key's slot computed once, a window's keys gathered per slot and each slot's
/// UNLINKed together on the master serving it (one UNLINK may name many keys of one slot,
/// never keys of several), the masters' pipelines sent side by side; then each master is
/// swept. A master that cannot be reached (it died) does not stop the others' cleanup; the
/// first such error is returned once they are done.
async fn remove_cluster_run_keys(
    target: &RedisTarget,
    run_id: u64,
    layout: KeyLayout,
    written: u64,
) -> Result<u64, TargetError> {
    let mut seed = target.admin_connection().await?;
    let map = crate::cluster::SlotMap::discover(&mut seed, &target.addr()).await?;
    let mut masters = Vec::new();
    for master in map.masters() {
        let node = target.at(&master.host, master.port)?;
        let con = node.admin_connection().await;
        if let Err(e) = &con {
            tracing::warn!("cleanup: {e}");
        }
        masters.push(Master { node, con });
    }
    // Fewer keys on the masters than names to walk (a GET run's seeding stopped early notes
    // every key it would seed): the sweep alone finds them, sooner.
    let mut held = 0u64;
    for m in &mut masters {
        let Ok(con) = &mut m.con else { continue };
        match redis::cmd("DBSIZE").query_async::<u64>(con).await {
            Ok(n) => held += n,
            Err(source) => m.failed(source),
        }
    }
    let walk = if held < written { 0 } else { written };
    let ns = namespace_in(run_id, layout);
    let mut removed = 0u64;
    let mut key = Vec::new();
    let mut start = 0u64;
    while start < walk {
        let end = (start + SLOT_WINDOW).min(walk);
        let mut by_slot: HashMap<u16, Vec<Vec<u8>>> = HashMap::new();
        for i in start..end {
            write_key(&mut key, &ns, i);
            by_slot
                .entry(crate::cluster::key_slot(&key))
                .or_default()
                .push(key.clone());
        }
        let mut pipes = vec![redis::pipe(); masters.len()];
        for (slot, keys) in &by_slot {
            for chunk in keys.chunks(UNLINK_CHUNK as usize) {
                pipes[map.master_of(*slot)].cmd("UNLINK").arg(chunk);
            }
        }
        let sent = masters
            .iter_mut()
            .zip(&pipes)
            .map(|(m, pipe)| m.unlink(pipe));
        removed += join_all(sent).await.into_iter().sum::<u64>();
        start = end;
    }
    let pattern = run_pattern(run_id);
    for m in &mut masters {
        let Ok(con) = &mut m.con else { continue };
        match unlink_matching(con, &pattern, is_run(run_id)).await {
            Ok(n) => removed += n,
            Err(source) => m.failed(source),
        }
    }
    match masters.into_iter().find_map(|m| m.con.err()) {
        Some(e) => Err(e),
        None => Ok(removed),
    }
}

/// Names per window of a cluster cleanup: about six keys per slot for spread keys.
const SLOT_WINDOW: u64 = 100_000;

/// One master in a cluster cleanup: its connection, or why it has none (it stops there).
struct Master {
    node: RedisTarget,
    con: Result<redis::aio::MultiplexedConnection, TargetError>,
}

impl Master {
    /// Sends `pipe`'s UNLINKs, if any and if the master is still reachable; returns the keys
    /// they removed.
    async fn unlink(&mut self, pipe: &redis::Pipeline) -> u64 {
        let Ok(con) = &mut self.con else { return 0 };
        if pipe.is_empty() {
            return 0;
        }
        match pipe.query_async::<Vec<u64>>(con).await {
            Ok(counts) => counts.iter().sum(),
            Err(source) => {
                self.failed(source);
                0
            }
        }
    }

    fn failed(&mut self, source: redis::RedisError) {
        let e = TargetError::Redis {
            addr: self.node.addr(),
            error: source,
        };
        tracing::warn!("cleanup: {e}");
        self.con = Err(e);
    }
}

/// Removes keys left under `pipescope:<id>:` (or `pipescope:{<id>}:`) by runs older than
/// `before` that are no longer live: runs of an earlier pipescope that crashed or was killed
/// before it could clean up. A run that holds its lease (`super::lease`: another pipescope's
/// run on the same Redis, live now) keeps its keys. SCAN + UNLINK, never KEYS. Returns how
/// many keys were removed.
pub async fn sweep_leftovers(target: &RedisTarget, before: u64) -> Result<u64, TargetError> {
    let select = |k: &[u8]| run_id_of(k).filter(|&id| id < before);
    let pattern = format!("{PREFIX}*");
    if !target.is_cluster() {
        let mut con = target.admin_connection().await?;
        return unlink_unleased(&mut con, target, target, None, &pattern, select).await;
    }
    // Each master holds its own keys, and SCANs only those.
    let mut seed = target.admin_connection().await?;
    let map = crate::cluster::SlotMap::discover(&mut seed, &target.addr()).await?;
    let mut removed = 0;
    for master in map.masters() {
        let node = target.at(&master.host, master.port)?;
        let mut con = node.admin_connection().await?;
        removed += unlink_unleased(&mut con, &node, target, Some(&map), &pattern, select).await?;
    }
    Ok(removed)
}

/// `unlink_matching` on `node` for the keys `run_of` gives a run, but for runs that hold
/// their lease on `target` (whose cluster map is `map`). The leases are read after each
/// page's SCAN: a run takes its lease before it writes its first key, so any key a page
/// found is of a run whose lease, if live, is seen then.
async fn unlink_unleased(
    con: &mut redis::aio::MultiplexedConnection,
    node: &RedisTarget,
    target: &RedisTarget,
    map: Option<&crate::cluster::SlotMap>,
    pattern: &str,
    run_of: impl Fn(&[u8]) -> Option<u64>,
) -> Result<u64, TargetError> {
    let redis_err = |error| TargetError::Redis {
        addr: node.addr(),
        error,
    };
    let mut cursor = 0u64;
    let (mut removed, mut kept) = (0u64, 0u64);
    loop {
        let (next, found): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(UNLINK_CHUNK)
            .query_async(con)
            .await
            .map_err(redis_err)?;
        let runs: HashSet<u64> = found.iter().filter_map(|k| run_of(k)).collect();
        if !runs.is_empty() {
            let live = super::lease::live(target, map, &runs).await?;
            let mut pipe = redis::pipe();
            for k in &found {
                match run_of(k) {
                    Some(run) if live.contains(&run) => kept += 1,
                    Some(_) => {
                        pipe.cmd("UNLINK").arg(k);
                    }
                    None => {}
                }
            }
            if !pipe.is_empty() {
                let counts: Vec<u64> = pipe.query_async(con).await.map_err(redis_err)?;
                removed += counts.iter().sum::<u64>();
            }
        }
        if next == 0 {
            break;
        }
        cursor = next;
    }
    if kept > 0 {
        tracing::info!(
            keys = kept,
            "kept the keys of runs that are live now (another pipescope's, on the same Redis)"
        );
    }
    Ok(removed)
}

/// UNLINKs every key matching the SCAN `pattern` for which `select(key)` holds, a page of
/// SCAN at a time. SCAN + UNLINK, never KEYS: Redis stays responsive whatever the key count.
/// One UNLINK per key, a page's pipelined together: a page found on a cluster node spans
/// slots, and a cluster refuses one UNLINK of keys in several slots. Returns how many keys
/// were removed.
pub async fn unlink_matching(
    con: &mut redis::aio::MultiplexedConnection,
    pattern: &str,
    select: impl Fn(&[u8]) -> bool,
) -> redis::RedisResult<u64> {
    let mut cursor = 0u64;
    let mut removed = 0;
    loop {
        let (next, found): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(UNLINK_CHUNK)
            .query_async(con)
            .await?;
        let mut pipe = redis::pipe();
        for k in found.iter().filter(|k| select(k)) {
            pipe.cmd("UNLINK").arg(k);
        }
        if !pipe.is_empty() {
            let counts: Vec<u64> = pipe.query_async(con).await?;
            removed += counts.iter().sum::<u64>();
        }
        if next == 0 {
            return Ok(removed);
        }
        cursor = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis's glob, for the one pattern used here: `*` any run, `[:}]` one of two bytes.
    fn glob(p: &[u8], k: &[u8]) -> bool {
        match p.split_first() {
            None => k.is_empty(),
            Some((b'*', rest)) => (0..=k.len()).any(|n| glob(rest, &k[n..])),
            Some((b'[', rest)) => {
                let close = rest.iter().position(|&b| b == b']').unwrap();
                !k.is_empty() && rest[..close].contains(&k[0]) && glob(&rest[close + 1..], &k[1..])
            }
            Some((c, rest)) => k.first() == Some(c) && glob(rest, &k[1..]),
        }
    }

    #[test]
    fn the_sweep_pattern_finds_both_layouts_and_selects_only_the_run() {
        let p = run_pattern(42);
        for k in [
            "pipescope:42:k7",
            "pipescope:{42}:k7",
            "pipescope:{42}:counter",
        ] {
            assert!(
                glob(p.as_bytes(), k.as_bytes()) && is_run(42)(k.as_bytes()),
                "{k}"
            );
        }
        for k in ["pipescope:142:k7", "pipescope:{420}:k7", "pipescope:4:k42:"] {
            assert!(!is_run(42)(k.as_bytes()), "{k}");
        }
        assert!(!glob(p.as_bytes(), b"other:42:k7"));
    }

    #[test]
    fn keys_live_in_the_run_namespace() {
        let mut k = Vec::new();
        write_key(&mut k, &namespace(7), 42);
        assert_eq!(k, b"pipescope:7:k42");
    }
}
