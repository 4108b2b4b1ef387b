//! Redis's own time per call, as Redis measures it: `INFO commandstats` before and after a run,
//! the change in `usec` over the change in `calls` for the command that carries the run's
//! requests. Other clients' calls of the same command in that window count too.

use shared::{Mode, RunSpec};

use crate::target::RedisTarget;

/// The `INFO commandstats` entry (`cmdstat_<name>`) whose calls carry `spec`'s requests: the
/// command itself, its MSET/MGET for `Mode::Mset`, and EXEC for a transaction (Redis runs the
/// queued commands inside EXEC, and counts their time in it).
pub fn counted_command(spec: &RunSpec) -> String {
    let name = match spec.mode {
        Mode::Transaction { .. } => "EXEC",
        Mode::Mset { .. } => spec.command.multi_key().unwrap_or(spec.command.name()),
        Mode::Sequential | Mode::Pipelined { .. } | Mode::Multiplexed { .. } => spec.command.name(),
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

/// `command`'s counters now, on an admin connection (straight to Redis). `None`, logged, where
/// Redis does not say (INFO renamed or refused): the run goes on without the figure.
pub async fn command_stats(target: &RedisTarget, command: &str) -> Option<CommandStats> {
    let read = async {
        let mut con = target.admin_connection().await.map_err(|e| e.to_string())?;
        redis::cmd("INFO")
            .arg("commandstats")
            .query_async::<String>(&mut con)
            .await
            .map_err(|e| e.to_string())
    };
    match read.await {
        Ok(info) => Some(parse_command_stats(&info, command)),
        Err(e) => {
            tracing::warn!("INFO commandstats: {e}; Redis's own time is not reported");
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
