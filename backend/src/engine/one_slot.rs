//! Runs on a Redis Cluster whose keys are all in one slot (the one-tag key layout, or the
//! other client's one counter): MULTI/EXEC, MSET/MGET, multiplexed and the other client need
//! every key of a command (or of a transaction) on one master, and here they are. The run goes
//! to the master serving that slot exactly as to one server (`on_one_server`), and its share
//! is recorded as a cluster run's: that master did every command, the others none.
//!
//! The slot is the one the map says when the run begins. If it moves mid-run, that master
//! answers MOVED or ASK, which these modes report as the command's refusal (they are not
//! re-sent: a transaction or a multiplexed window cannot be split across a move).

use shared::{ClusterRun, MasterShare, RunSpec};

use super::EngineError;
use super::wire::Tally;
use crate::cluster::{SlotMap, key_slot};
use crate::target::RedisTarget;

/// The master (its index in `map`) serving the slot of every key of run `run_id`.
pub fn master(map: &SlotMap, run_id: u64, spec: RunSpec) -> usize {
    let key = match spec.other_client {
        true => shared::keys::counter(run_id, spec.keys),
        false => shared::keys::key_in(run_id, 0, spec.keys),
    };
    map.master_of(key_slot(key.as_bytes()))
}

/// Master `m` of `map`, as a target of its own.
pub fn node(target: &RedisTarget, map: &SlotMap, m: usize) -> Result<RedisTarget, EngineError> {
    let master = &map.masters()[m];
    Ok(target.at(&master.host, master.port)?)
}

/// Records the run as master `m`'s alone: all its commands and round trips, none elsewhere.
pub fn record(tally: &mut Tally, map: &SlotMap, m: usize) {
    let masters = map
        .masters()
        .iter()
        .enumerate()
        .map(|(j, master)| MasterShare {
            addr: master.addr(),
            commands: if j == m { tally.done } else { 0 },
            round_trips: if j == m { tally.round_trips } else { 0 },
        })
        .collect();
    tally.cluster = Some(ClusterRun {
        masters,
        ..ClusterRun::default()
    });
}

/// A failure of the master's connection names the master; Redis's own refusals and the
/// run's own stops are reported as they are.
pub fn named(e: EngineError, node: &RedisTarget) -> EngineError {
    match e {
        EngineError::Timeout(..)
        | EngineError::Closed(_)
        | EngineError::Io(_)
        | EngineError::Target(_)
        | EngineError::Protocol(_) => EngineError::Master {
            addr: node.addr(),
            source: Box::new(e),
        },
        e => e,
    }
}
