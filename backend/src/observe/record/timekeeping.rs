//! Where one connection's time went, advanced event by event: waiting on round trips (in part
//! at Redis), blocked on blocking commands, or the client's own time (counted once it sends
//! again, so an idle end adds none).

use std::time::Instant;

use shared::observe::ObservedTimes;

/// What the connection was doing between two events.
#[derive(Debug, Clone, Copy)]
pub(super) struct State {
    pub in_flight: u64,
    pub blocked: bool,
    pub at_redis: bool,
}

/// Where the connection's time went, advanced event by event.
#[derive(Debug, Clone, Default)]
pub(super) struct Timekeeping {
    times: ObservedTimes,
    /// Where the accounting has reached (from the first command on).
    pub clock: Option<Instant>,
    /// Commands in flight × µs, for the mean depth.
    depth_area: f64,
    /// Nothing awaited since this long (µs): counted as the client's own time once it sends
    /// again, so a connection left idle at its end adds none.
    idle_us: f64,
}

impl Timekeeping {
    /// The stretch from the clock to `at` was a round trip's wait (in part at Redis), a
    /// blocking command's wait, or the client's own time.
    pub fn advance(&mut self, at: Instant, s: State) {
        let Some(clock) = self.clock else { return };
        if at <= clock {
            return;
        }
        let dt = (at - clock).as_secs_f64() * 1e6;
        self.clock = Some(at);
        if s.in_flight == 0 {
            self.idle_us += dt;
            return;
        }
        // Waiting again: the idle stretch before it was the client's own time.
        self.times.client_us += std::mem::take(&mut self.idle_us);
        if s.blocked {
            self.times.blocked_us += dt;
        } else {
            self.times.waiting_us += dt;
            self.depth_area += s.in_flight as f64 * dt;
            if s.at_redis {
                self.times.at_redis_us += dt;
            }
        }
    }

    pub fn times(&self) -> ObservedTimes {
        let t = &self.times;
        ObservedTimes {
            wall_us: t.waiting_us + t.blocked_us + t.client_us,
            mean_depth: if t.waiting_us > 0.0 {
                self.depth_area / t.waiting_us
            } else {
                0.0
            },
            ..t.clone()
        }
    }
}
