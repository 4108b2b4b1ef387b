//! What the page knows about the runs, rebuilt from the server's messages by one pure reducer.
//! No signals and no browser here: `connection` holds a `Session` in a signal and feeds it
//! every `ServerMsg`; the view reads it through memos. Unit-testable on the host.

use shared::{Mode, ReplayInfo, RunRecord, RunSpec, RunSummary, ServerMsg, Span, Timeline};

use crate::trace::Trace;

/// One run of the current plan, as far as the page has seen it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunView {
    pub run: u64,
    /// Position in its plan (`index` of `of`). A run first seen through `Progress` (the page
    /// connected mid-run) is taken as `0 of 1` until told otherwise.
    pub index: usize,
    pub of: usize,
    /// Unknown for a run first seen through `Progress`, until `Finished` brings it.
    pub spec: Option<RunSpec>,
    pub done: u64,
    pub total: u64,
    pub elapsed_us: u64,
    pub ops_per_sec: f64,
    pub outcome: Outcome,
    /// The run's first requests, every one, in order of `i` (live from `Spans`, then replaced
    /// by the `Finished` timeline).
    pub spans: Vec<Span>,
    /// Every `stride`-th request of the whole run, from the `Finished` timeline (drawn beyond
    /// `spans`, marked as a sample).
    pub sampled: Vec<Span>,
    pub stride: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Running,
    Finished(RunSummary),
    Failed {
        reason: String,
        partial: Option<RunSummary>,
    },
}

impl RunView {
    fn new(run: u64, index: usize, of: usize, spec: Option<RunSpec>) -> Self {
        RunView {
            run,
            index,
            of,
            spec,
            done: 0,
            total: spec.map_or(0, |s| s.count),
            elapsed_us: 0,
            ops_per_sec: 0.0,
            outcome: Outcome::Running,
            spans: Vec::new(),
            sampled: Vec::new(),
            stride: 1,
        }
    }

    pub fn label(&self) -> String {
        match self.spec {
            Some(spec) => spec.mode.label() + spec.keys.suffix(),
            None => format!("run #{}", self.run),
        }
    }

    /// Appends live spans, keeping them in order: a frame a lagging page missed leaves a gap,
    /// never a duplicate or a reordering.
    fn add_spans(&mut self, spans: Vec<Span>) {
        for s in spans {
            if self.spans.last().is_none_or(|last| s.i > last.i) {
                self.spans.push(s);
            }
        }
    }

    /// The final timeline is complete where the live frames may have gaps.
    /// Its sample covers the rest of the run.
    fn take_timeline(&mut self, timeline: Timeline) {
        if timeline.first.len() >= self.spans.len() {
            self.spans = timeline.first;
        }
        self.sampled = timeline.sampled;
        self.stride = timeline.stride;
    }

    pub fn trace(&self) -> Trace {
        Trace {
            run: self.run,
            mode: self.spec.map(|s| s.mode),
            network: self.spec.map(|s| s.network),
            spans: self.spans.clone(),
            sampled: self.sampled.clone(),
            stride: self.stride,
            count: self.total,
            summary: match &self.outcome {
                Outcome::Finished(s) => Some(s.clone()),
                _ => None,
            },
            observed: None,
        }
    }

    /// A finished run as a recording keeps it (`None` unless finished).
    pub fn record(&self) -> Option<RunRecord> {
        match &self.outcome {
            Outcome::Finished(summary) => Some(RunRecord {
                run: self.run,
                summary: summary.clone(),
                timeline: Timeline {
                    first: self.spans.clone(),
                    sampled: self.sampled.clone(),
                    stride: self.stride,
                },
            }),
            _ => None,
        }
    }

    /// A recorded run, finished, as `index` of `of` of its plan.
    pub fn from_record(record: &RunRecord, index: usize, of: usize) -> RunView {
        let summary = record.summary.clone();
        let mut view = RunView::new(record.run, index, of, Some(summary.spec));
        view.take_timeline(record.timeline.clone());
        view.done = summary.done;
        view.elapsed_us = summary.wall_us;
        view.ops_per_sec = summary.ops_per_sec;
        view.outcome = Outcome::Finished(summary);
        view
    }

