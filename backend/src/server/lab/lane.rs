//! The lab served: the `Lab`'s decisions carried out. One task drives the lane (a run waiting
//! for too long is dropped, a run past the wall-clock limit cancelled, the next run started
//! through the hub once nothing runs), and every change is published as frames the pages
//! send: the room's, serialised once for every page, and the presenter's.
//!
//! A participant's run goes through the hub as any run does (`Hub::start_lane`): its events
//! stream to every page on `/ws`, its keys live under its own run's prefix and are removed
//! after it, finished or cancelled. The presenter's runs from the main page's Start go
//! through the hub directly; the lane waits while one runs, so no two timed runs overlap.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::ws::Utf8Bytes;
use shared::lab::{
    Ceilings, LabOutcome, LabParticipant, LabQueued, LabServerMsg, LabView, LabWaiting, LabYou,
    PresenterView,
};
use shared::{RunSpec, RunSummary};
use tokio::sync::watch;

use super::queue::{Bounds, Who};
use super::{Lab, LabRefusal, Turn};
use crate::server::hub::Hub;
use crate::server::hub::plan::Ended;

/// How often the lane is looked at: a freed lane is taken within this, and the pages' times
/// waited advance at this pace while anything waits.
const TICK: Duration = Duration::from_millis(250);

/// The lab as served: cheap to clone, one per server.
#[derive(Clone)]
pub struct LabServer {
    inner: Arc<Shared>,
}

struct Shared {
    hub: Hub,
    token: String,
    /// Where the room reaches this server ("http://192.168.1.20:8080"), one per address.
    join_bases: Vec<String>,
    state: Mutex<State>,
    frames: watch::Sender<Frames>,
}

/// The latest frames every page is sent: the room's and the presenter's, each serialised
/// once; `version` moves on every change (a participant's own state included).
#[derive(Clone, Default)]
pub struct Frames {
    pub version: u64,
    pub room: Utf8Bytes,
    pub presenter: Utf8Bytes,
}

struct State {
    lab: Lab,
    /// Per participant: what became of their latest run.
    last: HashMap<u64, LabOutcome>,
    on_lane: Option<OnLane>,
    version: u64,
}

/// The runs on the lane.
struct OnLane {
    who: Who,
    first_run: u64,
    spec: RunSpec,
    cancel: Arc<AtomicBool>,
    since: Instant,
    queued: Duration,
    /// Why it was cancelled, once it was.
    cancelled: Option<String>,
}

impl LabServer {
    /// A lab on `hub`'s Redis, its presenter's actions allowed with `token` only, reached by
    /// the room at `join_bases`; the lane's driver runs until the server stops.
    pub fn start(
        hub: Hub,
        token: String,
        join_bases: Vec<String>,
        join_code: String,
        ceilings: Ceilings,
        bounds: Bounds,
    ) -> Self {
        let state = State {
            lab: Lab::new(join_code, ceilings, bounds),
            last: HashMap::new(),
            on_lane: None,
            version: 0,
        };
        let lab = LabServer {
            inner: Arc::new(Shared {
                hub,
                token,
                join_bases,
                state: Mutex::new(state),
                frames: watch::channel(Frames::default()).0,
            }),
        };
        lab.publish(&mut lab.state());
        let driver = lab.clone();
        tokio::spawn(async move { driver.drive().await });
        lab
    }

    pub fn hub(&self) -> &Hub {
        &self.inner.hub
    }

    /// Whether `token` is the presenter's.
    pub fn is_presenter(&self, token: &str) -> bool {
        // Compared in full whatever the first difference (as the hub compares its token).
        let want = self.inner.token.as_bytes();
        token.len() == want.len()
            && token
                .as_bytes()
                .iter()
                .zip(want)
                .fold(0u8, |d, (a, b)| d | (a ^ b))
                == 0
    }

    pub fn join_code(&self) -> String {
        self.state().lab.join_code().to_string()
    }

    /// The join link at each address the room may reach this server on.
    pub fn join_urls(&self) -> Vec<String> {
        join_urls(&self.inner.join_bases, self.state().lab.join_code())
    }

    pub fn frames(&self) -> watch::Receiver<Frames> {
        self.inner.frames.subscribe()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().expect("lab state")
    }

    /// Joins page `key` with `code`: its participant's id and nickname.
    pub fn join(&self, code: &str, key: &str) -> Result<(u64, String), LabRefusal> {
        let mut st = self.state();
        let joined = st.lab.join(code, key, Instant::now())?;
        self.publish(&mut st);
        Ok(joined)
    }

    pub fn rename(&self, key: &str, wanted: &str) -> Result<String, LabRefusal> {
        let mut st = self.state();
        let name = st.lab.rename(key, wanted)?;
        self.publish(&mut st);
        Ok(name)
    }

    /// Participant `key` queues `spec`: its place.
    pub fn request(&self, key: &str, spec: RunSpec) -> Result<usize, LabRefusal> {
        let mut st = self.state();
        let place = st.lab.request(key, spec, Instant::now())?;
        self.publish(&mut st);
        Ok(place)
    }

