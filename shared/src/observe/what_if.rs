//! What if it pipelined, as the page draws it: a connection that waits on round trips (one at
//! a time, or a write per command; or undetermined between those) as measured, beside the same
//! commands projected in batches (`advice::projections`, the arithmetic "what would help"
//! words), each lane's time split into its waits and its own time on one time axis. Worded
//! here, with every figure's provenance, so the page only scales bars.

use serde::{Deserialize, Serialize};

use super::advice::{mean_trip_us, phased, projections};
use super::numbers::{count, duration};
use super::{DecidedBy, Figure, ObservedConnection, Vantage, VerdictKind};
use crate::digits::group;

/// The connection measured, then projected: lanes on one time axis. Each lane is a `Figure`
/// (the page reads those already) with its bar's two lengths beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// Each lane said, the measured one first, then one per batch size, fewest waits last:
    /// "measured" or "batches of 100"; its total ("214.8 ms", projected "~20.7 ms"); its waits
    /// and own time, and how they were obtained ("… : derived, not measured").
    pub lanes: Vec<Figure>,
    /// Each lane's waits in all, µs, in the same order.
    pub waits_us: Vec<f64>,
    /// Its own time, µs: every lane's (a projection keeps it).
    pub own_us: f64,
    /// How the projected lanes were obtained: "derived from its measured mean round trip …
    /// and its measured own time … a command, not measured; …".
    pub how: String,
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
    let derived: Vec<(Figure, f64)> = projections(c)
        .into_iter()
        .filter(|p| p.trips < trips)
        .map(|p| {
            let lane = Figure {
                label: format!("batches of {}", group(p.batch)),
                value: format!("~{}", duration(p.us)),
                how: format!(
                    "{} of {} and its own time {}: derived, not measured",
                    count(p.trips, "wait"),
                    duration(rtt),
                    duration(t.client_us),
                ),
            };
            // To a thousandth of a µs: bar lengths, the same however the float sums fell.
            (lane, ((p.us - t.client_us) * 1e3).round() / 1e3)
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
    let measured = Figure {
        label: "measured".into(),
        value: duration(t.waiting_us + t.client_us),
        how: format!(
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
    let (lanes, waits_us) = std::iter::once((measured, t.waiting_us))
        .chain(derived)
        .unzip();
    Some(WhatIf {
        lanes,
        waits_us,
        own_us: t.client_us,
        how,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(kind: VerdictKind, n: u64, trips: u64) -> ObservedConnection {
        crate::observe::advice::tests::conn(kind, n, trips, None)
    }

    #[test]
    fn a_loop_is_drawn_measured_then_in_batches_each_said_how() {
        let w = what_if(&conn(VerdictKind::OneAtATime, 1000, 1000)).unwrap();
        let lanes: Vec<(&str, &str)> = w
            .lanes
            .iter()
            .map(|l| (l.label.as_str(), l.value.as_str()))
            .collect();
        assert_eq!(
            lanes,
            vec![
                ("measured", "60.0 ms"),
                ("batches of 10", "~15.0 ms"),
                ("batches of 100", "~10.5 ms")
            ]
        );
        assert_eq!(w.waits_us, vec![50_000.0, 5_000.0, 500.0]);
        assert_eq!(w.own_us, 10_000.0);
        let how: Vec<&str> = w.lanes.iter().map(|l| l.how.as_str()).collect();
        assert!(
            how[0].starts_with("1,000 waits (50.0 ms in all)"),
            "{how:?}"
        );
        assert!(how[0].contains("measured by the proxy"), "{how:?}");
        assert!(how[1].starts_with("100 waits of 50 µs"), "{how:?}");
        assert!(
            how[1..]
                .iter()
                .all(|h| h.ends_with("derived, not measured"))
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
        let lanes: Vec<&str> = w.lanes.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(lanes, vec!["measured", "batches of 100"]);
    }
}
