//! The lab's one measurement lane: the room's runs queued fairly, one measured at a time.
//!
//! Timed runs must never overlap (two would each measure the other's load), so every run of
//! the room, the presenter's included, waits for the lane. Fairness comes from one rule: a
//! participant has at most one run waiting, in a first-come queue. Whoever just ran and asks
//! again goes behind everyone already waiting, so nobody runs twice while another waits
//! (round-robin, without keeping rounds). The presenter's runs go ahead of the room's: the
//! presenter is teaching with them.
//!
//! Bounds keep a room from starving the lane or itself: the queue's length (a refusal says
//! when to try again), a run waiting longer than `stale_after` is dropped (its participant
//! has likely moved on), and a rate limit per participant. Time is passed in, so the rules
//! are tested without waiting.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Who asked for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Who {
    Presenter,
    Participant(u64),
}

/// The queue's bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Runs waiting at most (the room's; the presenter's always fit).
    pub max_waiting: usize,
    /// A run waiting longer than this is dropped.
    pub stale_after: Duration,
    /// A participant may start at most `runs_per_window` runs in any `window`.
    pub runs_per_window: usize,
    pub window: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_waiting: 60,
            stale_after: Duration::from_secs(120),
            runs_per_window: 6,
            window: Duration::from_secs(60),
        }
    }
}

/// Why a run was not queued, as the participant is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "you already have a run waiting: it runs when its turn comes, or cancel it to change it"
    )]
    AlreadyWaiting,
    #[error("the queue is full ({0} runs waiting): try again in about {1} s")]
    Full(usize, u64),
    #[error("at most {0} runs a minute each, so everyone gets a turn: try again in {1} s")]
    TooSoon(usize, u64),
}

/// A run leaving the queue, and how long it waited.
#[derive(Debug, Clone, PartialEq)]
pub struct Left<T> {
    pub who: Who,
    pub job: T,
    pub waited: Duration,
}

#[derive(Debug)]
struct Waiting<T> {
    who: Who,
    job: T,
    since: Instant,
}

/// Lane times remembered for the wait estimate.
const REMEMBERED: usize = 20;
/// The estimate of a run's time on the lane before any has run.
const FIRST_GUESS: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct Queue<T> {
    bounds: Bounds,
    waiting: VecDeque<Waiting<T>>,
    /// Who holds the lane, since when.
    running: Option<(Who, Instant)>,
    paused: bool,
    /// Each participant's accepted starts within the last window.
    starts: HashMap<Who, VecDeque<Instant>>,
    /// The latest runs' times on the lane.
    lane_times: VecDeque<Duration>,
}

impl<T> Queue<T> {
    pub fn new(bounds: Bounds) -> Self {
        Queue {
            bounds,
            waiting: VecDeque::new(),
            running: None,
            paused: false,
            starts: HashMap::new(),
            lane_times: VecDeque::new(),
        }
    }

    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The presenter changed the bounds; runs already waiting keep their places.
    pub fn set_bounds(&mut self, bounds: Bounds) {
        self.bounds = bounds;
    }

    /// Queues `job` for `who` at `now`: its place (1 is next), or why not.
    pub fn enqueue(&mut self, who: Who, job: T, now: Instant) -> Result<usize, Refusal> {
        if self.waiting.iter().any(|w| w.who == who) {
            return Err(Refusal::AlreadyWaiting);
        }
        if who != Who::Presenter {
            let room = self
                .waiting
                .iter()
                .filter(|w| w.who != Who::Presenter)
                .count();
            if room >= self.bounds.max_waiting {
                let retry = self.mean_lane_time().as_secs().max(1);
                return Err(Refusal::Full(room, retry));
            }
            let window = self.bounds.window;
            let starts = self.starts.entry(who).or_default();
            while starts
                .front()
                .is_some_and(|t| now.duration_since(*t) >= window)
            {
                starts.pop_front();
            }
            if starts.len() >= self.bounds.runs_per_window {
                let oldest = *starts.front().expect("full, so not empty");
                let retry = (oldest + window).saturating_duration_since(now);
                return Err(Refusal::TooSoon(
                    self.bounds.runs_per_window,
                    retry.as_secs_f64().ceil() as u64,
                ));
            }
            starts.push_back(now);
        }
        let entry = Waiting {
            who,
            job,
            since: now,
        };
        // The presenter's go ahead of the room's, behind the presenter's own.
        let at = match who {
            Who::Presenter => self
                .waiting
                .iter()
                .take_while(|w| w.who == Who::Presenter)
                .count(),
            Who::Participant(_) => self.waiting.len(),
        };
        self.waiting.insert(at, entry);
        Ok(at + 1)
    }

