//! How a proxied connection's two directions finish: shared by the connection that starts
//! them and the pipes that run them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::hooks::{Ended, OnEnded};

/// How a connection's two directions finish: the first to end says why, the last to end
/// calls the `ended` hook.
pub(super) struct Ending {
    /// Directions still running.
    pub(super) live: AtomicU64,
    first: Mutex<Option<Ended>>,
    /// The `ended` hook, set when the directions start.
    pub(super) hook: Mutex<Option<OnEnded>>,
}

impl Ending {
    pub(super) fn new() -> Arc<Ending> {
        Arc::new(Ending {
            live: AtomicU64::new(2),
            first: Mutex::new(None),
            hook: Mutex::new(None),
        })
    }

    /// Why the connection is ending, if nothing said so before: noted as soon as a side closes
    /// or fails, before the other side is told, so the first cause wins.
    pub(super) fn note(&self, why: Ended) {
        self.first.lock().expect("ending").get_or_insert(why);
    }

    /// A direction finished; the last one calls the `ended` hook.
    pub(super) fn end(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            let why = self
                .first
                .lock()
                .expect("ending")
                .clone()
                .unwrap_or(Ended::ByClient);
            if let Some(hook) = self.hook.lock().expect("ending").take() {
                hook(why);
            }
        }
    }
}
