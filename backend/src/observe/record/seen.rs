//! A record seen as the page and the CLI show it: its counts, times and verdict at a moment,
//! from a vantage.

use std::time::Instant;

use shared::observe::verdict::{Evidence, judge};
use shared::observe::{ObservedConnection, Vantage};

use super::*;

impl Record {
    /// The connection as the page and the CLI show it, its time accounted up to `now`
    /// while it awaits replies (an idle open connection's own time is counted when it next
    /// sends, or not at all if it never does); seen through a proxy whose hops are unknown.
    #[cfg(test)]
    pub fn snapshot(&self, now: Instant) -> ObservedConnection {
        self.seen_from(now, &Vantage::default())
    }

    /// `snapshot`, seen from `vantage`: from a capture its writes are segments; through a
    /// proxy whose hops were measured, each round trip's hops are taken out of the time
    /// nothing was awaited at the proxy and made a part of their own. The verdict is worked
    /// out once, on those figures.
    pub fn seen_from(&self, now: Instant, vantage: &Vantage) -> ObservedConnection {
        let mut time = self.time.clone();
        let state = self.state();
        if self.is_open() && state.in_flight > 0 {
            time.advance(now, state);
        }
        let mut times = time.times();
        let mut names = self.names.clone();
        if let Some(run) = &self.run {
            count_name(&mut names, run.name.as_str(), run.n);
        }
        let mut top: Vec<(String, u64)> = names.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        top.truncate(5);
        let mut counts = self.counts.clone();
        // The client, Redis and the observer share one host's CPUs: its timing neither
        // confirms nor rules out a wait (the scheduler couples the client's writes to the
        // replies: Perl's Redis.pm pipelining with callbacks follows them one for one).
        let one_host = self
            .client
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback())
            && !matches!(
                vantage,
                Vantage::Proxy {
                    remote_redis: true,
                    ..
                }
            );
        let waits = self.waits.read(self.overlapped_later > 0, one_host);
        counts.round_trips -= waits.cadence;
        counts.unconfirmed_trips = waits.unconfirmed;
        counts.cadence_gaps = waits.cadence;
        counts.wait_evidence = waits.evidence;
        counts.phases = self
            .phases
            .read(self.emptied.filter(|_| state.in_flight == 0).unwrap_or(now));
        match vantage {
            Vantage::Capture => counts.writes_are_segments = true,
            Vantage::Proxy {
                hop_us: Some(hop),
                hop_spread,
                ..
            } => {
                // A median less certain than the waits it would be split from is not
                // charged: the split would rest on it more than on what was measured.
                let mean_wait = times.waiting_us / counts.round_trips.max(1) as f64;
                let unsure = hop_spread
                    .as_ref()
                    .is_some_and(|s| s.high_us - s.low_us > mean_wait);
                if unsure && counts.round_trips > 0 {
                    times.observer_uncharged = true;
                } else {
                    times.observer_us = (counts.round_trips as f64 * hop).min(times.client_us);
                    times.client_us -= times.observer_us;
                }
            }
            Vantage::Proxy { hop_us: None, .. } => {}
        }
        // The verdict reads the probe's holds, where it held replies, beside the wire.
        let probe = self.probe.as_ref().map(Probe::evidence);
        let socket = self.kernel.now(self.reads);
        let verdict = match &self.not_redis {
            Some(what) => not_redis::verdict(what),
            None => judge(&Evidence {
                socket: socket.as_ref(),
                probe: probe.as_ref(),
                ..Evidence::wire(&counts, &times)
            }),
        };
        ObservedConnection {
            id: self.id,
            client: self.client.clone(),
            name: self.name.clone(),
            open: self.is_open(),
            ended: self.ended.clone(),
            top_commands: top,
            verdict,
            counts,
            times,
            equivalent: None,
            vantage: vantage.clone(),
            library: self.library.clone(),
            mean_set_value: (self.set_values.0 > 0)
                .then(|| (self.set_values.1 / self.set_values.0).min(u64::from(u32::MAX)) as u32),
            words: None,
            probe,
            syscalls: None,
            window: None,
        }
    }
}
