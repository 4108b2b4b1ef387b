//! The lab (`serve --lab`): a room of participants running their own experiments from their
//! own browsers on the one Redis, measured one at a time, their results pooled for the room.
//!
//! - `room`: who is in: participants by the key their page keeps, their nicknames, the cap,
//!   the lock, removals and bans, idle ones expiring.
//! - `queue`: the one measurement lane: each participant's run waits its turn, fairly.
//! - `lane`: the lab served: the lane driven through the hub, and the frames the pages get.
//! - `socket`: `/lab/ws`, one page's requests and the frames it is sent.
//! - `qr`: the join link as a QR code (`/lab/qr.svg`).
//!
//! `Lab` holds both with the presenter's ceilings (`shared::lab::Ceilings`), the join code and
//! the room's finished runs, and decides every participant's and presenter's request. Pure,
//! time passed in: `lane` asks it and carries out what it says (starting the next run,
//! telling a participant why not).

pub mod lane;
pub mod qr;
pub mod queue;
pub mod room;
pub mod socket;

use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;

use shared::lab::{Ceilings, LabPoint};
use shared::{RunSpec, RunSummary};

use queue::{Bounds, Left, Queue, Who};
use room::Room;

/// The lab's routes: its websocket, and the page at its addresses (the presenter's
/// `/lab`, a participant's `/lab/join/{code}`), which opens its lab view there.
pub fn routes<S: Clone + Send + Sync + 'static>(lab: lane::LabServer) -> Router<S> {
    Router::new()
        .route("/lab/ws", get(socket::handler))
        .route("/lab/qr.svg", get(qr::handler))
        .with_state(lab)
        .route("/lab", get(crate::assets::index))
        .route("/lab/join/{code}", get(crate::assets::index))
}

/// The runs the lane takes next (a participant's one, or the presenter's plan), or drops.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub who: Who,
    pub runs: Vec<RunSpec>,
    pub waited: Duration,
}

