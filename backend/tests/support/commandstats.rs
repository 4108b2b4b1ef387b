//! Redis's own counts of what it was sent, from the text of `INFO stats commandstats` (as
//! redis-cli prints it): the oracle for what an observation counted.

use std::collections::HashMap;

/// Redis's counters at one reading: each command's calls (e.g. "set", "client|setname"),
/// the calls that failed, and every error reply.
#[derive(Debug, Default)]
pub struct Counted {
    pub calls: HashMap<String, u64>,
    pub failed: u64,
    pub errors: u64,
}

impl Counted {
    /// Reads the counters from `INFO stats commandstats`'s answer.
    pub fn parse(info: &str) -> Counted {
        assert!(
            info.contains("# Commandstats") && info.contains("total_error_replies:"),
            "not INFO stats commandstats's answer: {info}"
        );
        let field = |fields: &str, name: &str| -> u64 {
            fields
                .split(',')
                .find_map(|f| f.strip_prefix(name)?.parse().ok())
                .unwrap_or(0)
        };
        let mut counted = Counted::default();
        for line in info.lines().map(str::trim) {
            if let Some(n) = line.strip_prefix("total_error_replies:") {
                counted.errors = n.parse().unwrap();
            } else if let Some((name, fields)) = line
                .strip_prefix("cmdstat_")
                .and_then(|l| l.split_once(':'))
            {
                counted.calls.insert(name.into(), field(fields, "calls="));
                counted.failed += field(fields, "failed_calls=");
            }
        }
        counted
    }

    /// Calls of `name` since `before`.
    pub fn since(&self, before: &Counted, name: &str) -> u64 {
        self.calls.get(name).copied().unwrap_or(0) - before.calls.get(name).copied().unwrap_or(0)
    }

    /// Every command Redis received since `before`, that reading's own INFO aside. A command
    /// it does not know (redis-py's CLIENT SETINFO, before Redis 7.2) is in no commandstats
    /// line, but its error reply is counted; one that ran and failed is in both.
    pub fn received_since(&self, before: &Counted) -> u64 {
        let calls: u64 = self.calls.keys().map(|k| self.since(before, k)).sum();
        calls + (self.errors - before.errors) - (self.failed - before.failed) - 1
    }
}
