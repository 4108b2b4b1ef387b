//! The embedded default kept running: a watchdog thread owns the server and starts it again on
//! the same port if it dies, so the URL the page was given stays valid.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{Launch, LocalRedis, LocalRedisError};

/// An embedded redis-server kept running by a watchdog; stopped on drop.
#[derive(Debug)]
pub struct Supervised {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LocalRedis {
    /// Starts a redis-server on `port` and watches it from a thread of its own: if it dies (a
    /// crash, an OOM kill), it is started again on the same port, so the URL stays valid and the
    /// next run works. Stopped when the returned guard is dropped.
    pub fn supervised() -> Result<Supervised, LocalRedisError> {
        let redis = Self::start()?;
        let port = redis.port;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            // The watchdog thread owns the server: redis-server is tied to the thread that
            // spawned it (die_with_parent), and this one lives until the guard is dropped.
            std::thread::Builder::new()
                .name("redis-watchdog".into())
                .spawn(move || {
                    let mut redis = redis;
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(200));
                        if redis.is_running() {
                            continue;
                        }
                        tracing::error!(port, "the embedded redis-server died; starting it again");
                        match Self::spawn(port, None, &Launch::default()) {
                            Ok(fresh) => redis = fresh,
                            Err(e) => tracing::error!("could not restart redis-server: {e}"),
                        }
                    }
                })
                .map_err(LocalRedisError::Spawn)?
        };
        Ok(Supervised {
            port,
            stop,
            thread: Some(thread),
        })
    }
}

impl Supervised {
    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join(); // drops (kills) the server it owns
        }
    }
}
