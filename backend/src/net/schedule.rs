//! When a chunk leaves the delay line: its arrival, its transmission time at the bandwidth
//! cap (queued behind earlier chunks), the delay with jitter, less the proxy's compensation;
//! never before it arrived, never before the chunk ahead of it (bytes are never reordered).
//! `Compensation` is how much earlier each direction releases (see `calibration`).

use std::time::{Duration, Instant};

use shared::Network;

/// The proxy's own cost taken off each direction's delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Compensation {
    pub out: Duration,
    pub back: Duration,
}

impl Compensation {
    /// Takes a round trip's forwarding cost off the return leg, as far as its delay allows,
    /// and only the rest off the outbound one. So a request never reaches Redis sooner than the
    /// outbound delay after it reached the proxy (the tap's engine → Redis leg is ≥ D), and
    /// the round trip as a whole comes out at 2·D plus the direct one.
    pub fn for_network(cost: Duration, network: &Network) -> Compensation {
        let back = cost.min(Duration::from_micros(network.delay_back_us as u64));
        Compensation {
            out: cost - back,
            back,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Links {
    pub out: Link,
    pub back: Link,
}

impl Links {
    pub fn new(n: &Network, c: Compensation) -> Links {
        let link = |delay_us: u32, early| Link {
            delay: Duration::from_micros(delay_us as u64),
            jitter: Duration::from_micros(n.jitter_us as u64),
            bandwidth: n.bandwidth,
            early,
        };
        Links {
            out: link(n.delay_out_us, c.out),
            back: link(n.delay_back_us, c.back),
        }
    }
}

/// One direction's link.
#[derive(Debug, Clone, Copy)]
pub(super) struct Link {
    delay: Duration,
    jitter: Duration,
    bandwidth: Option<u64>,
    /// Released this much before arrival + delay: the proxy's own forwarding cost, which the
    /// chunk pays anyway (never before arrival).
    early: Duration,
}

impl Link {
    /// No delay, jitter or cap: every chunk may leave as it arrives.
    pub fn is_instant(&self) -> bool {
        self.delay.is_zero() && self.jitter.is_zero() && self.bandwidth.is_none()
    }

    /// The longest a chunk waits on this link after its transmission: the delay plus all of
    /// the jitter.
    pub fn longest_delay(&self) -> Duration {
        self.delay + self.jitter
    }

    /// The bandwidth cap, bytes per second, if one is dialled.
    pub fn bandwidth(&self) -> Option<u64> {
        self.bandwidth.filter(|&bw| bw > 0)
    }
}

/// When each chunk may leave: arrival, then transmission (queued behind earlier chunks on
/// the link), then the delay with jitter less the compensation; never before it arrived,
/// never before the chunk ahead of it.
pub(super) struct Schedule {
    link: Link,
    link_free: Option<Instant>,
    last_release: Option<Instant>,
    rng: fastrand::Rng,
}

impl Schedule {
    pub fn new(link: Link) -> Self {
        Schedule {
            link,
            link_free: None,
            last_release: None,
            rng: fastrand::Rng::new(),
        }
    }

    pub fn release(&mut self, arrival: Instant, bytes: usize) -> Instant {
        let sent = match self.link.bandwidth {
            Some(bw) if bw > 0 => {
                let start = self.link_free.map_or(arrival, |free| free.max(arrival));
                let done = start
                    + Duration::from_nanos((bytes as u128 * 1_000_000_000 / bw as u128) as u64);
                self.link_free = Some(done);
                done
            }
            _ => arrival,
        };
        let jitter = self.link.jitter.as_nanos() as i128;
        let offset = if jitter > 0 {
            self.rng.i128(-jitter..=jitter)
        } else {
            0
        };
        let delay =
            self.link.delay.as_nanos() as i128 + offset - self.link.early.as_nanos() as i128;
        let delay = Duration::from_nanos(delay.max(0) as u64);
        let release = (sent + delay).max(self.last_release.unwrap_or(sent));
        self.last_release = Some(release);
        release
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_return_leg_absorbs_the_compensation_first() {
        let cost = Duration::from_micros(40);
        let c = Compensation::for_network(cost, &Network::symmetric(250));
        assert_eq!((c.out, c.back), (Duration::ZERO, cost));
        let short_back = Network {
            delay_back_us: 10,
            ..Network::symmetric(250)
        };
        let c = Compensation::for_network(cost, &short_back);
        assert_eq!(
            (c.out, c.back),
            (Duration::from_micros(30), Duration::from_micros(10))
        );
    }

    fn link(delay_us: u64, jitter_us: u64, bandwidth: Option<u64>) -> Link {
        Link {
            delay: Duration::from_micros(delay_us),
            jitter: Duration::from_micros(jitter_us),
            bandwidth,
            early: Duration::ZERO,
        }
    }

    #[test]
    fn release_is_arrival_plus_delay() {
        let mut s = Schedule::new(link(250, 0, None));
        let t0 = Instant::now();
        assert_eq!(s.release(t0, 100), t0 + Duration::from_micros(250));
        // Many in flight: the next chunk is not held behind the first's delay.
        let t1 = t0 + Duration::from_micros(10);
        assert_eq!(s.release(t1, 100), t1 + Duration::from_micros(250));
    }

    #[test]
    fn bandwidth_queues_chunks_on_the_link() {
        // 1 MB/s: 1000 bytes take 1 ms on the wire.
        let mut s = Schedule::new(link(0, 0, Some(1_000_000)));
        let t0 = Instant::now();
        assert_eq!(s.release(t0, 1000), t0 + Duration::from_millis(1));
        assert_eq!(
            s.release(t0, 1000),
            t0 + Duration::from_millis(2),
            "the second waits for the first"
        );
    }

    #[test]
    fn jitter_never_reorders() {
        let mut s = Schedule::new(link(100, 90, None));
        let t0 = Instant::now();
        let mut last = t0;
        for i in 0..10_000u64 {
            let r = s.release(t0 + Duration::from_nanos(i * 500), 10);
            assert!(r >= last);
            assert!(r <= t0 + Duration::from_nanos(i * 500) + Duration::from_micros(190));
            last = r;
        }
    }

    #[test]
    fn compensation_releases_earlier_but_never_before_arrival() {
        let mut s = Schedule::new(Link {
            early: Duration::from_micros(40),
            ..link(250, 0, None)
        });
        let t0 = Instant::now();
        assert_eq!(s.release(t0, 10), t0 + Duration::from_micros(210));
        let mut s = Schedule::new(Link {
            early: Duration::from_micros(40),
            ..link(10, 0, None)
        });
        let t1 = t0 + Duration::from_millis(1);
        assert_eq!(s.release(t1, 10), t1, "not before it arrived");
    }
}
