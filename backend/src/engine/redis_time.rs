//! Redis's own time per call, as Redis measures it: `INFO commandstats` before and after a run,
//! the change in `usec` over the change in `calls` for the command that carries the run's
//! requests. Other clients' calls of the same command in that window count too. The same
//! reading brings Redis's CPU time (`INFO cpu`), the connections it accepted and the commands
//! it processed (`INFO stats`): what a run cost Redis as a whole (`shared::RedisLoad`).
//!
//! The window opens when the engine says its set-up is done (`open_window`: a GET run's keys
//! seeded, the other client connected), just before the run's own connections open, so
//! set-up on connections of its own stays outside it.

use std::future::Future;
use std::time::Duration;

use shared::{Mode, RedisLoad, RunSpec};
use tokio::sync::oneshot;

use crate::target::RedisTarget;

/// Answered by whoever reads the counters, once they are read.
pub type Opened = oneshot::Sender<()>;

/// Where the engine says its set-up is done and the measured part starts.
pub type WindowOpens = oneshot::Sender<Opened>;

/// The engine's side: says set-up is done, if anyone listens, and waits (at most `wait`) until
/// Redis's counters have been read, before the run's own connections open.
pub async fn open_window(to: Option<WindowOpens>, wait: Duration) {
    let Some(to) = to else { return };
    let (opened, read) = oneshot::channel();
    if to.send(opened).is_ok() {
        let _ = tokio::time::timeout(wait, read).await;
    }
}

/// Runs `run` to its end, reading Redis's counters for `command` when the engine opens the
/// window on `opens`. `None` if it never did (it failed during set-up) or Redis did not say.
pub async fn counters_at_window<T>(
    target: &RedisTarget,
    command: &str,
    opens: oneshot::Receiver<Opened>,
    run: impl Future<Output = T>,
) -> (T, Option<Counters>) {
    tokio::pin!(run);
    let opened = tokio::select! {
        out = &mut run => return (out, None),
        opened = opens => opened.ok(),
    };
    let Some(opened) = opened else {
        return (run.await, None);
    };
    let before = counters(target, command).await;
    let _ = opened.send(());
    (run.await, before)
}

/// The `INFO commandstats` entry (`cmdstat_<name>`) whose calls carry `spec`'s requests: the
/// command itself, its MSET/MGET for `Mode::Mset`, and EXEC for a transaction (Redis runs the
/// queued commands inside EXEC, and counts their time in it).
pub fn counted_command(spec: &RunSpec) -> String {
    let name = match spec.mode {
        Mode::Transaction { .. } => "EXEC",
        Mode::Mset { .. } => spec.command.multi_key().unwrap_or(spec.command.name()),
        Mode::Sequential
        | Mode::Pipelined { .. }
        | Mode::Multiplexed { .. }
        | Mode::Connections { .. } => spec.command.name(),
    };
    name.to_ascii_lowercase()
}

/// A command's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandStats {
    pub calls: u64,
    pub usec: u64,
}

impl CommandStats {
    /// µs per call between `self` (before) and `after`; `None` without calls in between.
    pub fn usec_per_call_until(self, after: CommandStats) -> Option<f64> {
        let calls = after.calls.checked_sub(self.calls).filter(|&c| c > 0)?;
        let usec = after.usec.checked_sub(self.usec)?;
        Some(usec as f64 / calls as f64)
    }
}

/// `command`'s counters in an `INFO commandstats` reply (zero if it was never called).
pub fn parse_command_stats(info: &str, command: &str) -> CommandStats {
    let prefix = format!("cmdstat_{command}:");
    let Some(fields) = info.lines().find_map(|l| l.trim().strip_prefix(&prefix)) else {
        return CommandStats::default();
    };
    let field = |name: &str| {
        fields
            .split(',')
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    CommandStats {
        calls: field("calls"),
        usec: field("usec"),
    }
}

/// Redis's counters at one moment: the run's command's, its CPU time, its accepted
/// connections and the commands it processed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub command: CommandStats,
    /// `used_cpu_user` + `used_cpu_sys`, µs; `None` if INFO left them out.
    pub cpu_us: Option<f64>,
    /// `total_connections_received`; `None` if INFO left it out.
    pub connections: Option<u64>,
    /// `total_commands_processed`; `None` if INFO left it out.
    pub commands: Option<u64>,
}

impl Counters {
    /// What the run between `self` (before) and `after` cost Redis, over `wire_commands`
    /// commands. The reading afterwards opened one connection of its own: not counted. (The
    /// memory sampler's and the other client's connected before the window opened.)
    pub fn load_until(self, after: Counters, wire_commands: u64) -> Option<RedisLoad> {
        let cpu_us = (after.cpu_us? - self.cpu_us?).max(0.0);
        let connections = after.connections?.checked_sub(self.connections?)?;
        let commands = after
            .commands
            .zip(self.commands)
            .and_then(|(a, b)| a.checked_sub(b));
        Some(RedisLoad {
            cpu_us,
            cpu_us_per_command: cpu_us / wire_commands.max(1) as f64,
            connections_received: connections.saturating_sub(1),
            commands_processed: commands,
        })
    }
}

