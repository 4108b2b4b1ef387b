//! A run and its validation against the limits and the server it goes to.

use serde::{Deserialize, Serialize};

use super::{Command, Flush, Limits, Mode, Network, SpecError, Wait};
use crate::keys::KeyLayout;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    #[serde(default)]
    pub command: Command,
    pub count: u64,
    pub mode: Mode,
    /// Bytes per value (SET and the GET seed); `None` is the classic `v{i}`.
    #[serde(default)]
    pub value_bytes: Option<u32>,
    #[serde(default)]
    pub network: Network,
    /// How the engine waits for replies.
    #[serde(default)]
    pub wait: Wait,
    /// A second client INCRs the run's shared counter one command at a time while the run
    /// goes, so Redis's replies show where its commands landed among the run's (atomicity,
    /// measured). Needs INCR and a pipelined or MULTI/EXEC run; every command of the run then
    /// INCRs that one counter (`keys::counter`) instead of `k{i}`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub other_client: bool,
    /// How the run's keys are named, hence which Redis Cluster slots they fall in
    /// (`keys::KeyLayout`): spread over every slot, or all under one hash tag.
    #[serde(default, skip_serializing_if = "KeyLayout::is_spread")]
    pub keys: KeyLayout,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl RunSpec {
    /// SET `count` times in `mode` over loopback with classic values.
    pub fn set(count: u64, mode: Mode) -> RunSpec {
        RunSpec {
            command: Command::Set,
            count,
            mode,
            value_bytes: None,
            network: Network::LOOPBACK,
            wait: Wait::Sleep,
            other_client: false,
            keys: KeyLayout::Spread,
        }
    }

    /// `count` INCRs of one shared counter in `mode` while the other client INCRs it too.
    pub fn with_other_client(count: u64, mode: Mode) -> RunSpec {
        RunSpec {
            command: Command::Incr,
            other_client: true,
            ..RunSpec::set(count, mode)
        }
    }

    pub fn with_network(self, network: Network) -> RunSpec {
        RunSpec { network, ..self }
    }

    pub fn validate(&self, limits: &Limits) -> Result<(), SpecError> {
        if self.count == 0 || self.count > limits.max_count {
            return Err(SpecError::Count {
                got: self.count,
                max: limits.max_count,
            });
        }
        if let Mode::Connections { connections } = self.mode
            && !(1..=Mode::MAX_CONNECTIONS).contains(&connections)
        {
            return Err(SpecError::Connections {
                got: connections,
                max: Mode::MAX_CONNECTIONS,
            });
        }
        let batch = self.mode.batch();
        if batch == 0 || batch > limits.max_batch {
            let what = match self.mode {
                Mode::Multiplexed { .. } => "in-flight requests",
                _ => "batch",
            };
            return Err(SpecError::Batch {
                what,
                got: batch,
                max: limits.max_batch,
            });
        }
        if let Mode::Pipelined {
            flush: Flush::Buffered { commands },
            ..
        } = self.mode
            && (commands == 0 || commands > batch)
        {
            return Err(SpecError::Buffered {
                got: commands,
                batch,
            });
        }
        if self.other_client
            && (self.command != Command::Incr
                || !matches!(self.mode, Mode::Pipelined { .. } | Mode::Transaction { .. }))
        {
            return Err(SpecError::OtherClient {
                command: self.command.name(),
                mode: self.mode.kind(),
            });
        }
        if let Mode::Mset { .. } = self.mode
            && self.command.multi_key().is_none()
        {
            return Err(SpecError::NoMultiKey {
                command: self.command.name(),
            });
        }
        // After what the mode and command allow: a run that never fills one batch would be
        // labelled with a batch that never ran.
        if self.mode.sends_batches() && u64::from(batch) > self.count {
            return Err(SpecError::BatchOverCount {
                batch,
                count: self.count,
            });
        }
        if let Some(bytes) = self.value_bytes {
            if bytes == 0 || bytes > limits.max_value_bytes {
                return Err(SpecError::ValueBytes {
                    got: bytes,
                    max: limits.max_value_bytes,
                });
            }
            let total = self.count.saturating_mul(bytes as u64);
            if total > limits.max_total_bytes {
                return Err(SpecError::TotalBytes {
                    got: total,
                    max: limits.max_total_bytes,
                });
            }
        }
        if let Wait::BusyPoll { us } = self.wait
            && !(1..=Wait::MAX_BUSY_POLL_US).contains(&us)
        {
            return Err(SpecError::BusyPoll {
                got: us,
                max: Wait::MAX_BUSY_POLL_US,
            });
        }
        self.validate_network(limits)
    }

    /// Whether every key the run touches is in one cluster slot: all under one hash tag, or
    /// the other client's one counter.
    pub fn keys_in_one_slot(&self) -> bool {
        self.keys == KeyLayout::OneTag || self.other_client
    }

    /// What a Redis Cluster refuses beyond `validate`: a MULTI/EXEC or an MSET/MGET spanning
    /// several slots (Redis answers `CROSSSLOT`), caught before anything runs.
    pub fn validate_on_cluster(&self) -> Result<(), SpecError> {
        let what = match self.mode {
            Mode::Transaction { .. } => "MULTI/EXEC",
            Mode::Mset { .. } => match self.command {
                Command::Get => "MGET",
                _ => "MSET",
            },
            _ => return Ok(()),
        };
        match self.keys_in_one_slot() {
            true => Ok(()),
            false => Err(SpecError::OneSlot { what }),
        }
    }

    fn validate_network(&self, limits: &Limits) -> Result<(), SpecError> {
        let n = &self.network;
        for (what, got) in [
            ("one-way delay out", n.delay_out_us),
            ("one-way delay back", n.delay_back_us),
            ("jitter", n.jitter_us),
        ] {
            if got > limits.max_delay_us {
                return Err(SpecError::Delay {
                    what,
                    got,
                    max: limits.max_delay_us,
                });
            }
        }
        if let Some(bw) = n.bandwidth
            && !(limits.min_bandwidth..=limits.max_bandwidth).contains(&bw)
        {
            return Err(SpecError::Bandwidth {
                got: bw,
                min: limits.min_bandwidth,
                max: limits.max_bandwidth,
            });
        }
        let round_trips = self.mode.round_trips_in_series(self.count);
        let rtt_us = n.round_trip_us();
        let secs = round_trips.saturating_mul(rtt_us) / 1_000_000;
        if secs > limits.max_network_secs {
            return Err(SpecError::TooSlow {
                secs,
                round_trips,
                rtt_us,
                max: limits.max_network_secs,
            });
        }
        Ok(())
    }

    /// The classic demonstration: the same SETs one at a time, then pipelined.
    pub fn comparison(count: u64, batch: u32) -> Vec<RunSpec> {
        vec![
            RunSpec::set(count, Mode::Sequential),
            RunSpec::set(count, Mode::pipelined(batch)),
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
