//! The probe (`observe --probe`): a few of a connection's replies held back on purpose, to see
//! whether the client sends while one is held. A client that sends did not wait for that
//! reply; one that sends nothing until it is released, then sends within its usual reaction
//! time, did. One that sends nothing until well after the release (it had finished, or paused)
//! leaves the hold undecided. Causal, whatever the client's language or library.
//!
//! On a busy machine a client that does not wait can be kept off the CPU for the whole of a
//! hold and happen to run again just after its release, which looks like waiting. So a hold
//! that looks waited is confirmed by holding the very next reply too: both count as waited
//! only if the client waits for that one as well; if it sends while the second is held, the
//! first is left undecided. Two such coincidences in a row are what it would take to be wrong.
//!
//! Only a reply that leaves nothing outstanding is held: the moment the wire cannot read,
//! every reply back before the next command. Each hold lasts several times the client's
//! round trip, its usual gap between commands and its usual reaction to a reply (so a client
//! that does not wait shows it by sending, even one whose pauses make its "reactions"), ends
//! as soon as the client sends, and never passes `HARD_CAP`. A hold is made only
//! while the time held so far and its own plan (with room for waking late) stay within
//! `SHARE` of the connection's time so far, and at most `MAX_HOLDS` per connection; but the
//! first `FEW` are made whatever the share, so that a short connection (a script's loop of a
//! hundred commands, whose 1 % is less than one hold) is decided too: the user asked for the
//! probe, and the report says what its holds cost. They are not charged to the share either,
//! so a long connection's later holds are made as they would be without them (on a busy
//! machine the first ones, made before the client's rhythm is well known, can run to the cap). The proxy holds every reply behind a held one (`net::Hold`):
//! nothing is reordered, dropped or altered.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shared::observe::ProbeEvidence;

use super::Record;
use crate::net::{Gate, Hold};

/// Holds per connection at most.
pub const MAX_HOLDS: u64 = 20;
/// Holds made whatever `SHARE` allows: enough for a hold and its confirmation, and one more.
pub const FEW: u64 = 3;
/// The share of a connection's time so far that its holds may take, planned, in all.
pub const SHARE: f64 = 0.01;
/// No reply is held longer.
pub const HARD_CAP: Duration = Duration::from_millis(50);
/// The shortest hold: well beyond the scheduler's noise on a busy machine.
const MIN_HOLD_US: f64 = 500.0;
/// A hold lasts this many times the client's usual gap between commands (its 90th
/// percentile) and this many times its round trip (the median), whichever is longer.
const GAP_TIMES: f64 = 3.0;
const TRIP_TIMES: f64 = 4.0;
/// After a release, a send within this many times the client's usual reaction (its 90th
/// percentile: from every reply back to its next command), and `WAKING_US` more, is its
/// reaction to the release: a client asleep through a hold wakes more slowly than one that
/// slept through a round trip.
const REACTION_TIMES: f64 = 1.5;
const WAKING_US: f64 = 200.0;
/// A hold lasts at least this many times that window. A client that does not wait has its
/// "reactions" made of its own pauses (every reply comes back while it is off the CPU or
/// busy): a hold shorter than those would end while it is still paused, and its send just
/// after would look like a reaction to the release (Perl's Redis.pm with callbacks, on a
/// busy machine, read as waiting).
const WINDOW_TIMES: f64 = 2.0;
/// Kept free of the budget beyond a hold's plan: what waking up may add to it on a busy
/// machine (a share of the plan, and a fixed part), so the held total stays within `SHARE`.
const WAKE_SHARE: f64 = 0.5;
const WAKE_US: f64 = 500.0;
/// Gaps and reactions seen before the first hold, so "usual" means something.
const WARM: usize = 16;
/// Recent samples kept of each.
const RECENT: usize = 64;

/// The latest `RECENT` samples of one figure (µs).
#[derive(Debug, Default)]
struct Recent(VecDeque<f64>);