/// A numeric `name:value` line of an INFO reply.
fn info_field(info: &str, name: &str) -> Option<f64> {
    info.lines()
        .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// The counters in an `INFO cpu stats commandstats` reply.
pub fn parse_counters(info: &str, command: &str) -> Counters {
    let cpu = info_field(info, "used_cpu_user")
        .zip(info_field(info, "used_cpu_sys"))
        .map(|(user, sys)| (user + sys) * 1e6);
    Counters {
        command: parse_command_stats(info, command),
        cpu_us: cpu,
        connections: info_field(info, "total_connections_received").map(|c| c as u64),
        commands: info_field(info, "total_commands_processed").map(|c| c as u64),
    }
}

/// Redis's counters now, for `command`, on an admin connection (straight to Redis). `None`,
/// logged, where Redis does not say (INFO renamed or refused), and on a cluster (they are per
/// node): the run goes on without them.
pub async fn counters(target: &RedisTarget, command: &str) -> Option<Counters> {
    if target.is_cluster() {
        // One node's counters would be a part passed off as the whole.
        return None;
    }
    let read = async {
        let mut con = target.admin_connection().await.map_err(|e| e.to_string())?;
        redis::cmd("INFO")
            .arg("cpu")
            .arg("stats")
            .arg("commandstats")
            .query_async::<String>(&mut con)
            .await
            .map_err(|e| e.to_string())
    };
    match read.await {
        Ok(info) => Some(parse_counters(&info, command)),
        Err(e) => {
            tracing::warn!("INFO cpu stats commandstats: {e}; Redis's own time is not reported");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_calls_and_usec_of_one_command() {
        let info = "# Commandstats\r\ncmdstat_set:calls=1500,usec=1800,usec_per_call=1.20,rejected_calls=0,failed_calls=0\r\ncmdstat_setex:calls=7,usec=70,usec_per_call=10.00\r\n";
        let set = parse_command_stats(info, "set");
        assert_eq!(
            set,
            CommandStats {
                calls: 1500,
                usec: 1800
            }
        );
        assert_eq!(parse_command_stats(info, "get"), CommandStats::default());
        let before = CommandStats {
            calls: 500,
            usec: 600,
        };
        assert_eq!(before.usec_per_call_until(set), Some(1.2));
        assert_eq!(set.usec_per_call_until(set), None, "no calls in between");
    }

    #[test]
    fn reads_cpu_and_connections_and_what_a_run_cost() {
        let info = |user: &str, sys: &str, conns: u64, calls: u64| {
            format!(
                "# CPU\r\nused_cpu_sys:{sys}\r\nused_cpu_user:{user}\r\nused_cpu_sys_children:9.000000\r\n# Stats\r\ntotal_connections_received:{conns}\r\ntotal_commands_processed:{}\r\n# Commandstats\r\ncmdstat_set:calls={calls},usec=10,usec_per_call=1.00\r\n",
                calls + 7
            )
        };
        let before = parse_counters(&info("1.500000", "0.250000", 10, 0), "set");
        assert_eq!(before.cpu_us, Some(1_750_000.0));
        assert_eq!(before.connections, Some(10));
        let after = parse_counters(&info("2.000000", "0.750000", 19, 1000), "set");
        assert_eq!(after.command.calls, 1000);
        let load = before.load_until(after, 1000).unwrap();
        assert_eq!(load.cpu_us, 1_000_000.0);
        assert_eq!(load.cpu_us_per_command, 1_000.0);
        // 9 accepted, one of them the reading afterwards.
        assert_eq!(load.connections_received, 8);
        assert_eq!(load.commands_processed, Some(1000));
        assert_eq!(
            parse_counters("# Commandstats\r\n", "set").load_until(after, 1),
            None,
            "no figure where INFO says nothing"
        );
    }

    #[test]
    fn the_counted_command_is_the_one_on_the_wire() {
        let spec = |mode| RunSpec::set(10, mode);
        assert_eq!(counted_command(&spec(Mode::Sequential)), "set");
        assert_eq!(counted_command(&spec(Mode::pipelined(10))), "set");
        assert_eq!(counted_command(&spec(Mode::Mset { batch: 5 })), "mset");
        assert_eq!(
            counted_command(&spec(Mode::Transaction { batch: 5 })),
            "exec"
        );
        let get = RunSpec {
            command: shared::Command::Get,
            ..spec(Mode::Mset { batch: 5 })
        };
        assert_eq!(counted_command(&get), "mget");
    }
}
