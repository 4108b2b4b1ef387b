//! The reducer fed server messages as a page receives them, and what the views then read.

use crate::testing::test;
use shared::{Latency, Mode, ReplayInfo, RunSpec, RunSummary, ServerMsg, Timeline};

use super::{RunView, Session};

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

/// A page the server dropped mid-plan (it read too slowly on a busy machine) reconnects
/// after the plan ended: it keeps the plan it followed (a long plan's strip, its choices),
/// every run finished as the server recorded it, not the bare results of a page just opened.
#[test]
fn a_page_back_after_its_plan_ended_keeps_the_plan_with_what_it_missed() {
    let mut s = Session::default();
    for run in 0..5 {
        s.apply(started(run, run as usize, 5, PIPE));
    }
    s.apply(ServerMsg::Finished {
        run: 0,
        summary: summary(PIPE, 5_000),
        timeline: Default::default(),
    });
    s.connection_lost();
    s.apply(welcome(
        false,
        (0..5).map(|_| summary(PIPE, 4_000)).collect(),
    ));
    assert_eq!(s.runs.len(), 5, "the plan stays this page's");
    assert!(s.runs.iter().all(|r| !r.is_running()), "{:?}", s.runs);
    assert_eq!(
        s.runs.iter().map(|r| (r.index, r.of)).collect::<Vec<_>>(),
        [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5)]
    );
    assert!(!s.busy());
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
fn a_live_sample_is_drawn_beyond_the_first_requests_before_the_run_ends() {
    let mut s = Session::default();
    s.apply(ServerMsg::RunStarted {
        run: 2,
        index: 0,
        of: 1,
        spec: spec(Mode::Sequential),
    });
    s.apply(ServerMsg::Spans {
        run: 2,
        spans: vec![span(0, 0.0, 5.0), span(1, 5.0, 10.0)],
    });
    // Out of order (a pool's connections), and a repeat: put in place, once.
    s.apply(ServerMsg::Sampled {
        run: 2,
        stride: 4,
        spans: vec![span(8, 40.0, 45.0), span(4, 20.0, 25.0)],
    });
    s.apply(ServerMsg::Sampled {
        run: 2,
        stride: 4,
        spans: vec![span(8, 40.0, 45.0), span(12, 60.0, 65.0)],
    });
    let t = &s.traces()[0];
    let beyond: Vec<u64> = t.sampled_beyond().iter().map(|s| s.i).collect();
    assert_eq!((beyond, t.stride), (vec![4, 8, 12], 4));
    assert_eq!(
        t.extent_us(),
        65.0,
        "the run is drawn to its newest sampled reply"
    );
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

#[test]
fn the_speedup_pairs_only_runs_alike_but_for_how_they_were_sent() {
    use super::{ResultRow, speedup_of};
    let row = |k: &str, summary: RunSummary| ResultRow {
        key: k.into(),
        summary,
        partial: false,
    };
    // A tour: sequential SETs at one step, then pipelined INCRs of another count.
    let incrs = RunSummary {
        spec: RunSpec::with_other_client(100_000, PIPE),
        done: 100_000,
        ..summary(PIPE, 50_000)
    };
    let unlike = vec![
        row("1", summary(Mode::Sequential, 100_000)),
        row("2", incrs),
    ];
    assert!(speedup_of(&unlike).is_none());
    // The latest complete pair leads, not the latest of each mode.
    let pair = vec![
        row("1", summary(Mode::Sequential, 100_000)),
        row("2", summary(PIPE, 4_000)),
        row("3", {
            let mut s = summary(Mode::Sequential, 70_000);
            s.spec.count = 500;
            s
        }),
    ];
    let up = speedup_of(&pair).unwrap();
    assert!((up.factor - 25.0).abs() < 1e-9, "{}", up.factor);
}