impl Recent {
    fn push(&mut self, us: f64) {
        if self.0.len() == RECENT {
            self.0.pop_front();
        }
        self.0.push_back(us);
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// The `q` quantile (nearest rank); 0 when empty.
    fn quantile(&self, q: f64) -> f64 {
        let mut v: Vec<f64> = self.0.iter().copied().collect();
        if v.is_empty() {
            return 0.0;
        }
        v.sort_by(f64::total_cmp);
        let at = ((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1;
        v[at]
    }
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// No hold under way.
    Idle,
    /// A reply is held since `from`; `sent`: the client sent meanwhile.
    Holding { from: Instant, sent: bool },
    /// Released at `released` with nothing sent during the hold: the client's next send
    /// within `window_us` says it waited; later (or never), undecided.
    Watching { released: Instant, window_us: f64 },
}

/// One connection's probe: what it learnt of the client's rhythm, and its holds.
#[derive(Debug)]
pub struct Probe {
    gate: Arc<Gate>,
    /// µs between the client's command-starting writes.
    gaps: Recent,
    /// µs from every reply handed back to the client's next write.
    reactions: Recent,
    /// µs from the client's latest write to its last reply's return from Redis.
    trips: Recent,
    last_send: Option<Instant>,
    /// When every reply was last handed back (no hold involved): a reaction starts.
    emptied: Option<Instant>,
    state: State,
    /// A hold looked waited: the next reply is held to confirm it.
    candidate: bool,
    /// The hold under way (or being watched) is that confirmation.
    confirming: bool,
    /// Hold time so far (µs), weighed against the budget (the first `FEW` holds' aside).
    spent_us: f64,
    /// The hold under way is one of the first `FEW`: not charged to the budget.
    exempt: bool,
    /// The plan of the hold under way, and the most a hold has outlasted its plan (µs): the
    /// room kept for waking late grows to it.
    planned_us: f64,
    worst_late_us: f64,
    evidence: ProbeEvidence,
}

impl Default for Probe {
    fn default() -> Probe {
        Probe {
            gate: Arc::new(Gate::default()),
            gaps: Recent::default(),
            reactions: Recent::default(),
            trips: Recent::default(),
            last_send: None,
            emptied: None,
            state: State::Idle,
            candidate: false,
            confirming: false,
            spent_us: 0.0,
            exempt: false,
            planned_us: 0.0,
            worst_late_us: 0.0,
            evidence: ProbeEvidence::default(),
        }
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

impl Probe {
    /// The client sent a chunk at `at` (`starts`: a command starts in it).
    fn sent(&mut self, at: Instant, starts: bool) {
        match self.state {
            State::Holding { from, sent: false } => {
                self.state = State::Holding { from, sent: true };
                self.sent_while_held();
                // Answered: the reply need not wait longer.
                self.gate.open();
            }
            State::Holding { .. } => {}
            State::Watching {
                released,
                window_us,
            } => {
                let reacted = us(at.saturating_duration_since(released)) <= window_us;
                match (reacted, self.confirming) {
                    (true, true) => self.evidence.waited_for_release += 2,
                    (true, false) => self.candidate = true,
                    (false, _) => {}
                }
                self.confirming = false;
                self.state = State::Idle;
                self.emptied = None;
            }
            State::Idle => {
                if starts {
                    if let Some(emptied) = self.emptied.take() {
                        self.reactions
                            .push(us(at.saturating_duration_since(emptied)));
                    }
                    if let Some(last) = self.last_send {
                        self.gaps.push(us(at.saturating_duration_since(last)));
                    }
                }
            }
        }
        if starts {
            self.last_send = Some(at);
        }
    }

    /// A hold saw the client send: and a hold it was confirming stays undecided.
    fn sent_while_held(&mut self) {
        self.evidence.sent_while_held += 1;
        self.confirming = false;
    }

    /// Every reply was handed back to the client at `at` (none of them held).
    fn handed_all(&mut self, at: Instant) {
        if matches!(self.state, State::Idle) {
            self.emptied = Some(at);
        }
    }

    /// The chunk read from Redis at `at` answers every command outstanding, `elapsed_us`
    /// into the connection: a hold from `now`, if one is due and within the budget.
    fn all_back(&mut self, at: Instant, now: Instant, elapsed_us: f64) -> Option<Hold> {
        if let Some(last) = self.last_send {
            self.trips.push(us(at.saturating_duration_since(last)));
        }
        // The confirmation is this reply or none: a candidate not confirmed now is undecided.
        let confirming = std::mem::take(&mut self.candidate);
        if !matches!(self.state, State::Idle)
            || self.evidence.held >= MAX_HOLDS
            || self.gaps.len() < WARM
            || self.reactions.len() < WARM
        {
            return None;
        }
        // Most replies come while the budget is short even for the shortest hold: they cost
        // no more than this.
        let late_us = WAKE_US.max(self.worst_late_us);
        let least = MIN_HOLD_US * (1.0 + WAKE_SHARE) + late_us;
        let within =
            |needs: f64| self.evidence.held < FEW || self.spent_us + needs <= SHARE * elapsed_us;
        if !within(least) {
            return None;
        }
        let hold_us = (GAP_TIMES * self.gaps.quantile(0.9))
            .max(TRIP_TIMES * self.trips.quantile(0.5))
            .max(WINDOW_TIMES * self.window_us())
            .max(MIN_HOLD_US);
        // A client slower than the cap allows is not probed: a shorter hold could not show it.
        // A first hold keeps room for its confirmation.
        let reserve = hold_us * (1.0 + WAKE_SHARE) + late_us;
        let needs = if confirming { reserve } else { 2.0 * reserve };
        if hold_us > us(HARD_CAP) || !within(needs) {
            return None;
        }
        self.confirming = confirming;
        self.exempt = self.evidence.held < FEW;
        self.planned_us = hold_us;
        self.evidence.held += 1;
        self.state = State::Holding {
            from: now,
            sent: false,
        };
        self.gate.close();
        Some(Hold {
            until: now + Duration::from_secs_f64(hold_us / 1e6),
            gate: self.gate.clone(),
        })
    }

    /// The held reply went to the client at `at`; the client had sent `unread` bytes the
    /// proxy had not read yet (sent while it was held).
    fn released(&mut self, at: Instant, unread: usize) {
        let State::Holding { from, sent } = self.state else {
            return;
        };
        let took = us(at.saturating_duration_since(from));
        self.evidence.held_us += took;
        if !self.exempt {
            self.spent_us += took;
        }
        let late = (took - self.planned_us).max(0.0);
        self.evidence.late_us += late;
        self.worst_late_us = self.worst_late_us.max(late);
        self.state = if sent {
            State::Idle
        } else if unread > 0 {
            self.sent_while_held();
            State::Idle
        } else {
            State::Watching {
                released: at,
                window_us: self.window_us(),
            }
        };
    }

    /// How soon after a release the client's send counts as its reaction to it (µs).
    fn window_us(&self) -> f64 {
        REACTION_TIMES * self.reactions.quantile(0.9) + WAKING_US
    }

    pub fn evidence(&self) -> ProbeEvidence {
        self.evidence.clone()
    }
}

impl Record {
    /// Turns the probe on for this connection.
    pub fn probe(&mut self) {
        self.probe = Some(Probe::default());
    }

    /// A chunk from Redis, read at `at`, is about to be handed to the client: whether to
    /// hold it. Only one that answers every command outstanding (none blocking) is held.
    pub fn hold(&mut self, at: Instant) -> Option<Hold> {
        let answers_all = self.from_redis == self.expecting
            && self.from_redis > self.handed
            && self.blocking.is_empty()
            && !self.trip_is_blocking;
        let elapsed = self.us(at);
        match &mut self.probe {
            Some(p) if answers_all => p.all_back(at, Instant::now(), elapsed),
            _ => None,
        }
    }

    /// A held chunk went to the client at `at` (`unread`: bytes it had sent meanwhile that
    /// the proxy had not read).
    pub fn released(&mut self, at: Instant, unread: usize) {
        if let Some(p) = &mut self.probe {
            p.released(at, unread);
        }
    }

    /// For the record's hooks: the client sent a chunk (`starts`: a command starts in it).
    pub(super) fn probe_sent(&mut self, at: Instant, starts: bool) {
        if let Some(p) = &mut self.probe {
            p.sent(at, starts);
        }
    }

    /// For the record's hooks: every reply was handed back at `at`.
    pub(super) fn probe_emptied(&mut self, at: Instant) {
        if let Some(p) = &mut self.probe {
            p.handed_all(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: fn(u64) -> Duration = Duration::from_micros;

    /// A probe warmed on a client that sends every 300 µs and gets its reply 50 µs later,
    /// reacting 250 µs after it; `t0` moves on to the last send.
    fn warmed(t0: &mut Instant) -> Probe {
        let mut p = Probe::default();
        for i in 0..WARM + 1 {
            p.sent(*t0, true);
            // Warm from the last: then a hold would be made, whatever the budget.
            if i < WARM {
                assert!(
                    p.all_back(*t0 + T(40), *t0 + T(40), 0.0).is_none(),
                    "not warm yet"
                );
            }
            p.handed_all(*t0 + T(50));
            *t0 += T(300);
        }
        p
    }

    #[test]
    fn a_hold_outlasts_the_pauses_a_client_that_does_not_wait_makes() {
        // Perl's Redis.pm with callbacks on a busy machine: it sends every 10 µs, 20 commands
        // at a go, and every reply is back before its next command only when it was paused,
        // 2 ms at a time: its gaps are short, its "reactions" are its pauses.
        let mut p = Probe::default();
        let mut t = Instant::now();
        for i in 0..WARM + 1 {
            for _ in 0..19 {
                p.sent(t, true);
                t += T(10);
            }
            p.sent(t, true);
            if i < WARM {
                assert!(
                    p.all_back(t + T(5), t + T(5), 0.0).is_none(),
                    "not warm yet"
                );
            }
            p.handed_all(t + T(6));
            t += T(2006);
        }
        let hold = p.all_back(t + T(5), t + T(5), 1e6).expect("held");
        // Past a pause of its own, and past the window a send counts as a reaction in: not
        // only 3 × its 10 µs gap.
        let held = hold.until - (t + T(5));
        assert!(held >= T(2 * 3200), "{held:?}");
        // Paused 2 ms again, it sends while the reply is still held.
        p.sent(t + T(2006), true);
        p.released(t + T(2010), 0);
        assert_eq!(p.evidence().sent_while_held, 1);
    }

    #[test]
    fn a_client_that_sends_while_held_did_not_wait() {
        let mut t = Instant::now();
        let mut p = warmed(&mut t);
        p.sent(t, true);
        let hold = p
            .all_back(t + T(40), t + T(40), 1e6)
            .expect("held: warm and within budget");
        // Twice its reaction window (1.5 × its 250 µs reaction + 200 µs), more than 3 × its
        // 300 µs gap.
        assert_eq!(hold.until - (t + T(40)), T(1150));
        p.sent(t + T(300), true);
        p.released(t + T(310), 0);
        let e = p.evidence();
        assert_eq!((e.held, e.sent_while_held, e.waited_for_release), (1, 1, 0));
        // Unread bytes at release say the same, whatever the other thread saw.
        p.handed_all(t + T(320));
        p.sent(t + T(600), true);
        assert!(p.all_back(t + T(640), t + T(640), 1e6).is_some());
        p.released(t + T(2000), 5);
        assert_eq!(p.evidence().sent_while_held, 2);
    }

    /// Holds a reply at `t` and releases it `after` later with nothing sent meanwhile.
    fn hold_quietly(p: &mut Probe, t: Instant, after: Duration) -> Instant {
        assert!(p.all_back(t, t, 1e6).is_some(), "held");
        p.released(t + after, 0);
        p.handed_all(t + after);
        t + after
    }

    #[test]
    fn a_client_that_sends_soon_after_two_releases_in_a_row_waited_for_both() {
        let mut t = Instant::now();
        let mut p = warmed(&mut t);
        p.sent(t, true);
        let released = hold_quietly(&mut p, t + T(40), T(2000));
        p.sent(released + T(250), true);
        // Not yet: the next reply is held to confirm it.
        assert_eq!(p.evidence().waited_for_release, 0);
        let released = hold_quietly(&mut p, released + T(290), T(2000));
        p.sent(released + T(250), true);
        let e = p.evidence();
        assert_eq!((e.held, e.sent_while_held, e.waited_for_release), (2, 0, 2));
        assert!(e.held_us >= 4000.0);
        // Sending long after the release: undecided (it had finished, or paused).
        let t = released + T(250);
        let released = hold_quietly(&mut p, t + T(40), T(2000));
        p.sent(released + T(50_000), true);
        let e = p.evidence();
        assert_eq!((e.held, e.sent_while_held, e.waited_for_release), (3, 0, 2));
        assert_eq!(e.undecided(), 1);
    }

    #[test]
    fn a_release_followed_by_a_send_while_the_next_reply_is_held_decides_no_wait() {
        let mut t = Instant::now();
        let mut p = warmed(&mut t);
        p.sent(t, true);
        // Kept off the CPU through the hold, it ran again just after the release …
        let released = hold_quietly(&mut p, t + T(40), T(2000));
        p.sent(released + T(250), true);
        // … and sends while the confirming hold is on: it does not wait.
        assert!(
            p.all_back(released + T(290), released + T(290), 1e6)
                .is_some()
        );
        p.sent(released + T(550), true);
        p.released(released + T(560), 0);
        let e = p.evidence();
        assert_eq!((e.held, e.sent_while_held, e.waited_for_release), (2, 1, 0));
        assert_eq!(e.undecided(), 1);
        // A candidate whose next reply could not be held stays undecided too.
        let t = released + T(600);
        let released = hold_quietly(&mut p, t, T(2000));
        p.sent(released + T(250), true);
        assert!(
            p.all_back(released + T(290), released + T(290), 0.0)
                .is_none()
        );
        p.sent(released + T(600), true);
        assert!(
            p.all_back(released + T(640), released + T(640), 1e6)
                .is_some()
        );
        p.released(released + T(3000), 0);
        p.sent(released + T(3250), true);
        assert_eq!(
            p.evidence().waited_for_release,
            0,
            "a first hold again, not a confirmation"
        );
    }

    #[test]
    fn holds_stay_within_their_share_of_the_time_and_their_number() {
        let mut t = Instant::now();
        let mut p = warmed(&mut t);
        // The first few whatever the share: a connection too short for one is decided too.
        for _ in 0..FEW {
            p.sent(t, true);
            assert!(p.all_back(t + T(40), t + T(40), 0.0).is_some());
            p.released(t + T(100), 1);
            p.handed_all(t + T(50));
            t += T(300);
        }
        // Not charged to the share: then 3 × the 300 µs gap, 900 µs planned and 950 µs kept
        // for waking, twice (room for a confirmation): not before 370 ms into it.
        assert_eq!(p.spent_us, 0.0);
        assert!(p.all_back(t, t, 365_000.0).is_none());
        let mut held = FEW;
        for k in 1..=200u64 {
            p.sent(t, true);
            if p.all_back(t + T(40), t + T(40), 100_000.0 * k as f64)
                .is_some()
            {
                held += 1;
                p.released(t + T(100), 1);
            }
            p.handed_all(t + T(50));
            t += T(300);
        }
        assert_eq!(held, MAX_HOLDS);
        assert!(p.spent_us <= SHARE * 100_000.0 * 200.0);
    }
}
