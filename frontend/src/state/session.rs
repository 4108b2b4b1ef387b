//! The reducer: one `Session` folds every server message into the current plan's runs, the
//! results `Welcome` brought, and whether this page may start a run.

use shared::{ReplayInfo, RunRecord, RunSummary, ServerMsg, Timeline};

use super::run_view::{Outcome, RunView};

/// What the page knows about the current plan and the server's latest results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Session {
    /// The current (latest) plan's runs, in the order they started.
    pub runs: Vec<RunView>,
    /// The latest plan's finished runs as `Welcome` reported them (shown until a plan starts).
    pub recent: Vec<RunRecord>,
    /// The current plan was started by this page (otherwise the page follows a run started
    /// elsewhere).
    pub started_here: bool,
    /// This page sent a start and has heard neither `RunStarted` nor a refusal yet.
    pub awaiting_start: bool,
    /// `Welcome` said a run was in progress and no message about it has arrived yet.
    pub server_busy: bool,
    /// The current plan will not go on: a run failed (later runs are not attempted), or a
    /// `Welcome` said nothing is running.
    pub plan_ended: bool,
    /// `recent` holds a recording's runs (opened on this page, or served by `pipescope
    /// replay`), not runs of the server's Redis: their figures were measured when recorded.
    pub recording: Option<ReplayInfo>,
}

impl Session {
    /// Folds one server message in. Returns the human message to show in the error banner,
    /// if the message is an error.
    pub fn apply(&mut self, msg: ServerMsg) -> Option<String> {
        match msg {
            ServerMsg::Welcome {
                busy,
                recent,
                replay,
                ..
            } => {
                self.welcome(busy, recent, replay);
                None
            }
            ServerMsg::RunStarted {
                run,
                index,
                of,
                spec,
            } => {
                self.run_started(RunView::new(run, index, of, Some(spec)));
                None
            }
            ServerMsg::Progress {
                run,
                done,
                total,
                elapsed_us,
                ops_per_sec,
            } => {
                self.server_busy = false;
                let view = self.find_or_insert(run);
                view.done = done;
                view.total = total;
                view.elapsed_us = elapsed_us;
                view.ops_per_sec = ops_per_sec;
                None
            }
            ServerMsg::Spans { run, spans } => {
                self.find_or_insert(run).add_spans(spans);
                None
            }
            ServerMsg::Sampled { run, stride, spans } => {
                self.find_or_insert(run).add_sampled(stride, spans);
                None
            }
            ServerMsg::Finished {
                run,
                summary,
                timeline,
            } => {
                self.finished(run, summary, timeline);
                None
            }
            ServerMsg::Failed {
                run,
                reason,
                partial,
            } => Some(self.failed(run, reason, partial)),
            ServerMsg::Rejected { reason } => {
                self.awaiting_start = false;
                Some(format!("The server refused the run: {reason}"))
            }
            // Observe mode's messages are the Observe view's (not a run's).
            ServerMsg::ObserveStarted { .. }
            | ServerMsg::ObserveStopped { .. }
            | ServerMsg::Observed { .. }
            | ServerMsg::ObservedTimeline(_) => None,
            // The answers to the page's own `POST /recording` (`Connection::open_recording`) and
            // `POST /capture` (`ObserveState`).
            ServerMsg::RecordingRead { .. } | ServerMsg::CaptureRead { .. } => None,
        }
    }

    fn welcome(&mut self, busy: bool, recent: Vec<RunRecord>, replay: Option<ReplayInfo>) {
        self.awaiting_start = false;
        self.server_busy = busy;
        // A recording opened on this page outlives a reconnect, unless a run is under way.
        if replay.is_none() && !busy && self.recording.is_some() {
            return;
        }
        self.recording = replay;
        if !busy {
            self.plan_ended = true;
            // Whatever we were watching is over. The server's latest results win; if
            // it has none (e.g. it restarted), keep what this page saw finish.
            if recent.is_empty() {
                self.runs.retain(|r| !r.is_running());
            } else if self.watched(&recent) {
                self.caught_up(&recent);
            } else {
                self.runs.clear();
            }
        }
        self.recent = recent;
    }

    /// Whether `recent` is the plan this page was following (a reconnect after it ended: a
    /// page the server dropped for reading too slowly, say): every run of it is one of ours.
    fn watched(&self, recent: &[RunRecord]) -> bool {
        !self.runs.is_empty()
            && recent
                .iter()
                .all(|rec| self.runs.iter().any(|v| v.run == rec.run))
    }