    /// Participant `key` takes back their waiting run.
    pub fn withdraw(&self, key: &str) {
        let mut st = self.state();
        st.lab.left(key);
        self.publish(&mut st);
    }

    /// Page `key` went away: its waiting run is withdrawn and its run on the lane cancelled
    /// (its keys removed as any cancelled run's). It stays in the room until it is idle too
    /// long, so a reload finds it.
    pub fn gone(&self, key: &str) {
        let mut st = self.state();
        if let Some(id) = st.lab.member(key) {
            st.lab.left(key);
            if let Some(l) = st
                .on_lane
                .as_mut()
                .filter(|l| l.who == Who::Participant(id))
            {
                l.cancelled = Some("cancelled: its page was closed".into());
                l.cancel.store(true, Ordering::Relaxed);
            }
        }
        self.publish(&mut st);
    }

    /// Participant `key`'s own state, if they are in the room.
    pub fn you(&self, key: &str) -> Option<LabYou> {
        let st = self.state();
        let id = st.lab.member(key)?;
        let now = Instant::now();
        let waiting = st
            .lab
            .queue()
            .places(now)
            .into_iter()
            .zip(st.lab.queue().waited(now))
            .find(|((who, _, _), _)| *who == Who::Participant(id))
            .map(|((_, place, estimate), queued)| LabWaiting {
                place,
                queued_ms: queued.as_millis() as u64,
                estimate_ms: estimate.as_millis() as u64,
            });
        Some(LabYou {
            id,
            nickname: st.lab.name_of(Who::Participant(id)),
            waiting,
            running: st
                .on_lane
                .as_ref()
                .filter(|l| l.who == Who::Participant(id))
                .map(|l| l.first_run),
            last: st.last.get(&id).cloned(),
        })
    }

    /// A presenter action (the token already checked).
    pub fn act(&self, action: shared::lab::PresenterAction) -> Result<(), LabRefusal> {
        use shared::lab::PresenterAction as A;
        let mut st = self.state();
        let now = Instant::now();
        match action {
            A::Watch => {}
            A::Run { runs } => {
                st.lab.presenter_request(runs, now)?;
            }
            A::Pause { paused } => st.lab.pause(paused),
            A::Reveal { revealed } => st.lab.revealed = revealed,
            A::ClearResults => st.lab.clear_results(),
            A::SetCeilings { ceilings } => st.lab.set_ceilings(ceilings),
            A::Remove { id, ban } => {
                if !st.lab.remove(id, ban) {
                    return Err(LabRefusal::NoSuchParticipant(id));
                }
                cancel_if(
                    &mut st,
                    Who::Participant(id),
                    "cancelled: the presenter removed you",
                );
            }
            A::Lock { locked } => st.lab.lock(locked),
            A::RotateLink => st.lab.rotate(new_join_code()),
            A::Close => {
                st.lab.close();
                if let Some(l) = st.on_lane.as_mut().filter(|l| l.who != Who::Presenter) {
                    l.cancelled = Some("cancelled: the presenter closed the lab".into());
                    l.cancel.store(true, Ordering::Relaxed);
                }
            }
        }
        self.publish(&mut st);
        Ok(())
    }