    /// Runs waiting longer than the bounds allow, removed at `now`.
    pub fn drop_stale(&mut self, now: Instant) -> Vec<Left<T>> {
        let stale_after = self.bounds.stale_after;
        let (stale, kept): (Vec<_>, Vec<_>) = self
            .waiting
            .drain(..)
            .partition(|w| now.duration_since(w.since) >= stale_after);
        self.waiting = kept.into();
        stale
            .into_iter()
            .map(|w| Left {
                who: w.who,
                waited: now.duration_since(w.since),
                job: w.job,
            })
            .collect()
    }

    /// The next run, which takes the lane at `now`: `None` while a run holds it, the queue is
    /// paused or nothing waits.
    pub fn start_next(&mut self, now: Instant) -> Option<Left<T>> {
        if self.running.is_some() || self.paused {
            return None;
        }
        let w = self.waiting.pop_front()?;
        self.running = Some((w.who, now));
        Some(Left {
            who: w.who,
            waited: now.duration_since(w.since),
            job: w.job,
        })
    }

    /// The run on the lane ended at `now` (finished, failed or cancelled, its keys removed):
    /// who it was and how long it held the lane.
    pub fn finish(&mut self, now: Instant) -> Option<(Who, Duration)> {
        let (who, since) = self.running.take()?;
        let held = now.duration_since(since);
        self.lane_times.push_back(held);
        if self.lane_times.len() > REMEMBERED {
            self.lane_times.pop_front();
        }
        Some((who, held))
    }

    /// `who`'s waiting run, removed (they cancelled it, left or were removed).
    pub fn withdraw(&mut self, who: Who) -> Option<T> {
        let at = self.waiting.iter().position(|w| w.who == who)?;
        self.waiting.remove(at).map(|w| w.job)
    }

    /// Every waiting run whose owner `gone` picks, removed.
    pub fn withdraw_where(&mut self, gone: impl Fn(Who) -> bool) {
        self.waiting.retain(|w| !gone(w.who));
    }

    /// Holds the queue: the run on the lane ends as usual, the next waits for `resume`.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    pub fn resume(&mut self) {
        self.paused = false;
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Who holds the lane.
    pub fn running(&self) -> Option<Who> {
        self.running.map(|(who, _)| who)
    }

    /// Every waiting run's owner, its place (1 is next) and the estimated wait for the lane
    /// at `now`: the rest of the run on it and those ahead, at the latest runs' mean lane time.
    pub fn places(&self, now: Instant) -> Vec<(Who, usize, Duration)> {
        let mean = self.mean_lane_time();
        let current = self.running.map_or(Duration::ZERO, |(_, since)| {
            mean.saturating_sub(now.duration_since(since))
        });
        self.waiting
            .iter()
            .enumerate()
            .map(|(k, w)| (w.who, k + 1, current + mean * k as u32))
            .collect()
    }

    /// How long each waiting run has waited at `now`, in the queue's order.
    pub fn waited(&self, now: Instant) -> Vec<Duration> {
        self.waiting
            .iter()
            .map(|w| now.duration_since(w.since))
            .collect()
    }

    /// Runs waiting.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    fn mean_lane_time(&self) -> Duration {
        if self.lane_times.is_empty() {
            return FIRST_GUESS;
        }
        self.lane_times.iter().sum::<Duration>() / self.lane_times.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Who = Who::Participant(1);
    const B: Who = Who::Participant(2);
    const C: Who = Who::Participant(3);

    fn secs(t0: Instant, s: f64) -> Instant {
        t0 + Duration::from_secs_f64(s)
    }

    /// Runs the lane until empty, each run `lane` long, `who` asking again right after each of
    /// its runs starts (a participant who keeps clicking Run): the order served.
    fn served(
        q: &mut Queue<&'static str>,
        mut now: Instant,
        again: Who,
        rounds: usize,
    ) -> Vec<Who> {
        let mut order = Vec::new();
        for _ in 0..rounds {
            let Some(next) = q.start_next(now) else { break };
            order.push(next.who);
            if next.who == again {
                let _ = q.enqueue(again, "again", now);
            }
            now += Duration::from_millis(100);
            q.finish(now);
        }
        order
    }

    #[test]
    fn nobody_runs_twice_while_another_waits() {
        let t0 = Instant::now();
        let mut q = Queue::new(Bounds::default());
        for who in [A, B, C] {
            q.enqueue(who, "run", t0).unwrap();
        }
        // A asks again as soon as each of its runs starts: it goes behind B and C, and runs
        // twice in a row only once nobody else waits.
        let order = served(&mut q, t0, A, 5);
        assert_eq!(order, [A, B, C, A, A]);
    }

    #[test]
    fn one_run_waiting_each() {
        let t0 = Instant::now();
        let mut q = Queue::new(Bounds::default());
        assert_eq!(q.enqueue(A, "one", t0), Ok(1));
        assert_eq!(q.enqueue(A, "two", t0), Err(Refusal::AlreadyWaiting));
        assert_eq!(q.enqueue(B, "one", t0), Ok(2));
        // Once A's run holds the lane, A may queue its next.
        assert_eq!(q.start_next(t0).unwrap().who, A);
        assert_eq!(q.enqueue(A, "two", t0), Ok(2));
    }

