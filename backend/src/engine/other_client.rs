//! The other client: a second connection, straight to Redis, that INCRs the run's shared
//! counter one command at a time for as long as the run goes, while every command of the run
//! INCRs it too. Each reply is the counter's value just after that command, so the two sides'
//! replies give Redis's own order of execution (`shared::interleave`), measured, not assumed.
//!
//! It runs on a thread of its own (the run's thread stays the run's), from when the run's
//! connection is ready until the run's last reply is read; then it reads the counter once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use shared::KeyLayout;
use shared::interleave::{BatchValues, DRAWN_BATCHES, DRAWN_OTHER, Interleaving, OtherIncr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::EngineError;
use crate::resp::{self, encode_command, scan_reply};
use crate::target::{RedisTarget, TargetError};
use crate::tls::RedisStream;

/// The other client sends at most this many INCRs, however long the run.
pub const MAX_OTHER_COMMANDS: u64 = 1_000_000;

/// The run's side of the counter: each answered batch's first and last value.
#[derive(Debug, Default)]
pub struct RunCounter {
    batches: u64,
    batches_interleaved: u64,
    inside: u64,
    first_batches: Vec<BatchValues>,
}

impl RunCounter {
    /// A batch of `n` commands whose first and last replies were `first` and `last`.
    pub fn batch(&mut self, first: u64, last: u64, n: u64) {
        let b = BatchValues { first, last, n };
        self.batches += 1;
        let inside = b.others_inside();
        self.inside += inside;
        self.batches_interleaved += u64::from(inside > 0);
        if self.first_batches.len() < DRAWN_BATCHES {
            self.first_batches.push(b);
        }
    }
}

/// What the other client saw: its INCRs' values with when each was sent and answered.
#[derive(Debug, Default)]
pub struct Landed {
    commands: u64,
    first: Vec<(u64, Instant, Instant)>,
    final_value: Option<u64>,
}

/// Both sides, as the run's summary carries them, times in µs from `origin` (the run's start;
/// the other client's first INCRs may come before it, at negative times). The other client's
/// kept INCRs stop at the last kept batch, so each is known to be inside a batch or between two.
pub fn interleaving(run: RunCounter, other: Landed, origin: Instant) -> Interleaving {
    let us = |t: Instant| match t.checked_duration_since(origin) {
        Some(d) => d.as_nanos() as f64 / 1000.0,
        None => -((origin - t).as_nanos() as f64) / 1000.0,
    };
    let mut other_first: Vec<OtherIncr> = other
        .first
        .into_iter()
        .map(|(value, issued, replied)| OtherIncr {
            value,
            issued_us: us(issued),
            replied_us: us(replied),
        })
        .collect();
    if run.batches > run.first_batches.len() as u64 {
        let last = run.first_batches.last().map_or(0, |b| b.last);
        other_first.retain(|o| o.value < last);
    }
    Interleaving {
        batches: run.batches,
        batches_interleaved: run.batches_interleaved,
        other_commands: other.commands,
        other_inside: run.inside,
        final_value: other.final_value,
        first_batches: run.first_batches,
        other_first,
    }
}

/// The other client, connected and INCRing from `start` until `stop`.
pub struct OtherClient {
    stop: Arc<AtomicBool>,
    done: tokio::sync::oneshot::Receiver<Result<Landed, EngineError>>,
}

impl OtherClient {
    /// Connects to Redis directly (never through the run's delay line) and starts INCRing
    /// `run_id`'s counter (named as `keys` lays it out). Returns once connected.
    pub async fn start(
        target: &RedisTarget,
        run_id: u64,
        keys: KeyLayout,
        timeout: Duration,
    ) -> Result<OtherClient, EngineError> {
        // Connected on its own thread's runtime (a TLS session cannot move between
        // runtimes); `ready` says when, or why not.
        let target = target.direct();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, done) = tokio::sync::oneshot::channel();
        let (ready_tx, ready) = tokio::sync::oneshot::channel();
        let flag = stop.clone();
        std::thread::Builder::new()
            .name(format!("other-client-{run_id}"))
            .spawn(move || {
                let result = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(EngineError::from)
                    .and_then(|rt| {
                        rt.block_on(async {
                            let stream = match target.connect_raw().await {
                                Ok(stream) => {
                                    let _ = ready_tx.send(Ok(()));
                                    stream
                                }
                                Err(e) => {
                                    let _ = ready_tx.send(Err(e));
                                    return Err(EngineError::Crashed);
                                }
                            };
                            incr_until(stream, run_id, keys, timeout, &flag).await
                        })
                    });
                let _ = tx.send(result);
            })?;
        ready.await.unwrap_or(Err(TargetError::Unreachable {
            addr: "the other client's runtime".into(),
            cause: std::io::Error::other("did not start"),
        }))?;
        Ok(OtherClient { stop, done })
    }

    /// Stops after its INCR in flight, and returns what it saw (with the counter read last).
    pub async fn stop(self) -> Result<Landed, EngineError> {
        self.stop.store(true, Ordering::Relaxed);
        self.done.await.unwrap_or(Err(EngineError::Crashed))
    }
}