    pub fn is_running(&self) -> bool {
        matches!(self.outcome, Outcome::Running)
    }

    /// Fraction done, 0..=1.
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            (self.done as f64 / self.total as f64).clamp(0.0, 1.0)
        }
    }
}

/// A row of the results table.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    /// Stable key: the run id, or the position for summaries from `Welcome`.
    pub key: String,
    pub summary: RunSummary,
    /// True for what a failed or cancelled run measured before it stopped.
    pub partial: bool,
}

/// The headline comparison: the latest plan's pipelined run against its sequential run.
#[derive(Debug, Clone, PartialEq)]
pub struct Speedup {
    pub factor: f64,
    pub sequential: RunSummary,
    pub pipelined: RunSummary,
}

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
            // The answer to the page's own `POST /recording` (`Connection::open_recording`).
            ServerMsg::RecordingRead { .. } => None,
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
            } else {
                self.runs.clear();
            }
        }
        self.recent = recent;
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

    /// The results table: the current plan's finished runs (and what failed runs measured), or,
    /// before any plan started on this page, the summaries `Welcome` brought.
    pub fn results(&self) -> Vec<ResultRow> {
        if self.runs.is_empty() {
            return self
                .recent
                .iter()
                .enumerate()
                .map(|(i, r)| ResultRow {
                    key: format!("recent-{i}"),
                    summary: r.summary.clone(),
                    partial: false,
                })
                .collect();
        }
        self.runs
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Finished(s) => Some(ResultRow {
                    key: r.run.to_string(),
                    summary: s.clone(),
                    partial: false,
                }),
                Outcome::Failed {
                    partial: Some(s), ..
                } if s.done > 0 => Some(ResultRow {
                    key: r.run.to_string(),
                    summary: s.clone(),
                    partial: true,
                }),
                _ => None,
            })
            .collect()
    }

    /// The runs the timeline draws: the current plan's, or before any plan started on this
    /// page, the ones `Welcome` brought (so a reloaded page can replay them).
    pub fn traces(&self) -> Vec<Trace> {
        if self.runs.is_empty() {
            return self
                .recent
                .iter()
                .map(|r| Trace {
                    run: r.run,
                    mode: Some(r.summary.spec.mode),
                    network: Some(r.summary.spec.network),
                    spans: r.timeline.first.clone(),
                    sampled: r.timeline.sampled.clone(),
                    stride: r.timeline.stride,
                    count: r.summary.spec.count,
                    summary: Some(r.summary.clone()),
                    observed: None,
                })
                .collect();
        }
        self.runs.iter().map(RunView::trace).collect()
    }

    /// A run is in progress that another page started.
    pub fn following(&self) -> bool {
        !self.started_here && self.runs.iter().any(RunView::is_running)
    }

    /// The latest plan's speed-up, once it has both a finished sequential and a finished
    /// pipelined run (the last of each).
    pub fn speedup(&self) -> Option<Speedup> {
        speedup_of(&self.results())
    }
}

