//! What if it pipelined, as the page draws it: a connection that waits on round trips (one at
//! a time, or a write per command; or undetermined between those) as measured, beside the same
//! commands projected in batches (`advice::projections`, the arithmetic "what would help"
//! words), each lane's time split into its waits and its own time on one time axis. Worded
//! here, with every figure's provenance, so the page only scales bars.

use serde::{Deserialize, Serialize};

use super::advice::{mean_trip_us, phased, projections};
use super::wording::{count, duration, group};
use super::{DecidedBy, ObservedConnection, Vantage, VerdictKind};

/// The connection measured, then projected: lanes on one time axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// The measured lane first, then one per batch size, fewest waits last.
    pub lanes: Vec<Lane>,
    /// How the projected lanes were obtained: "derived from its mean round trip … (measured)
    /// and its own time … a command (measured), not measured; …".
    pub how: String,
}

/// One lane: a total split into waits and the client's own time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lane {
    /// "measured" or "batches of 100".
    pub label: String,
    /// The batch size projected; 0 for the measured lane.
    pub batch: u64,
    /// Its waits (round trips), and their time in all, µs.
    pub waits: u64,
    pub waits_us: f64,
    /// Its own time, µs (the same in every lane: the projection keeps it).
    pub own_us: f64,
    /// "~15.0 ms" (projected) or "60.0 ms" (measured).
    pub total: String,
    /// "100 waits of 1.02 ms and its own time 2.30 ms: derived", or how it was measured.
    pub text: String,
}

impl Lane {
    pub fn us(&self) -> f64 {
        self.waits_us + self.own_us
    }
}

