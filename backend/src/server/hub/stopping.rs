//! Shutting down with nothing of pipescope's left in Redis: the plan in flight and a pipelined
//! equivalent being measured are cancelled, and their cleanup awaited, within a deadline.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::Hub;
use crate::cancel::{DEADLINE, Removed, Stop};
use crate::engine::{RunError, keys};

impl Hub {
    /// The server's shutdown (for `server::serve`) on `stop`'s first signal: once the runs are
    /// stopped and their keys removed (`stop_runs`, at most `DEADLINE`; past it the process
    /// exits at once, saying what may be left). The receiver gets what their cleanup removed.
    pub fn shut_down_on(
        &self,
        stop: Stop,
    ) -> (
        impl Future<Output = ()> + Send + 'static,
        oneshot::Receiver<Vec<Removed>>,
    ) {
        let (tx, removed) = oneshot::channel();
        let hub = self.clone();
        let shutdown = async move {
            stop.signalled().await;
            let _ = tx.send(match hub.stop_runs(DEADLINE).await {
                Ok(removed) => removed,
                Err(left) => stop.exit_leaving(&left),
            });
        };
        (shutdown, removed)
    }

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

    /// Files what run `run`'s cleanup removed if `e` says it was cancelled while stopping
    /// (a page's own cancel is the page's to see).
    pub(super) fn note_cancelled(&self, run: u64, e: &RunError) {
        if !self.inner.stopping.load(Ordering::SeqCst) {
            return;
        }
        if let Some(removed) = Removed::of(run, e) {
            self.inner
                .state
                .lock()
                .expect("hub state")
                .cancelled
                .push(removed);
        }
    }
}