/// INCRs the counter one at a time until `stop`, then GETs it.
async fn incr_until(
    mut stream: RedisStream,
    run_id: u64,
    keys: KeyLayout,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<Landed, EngineError> {
    let key = shared::keys::counter(run_id, keys);
    let mut incr = Vec::new();
    encode_command(&mut incr, &[b"INCR", key.as_bytes()]);
    let mut landed = Landed::default();
    let mut buf = Vec::with_capacity(256);
    while !stop.load(Ordering::Relaxed) && landed.commands < MAX_OTHER_COMMANDS {
        let issued = Instant::now();
        let reply = request(&mut stream, &incr, &mut buf, timeout).await?;
        let replied = Instant::now();
        let value = counter_value(&reply)?;
        landed.commands += 1;
        if landed.first.len() < DRAWN_OTHER {
            landed.first.push((value, issued, replied));
        }
    }
    // Past the cap, wait for the run to end, so the counter is read after all of it.
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut get = Vec::new();
    encode_command(&mut get, &[b"GET", key.as_bytes()]);
    let reply = request(&mut stream, &get, &mut buf, timeout).await?;
    landed.final_value = bulk_number(&reply);
    Ok(landed)
}

/// Sends one command and reads its one reply.
async fn request(
    stream: &mut RedisStream,
    command: &[u8],
    buf: &mut Vec<u8>,
    timeout: Duration,
) -> Result<Vec<u8>, EngineError> {
    let timed_out = || EngineError::OtherClient(format!("no reply from Redis in {timeout:?}"));
    tokio::time::timeout(timeout, async {
        stream.write_all(command).await?;
        stream.flush().await
    })
    .await
    .map_err(|_| timed_out())??;
    buf.clear();
    loop {
        if let Some(reply) = scan_reply(buf)? {
            let reply = buf[..reply.len()].to_vec();
            if resp::is_error(&reply) {
                return Err(EngineError::OtherClient(resp::error_text(&reply)));
            }
            return Ok(reply);
        }
        let n = tokio::time::timeout(timeout, stream.read_buf(buf))
            .await
            .map_err(|_| timed_out())??;
        if n == 0 {
            return Err(EngineError::OtherClient(
                "Redis closed its connection".into(),
            ));
        }
    }
}

/// The counter's value in an INCR's reply (the run's or the other client's).
pub fn counter_value(reply: &[u8]) -> Result<u64, resp::ProtocolError> {
    u64::try_from(resp::integer(reply)?)
        .map_err(|_| resp::ProtocolError("the counter went below zero"))
}

/// A bulk string holding a number (`$3\r\n812\r\n` → 812); `None` for nil or anything else.
fn bulk_number(reply: &[u8]) -> Option<u64> {
    std::str::from_utf8(resp::bulk_bytes(reply).ok()??)
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_counts_what_landed_inside_its_batches() {
        let mut run = RunCounter::default();
        run.batch(1, 3, 3); // 1 2 3: whole
        run.batch(5, 9, 3); // 5 _ 7 _ 9: two inside
        assert_eq!(
            (run.batches, run.batches_interleaved, run.inside),
            (2, 1, 2)
        );
        let origin = Instant::now();
        let other = Landed {
            commands: 3,
            first: [4, 6, 8].map(|value| (value, origin, origin)).to_vec(),
            final_value: Some(9),
        };
        let i = interleaving(run, other, origin);
        assert_eq!(i.other_inside, 2);
        assert_eq!(i.other_first.len(), 3);
        assert_eq!(i.batch_holding(6), Some(1));
        assert_eq!(i.batch_holding(4), None);
    }

    #[test]
    fn the_counter_is_read_from_a_bulk_string() {
        assert_eq!(bulk_number(b"$3\r\n812\r\n"), Some(812));
        assert_eq!(bulk_number(b"$-1\r\n"), None);
    }
}