    #[test]
    fn the_presenters_runs_go_ahead_of_the_rooms() {
        let t0 = Instant::now();
        let mut q = Queue::new(Bounds::default());
        q.enqueue(A, "a", t0).unwrap();
        q.enqueue(B, "b", t0).unwrap();
        assert_eq!(q.enqueue(Who::Presenter, "p", t0), Ok(1));
        let order: Vec<Who> = q.places(t0).into_iter().map(|(w, _, _)| w).collect();
        assert_eq!(order, [Who::Presenter, A, B]);
    }

    #[test]
    fn a_full_queue_refuses_and_says_when_to_try_again() {
        let t0 = Instant::now();
        let bounds = Bounds {
            max_waiting: 2,
            ..Bounds::default()
        };
        let mut q = Queue::new(bounds);
        q.enqueue(A, "a", t0).unwrap();
        q.enqueue(B, "b", t0).unwrap();
        let refusal = q.enqueue(C, "c", t0).unwrap_err();
        assert_eq!(refusal, Refusal::Full(2, 1));
        assert_eq!(
            refusal.to_string(),
            "the queue is full (2 runs waiting): try again in about 1 s"
        );
        // The presenter is never kept out by the room.
        assert_eq!(q.enqueue(Who::Presenter, "p", t0), Ok(1));
    }

    #[test]
    fn a_run_waiting_too_long_is_dropped_with_how_long_it_waited() {
        let t0 = Instant::now();
        let mut q = Queue::new(Bounds::default());
        q.enqueue(A, "old", t0).unwrap();
        q.enqueue(B, "new", secs(t0, 100.0)).unwrap();
        let dropped = q.drop_stale(secs(t0, 121.0));
        assert_eq!(dropped.len(), 1);
        assert_eq!((dropped[0].who, dropped[0].job), (A, "old"));
        assert_eq!(dropped[0].waited, Duration::from_secs(121));
        assert_eq!(q.start_next(secs(t0, 121.0)).unwrap().who, B);
    }

    #[test]
    fn the_rate_limit_counts_each_participants_starts_in_a_sliding_window() {
        let t0 = Instant::now();
        let bounds = Bounds {
            runs_per_window: 2,
            window: Duration::from_secs(60),
            ..Bounds::default()
        };
        let mut q = Queue::new(bounds);
        for s in [0.0, 10.0] {
            q.enqueue(A, "a", secs(t0, s)).unwrap();
            q.start_next(secs(t0, s)).unwrap();
            q.finish(secs(t0, s + 1.0));
        }
        let refusal = q.enqueue(A, "a", secs(t0, 20.0)).unwrap_err();
        assert_eq!(refusal, Refusal::TooSoon(2, 40));
        assert_eq!(
            q.enqueue(B, "b", secs(t0, 20.0)),
            Ok(1),
            "others are not held"
        );
        assert_eq!(
            q.enqueue(A, "a", secs(t0, 60.0)),
            Ok(2),
            "the first start left the window"
        );
    }

    #[test]
    fn a_paused_queue_keeps_its_runs_until_resumed() {
        let t0 = Instant::now();
        let mut q = Queue::new(Bounds::default());
        q.enqueue(A, "a", t0).unwrap();
        q.pause();
        assert!(q.start_next(t0).is_none());
        q.resume();
        assert_eq!(q.start_next(t0).unwrap().who, A);
        assert!(q.start_next(t0).is_none(), "one run on the lane at a time");
    }

    #[test]
    fn the_wait_estimate_grows_with_the_place_at_the_mean_lane_time() {
        let t0 = Instant::now();
        let mut q = Queue::new(Bounds::default());
        q.enqueue(A, "a", t0).unwrap();
        q.start_next(t0).unwrap();
        q.finish(secs(t0, 4.0));
        q.enqueue(A, "a", secs(t0, 4.0)).unwrap();
        q.start_next(secs(t0, 4.0)).unwrap();
        q.enqueue(B, "b", secs(t0, 5.0)).unwrap();
        q.enqueue(C, "c", secs(t0, 5.0)).unwrap();
        // A's run holds the lane since 4 s, runs take 4 s: B in 3 s, C in 7 s.
        let places = q.places(secs(t0, 5.0));
        assert_eq!(
            places,
            [
                (B, 1, Duration::from_secs(3)),
                (C, 2, Duration::from_secs(7))
            ]
        );
    }

    #[test]
    fn a_participant_who_leaves_takes_their_run_with_them() {
        let t0 = Instant::now();
        let mut q = Queue::new(Bounds::default());
        q.enqueue(A, "a", t0).unwrap();
        q.enqueue(B, "b", t0).unwrap();
        assert_eq!(q.withdraw(A), Some("a"));
        assert_eq!(q.withdraw(A), None);
        assert_eq!(q.places(t0)[0].0, B);
    }
}