    /// The plan this page was following, as it ended: each run as the server recorded it
    /// (what the page missed while away filled in), in its place in the plan; a run still
    /// open here that the server did not record finished is dropped.
    fn caught_up(&mut self, recent: &[RunRecord]) {
        self.runs = self
            .runs
            .iter()
            .filter_map(|v| match recent.iter().find(|rec| rec.run == v.run) {
                Some(rec) => Some(RunView::from_record(rec, v.index, v.of)),
                None if v.is_running() => None,
                None => Some(v.clone()),
            })
            .collect();
    }

    /// A plan's first run starts a new plan (started here if this page asked for one).
    fn run_started(&mut self, view: RunView) {
        if view.index == 0 {
            self.runs.clear();
            // A live plan replaces a recording on the stage.
            self.recording = None;
            self.plan_ended = false;
            self.started_here = self.awaiting_start;
        }
        self.awaiting_start = false;
        self.server_busy = false;
        match self.find(view.run) {
            Some(existing) => *existing = view,
            None => self.runs.push(view),
        }
    }

    fn finished(&mut self, run: u64, summary: RunSummary, timeline: Timeline) {
        self.server_busy = false;
        let view = self.find_or_insert(run);
        view.take_timeline(timeline);
        view.spec = Some(summary.spec);
        view.done = summary.done;
        view.total = summary.spec.count;
        view.elapsed_us = summary.wall_us;
        view.ops_per_sec = summary.ops_per_sec;
        view.outcome = Outcome::Finished(summary);
    }

    /// Ends the plan; returns the banner's message.
    fn failed(&mut self, run: Option<u64>, reason: String, partial: Option<RunSummary>) -> String {
        self.awaiting_start = false;
        self.server_busy = false;
        self.plan_ended = true;
        let Some(run) = run else {
            return format!("The run failed: {reason}");
        };
        let view = self.find_or_insert(run);
        if let Some(p) = &partial {
            view.spec = Some(p.spec);
            view.done = p.done;
            view.elapsed_us = p.wall_us;
            view.ops_per_sec = p.ops_per_sec;
        }
        let label = view.label();
        view.outcome = Outcome::Failed {
            reason: reason.clone(),
            partial,
        };
        format!("The {label} run stopped: {reason}")
    }

    /// Puts runs this page saw finish back on the stage as the current, finished plan (a tour
    /// step revisited). The next plan to start replaces them as usual.
    pub fn show_again(&mut self, runs: Vec<RunView>) {
        self.runs = runs;
        self.started_here = true;
        self.plan_ended = true;
        self.awaiting_start = false;
    }

    /// Shows a recording's runs as `Welcome`'s would be shown (the results, the timeline and
    /// the charts read them from `recent`), in place of whatever was on the stage.
    pub fn open_recording(&mut self, info: ReplayInfo, runs: Vec<RunRecord>) {
        self.runs.clear();
        self.recent = runs;
        self.recording = Some(info);
        self.started_here = false;
        self.plan_ended = true;
    }

    /// The finished runs on the stage with their timelines: what "Save session" writes.
    pub fn records(&self) -> Vec<RunRecord> {
        if self.runs.is_empty() {
            return self.recent.clone();
        }
        self.runs.iter().filter_map(RunView::record).collect()
    }

    /// Whether `records` has anything, without copying the timelines.
    pub fn has_records(&self) -> bool {
        if self.runs.is_empty() {
            return !self.recent.is_empty();
        }
        self.runs
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Finished(_)))
    }

    /// The websocket closed: nothing this page sent can still be answered.
    pub fn connection_lost(&mut self) {
        self.awaiting_start = false;
    }

    pub fn run(&self, run: u64) -> Option<&RunView> {
        self.runs.iter().find(|r| r.run == run)
    }

    fn find(&mut self, run: u64) -> Option<&mut RunView> {
        self.runs.iter_mut().find(|r| r.run == run)
    }

    fn find_or_insert(&mut self, run: u64) -> &mut RunView {
        match self.runs.iter().position(|r| r.run == run) {
            Some(i) => &mut self.runs[i],
            None => {
                let index = self.runs.last().map_or(0, |l| l.index + 1);
                self.runs.push(RunView::new(run, index, index + 1, None));
                self.runs.last_mut().expect("just pushed")
            }
        }
    }

    /// Runs of the current plan announced (`of`) but not started yet.
    pub fn queued(&self) -> usize {
        match self.runs.last() {
            Some(last) if !self.plan_ended => last.of.saturating_sub(last.index + 1),
            _ => 0,
        }
    }

    /// A run is in progress or about to be: starting another would be refused.
    pub fn busy(&self) -> bool {
        self.awaiting_start
            || self.server_busy
            || self.runs.iter().any(RunView::is_running)
            || self.queued() > 0
    }

    /// A run is in progress that another page started.
    pub fn following(&self) -> bool {
        !self.started_here && self.runs.iter().any(RunView::is_running)
    }
}
