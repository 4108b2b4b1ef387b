//! Running a plan: its specs one after another, each over its network's route, with a
//! ticker streaming the run's progress and first spans while the engine works.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use shared::protocol::MAX_SPANS_PER_FRAME;
use shared::{RunSpec, RunSummary, ServerMsg, Timeline};

use super::{Hub, PROGRESS_HZ};
use crate::engine::{RunContext, RunError};
use crate::recorder::Progress;
use crate::spans::Outbox;

/// What became of one run of a plan: its summary, or why it did not finish.
#[derive(Debug, Clone)]
pub struct Ended {
    pub run: u64,
    pub outcome: Result<RunSummary, String>,
}

impl Hub {
    /// Runs `runs` in order as runs `first`, `first + 1`, …, each announced, streamed and
    /// finished (or failed) to every page; the plan stops at the first failure. What became
    /// of each run started.
    pub(super) async fn run_plan(
        &self,
        first: u64,
        runs: Vec<RunSpec>,
        cancel: &Arc<AtomicBool>,
    ) -> Vec<Ended> {
        let of = runs.len();
        let mut ended = Vec::with_capacity(of);
        for (index, spec) in runs.into_iter().enumerate() {
            let run = first + index as u64;
            self.emit(ServerMsg::RunStarted {
                run,
                index,
                of,
                spec,
            });
            tracing::info!(run, ?spec, "run started");
            match self.run_one(run, spec, cancel).await {
                Ok((summary, timeline)) => {
                    tracing::info!(
                        run,
                        wall_ms = summary.wall_ms(),
                        ops_per_sec = summary.ops_per_sec,
                        "run finished"
                    );
                    ended.push(Ended {
                        run,
                        outcome: Ok(summary.clone()),
                    });
                    // `emit` also files it in `recent`, under the same lock.
                    self.emit(ServerMsg::Finished {
                        run,
                        summary,
                        timeline,
                    });
                }
                Err(e) => {
                    tracing::warn!(run, reason = %e, "run failed");
                    self.note_cancelled(run, &e);
                    ended.push(Ended {
                        run,
                        outcome: Err(e.to_string()),
                    });
                    self.emit(ServerMsg::Failed {
                        run: Some(run),
                        reason: e.to_string(),
                        partial: e.partial().cloned(),
                    });
                    return ended;
                }
            }
        }
        ended
    }

    /// Runs one spec while a ticker reports its progress; its keys are removed after it.
    async fn run_one(
        &self,
        run: u64,
        spec: RunSpec,
        cancel: &Arc<AtomicBool>,
    ) -> Result<(RunSummary, Timeline), RunError> {
        let route = self
            .inner
            .proxies
            .route(&self.inner.target, spec.network)
            .await
            .map_err(|source| RunError::Network {
                network: spec.network.label(),
                source,
            })?;
        let progress = Arc::new(Progress::default());
        let outbox = Outbox::default();
        // The engine gives the run its own thread; this future only waits for its result.
        let ctx = RunContext {
            response_timeout: self.inner.response_timeout,
            span_outbox: Some(outbox.clone()),
            ..RunContext::new(run, progress.clone(), cancel.clone())
        };
        let engine = route.run(spec, ctx);
        let mut engine = std::pin::pin!(engine);
        let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / PROGRESS_HZ));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // A frame only when the run moved: the future also reads Redis's counters around the
        // run and removes its keys, while the engine reports nothing new.
        let mut shown = None;
        let outcome = loop {
            tokio::select! {
                joined = &mut engine => break joined,
                _ = ticker.tick() => {
                    let (done, elapsed_us) = progress.read();
                    if shown != Some((done, elapsed_us)) {
                        shown = Some((done, elapsed_us));
                        self.emit(progress_msg(run, spec.count, done, elapsed_us));
                    }
                    self.emit_spans(run, &outbox);
                }
            }
        };
        // The run's last state, unless the last tick already showed it.
        let (done, elapsed_us) = progress.read();
        if shown != Some((done, elapsed_us)) {
            self.emit(progress_msg(run, spec.count, done, elapsed_us));
        }
        self.emit_spans(run, &outbox);

        outcome.map(|o| (o.summary, o.timeline))
    }

    /// Streams the spans the engine recorded since the last tick, in frames of bounded size.
    fn emit_spans(&self, run: u64, outbox: &Outbox) {
        let streamed = std::mem::take(&mut *outbox.lock().expect("span outbox"));
        for chunk in streamed.first.chunks(MAX_SPANS_PER_FRAME) {
            self.emit(ServerMsg::Spans {
                run,
                spans: chunk.to_vec(),
            });
        }
        for chunk in streamed.sampled.chunks(MAX_SPANS_PER_FRAME) {
            self.emit(ServerMsg::Sampled {
                run,
                stride: streamed.stride,
                spans: chunk.to_vec(),
            });
        }
    }
}

fn progress_msg(run: u64, total: u64, done: u64, elapsed_us: u64) -> ServerMsg {
    ServerMsg::Progress {
        run,
        done,
        total,
        elapsed_us,
        ops_per_sec: shared::report::ops_per_sec(done, elapsed_us),
    }
}