/// `c` as measured beside its commands projected in batches, when it waits on round trips
/// (or may: undetermined between one at a time and a write per command) and there is enough
/// to project from; none otherwise (pipelined clients, a phase of it said instead, a few
/// round trips). Batches that would wait as often as it did are left out.
pub fn what_if(c: &ObservedConnection) -> Option<WhatIf> {
    let waits =
        |k: &VerdictKind| matches!(k, VerdictKind::OneAtATime | VerdictKind::WritePerCommand);
    let sure = match c.verdict.kind {
        k if waits(&k) => true,
        VerdictKind::Undetermined if c.verdict.candidates.iter().any(waits) => false,
        _ => return None,
    };
    if phased(c) {
        return None;
    }
    let (t, n, trips) = (&c.times, c.counts.commands, c.counts.round_trips);
    let rtt = mean_trip_us(c);
    let derived: Vec<Lane> = projections(c)
        .into_iter()
        .filter(|p| p.trips < trips)
        .map(|p| Lane {
            label: format!("batches of {}", group(p.batch)),
            batch: p.batch,
            waits: p.trips,
            waits_us: p.us - t.client_us,
            own_us: t.client_us,
            total: format!("~{}", duration(p.us)),
            text: format!(
                "{} of {} and its own time {}: derived, not measured",
                count(p.trips, "wait"),
                duration(rtt),
                duration(t.client_us),
            ),
        })
        .collect();
    if derived.is_empty() {
        return None;
    }
    let by = match (&c.vantage, c.verdict.decided_by) {
        (Vantage::Capture, _) => "measured by the capture on its host",
        (_, Some(DecidedBy::Syscalls)) => {
            "measured by the proxy, its waits confirmed by the client's syscalls"
        }
        _ => "measured by the proxy",
    };
    let measured = Lane {
        label: "measured".into(),
        batch: 0,
        waits: trips,
        waits_us: t.waiting_us,
        own_us: t.client_us,
        total: duration(t.waiting_us + t.client_us),
        text: format!(
            "{} ({} in all) and its own time {}: {by} (the observer's hops and idle time left out)",
            count(trips, "wait"),
            duration(t.waiting_us),
            duration(t.client_us),
        ),
    };
    let how = format!(
        "{}derived from its measured mean round trip {} ({} of waiting over {}) and its measured own time {} a command ({} over {}), not measured: ⌈{} / batch⌉ waits each; a floor, as Redis's work per command and bigger writes are left out",
        if sure {
            ""
        } else {
            "If it waits for each reply (the evidence could not decide): "
        },
        duration(rtt),
        duration(t.waiting_us),
        count(trips, "round trip"),
        duration(t.client_us / n as f64),
        duration(t.client_us),
        count(n, "command"),
        group(n),
    );
    Some(WhatIf {
        lanes: std::iter::once(measured).chain(derived).collect(),
        how,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{ObservedCounts, ObservedTimes, Verdict};

    fn conn(kind: VerdictKind, n: u64, trips: u64) -> ObservedConnection {
        ObservedConnection {
            id: 1,
            client: "127.0.0.1:50000".into(),
            name: None,
            open: false,
            ended: None,
            top_commands: vec![("SET".into(), n)],
            counts: ObservedCounts {
                commands: n,
                writes: n,
                round_trips: trips,
                ..Default::default()
            },
            times: ObservedTimes {
                wall_us: 60_000.0,
                waiting_us: 50_000.0,
                client_us: 10_000.0,
                ..Default::default()
            },
            verdict: Verdict {
                kind,
                headline: String::new(),
                text: String::new(),
                timing_dependent: None,
                candidates: Vec::new(),
                decided_by: None,
            },
            equivalent: None,
            vantage: Default::default(),
            library: None,
            mean_set_value: None,
            words: None,
            probe: None,
            syscalls: None,
            window: None,
        }
    }

    #[test]
    fn a_loop_is_drawn_measured_then_in_batches_each_said_how() {
        let w = what_if(&conn(VerdictKind::OneAtATime, 1000, 1000)).unwrap();
        let lanes: Vec<(u64, u64, f64)> =
            w.lanes.iter().map(|l| (l.batch, l.waits, l.us())).collect();
        assert_eq!(
            lanes,
            vec![
                (0, 1000, 60_000.0),
                (10, 100, 15_000.0),
                (100, 10, 10_500.0)
            ]
        );
        assert_eq!(w.lanes[1].total, "~15.0 ms");
        assert!(
            w.lanes[0].text.contains("measured by the proxy"),
            "{:?}",
            w.lanes[0]
        );
        assert!(
            w.lanes[1..]
                .iter()
                .all(|l| l.text.ends_with("derived, not measured"))
        );
        assert!(
            w.how
                .starts_with("derived from its measured mean round trip 50 µs"),
            "{}",
            w.how
        );
        assert!(w.how.contains("own time 10 µs a command"), "{}", w.how);
    }

    #[test]
    fn undetermined_is_drawn_if_it_waits_and_a_pipelined_client_not_at_all() {
        let mut c = conn(VerdictKind::Undetermined, 1000, 1000);
        c.verdict.candidates = vec![VerdictKind::OneAtATime, VerdictKind::WritePerCommand];
        assert!(
            what_if(&c)
                .unwrap()
                .how
                .starts_with("If it waits for each reply")
        );
        c.verdict.candidates = vec![VerdictKind::Pipelined, VerdictKind::AutoPipelined];
        assert_eq!(what_if(&c), None);
        assert_eq!(what_if(&conn(VerdictKind::Pipelined, 1000, 1)), None);
        assert_eq!(what_if(&conn(VerdictKind::OneAtATime, 5, 5)), None);
    }

    #[test]
    fn batches_that_would_wait_as_often_as_it_did_are_left_out() {
        // A write per command over 50 round trips: batches of 10 would wait 100 times.
        let w = what_if(&conn(VerdictKind::WritePerCommand, 1000, 50)).unwrap();
        let batches: Vec<u64> = w.lanes.iter().map(|l| l.batch).collect();
        assert_eq!(batches, vec![0, 100]);
    }
}
