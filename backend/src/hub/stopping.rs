//! Shutting down with nothing of pipescope's left in Redis: the plan in flight and a pipelined
//! equivalent being measured are cancelled, and their cleanup awaited, within a deadline.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Hub;
use crate::cancel::Removed;
use crate::engine::keys;

impl Hub {
    /// Cancels the plan in flight and any pipelined equivalent being measured (nothing new
    /// starts from now on), and waits for their keys to be removed, at most `deadline`.
    /// Returns what the cancelled runs removed, or the runs still in flight when the deadline
    /// passed first.
    pub async fn stop_runs(&self, deadline: Duration) -> Result<Vec<Removed>, Vec<u64>> {
        self.inner.stopping.store(true, Ordering::SeqCst);
        self.inner
            .state
            .lock()
            .expect("hub state")
            .cancelled
            .clear();
        self.cancel();
        let until = Instant::now() + deadline;
        while self.is_busy() || self.is_measuring() {
            if Instant::now() >= until {
                return Err(keys::in_flight());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut state = self.inner.state.lock().expect("hub state");
        Ok(std::mem::take(&mut state.cancelled))
    }
}
