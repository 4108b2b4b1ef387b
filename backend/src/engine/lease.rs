//! A run's lease: the mark that its keys are in use. Several pipescopes may share one Redis
//! (a workshop points everyone at one), and each sweeps away the keys that crashed runs left
//! behind; the lease is how a sweep tells a live run's keys from a dead one's.
//!
//! A live run holds `pipescope:lease:{<run-id>}` (the run id its hash tag, so on a cluster it
//! sits in the slot of the run's one-tag keys) with a time to live, renewed while it runs
//! (from before its first key is written to after its keys are removed), and deleted when it
//! ends. A run whose process died stops renewing, and its lease expires: its keys are then
//! leftovers. The lease names its holder (host and process), so a lease whose process on this
//! host is gone (killed, or exited at a second Ctrl-C) is dead at once, not only once it
//! expires. `SETNX` takes it, so a run id that another live run holds is refused rather than
//! shared. Its commands (`SETNX`, `PEXPIRE`, `DEL`, `GETRANGE`) are none a run measures.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::cluster::{SlotMap, key_slot};
use crate::target::{RedisTarget, TargetError};

/// How long a lease outlives its last renewal.
const TTL: Duration = Duration::from_secs(45);
/// How often a live run renews it: a few renewals fit in one TTL, so a busy machine that
/// renews late does not lose it.
const RENEW: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "run id {0} is already in use on this Redis by another pipescope's live run: start the run again"
    )]
    Taken(u64),
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// The lease key of run `run_id`.
pub fn key(run_id: u64) -> String {
    format!("{}lease:{{{run_id}}}", shared::keys::PREFIX)
}

/// This host's name, as the kernel has it.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Who holds a lease: `<host> <pid>`.
fn holder() -> String {
    format!("{} {}", hostname(), std::process::id())
}

/// A lease held by `value` is dead: its holder was a process of this host that is gone.
fn holder_gone(value: &str) -> bool {
    let Some((host, pid)) = value.rsplit_once(' ') else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    host == hostname() && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// A run's lease, renewed on a task of its own until `release`d (or dropped: then it expires).
pub struct Lease {
    key: String,
    con: redis::aio::MultiplexedConnection,
    renewing: tokio::task::JoinHandle<()>,
}

impl Lease {
    /// Takes run `run_id`'s lease on `target` (on a cluster, on the master serving its key).
    pub async fn take(target: &RedisTarget, run_id: u64) -> Result<Lease, LeaseError> {
        let key = key(run_id);
        let node = node_of(target, &key).await?;
        let mut con = node.admin_connection().await?;
        let redis_err = |error| TargetError::Redis {
            addr: node.addr(),
            error,
        };
        let (taken, _): (bool, bool) = redis::pipe()
            .cmd("SETNX")
            .arg(&key)
            .arg(holder())
            .cmd("PEXPIRE")
            .arg(&key)
            .arg(TTL.as_millis() as u64)
            .query_async(&mut con)
            .await
            .map_err(redis_err)?;
        if !taken {
            return Err(LeaseError::Taken(run_id));
        }
        let renewing = {
            let (key, mut con) = (key.clone(), con.clone());
            tokio::spawn(async move {
                let mut every =
                    tokio::time::interval_at(tokio::time::Instant::now() + RENEW, RENEW);
                loop {
                    every.tick().await;
                    let renewed: redis::RedisResult<bool> = redis::cmd("PEXPIRE")
                        .arg(&key)
                        .arg(TTL.as_millis() as u64)
                        .query_async(&mut con)
                        .await;
                    if let Err(e) = renewed {
                        tracing::warn!(lease = key, "renewing a run's lease: {e}");
                    }
                }
            })
        };
        Ok(Lease { key, con, renewing })
    }

    /// Ends the lease: its keys are gone, nobody need keep them.
    pub async fn release(mut self) {
        self.renewing.abort();
        let gone: redis::RedisResult<u64> = redis::cmd("DEL")
            .arg(&self.key)
            .query_async(&mut self.con)
            .await;
        if let Err(e) = gone {
            // It expires by itself.
            tracing::warn!(lease = self.key, "releasing a run's lease: {e}");
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewing.abort();
    }
}

/// The node that holds `key`: `target` itself, or on a cluster the master serving its slot.
async fn node_of(target: &RedisTarget, key: &str) -> Result<RedisTarget, TargetError> {
    if !target.is_cluster() {
        return Ok(target.clone());
    }
    let mut seed = target.admin_connection().await?;
    let map = SlotMap::discover(&mut seed, &target.addr()).await?;
    let master = &map.masters()[map.master_of(key_slot(key.as_bytes()))];
    target.at(&master.host, master.port)
}

/// Which of `runs` hold a live lease now, on `target` (a single server, or a cluster whose
/// map is `map`). A lease whose holder was a process of this host that is gone is deleted.
pub async fn live(
    target: &RedisTarget,
    map: Option<&SlotMap>,
    runs: &HashSet<u64>,
) -> Result<HashSet<u64>, TargetError> {
    // The runs grouped by the node that holds their lease.
    let mut by_node: HashMap<usize, Vec<u64>> = HashMap::new();
    for &run in runs {
        let node = map.map_or(0, |m| m.master_of(key_slot(key(run).as_bytes())));
        by_node.entry(node).or_default().push(run);
    }
    let mut live = HashSet::new();
    for (node, runs) in by_node {
        let node = match map {
            Some(m) => {
                let master = &m.masters()[node];
                target.at(&master.host, master.port)?
            }
            None => target.clone(),
        };
        let redis_err = |error| TargetError::Redis {
            addr: node.addr(),
            error,
        };
        let mut con = node.admin_connection().await?;
        let mut pipe = redis::pipe();
        // GETRANGE, not GET: a GET run's own count in Redis's commandstats stays its own.
        for run in &runs {
            pipe.cmd("GETRANGE").arg(key(*run)).arg(0).arg(-1);
        }
        let held: Vec<String> = pipe.query_async(&mut con).await.map_err(redis_err)?;
        let mut gone = redis::pipe();
        for (run, holder) in runs.iter().zip(held) {
            // GETRANGE of no key is "".
            match holder.as_str() {
                "" => {}
                h if holder_gone(h) => {
                    gone.cmd("DEL").arg(key(*run)).ignore();
                }
                _ => {
                    live.insert(*run);
                }
            }
        }
        if !gone.is_empty() {
            gone.query_async::<()>(&mut con).await.map_err(redis_err)?;
        }
    }
    Ok(live)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_of_a_gone_process_of_this_host_is_dead_and_others_are_not() {
        assert!(!holder_gone(&holder()), "this process is alive");
        // Above the largest pid Linux gives (2^22).
        assert!(holder_gone(&format!("{} 4194305", hostname())));
        assert!(
            !holder_gone("another-host 4194305"),
            "another host's: not ours to judge"
        );
        assert!(!holder_gone("garbage"));
    }

    #[test]
    fn the_lease_shares_the_one_tag_keys_slot_and_is_no_runs_key() {
        let k = key(42);
        assert_eq!(key_slot(k.as_bytes()), key_slot(b"pipescope:{42}:k0"));
        assert_eq!(shared::keys::run_id_of(k.as_bytes()), None);
    }
}