/// Why a request was not taken, as the page is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabRefusal {
    #[error("this join link is no longer valid: ask the presenter for the current one")]
    WrongCode,
    #[error("join the lab first")]
    NotJoined,
    #[error("the lab is closed")]
    Closed,
    #[error(transparent)]
    Room(#[from] room::Refusal),
    #[error(transparent)]
    Queue(#[from] queue::Refusal),
    #[error("{0}")]
    Ceiling(String),
    #[error("no participant {0} in the room")]
    NoSuchParticipant(u64),
}

pub struct Lab {
    room: Room,
    queue: Queue<Vec<RunSpec>>,
    ceilings: Ceilings,
    join_code: String,
    results: Vec<LabPoint>,
    /// The room's chart is shown to the participants (the presenter always sees it).
    pub revealed: bool,
    closed: bool,
}

impl Lab {
    pub fn new(join_code: String, ceilings: Ceilings, bounds: Bounds) -> Lab {
        Lab {
            room: Room::default(),
            queue: Queue::new(bounds),
            ceilings,
            join_code,
            results: Vec::new(),
            revealed: false,
            closed: false,
        }
    }

    pub fn join_code(&self) -> &str {
        &self.join_code
    }

    pub fn ceilings(&self) -> Ceilings {
        self.ceilings
    }

    pub fn room(&self) -> &Room {
        &self.room
    }

    pub fn queue(&self) -> &Queue<Vec<RunSpec>> {
        &self.queue
    }

    pub fn results(&self) -> &[LabPoint] {
        &self.results
    }

    /// A page joins with the join `code` it was given, as `key`: its participant's id and
    /// nickname.
    pub fn join(
        &mut self,
        code: &str,
        key: &str,
        now: Instant,
    ) -> Result<(u64, String), LabRefusal> {
        if self.closed {
            return Err(LabRefusal::Closed);
        }
        if code != self.join_code {
            return Err(LabRefusal::WrongCode);
        }
        let p = self.room.join(key, now)?;
        Ok((p.id, p.nickname.clone()))
    }

    pub fn rename(&mut self, key: &str, wanted: &str) -> Result<String, LabRefusal> {
        Ok(self.room.rename(key, wanted)?.nickname.clone())
    }

    /// Participant `key` asks to run `spec` at `now` (already valid against the server's
    /// limits): its place in the queue.
    pub fn request(&mut self, key: &str, spec: RunSpec, now: Instant) -> Result<usize, LabRefusal> {
        if self.closed {
            return Err(LabRefusal::Closed);
        }
        let id = self.member(key).ok_or(LabRefusal::NotJoined)?;
        self.ceilings.check(&spec).map_err(LabRefusal::Ceiling)?;
        self.room.seen(key, now);
        Ok(self.queue.enqueue(Who::Participant(id), vec![spec], now)?)
    }

    /// The presenter's runs (a comparison, a sweep), ahead of the room's (no ceilings: the
    /// presenter sets them).
    pub fn presenter_request(
        &mut self,
        runs: Vec<RunSpec>,
        now: Instant,
    ) -> Result<usize, LabRefusal> {
        if self.closed {
            return Err(LabRefusal::Closed);
        }
        Ok(self.queue.enqueue(Who::Presenter, runs, now)?)
    }

    /// The participant a page joined as, by its key.
    pub fn member(&self, key: &str) -> Option<u64> {
        self.room.id_of(key)
    }

    /// The name `who` goes by in the room.
    pub fn name_of(&self, who: Who) -> String {
        match who {
            Who::Presenter => "presenter".to_string(),
            Who::Participant(id) => self
                .room
                .participants()
                .into_iter()
                .find(|p| p.id == id)
                .map_or_else(|| format!("#{id}"), |p| p.nickname.clone()),
        }
    }

    /// Runs dropped at `now` for waiting too long.
    pub fn drop_stale(&mut self, now: Instant) -> Vec<Turn> {
        self.queue.drop_stale(now).into_iter().map(turn).collect()
    }

    /// The runs the lane takes next at `now` (none while one runs, the queue is paused or
    /// nothing waits).
    pub fn start_next(&mut self, now: Instant) -> Option<Turn> {
        self.queue.start_next(now).map(turn)
    }

    /// What the lane does at `now`: the runs dropped for waiting too long, and the runs it
    /// takes next.
    pub fn tick(&mut self, now: Instant) -> (Vec<Turn>, Option<Turn>) {
        (self.drop_stale(now), self.start_next(now))
    }

    /// The runs on the lane ended at `now`; those finished join the room's results.
    pub fn ended(&mut self, now: Instant, summaries: Vec<RunSummary>) {
        let Some((who, _)) = self.queue.finish(now) else {
            return;
        };
        let participant = match who {
            Who::Presenter => None,
            Who::Participant(id) => Some(id),
        };
        let nickname = self.name_of(who);
        for summary in summaries {
            self.results.push(LabPoint {
                participant,
                nickname: nickname.clone(),
                summary,
            });
        }
    }

    /// A participant's page went away: their waiting run with them. (A run of theirs on the
    /// lane is the server's to cancel; its keys are removed as any cancelled run's.)
    pub fn left(&mut self, key: &str) {
        if let Some(id) = self.member(key) {
            self.queue.withdraw(Who::Participant(id));
        }
    }

    /// Participants idle too long, removed at `now` with their waiting runs: their ids.
    pub fn expire(&mut self, now: Instant) -> Vec<u64> {
        let gone = self.room.expire(now);
        for p in &gone {
            self.queue.withdraw(Who::Participant(p.id));
        }
        gone.iter().map(|p| p.id).collect()
    }

    /// The presenter's actions.
    pub fn pause(&mut self, paused: bool) {
        if paused {
            self.queue.pause()
        } else {
            self.queue.resume()
        }
    }

    pub fn clear_results(&mut self) {
        self.results.clear();
    }

    pub fn set_ceilings(&mut self, ceilings: Ceilings) {
        self.ceilings = ceilings;
    }

    /// Removes participant `id` (they may rejoin), or bans them from this room.
    pub fn remove(&mut self, id: u64, ban: bool) -> bool {
        self.queue.withdraw(Who::Participant(id));
        let gone = if ban {
            self.room.ban(id)
        } else {
            self.room.remove(id)
        };
        gone.is_some()
    }

    pub fn lock(&mut self, locked: bool) {
        self.room.lock(locked);
    }

    /// A new join code: the old link stops working, and the room starts anew (everyone out
    /// with their waiting runs, bans forgotten with it). A run on the lane goes on to its
    /// end; the presenter's waiting runs and the results stay.
    pub fn rotate(&mut self, join_code: String) {
        self.join_code = join_code;
        self.room = Room::default();
        self.queue.withdraw_where(|who| who != Who::Presenter);
    }

    pub fn close(&mut self) {
        self.closed = true;
        self.queue.withdraw_where(|_| true);
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

fn turn(l: Left<Vec<RunSpec>>) -> Turn {
    Turn {
        who: l.who,
        runs: l.job,
        waited: l.waited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::Mode;

    fn lab() -> Lab {
        Lab::new("code".into(), Ceilings::default(), Bounds::default())
    }

    fn summary(spec: RunSpec) -> RunSummary {
        RunSummary {
            spec,
            done: spec.count,
            wall_us: 1_000,
            ops_per_sec: 1_000.0,
            round_trips: 1,
            writes: 1,
            wire_commands: spec.count,
            latency: Default::default(),
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        }
    }

    #[test]
    fn a_participant_joins_runs_within_the_ceilings_and_their_result_is_pooled() {
        let t0 = Instant::now();
        let mut lab = lab();
        assert_eq!(lab.join("nope", "k", t0), Err(LabRefusal::WrongCode));
        let (id, nickname) = lab.join("code", "k", t0).unwrap();
        let too_big = RunSpec::set(1_000_000, Mode::Sequential);
        assert!(matches!(
            lab.request("k", too_big, t0),
            Err(LabRefusal::Ceiling(_))
        ));
        let spec = RunSpec::set(1_000, Mode::pipelined(100));
        assert_eq!(lab.request("k", spec, t0), Ok(1));
        assert_eq!(
            lab.request("stranger", spec, t0),
            Err(LabRefusal::NotJoined)
        );
        let (dropped, next) = lab.tick(t0);
        assert!(dropped.is_empty());
        assert_eq!(next.unwrap().who, Who::Participant(id));
        lab.ended(t0 + Duration::from_millis(50), vec![summary(spec)]);
        assert_eq!(lab.results()[0].participant, Some(id));
        assert_eq!(lab.results()[0].nickname, nickname);
    }

    #[test]
    fn a_page_that_leaves_takes_its_waiting_run_and_a_banned_one_stays_out() {
        let t0 = Instant::now();
        let mut lab = lab();
        let (a, _) = lab.join("code", "a", t0).unwrap();
        lab.join("code", "b", t0).unwrap();
        let spec = RunSpec::set(100, Mode::Sequential);
        lab.request("a", spec, t0).unwrap();
        lab.request("b", spec, t0).unwrap();
        lab.left("a");
        assert_eq!(lab.queue().len(), 1);
        assert!(lab.remove(a, true));
        assert_eq!(
            lab.join("code", "a", t0),
            Err(LabRefusal::Room(room::Refusal::Banned))
        );
    }

    #[test]
    fn a_rotated_join_code_turns_the_old_link_away_and_starts_the_room_anew() {
        let t0 = Instant::now();
        let mut lab = lab();
        let (a, _) = lab.join("code", "a", t0).unwrap();
        lab.remove(a, true);
        lab.rotate("new".into());
        assert_eq!(lab.join("code", "a", t0), Err(LabRefusal::WrongCode));
        assert!(lab.join("new", "a", t0).is_ok(), "a ban lasts one room");
    }

    #[test]
    fn a_rotation_mid_run_keeps_the_lane_to_the_run_on_it() {
        let t0 = Instant::now();
        let mut lab = lab();
        lab.join("code", "a", t0).unwrap();
        lab.join("code", "b", t0).unwrap();
        let spec = RunSpec::set(100, Mode::Sequential);
        lab.request("a", spec, t0).unwrap();
        lab.request("b", spec, t0).unwrap();
        lab.tick(t0).1.unwrap();
        lab.presenter_request(vec![spec], t0).unwrap();
        lab.rotate("new".into());
        assert_eq!(lab.tick(t0).1, None, "a's run still holds the lane");
        assert_eq!(
            lab.queue().len(),
            1,
            "b's run left with b; the presenter's stays"
        );
        lab.ended(t0, vec![summary(spec)]);
        assert_eq!(lab.tick(t0).1.unwrap().who, Who::Presenter);
    }

    #[test]
    fn the_presenters_run_goes_first_and_draws_the_reference() {
        let t0 = Instant::now();
        let mut lab = lab();
        lab.join("code", "a", t0).unwrap();
        let spec = RunSpec::set(100, Mode::Sequential);
        lab.request("a", spec, t0).unwrap();
        // Above the room's ceilings: the presenter's are not held to them.
        let sweep = RunSpec::set(1_000_000, Mode::pipelined(100_000));
        assert_eq!(lab.presenter_request(vec![sweep], t0), Ok(1));
        let (_, next) = lab.tick(t0);
        assert_eq!(next.unwrap().who, Who::Presenter);
        lab.ended(t0, vec![summary(sweep)]);
        assert_eq!(lab.results()[0].participant, None);
    }
}
