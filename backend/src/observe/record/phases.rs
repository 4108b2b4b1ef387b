//! A connection's life as phases: runs of round trips that behaved alike (each command its
//! own write, one at a time or several in flight; or a batch in fewer writes), each with its
//! commands, writes and time, so a connection that changes behaviour (200 commands one at a time, then a pipeline
//! of 200) is read as both, not as an average of the two.

use std::time::Instant;

use shared::observe::{Phase, VerdictKind};

/// Phases kept at most: a connection alternating forever adds its later trips to the last.
const MAX_PHASES: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct Phases {
    done: Vec<Phase>,
    /// The round trip under way: when it began, its commands and writes, and when its
    /// replies were all back (first).
    open: Option<Trip>,
}

#[derive(Debug, Clone, Copy)]
struct Trip {
    began: Instant,
    commands: u64,
    writes: u64,
    emptied: Option<Instant>,
}

impl Phases {
    /// A round trip begins `at`: the one before it is over.
    pub fn trip(&mut self, at: Instant) {
        if let Some(trip) = self.open.take() {
            let done = std::mem::take(&mut self.done);
            self.done = with(done, trip, at);
        }
        self.open = Some(Trip {
            began: at,
            commands: 0,
            writes: 0,
            emptied: None,
        });
    }

    /// A command, in the round trip under way.
    pub fn command(&mut self) {
        if let Some(trip) = &mut self.open {
            trip.commands += 1;
        }
    }

    /// A write that starts a command, in the round trip under way.
    pub fn write(&mut self) {
        if let Some(trip) = &mut self.open {
            trip.writes += 1;
        }
    }

    /// Every reply awaited was back `at`: the round trip under way is over (its first such
    /// moment; a blocking command's wait after it is no round trip).
    pub fn emptied(&mut self, at: Instant) {
        if let Some(trip) = &mut self.open {
            trip.emptied.get_or_insert(at);
        }
    }

    /// The phases, the round trip under way ending `end`.
    pub fn read(&self, end: Instant) -> Vec<Phase> {
        match self.open {
            Some(trip) => with(self.done.clone(), trip, end),
            None => self.done.clone(),
        }
    }
}

/// `phases` with the round trip `trip`, over `end` (the next one's start, or now), added.
fn with(mut phases: Vec<Phase>, trip: Trip, end: Instant) -> Vec<Phase> {
    let Trip {
        began,
        commands,
        writes,
        emptied,
    } = trip;
    let since = |t: Instant| t.saturating_duration_since(began).as_secs_f64() * 1e6;
    let us = since(end);
    // Not yet back: awaited until now.
    let waiting_us = since(emptied.unwrap_or(end).min(end));
    let kind = if commands <= 1 {
        VerdictKind::OneAtATime
    } else if commands as f64 <= 1.5 * writes as f64 {
        VerdictKind::WritePerCommand
    } else {
        VerdictKind::Pipelined
    };
    let full = phases.len() >= MAX_PHASES;
    // A single command's round trip and several commands a write each are one behaviour (each
    // command its own write; replies back in between or not); a phase of both has had several
    // in flight, so it was a write per command. A batch is another.
    let batch = |k: VerdictKind| k == VerdictKind::Pipelined;
    match phases.last_mut() {
        Some(last) if batch(last.kind) == batch(kind) || full => {
            if last.kind != kind {
                last.kind = VerdictKind::WritePerCommand;
            }
            last.round_trips += 1;
            last.commands += commands;
            last.writes += writes;
            last.us += us;
            last.waiting_us += waiting_us;
        }
        _ => phases.push(Phase {
            kind,
            round_trips: 1,
            commands,
            writes,
            us,
            waiting_us,
        }),
    }
    phases
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn trips_that_behave_alike_are_one_phase() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let mut p = Phases::default();
        // 3 single commands, 100 µs each; then a batch of 100 in 2 writes, over 50 µs.
        for k in 0..3 {
            p.trip(at(k * 100));
            p.command();
            p.write();
            p.emptied(at(k * 100 + 60));
            p.emptied(at(k * 100 + 90));
        }
        p.trip(at(300));
        for _ in 0..100 {
            p.command();
        }
        p.write();
        p.write();
        let phases = p.read(at(350));
        let got: Vec<_> = phases
            .iter()
            .map(|p| {
                (
                    p.kind,
                    p.round_trips,
                    p.commands,
                    p.writes,
                    p.us,
                    p.waiting_us,
                )
            })
            .collect();
        // Each single command's trip waited 60 µs (its replies back then; a blocking wait
        // after is no round trip); the batch's replies are still awaited.
        assert_eq!(
            got,
            [
                (VerdictKind::OneAtATime, 3, 3, 3, 300.0, 180.0),
                (VerdictKind::Pipelined, 1, 100, 2, 50.0, 50.0)
            ]
        );
    }

    #[test]
    fn single_commands_and_several_a_write_each_are_one_phase_a_write_per_command() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let mut p = Phases::default();
        for (k, n) in [1, 1, 3, 1].into_iter().enumerate() {
            p.trip(at(k as u64 * 100));
            for _ in 0..n {
                p.command();
                p.write();
            }
        }
        let phases = p.read(at(400));
        let got: Vec<_> = phases
            .iter()
            .map(|p| (p.kind, p.round_trips, p.commands))
            .collect();
        assert_eq!(got, [(VerdictKind::WritePerCommand, 4, 6)]);
    }
}
