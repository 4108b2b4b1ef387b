//! What the hub remembers between events: whether a plan runs, the latest plan's finished
//! runs, recent starts (for the rate limit), and the run in progress as a page connecting now
//! needs it.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use shared::protocol::MAX_SPANS_PER_FRAME;
use shared::{RunRecord, ServerMsg, Span};

use super::{Rejection, STARTS_PER_WINDOW, STARTS_WINDOW};

#[derive(Default)]
pub(super) struct State {
    /// Set while a plan runs; raising it cancels the plan.
    pub(super) running: Option<Arc<AtomicBool>>,
    /// Finished runs of the latest plan, for pages that connect later.
    pub(super) recent: Vec<RunRecord>,
    /// When the latest starts were accepted (for the rate limit).
    starts: VecDeque<Instant>,
    /// The run in progress, as a page connecting now needs it.
    live: Option<LiveRun>,
    /// What runs cancelled by the server's shutdown removed (`stopping`).
    pub(super) cancelled: Vec<crate::cancel::Removed>,
}

/// What a late page needs to follow the run in progress. Bounded: the engine streams at most
/// its first few thousand spans and a sample of a few thousand more.
struct LiveRun {
    started: ServerMsg,
    spans: Vec<Span>,
    sampled: Vec<Span>,
    stride: u64,
    progress: Option<ServerMsg>,
}

impl State {
    /// Accepts a start at `now` if nothing runs and (where `limited`) the rate limit allows
    /// it: the plan is then running (raising `cancel` cancels it) and the previous plan's
    /// runs are forgotten.
    pub(super) fn admit(
        &mut self,
        cancel: Arc<AtomicBool>,
        now: Instant,
        limited: bool,
    ) -> Result<(), Rejection> {
        if self.running.is_some() {
            return Err(Rejection::Busy);
        }
        if !limited {
            self.running = Some(cancel);
            self.recent.clear();
            return Ok(());
        }
        while self
            .starts
            .front()
            .is_some_and(|t| now.duration_since(*t) > STARTS_WINDOW)
        {
            self.starts.pop_front();
        }
        if self.starts.len() >= STARTS_PER_WINDOW {
            return Err(Rejection::TooMany);
        }
        self.starts.push_back(now);
        self.running = Some(cancel);
        self.recent.clear();
        Ok(())
    }

    /// Keeps the snapshot in step with the event about to be broadcast.
    pub(super) fn track(&mut self, msg: &ServerMsg) {
        match msg {
            ServerMsg::RunStarted { .. } => {
                self.live = Some(LiveRun {
                    started: msg.clone(),
                    spans: Vec::new(),
                    sampled: Vec::new(),
                    stride: 1,
                    progress: None,
                });
            }
            ServerMsg::Sampled { spans, stride, .. } => {
                if let Some(live) = &mut self.live {
                    live.sampled.extend_from_slice(spans);
                    live.stride = *stride;
                }
            }
            ServerMsg::Spans { spans, .. } => {
                if let Some(live) = &mut self.live {
                    live.spans.extend_from_slice(spans);
                }
            }
            ServerMsg::Progress { .. } => {
                if let Some(live) = &mut self.live {
                    live.progress = Some(msg.clone());
                }
            }
            ServerMsg::Finished {
                run,
                summary,
                timeline,
            } => {
                self.live = None;
                self.recent.push(RunRecord {
                    run: *run,
                    summary: summary.clone(),
                    timeline: timeline.clone(),
                });
            }
            ServerMsg::Failed { .. } => self.live = None,
            ServerMsg::Welcome { .. }
            | ServerMsg::Rejected { .. }
            | ServerMsg::ObserveStarted { .. }
            | ServerMsg::ObserveStopped { .. }
            | ServerMsg::Observed { .. }
            | ServerMsg::ObservedTimeline(_)
            | ServerMsg::RecordingRead { .. }
            | ServerMsg::CaptureRead { .. } => {}
        }
    }

    /// The run in progress as messages, in the order a page would have received them.
    pub(super) fn snapshot(&self) -> Vec<ServerMsg> {
        let Some(live) = &self.live else {
            return Vec::new();
        };
        let ServerMsg::RunStarted { run, .. } = live.started else {
            return Vec::new();
        };
        let mut msgs = vec![live.started.clone()];
        msgs.extend(
            live.spans
                .chunks(MAX_SPANS_PER_FRAME)
                .map(|chunk| ServerMsg::Spans {
                    run,
                    spans: chunk.to_vec(),
                }),
        );
        msgs.extend(
            live.sampled
                .chunks(MAX_SPANS_PER_FRAME)
                .map(|chunk| ServerMsg::Sampled {
                    run,
                    stride: live.stride,
                    spans: chunk.to_vec(),
                }),
        );
        msgs.extend(live.progress.clone());
        msgs
    }
}
