//! How many bytes one direction of a delayed link may hold between reading a chunk and
//! writing it out, and the counter that makes its reader wait when that is full.
//!
//! Without a bound a slow reader (a client, or Redis) makes the proxy hold everything the
//! other side sends. With one, the reader stops reading from its source while the budget is
//! full, so TCP's own flow control pushes back on the sender, as a real network's would; it
//! resumes once the writer has handed enough over. Waiting happens before a read, so a chunk's
//! release time is still worked out from when it was read: a full budget is a queue in front of
//! the link (the kernel's socket buffers), not a longer delay.

use std::sync::{Condvar, Mutex, MutexGuard};

use shared::Network;

use crate::net::schedule::{Compensation, Link, Links};

/// The least a direction may hold: far more than a pipeline at loopback speed keeps in flight
/// through a sub-millisecond delay, so the bound never slows one.
const MIN_BUDGET: usize = 4 << 20;
/// The most, whatever the delay: at a 1 s delay this still carries 64 MB/s.
const MAX_BUDGET: usize = 64 << 20;
/// The rate a link with no bandwidth cap is assumed to carry: more than the proxy copies
/// on loopback, so the budget covers its bandwidth-delay product.
const UNCAPPED_RATE: u64 = 2_000_000_000;
/// What each chunk costs besides its bytes (its allocation and its place in the queue), so
/// that many tiny chunks are bounded too.
const PER_CHUNK: usize = 64;

/// A direction's budget: its link's bandwidth-delay product (at `UNCAPPED_RATE` without a
/// cap), kept within `MIN_BUDGET`..=`MAX_BUDGET`.
pub(super) fn for_link(link: &Link) -> usize {
    let rate = link.bandwidth().unwrap_or(UNCAPPED_RATE) as u128;
    let product = rate * link.longest_delay().as_nanos() / 1_000_000_000;
    product.clamp(MIN_BUDGET as u128, MAX_BUDGET as u128) as usize
}

/// The larger of the two directions' budgets over `network` (what a test may allow the proxy).
pub fn direction_budget(network: &Network) -> usize {
    let links = Links::new(network, Compensation::default());
    for_link(&links.out).max(for_link(&links.back))
}

/// Bytes read but not yet written, shared by a direction's reader and writer.
pub(super) struct Budget {
    limit: usize,
    state: Mutex<State>,
    freed: Condvar,
}

struct State {
    held: usize,
    /// The reader is waiting for room (the writer only signals then: no wake-up per chunk).
    waiting: bool,
    /// The writer has finished: nothing will be freed again.
    closed: bool,
}

impl Budget {
    pub fn new(limit: usize) -> Budget {
        Budget {
            limit,
            state: Mutex::new(State {
                held: 0,
                waiting: false,
                closed: false,
            }),
            freed: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Counts only: nothing a panic elsewhere could leave half-updated.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until a chunk of up to `chunk` bytes fits; false if the writer has gone.
    pub fn wait_for_room(&self, chunk: usize) -> bool {
        let mut s = self.state();
        while !s.closed && s.held + chunk + PER_CHUNK > self.limit {
            s.waiting = true;
            s = self.freed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.waiting = false;
        !s.closed
    }

    /// A chunk of `bytes` was read and is now held.
    pub fn take(&self, bytes: usize) {
        self.state().held += bytes + PER_CHUNK;
    }

    /// A chunk of `bytes` was written out (and dropped).
    pub fn give_back(&self, bytes: usize) {
        let mut s = self.state();
        s.held -= bytes + PER_CHUNK;
        if s.waiting {
            self.freed.notify_one();
        }
    }

    /// The writer is done: a waiting reader stops waiting.
    pub fn close(&self) {
        self.state().closed = true;
        self.freed.notify_one();
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.state().held
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    fn link(delay_us: u32, bandwidth: Option<u64>) -> Link {
        let network = Network {
            bandwidth,
            ..Network::symmetric(delay_us)
        };
        Links::new(&network, Compensation::default()).out
    }

    #[test]
    fn the_budget_covers_the_bandwidth_delay_product_within_its_bounds() {
        assert_eq!(for_link(&link(250, None)), MIN_BUDGET);
        // 10 ms at 2 GB/s: 20 MB.
        assert_eq!(for_link(&link(10_000, None)), 20_000_000);
        assert_eq!(for_link(&link(1_000_000, None)), MAX_BUDGET);
        // A cap: its own product (10 MB/s × 1 s), no more.
        assert_eq!(for_link(&link(1_000_000, Some(10_000_000))), 10_000_000);
    }

    #[test]
    fn a_full_budget_holds_the_reader_until_the_writer_gives_back() {
        let budget = Arc::new(Budget::new(1000));
        assert!(budget.wait_for_room(500));
        budget.take(500);
        let reader = {
            let budget = budget.clone();
            std::thread::spawn(move || budget.wait_for_room(500))
        };
        // 564 + 564 > 1000: the reader waits (bounded: it is told below either way).
        std::thread::sleep(Duration::from_millis(50));
        assert!(!reader.is_finished(), "the reader waits for room");
        budget.give_back(500);
        assert!(
            reader.join().unwrap(),
            "room again once the writer gave back"
        );
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_writer_that_has_gone_releases_a_waiting_reader() {
        let budget = Arc::new(Budget::new(1000));
        budget.take(900);
        let reader = {
            let budget = budget.clone();
            std::thread::spawn(move || budget.wait_for_room(500))
        };
        std::thread::sleep(Duration::from_millis(50));
        budget.close();
        assert!(
            !reader.join().unwrap(),
            "the reader is told the writer has gone"
        );
    }
}
