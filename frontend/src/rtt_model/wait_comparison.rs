//! The hosts' share of a loopback round trip, sleeping against busy-polling.

use shared::RunSummary;

use super::breakdown::TripBreakdown;

/// The hosts' share of a loopback round trip, sleeping against busy-polling: the same command
/// and network, the waits differing. Shows how much of "host" is waking the client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WaitComparison {
    pub sleep_host_us: f64,
    pub busy_host_us: f64,
    pub sleep_run: u64,
    pub busy_run: u64,
}

impl WaitComparison {
    /// `None` unless one run slept and the other busy-polled over the same untapped network.
    pub fn of(sleep: (u64, &RunSummary), busy: (u64, &RunSummary)) -> Option<WaitComparison> {
        let (a, b) = (
            TripBreakdown::of(sleep.0, sleep.1),
            TripBreakdown::of(busy.0, busy.1),
        );
        let same = sleep.1.spec.network == busy.1.spec.network
            && sleep.1.spec.command == busy.1.spec.command;
        if a.busy_poll || !b.busy_poll || !same || a.tapped || b.tapped {
            return None;
        }
        Some(WaitComparison {
            sleep_host_us: a.part("host")?.us,
            busy_host_us: b.part("host")?.us,
            sleep_run: sleep.0,
            busy_run: busy.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt_model::fixtures::summary;
    use crate::testing::test;
    use shared::{Mode, Wait};

    #[test]
    fn busy_polling_is_compared_on_the_hosts_time() {
        let mut sleep = summary(Mode::Sequential, 70_000, 70.0);
        sleep.redis_usec_per_call = Some(1.0);
        let mut busy = sleep.clone();
        busy.latency.mean_us = 20.0;
        busy.spec.wait = Wait::BusyPoll { us: 2000 };
        let c = WaitComparison::of((1, &sleep), (2, &busy)).unwrap();
        assert!(c.busy_host_us < c.sleep_host_us);
        assert!((c.sleep_host_us - c.busy_host_us - 50.0).abs() < 1e-9);
        assert_eq!(WaitComparison::of((2, &busy), (1, &sleep)), None);
        busy.spec.network = shared::Network::symmetric(100);
        assert_eq!(
            WaitComparison::of((1, &sleep), (2, &busy)),
            None,
            "another network"
        );
    }
}