/// Pipelined over sequential (ops/s ratio) among complete rows, the last of each mode.
pub fn speedup_of(rows: &[ResultRow]) -> Option<Speedup> {
    let last = |is: fn(Mode) -> bool| {
        rows.iter()
            .rev()
            .find(|r| !r.partial && is(r.summary.spec.mode))
    };
    let sequential = last(Mode::is_sequential)?.summary.clone();
    let pipelined = last(Mode::is_pipelined)?.summary.clone();
    let factor = pipelined.speedup_over(&sequential);
    factor.is_finite().then_some(Speedup {
        factor,
        sequential,
        pipelined,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::Latency;

    fn spec(mode: Mode) -> RunSpec {
        RunSpec::set(1000, mode)
    }

    fn summary(mode: Mode, wall_us: u64) -> RunSummary {
        RunSummary {
            spec: spec(mode),
            done: 1000,
            wall_us,
            ops_per_sec: shared::report::ops_per_sec(1000, wall_us),
            round_trips: mode.round_trips(1000),
            writes: mode.round_trips(1000),
            wire_commands: 1000,
            latency: Latency::default(),
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        }
    }

    const PIPE: Mode = Mode::pipelined(100);

    #[test]
    fn a_comparison_runs_to_a_speedup() {
        let mut s = Session {
            awaiting_start: true,
            ..Session::default()
        };
        assert!(s.busy());
        s.apply(ServerMsg::RunStarted {
            run: 7,
            index: 0,
            of: 2,
            spec: spec(Mode::Sequential),
        });
        assert!(!s.awaiting_start);
        assert!(s.busy());
        s.apply(ServerMsg::Progress {
            run: 7,
            done: 500,
            total: 1000,
            elapsed_us: 10,
            ops_per_sec: 5.0,
        });
        assert_eq!(s.run(7).unwrap().fraction(), 0.5);
        s.apply(ServerMsg::Finished {
            run: 7,
            summary: summary(Mode::Sequential, 100_000),
            timeline: Default::default(),
        });
        assert!(s.busy(), "the pipelined run is still to come");
        assert_eq!(s.queued(), 1);
        assert_eq!(s.results().len(), 1);
        assert!(s.speedup().is_none());
        s.apply(ServerMsg::RunStarted {
            run: 8,
            index: 1,
            of: 2,
            spec: spec(PIPE),
        });
        s.apply(ServerMsg::Finished {
            run: 8,
            summary: summary(PIPE, 4_000),
            timeline: Default::default(),
        });
        assert!(!s.busy());
        let rows = s.results();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].key, "7");
        let up = s.speedup().unwrap();
        assert!((up.factor - 25.0).abs() < 1e-9, "{}", up.factor);
    }

    #[test]
    fn a_new_plan_replaces_the_old_one() {
        let mut s = Session::default();
        s.apply(ServerMsg::RunStarted {
            run: 1,
            index: 0,
            of: 1,
            spec: spec(PIPE),
        });
        s.apply(ServerMsg::Finished {
            run: 1,
            summary: summary(PIPE, 4_000),
            timeline: Default::default(),
        });
        s.apply(ServerMsg::RunStarted {
            run: 2,
            index: 0,
            of: 1,
            spec: spec(Mode::Sequential),
        });
        assert_eq!(s.runs.len(), 1);
        assert!(s.results().is_empty());
    }

    #[test]
    fn failures_and_refusals_end_the_plan_with_a_message() {
        let mut s = Session::default();
        s.apply(ServerMsg::RunStarted {
            run: 3,
            index: 0,
            of: 2,
            spec: spec(Mode::Sequential),
        });
        let msg = s.apply(ServerMsg::Failed {
            run: Some(3),
            reason: "cancelled".into(),
            partial: None,
        });
        assert_eq!(
            msg.as_deref(),
            Some("The sequential run stopped: cancelled")
        );
        assert!(!s.busy(), "later runs of a failed plan are not attempted");
        s.awaiting_start = true;
        let msg = s.apply(ServerMsg::Rejected {
            reason: "busy".into(),
        });
        assert!(msg.unwrap().contains("busy"));
        assert!(!s.busy());
    }

    #[test]
    fn a_late_page_follows_a_run_it_did_not_see_start() {
        let mut s = Session::default();
        s.apply(ServerMsg::Welcome {
            protocol: shared::PROTOCOL_VERSION,
            server_version: "0.1.0".into(),
            redis_version: "7.0.15".into(),
            target: "redis://127.0.0.1:6379".into(),
            limits: shared::Limits::DEFAULT,
            network: shared::Network::LOOPBACK,
            can_control: true,
            busy: true,
            recent: vec![],
            observing: None,
            observed: vec![],
            replay: None,
        });
        assert!(s.busy());
        s.apply(ServerMsg::Progress {
            run: 9,
            done: 10,
            total: 1000,
            elapsed_us: 10,
            ops_per_sec: 1.0,
        });
        assert_eq!(s.run(9).unwrap().label(), "run #9");
        s.apply(ServerMsg::Finished {
            run: 9,
            summary: summary(PIPE, 4_000),
            timeline: Default::default(),
        });
        assert_eq!(s.run(9).unwrap().label(), "pipelined (batch 100)");
        assert!(!s.busy());
    }

    fn welcome(busy: bool, recent: Vec<RunSummary>) -> ServerMsg {
        ServerMsg::Welcome {
            protocol: shared::PROTOCOL_VERSION,
            server_version: "0.1.0".into(),
            redis_version: "7.0.15".into(),
            target: "redis://127.0.0.1:6379".into(),
            limits: shared::Limits::DEFAULT,
            network: shared::Network::LOOPBACK,
            can_control: true,
            busy,
            observing: None,
            observed: vec![],
            replay: None,
            recent: recent
                .into_iter()
                .enumerate()
                .map(|(i, summary)| shared::RunRecord {
                    run: i as u64,
                    summary,
                    timeline: Default::default(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_restarted_server_keeps_what_the_page_saw_finish() {
        let mut s = Session::default();
        s.apply(ServerMsg::RunStarted {
            run: 1,
            index: 0,
            of: 2,
            spec: spec(Mode::Sequential),
        });
        s.apply(ServerMsg::Finished {
            run: 1,
            summary: summary(Mode::Sequential, 40_000),
            timeline: Default::default(),
        });
        s.apply(ServerMsg::RunStarted {
            run: 2,
            index: 1,
            of: 2,
            spec: spec(PIPE),
        });
        s.connection_lost();
        s.apply(welcome(false, vec![]));
        assert_eq!(s.runs.len(), 1, "the unfinished run is dropped");
        assert!(!s.busy());
        assert_eq!(s.results().len(), 1);
        // A server with newer results replaces them.
        s.apply(welcome(
            false,
            vec![summary(Mode::Sequential, 50_000), summary(PIPE, 5_000)],
        ));
        assert!(s.runs.is_empty());
        assert_eq!(s.results().len(), 2);
    }

    #[test]
    fn welcome_shows_recent_results_until_a_plan_starts() {
        let mut s = Session::default();
        s.apply(welcome(
            false,
            vec![summary(Mode::Sequential, 50_000), summary(PIPE, 5_000)],
        ));
        assert_eq!(s.results().len(), 2);
        assert!((s.speedup().unwrap().factor - 10.0).abs() < 1e-9);
    }

    fn span(i: u64, issued_us: f64, replied_us: f64) -> shared::Span {
        shared::Span::new(i, issued_us, replied_us)
    }

    #[test]
    fn spans_are_kept_per_run_in_order_then_completed_by_the_timeline() {
        let mut s = Session::default();
        s.apply(ServerMsg::RunStarted {
            run: 4,
            index: 0,
            of: 1,
            spec: spec(PIPE),
        });
        s.apply(ServerMsg::Spans {
            run: 4,
            spans: vec![span(0, 0.0, 5.0), span(1, 0.0, 5.0)],
        });
        // A repeat and a gap (a frame this page missed): no duplicate, order kept.
        s.apply(ServerMsg::Spans {
            run: 4,
            spans: vec![span(1, 0.0, 5.0), span(3, 6.0, 9.0)],
        });
        let got: Vec<u64> = s.run(4).unwrap().spans.iter().map(|s| s.i).collect();
        assert_eq!(got, [0, 1, 3]);
        assert_eq!(s.traces()[0].spans.len(), 3);
        let full: Vec<_> = (0..4).map(|i| span(i, 0.0, 5.0)).collect();
        s.apply(ServerMsg::Finished {
            run: 4,
            summary: summary(PIPE, 4_000),
            timeline: shared::Timeline {
                first: full.clone(),
                sampled: vec![span(0, 0.0, 5.0), span(8, 20.0, 25.0)],
                stride: 8,
            },
        });
        let t = &s.traces()[0];
        assert_eq!(t.spans, full);
        // The sample is kept to be drawn beyond the first requests.
        assert_eq!((t.sampled.len(), t.stride), (2, 8));
        assert_eq!(t.sampled_beyond(), [span(8, 20.0, 25.0)]);
        assert_eq!(t.kind(), "pipelined");
        assert!(t.summary.is_some());
    }

    #[test]
    fn a_page_knows_whether_it_started_the_plan() {
        let mut s = Session::default();
        let started = ServerMsg::RunStarted {
            run: 1,
            index: 0,
            of: 1,
            spec: spec(Mode::Sequential),
        };
        s.apply(started.clone());
        assert!(s.following(), "started elsewhere");
        let mut mine = Session {
            awaiting_start: true,
            ..Session::default()
        };
        mine.apply(started);
        assert!(!mine.following());
        assert!(mine.started_here);
    }

    #[test]
    fn welcome_timelines_can_be_replayed() {
        let mut s = Session::default();
        let mut msg = welcome(false, vec![summary(Mode::Sequential, 50_000)]);
        if let ServerMsg::Welcome { recent, .. } = &mut msg {
            recent[0].timeline.first = vec![span(0, 0.0, 40.0), span(1, 40.0, 80.0)];
        }
        s.apply(msg);
        let traces = s.traces();
        assert_eq!(traces.len(), 1);
        assert_eq!(traces[0].spans.len(), 2);
        assert_eq!(traces[0].kind(), "sequential");
    }

    fn started(run: u64, index: usize, of: usize, mode: Mode) -> ServerMsg {
        ServerMsg::RunStarted {
            run,
            index,
            of,
            spec: spec(mode),
        }
    }

    fn info(file: &str) -> ReplayInfo {
        ReplayInfo {
            file: file.into(),
            saved_at: "2026-12-04T07:00:00Z".into(),
            server_version: "0.1.0".into(),
            redis_version: "7.2.4".into(),
            target: "redis://venue:6379/0".into(),
            tour: vec![],
        }
    }

    #[test]
    fn an_opened_recording_shows_like_welcome_runs_and_saves_back() {
        let mut s = Session::default();
        s.apply(started(1, 0, 1, Mode::Sequential));
        s.apply(ServerMsg::Finished {
            run: 1,
            summary: summary(Mode::Sequential, 50_000),
            timeline: Timeline {
                first: vec![span(0, 0.0, 40.0)],
                sampled: vec![],
                stride: 1,
            },
        });
        let saved = s.records();
        assert_eq!(saved.len(), 1);
        assert!(s.has_records());
        assert!(!Session::default().has_records());
        let again = RunView::from_record(&saved[0], 0, 1);
        assert_eq!(again.record().as_ref(), Some(&saved[0]));
        assert_eq!(saved[0].timeline.first.len(), 1);

        let mut other = Session::default();
        other.open_recording(info("talk.pipescope.json"), saved.clone());
        assert_eq!(other.traces().len(), 1);
        assert_eq!(other.results().len(), 1);
        assert_eq!(other.records(), saved);
        assert!(!other.busy());
        // A reconnect's Welcome does not take the recording away...
        other.apply(welcome(false, vec![summary(PIPE, 4_000)]));
        assert_eq!(
            other.recording.as_ref().unwrap().file,
            "talk.pipescope.json"
        );
        assert_eq!(other.records(), saved);
        // ...a live plan does.
        other.apply(started(5, 0, 1, PIPE));
        assert!(other.recording.is_none());
    }

    #[test]
    fn a_replay_servers_welcome_marks_its_runs_as_a_recording() {
        let mut s = Session::default();
        let mut msg = welcome(false, vec![summary(Mode::Sequential, 50_000)]);
        if let ServerMsg::Welcome { replay, .. } = &mut msg {
            *replay = Some(info("bench.pipescope.json"));
        }
        s.apply(msg);
        assert_eq!(s.recording.as_ref().unwrap().file, "bench.pipescope.json");
        assert_eq!(s.traces().len(), 1);
    }
}