    /// The lane's driver: every `TICK`, idle participants expire, stale runs are dropped, a
    /// run past its limit is cancelled, and a free lane takes the next run.
    async fn drive(self) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut closing = self.inner.hub.closing();
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = closing.changed() => return,
            }
            self.step(Instant::now());
        }
    }

    fn step(&self, now: Instant) {
        let mut st = self.state();
        let busy_before = st.on_lane.is_some() || !st.lab.queue().is_empty();
        for id in st.lab.expire(now) {
            cancel_if(
                &mut st,
                Who::Participant(id),
                "cancelled: you were idle too long",
            );
        }
        for dropped in st.lab.drop_stale(now) {
            if let Who::Participant(id) = dropped.who {
                let note = format!(
                    "dropped after waiting {} s for the lane (the lab keeps a run waiting at most {} s): queue it again",
                    dropped.waited.as_secs(),
                    st.lab.queue().bounds().stale_after.as_secs()
                );
                st.last
                    .insert(id, outcome(&dropped, None, None, Some(note)));
            }
        }
        let limit = Duration::from_secs(st.lab.ceilings().max_run_secs);
        if let Some(l) = st.on_lane.as_mut()
            && l.who != Who::Presenter
            && l.cancelled.is_none()
            && now.duration_since(l.since) >= limit
        {
            l.cancelled = Some(format!(
                "cancelled at the lab's limit of {} s a run (its keys removed): try a smaller count or a bigger batch",
                limit.as_secs()
            ));
            l.cancel.store(true, Ordering::Relaxed);
        }
        if st.on_lane.is_none()
            && !self.inner.hub.is_busy()
            && let Some(turn) = st.lab.start_next(now)
        {
            self.take(&mut st, turn, now);
        }
        // While anything waits or runs, the times waited move on.
        if busy_before || st.on_lane.is_some() || !st.lab.queue().is_empty() {
            self.publish(&mut st);
        }
    }

    /// Starts `turn` on the lane through the hub; a waiter files what became of it.
    fn take(&self, st: &mut State, turn: Turn, now: Instant) {
        let cancel = Arc::new(AtomicBool::new(false));
        let spec = turn.runs[0];
        match self.inner.hub.start_lane(turn.runs.clone(), cancel.clone()) {
            Ok((first_run, ended)) => {
                st.on_lane = Some(OnLane {
                    who: turn.who,
                    first_run,
                    spec,
                    cancel,
                    since: now,
                    queued: turn.waited,
                    cancelled: None,
                });
                let lab = self.clone();
                tokio::spawn(async move {
                    let ended = ended.await.unwrap_or_default();
                    lab.ended(ended);
                });
            }
            Err(e) => {
                // The hub refused (a run of the main page's took it first, or the spec is
                // beyond the server's limits): the lane is free again.
                st.lab.ended(now, Vec::new());
                if let Who::Participant(id) = turn.who {
                    st.last
                        .insert(id, outcome(&turn, None, None, Some(e.to_string())));
                }
            }
        }
    }

    /// The runs on the lane ended: the room's results, and the participant's outcome.
    fn ended(&self, ended: Vec<Ended>) {
        let mut st = self.state();
        let now = Instant::now();
        let Some(l) = st.on_lane.take() else { return };
        let summaries: Vec<RunSummary> = ended
            .iter()
            .filter_map(|e| e.outcome.as_ref().ok().cloned())
            .collect();
        st.lab.ended(now, summaries.clone());
        if let Who::Participant(id) = l.who {
            let failed = ended.iter().find_map(|e| e.outcome.as_ref().err().cloned());
            let note = l.cancelled.clone().or(failed);
            let turn = Turn {
                who: l.who,
                runs: vec![l.spec],
                waited: l.queued,
            };
            let run = Some(l.first_run);
            st.last
                .insert(id, outcome(&turn, run, summaries.into_iter().next(), note));
        }
        self.publish(&mut st);
    }

    /// The frames after a change: the room's and the presenter's, serialised once here.
    fn publish(&self, st: &mut State) {
        st.version += 1;
        let now = Instant::now();
        let lab = &st.lab;
        let on_lane = st.on_lane.as_ref().map(|l| lab.name_of(l.who));
        let room = LabView {
            ceilings: lab.ceilings(),
            paused: lab.queue().is_paused(),
            locked: lab.room().is_locked(),
            revealed: lab.revealed,
            closed: lab.is_closed(),
            participants: lab.room().len(),
            waiting: lab.queue().len(),
            on_lane,
            results: if lab.revealed {
                lab.results().to_vec()
            } else {
                Vec::new()
            },
        };
        let presenter = PresenterView {
            join_code: lab.join_code().to_string(),
            join_urls: join_urls(&self.inner.join_bases, lab.join_code()),
            participants: lab
                .room()
                .participants()
                .into_iter()
                .map(|p| LabParticipant {
                    id: p.id,
                    nickname: p.nickname.clone(),
                })
                .collect(),
            queue: lab
                .queue()
                .places(now)
                .into_iter()
                .zip(lab.queue().waited(now))
                .map(|((who, place, estimate), queued)| LabQueued {
                    who: lab.name_of(who),
                    waiting: LabWaiting {
                        place,
                        queued_ms: queued.as_millis() as u64,
                        estimate_ms: estimate.as_millis() as u64,
                    },
                })
                .collect(),
            results: lab.results().to_vec(),
        };
        self.inner.frames.send_replace(Frames {
            version: st.version,
            room: LabServerMsg::Room(room).to_json().into(),
            presenter: LabServerMsg::Presenter(presenter).to_json().into(),
        });
    }

    pub fn is_closed(&self) -> bool {
        self.state().lab.is_closed()
    }
}

/// Cancels `who`'s run on the lane, if theirs is on it, saying why.
fn cancel_if(st: &mut State, who: Who, why: &str) {
    if let Some(l) = st.on_lane.as_mut().filter(|l| l.who == who) {
        l.cancelled = Some(why.to_string());
        l.cancel.store(true, Ordering::Relaxed);
    }
}

fn outcome(
    turn: &Turn,
    run: Option<u64>,
    summary: Option<RunSummary>,
    note: Option<String>,
) -> LabOutcome {
    LabOutcome {
        spec: turn.runs[0],
        run,
        queued_ms: turn.waited.as_millis() as u64,
        summary,
        note,
    }
}

fn join_urls(bases: &[String], code: &str) -> Vec<String> {
    bases
        .iter()
        .map(|base| format!("{base}/lab/join/{code}"))
        .collect()
}

/// A join code: short enough to type from a projector, long enough not to guess.
pub fn new_join_code() -> String {
    (0..10).map(|_| fastrand::alphanumeric()).collect()
}
