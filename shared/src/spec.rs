//! A run's specification and its validation. The page validates before sending and the backend
//! validates again on receipt, with the same code, so both refuse the same things.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Hard limits on what a client may ask for. Sent to the page in `Welcome`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub max_count: u64,
    pub max_batch: u32,
    pub max_runs: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_count: 10_000_000,
        max_batch: 100_000,
        max_runs: 8,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The Redis command a run repeats. Key `k{i}` and value `v{i}`, like the classic demonstration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Command {
    #[default]
    Set,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Set => "SET",
        }
    }
}

/// How the commands travel over the one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mode {
    /// Send one command, wait for its reply, repeat: one round trip per command.
    Sequential,
    /// Write `batch` commands at once, then read their replies: one round trip per batch.
    Pipelined { batch: u32 },
}

impl Mode {
    /// Commands written before the engine waits for replies.
    pub fn batch(self) -> u32 {
        match self {
            Mode::Sequential => 1,
            Mode::Pipelined { batch } => batch,
        }
    }

    pub fn label(self) -> String {
        match self {
            Mode::Sequential => "sequential".to_string(),
            Mode::Pipelined { batch } => format!("pipelined (batch {batch})"),
        }
    }

    /// Round trips a run of `count` commands pays in this mode.
    pub fn round_trips(self, count: u64) -> u64 {
        count.div_ceil(self.batch() as u64)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    #[serde(default)]
    pub command: Command,
    pub count: u64,
    pub mode: Mode,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    #[error("count must be between 1 and {max}, got {got}")]
    Count { got: u64, max: u64 },
    #[error("batch must be between 1 and {max}, got {got}")]
    Batch { got: u32, max: u32 },
    #[error("a start needs between 1 and {max} runs, got {got}")]
    Runs { got: usize, max: usize },
}

impl RunSpec {
    pub fn validate(&self, limits: &Limits) -> Result<(), SpecError> {
        if self.count == 0 || self.count > limits.max_count {
            return Err(SpecError::Count {
                got: self.count,
                max: limits.max_count,
            });
        }
        let batch = self.mode.batch();
        if batch == 0 || batch > limits.max_batch {
            return Err(SpecError::Batch {
                got: batch,
                max: limits.max_batch,
            });
        }
        Ok(())
    }

    /// The classic demonstration: the same SETs one at a time, then pipelined.
    pub fn comparison(count: u64, batch: u32) -> Vec<RunSpec> {
        vec![
            RunSpec {
                command: Command::Set,
                count,
                mode: Mode::Sequential,
            },
            RunSpec {
                command: Command::Set,
                count,
                mode: Mode::Pipelined { batch },
            },
        ]
    }
}

/// Validates a whole start request: the number of runs and every run in it.
pub fn validate_runs(runs: &[RunSpec], limits: &Limits) -> Result<(), SpecError> {
    if runs.is_empty() || runs.len() > limits.max_runs {
        return Err(SpecError::Runs {
            got: runs.len(),
            max: limits.max_runs,
        });
    }
    runs.iter().try_for_each(|r| r.validate(limits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(count: u64, mode: Mode) -> RunSpec {
        RunSpec {
            command: Command::Set,
            count,
            mode,
        }
    }

    #[test]
    fn accepts_the_bounds() {
        let l = Limits::DEFAULT;
        assert!(spec(1, Mode::Sequential).validate(&l).is_ok());
        assert!(
            spec(l.max_count, Mode::Pipelined { batch: l.max_batch })
                .validate(&l)
                .is_ok()
        );
    }

    #[test]
    fn refuses_out_of_range_count_and_batch() {
        let l = Limits::DEFAULT;
        assert_eq!(
            spec(0, Mode::Sequential).validate(&l),
            Err(SpecError::Count {
                got: 0,
                max: l.max_count
            })
        );
        assert!(matches!(
            spec(l.max_count + 1, Mode::Sequential).validate(&l),
            Err(SpecError::Count { .. })
        ));
        assert!(matches!(
            spec(10, Mode::Pipelined { batch: 0 }).validate(&l),
            Err(SpecError::Batch { got: 0, .. })
        ));
        assert!(matches!(
            spec(
                10,
                Mode::Pipelined {
                    batch: l.max_batch + 1
                }
            )
            .validate(&l),
            Err(SpecError::Batch { .. })
        ));
    }

    #[test]
    fn refuses_empty_or_oversized_run_lists() {
        let l = Limits::DEFAULT;
        assert!(validate_runs(&[], &l).is_err());
        let many = vec![spec(1, Mode::Sequential); l.max_runs + 1];
        assert!(matches!(
            validate_runs(&many, &l),
            Err(SpecError::Runs { .. })
        ));
        assert!(validate_runs(&RunSpec::comparison(100, 10), &l).is_ok());
    }

    #[test]
    fn round_trips_follow_the_batch() {
        assert_eq!(Mode::Sequential.round_trips(100_000), 100_000);
        assert_eq!(Mode::Pipelined { batch: 1000 }.round_trips(100_000), 100);
        assert_eq!(Mode::Pipelined { batch: 1000 }.round_trips(100_001), 101);
    }
}
