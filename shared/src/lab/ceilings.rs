//! The lab's ceilings: what a participant's run may be, set by the presenter and changed
//! live. A participant's form offers what fits; the server refuses the rest with a sentence
//! naming the ceiling, whatever a page sends. Every run is also held to the server's own
//! `Limits` (`RunSpec::validate`).

use serde::{Deserialize, Serialize};

use crate::digits::group;
use crate::spec::{Mode, Network, RunSpec};

/// What a participant's run may be at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ceilings {
    pub max_count: u64,
    pub max_batch: u32,
    pub max_value_bytes: u32,
    /// One-way delay, each direction, µs.
    pub max_delay_us: u32,
    /// A run still going after this long is cancelled (its keys removed), so one slow choice
    /// cannot hold the room's lane.
    pub max_run_secs: u64,
}

impl Default for Ceilings {
    /// Enough to see the pattern (batch 1 to 10,000 of 100,000 SETs, across a same-region
    /// network), small enough that a room of 60 each gets a turn in minutes.
    fn default() -> Self {
        Ceilings {
            max_count: 100_000,
            max_batch: 10_000,
            max_value_bytes: 4_096,
            max_delay_us: 500,
            max_run_secs: 20,
        }
    }
}

impl Ceilings {
    /// Whether a participant may run `spec`: `Err` says which ceiling it passes, in words.
    pub fn check(&self, spec: &RunSpec) -> Result<(), String> {
        let above = |what: &str, asked: String, ceiling: String| {
            Err(format!(
                "{what} of {asked} is above this lab's ceiling of {ceiling} (the presenter sets it): lower it"
            ))
        };
        if spec.count > self.max_count {
            return above("a count", group(spec.count), group(self.max_count));
        }
        if spec.mode.batch() > self.max_batch {
            return above(
                "a batch",
                group(spec.mode.batch().into()),
                group(self.max_batch.into()),
            );
        }
        if let Some(bytes) = spec.value_bytes
            && bytes > self.max_value_bytes
        {
            return above(
                "a value",
                format!("{} bytes", group(bytes.into())),
                format!("{} bytes", group(self.max_value_bytes.into())),
            );
        }
        let delay = spec.network.delay_out_us.max(spec.network.delay_back_us);
        if delay > self.max_delay_us {
            return above(
                "a one-way delay",
                format!("{} µs", group(delay.into())),
                format!("{} µs", group(self.max_delay_us.into())),
            );
        }
        if spec.network.jitter_us > 0 || spec.network.bandwidth.is_some() {
            return Err(
                "the lab's runs cross a network preset's fixed delay: no jitter or bandwidth cap"
                    .to_string(),
            );
        }
        if spec.other_client {
            return Err("the lab's runs have no second client: run it from the main page".into());
        }
        if let Mode::Connections { connections } = spec.mode
            && connections > 16
        {
            return Err(format!(
                "a pool of {connections} connections is above this lab's 16: lower it"
            ));
        }
        Ok(())
    }

    /// The network presets a participant may pick: those within the delay ceiling.
    pub fn networks(&self) -> Vec<(&'static str, Network)> {
        Network::PRESETS
            .iter()
            .filter(|(_, us)| *us <= self.max_delay_us)
            .map(|&(name, us)| (name, Network::symmetric(us)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_within_the_ceilings_is_taken() {
        let c = Ceilings::default();
        assert_eq!(
            c.check(&RunSpec::set(100_000, Mode::pipelined(10_000))),
            Ok(())
        );
        let mut spec = RunSpec::set(1_000, Mode::Sequential);
        spec.network = Network::symmetric(500);
        assert_eq!(c.check(&spec), Ok(()));
    }

    #[test]
    fn each_ceiling_refuses_in_words() {
        let c = Ceilings::default();
        let said = |spec: RunSpec| c.check(&spec).unwrap_err();
        assert_eq!(
            said(RunSpec::set(200_000, Mode::Sequential)),
            "a count of 200,000 is above this lab's ceiling of 100,000 (the presenter sets it): lower it"
        );
        assert!(
            said(RunSpec::set(100_000, Mode::pipelined(20_000))).starts_with("a batch of 20,000")
        );
        let mut big = RunSpec::set(10, Mode::Sequential);
        big.value_bytes = Some(1 << 20);
        assert!(said(big).starts_with("a value of 1,048,576 bytes"));
        let mut far = RunSpec::set(10, Mode::Sequential);
        far.network = Network::symmetric(30_000);
        assert!(said(far).starts_with("a one-way delay of 30,000 µs"));
        let mut jitter = RunSpec::set(10, Mode::Sequential);
        jitter.network.jitter_us = 5;
        assert!(said(jitter).contains("no jitter"));
        let mut other = RunSpec::set(1_000, Mode::pipelined(100));
        other.other_client = true;
        assert!(said(other).contains("no second client"));
    }

    #[test]
    fn the_presets_offered_are_those_within_the_delay_ceiling() {
        let c = Ceilings::default();
        let names: Vec<&str> = c.networks().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["loopback", "same rack", "same region"]);
    }
}
