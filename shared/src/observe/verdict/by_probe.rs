//! A verdict decided by replies the probe held back (`observe --probe`): whether the client
//! sent while a reply was held, or nothing until it was released. On loopback a slow client
//! has every reply back before its next command whether or not it waited for it; the probe
//! shows which.

use super::client_socket::ClientSocket;
use super::headline::decided_by;
use super::read_late::read_apart;
use super::wire::from_the_wire;
use crate::digits::group;
use crate::observe::numbers::{count, duration};
use crate::observe::{
    DecidedBy, ObservedCounts, ObservedTimes, ProbeEvidence, Verdict, VerdictKind,
};

/// The probe decides when the client did the same with every reply held back: it kept
/// sending (it does not wait for its replies: the round trips the wire could not confirm are
/// its own pauses) or sent nothing until the reply was released (it waits: they are waits).
/// Mixed, it decides nothing (a connection that changes behaviour).
pub(super) fn by_probe(
    c: &ObservedCounts,
    t: &ObservedTimes,
    socket: Option<&ClientSocket>,
    p: &ProbeEvidence,
    wire: &Verdict,
) -> Option<Verdict> {
    let waits = match (p.sent_while_held, p.waited_for_release) {
        (0, 0) => return None,
        (_, 0) => false,
        (0, _) => true,
        _ => return None,
    };
    let mut sure = c.clone();
    // Every stretch of the connection that matters (a twentieth of its commands or more) was
    // batched, and its writes carried several commands each or left while replies were
    // awaited: a pipeline throughout.
    let mattering: Vec<_> = c
        .phases
        .iter()
        .filter(|p| p.commands * 20 >= c.commands)
        .collect();
    let batched_throughout = (c.overlapping_writes > 0 || c.commands >= 2 * c.writes)
        && !mattering.is_empty()
        && mattering
            .iter()
            .all(|p| matches!(p.kind, VerdictKind::Pipelined | VerdictKind::AutoPipelined));
    if waits && batched_throughout {
        // It waited at the moments the probe held, but it pipelines throughout: a few moments
        // say nothing of the rest of its round trips the wire could not confirm, which stay
        // unconfirmed (a client paused through two holds on a busy machine looks the same at
        // them: Perl's Redis.pm with callbacks read "35 waits", and on one host, where every
        // reply of its 135 writes was back before the next, "135 waits" of 1 round).
    } else if waits {
        // The probe saw it wait (a cause): the moments the wire took for the client's own
        // cadence (its timing on one host, which a busy machine bends) were waits too.
        sure.round_trips += c.cadence_gaps;
        sure.cadence_gaps = 0;
        sure.unconfirmed_trips = 0;
        if c.overlapping_writes == 0 {
            // No write ever left while replies were awaited: a stretch read as a write per
            // command was those moments, one command at a time.
            for phase in &mut sure.phases {
                if phase.kind == VerdictKind::WritePerCommand {
                    phase.kind = VerdictKind::OneAtATime;
                }
            }
        }
    } else {
        // It kept sending at every moment the probe tested, each one that looked like a
        // wait: the moments the wire took for waits, confirmed by timing or not (on one
        // host a client that reads as it goes follows its replies without waiting for
        // them, Perl's Redis.pm with callbacks), were its own cadence. The last round
        // trip, which no next command followed, stays.
        let doubtful = c.round_trips.saturating_sub(1);
        sure.round_trips -= doubtful;
        sure.cadence_gaps += doubtful;
        // A stretch the wire read as one command at a time (each reply back before the next
        // command) was no waits either: each command its own write, sent on its own time.
        for phase in &mut sure.phases {
            if phase.kind == VerdictKind::OneAtATime {
                phase.kind = VerdictKind::WritePerCommand;
            }
        }
        sure.unconfirmed_trips = 0;
    }
    let v = from_the_wire(&sure, t, socket);
    if v.kind == VerdictKind::Undetermined {
        return None;
    }
    let saw = if waits {
        format!(
            "it sent nothing until the reply was released, {} of {}",
            group(p.waited_for_release),
            count(p.held, "hold")
        )
    } else {
        format!(
            "it kept sending while the reply was held, {} of {}",
            group(p.sent_while_held),
            count(p.held, "hold")
        )
    };
    // Its headline counts the client's sends where the proxy read them merged.
    let apart = read_apart(&sure, socket);
    let mut v = decided_by(v, DecidedBy::Probe, apart.as_ref().unwrap_or(&sure));
    v.text = format!(
        "{}; by the probe: {saw} ({} held in all). As the wire showed it: {}",
        v.text,
        duration(p.held_us),
        wire.text
    );
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{kept_sending, send_all, syscalls};
    use super::super::{ClientSocket, Evidence, judge, verdict};
    use crate::observe::{
        DecidedBy, ObservedCounts, ObservedTimes, Phase, ProbeEvidence, VerdictKind,
    };

    /// patterns.py waits beside two busy processes, through the proxy with --probe: the
    /// wire took its moments for its own cadence (its gaps did not follow the replies on a
    /// busy machine), the probe saw it wait for every reply it held.
    #[test]
    fn a_probe_that_saw_waits_outweighs_a_cadence_read_from_timing() {
        let c = ObservedCounts {
            round_trips: 1,
            unconfirmed_trips: 0,
            cadence_gaps: 4_999,
            ..send_all()
        };
        let t = ObservedTimes::default();
        let waited = ProbeEvidence {
            held: 8,
            sent_while_held: 0,
            waited_for_release: 8,
            held_us: 140_000.0,
            late_us: 0.0,
        };
        assert_eq!(verdict(&c, &t).kind, VerdictKind::WritePerCommand);
        let v = judge(&Evidence {
            probe: Some(&waited),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(
            (v.kind, v.decided_by),
            (VerdictKind::OneAtATime, Some(DecidedBy::Probe)),
            "{}",
            v.text
        );
    }

    /// patterns.py send-all through the proxy with --probe on a busy machine: the proxy read
    /// late, taking its 5,000 sends in 2,336 reads, which alone read as small batches the wire
    /// cannot tell from a write per command. The kernel counted a segment a command on the
    /// proxy's socket, and the probe saw it send while every reply was held: a write per
    /// command, decided by the probe.
    #[test]
    fn the_probe_decides_a_client_whose_sends_the_proxy_read_merged() {
        let c = ObservedCounts {
            commands: 5_000,
            replies: 5_000,
            writes: 2_336,
            round_trips: 2_265,
            unconfirmed_trips: 2_264,
            overlapping_writes: 70,
            max_depth: 62,
            ..Default::default()
        };
        let t = ObservedTimes::default();
        let kept_sending = kept_sending();
        let probed = |socket| {
            judge(&Evidence {
                probe: Some(&kept_sending),
                socket,
                ..Evidence::wire(&c, &t)
            })
        };
        // Without the kernel's counts: small batches and a write each look alike, even once
        // the probe shows none of its writes followed a wait. Not "pipelined" by the probe.
        let v = probed(None);
        assert_eq!(v.kind, VerdictKind::Undetermined, "{}", v.text);
        assert!(v.allows(VerdictKind::WritePerCommand), "{}", v.text);
        let socket = ClientSocket {
            reads: 2_336,
            segments: 5_000,
            bytes: 5_000 * 45,
            mss: 65_483,
        };
        let v = probed(Some(&socket));
        assert_eq!(
            (v.kind, v.decided_by),
            (VerdictKind::WritePerCommand, Some(DecidedBy::Probe)),
            "{}",
            v.text
        );
        assert!(v.text.contains("at least 4,996 sends"), "{}", v.text);
        assert_eq!(
            v.headline,
            "pipelined, a write per command: 5,000 commands in 4,996 writes, 1 wait — by the probe"
        );
    }

    /// Perl's Redis.pm sending 1,000 SETs with callbacks, through the proxy with --probe: it
    /// reads with MSG_DONTWAIT between sends, so its cadence follows the replies and timing
    /// took 53 of its round trips for waits. The probe saw it send while every held reply was
    /// held: they were not waits, however the timing read.
    #[test]
    fn round_trips_timing_confirmed_are_no_waits_where_the_probe_saw_it_keep_sending() {
        let c = ObservedCounts {
            commands: 1_000,
            replies: 1_000,
            writes: 55,
            round_trips: 53,
            unconfirmed_trips: 0,
            max_depth: 120,
            ..Default::default()
        };
        let t = ObservedTimes::default();
        let v = judge(&Evidence {
            probe: Some(&kept_sending()),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(v.decided_by, Some(DecidedBy::Probe), "{}", v.text);
        assert!(v.headline.contains(", 1 wait"), "{}", v.headline);
    }

    /// Perl's Redis.pm pipeline with callbacks beside busy processes: paused through two
    /// holds in a row, it sent just after each release, which the probe took for waits. It
    /// sends while replies are awaited, so those two moments do not make the round trips the
    /// wire could not confirm into waits: the headline never states 35.
    #[test]
    fn a_client_that_overlaps_its_writes_keeps_its_unconfirmed_trips_though_the_probe_saw_waits() {
        let v = a_pipeline_that_two_holds_found_waiting(Wire {
            writes: 36,
            round_trips: 35,
            unconfirmed: 34,
            overlapping: 20,
            max_depth: 200,
            us: 10_000.0,
        });
        assert!(!v.headline.contains(", 35 waits"), "{}", v.headline);
    }

    /// What the wire read of a pipeline of 1,000 SETs, one phase.
    struct Wire {
        writes: u64,
        round_trips: u64,
        unconfirmed: u64,
        overlapping: u64,
        max_depth: u64,
        us: f64,
    }

    /// The verdict on that pipeline where two holds in a row looked waited.
    fn a_pipeline_that_two_holds_found_waiting(w: Wire) -> crate::observe::Verdict {
        let c = ObservedCounts {
            commands: 1_000,
            replies: 1_000,
            writes: w.writes,
            round_trips: w.round_trips,
            unconfirmed_trips: w.unconfirmed,
            overlapping_writes: w.overlapping,
            max_depth: w.max_depth,
            phases: vec![Phase {
                kind: VerdictKind::Pipelined,
                round_trips: w.round_trips,
                commands: 1_000,
                writes: w.writes,
                us: w.us,
                waiting_us: 0.0,
            }],
            ..Default::default()
        };
        let waited = ProbeEvidence {
            held: 3,
            sent_while_held: 0,
            waited_for_release: 2,
            held_us: 3_000.0,
            late_us: 0.0,
        };
        judge(&Evidence {
            probe: Some(&waited),
            ..Evidence::wire(&c, &ObservedTimes::default())
        })
    }

    /// Perl's Redis.pm sending 1,000 SETs with callbacks through the proxy on one host, with
    /// --probe, beside a busy suite: 135 writes of several commands each, every reply back
    /// before the next write (no write overlapped one awaited), and two holds in a row that
    /// looked waited. It made 1 round (a relay holding every reply saw 999 commands sent while
    /// replies were held): the headline gives its waits as a bound, never "135 waits".
    #[test]
    fn a_batching_client_on_one_host_keeps_its_unconfirmed_trips_though_the_probe_saw_waits() {
        let v = a_pipeline_that_two_holds_found_waiting(Wire {
            writes: 135,
            round_trips: 135,
            unconfirmed: 135,
            overlapping: 0,
            max_depth: 40,
            us: 20_000.0,
        });
        assert!(!v.headline.contains(", 135 waits"), "{}", v.headline);
        assert_ne!(v.kind, VerdictKind::OneAtATime, "{}", v.headline);
    }

    /// patterns.py threads through the proxy with --probe: stretches where every reply was
    /// back before the next command read as one at a time, others (the GIL's hand-offs
    /// bunching its sends) as a write per command. It sent while every held reply was held:
    /// none of them were waits, and the headline claims none.
    #[test]
    fn a_client_the_probe_saw_never_wait_has_no_stretch_one_at_a_time() {
        let phase = |kind, commands: u64, us| Phase {
            kind,
            round_trips: commands,
            commands,
            writes: commands,
            us,
            waiting_us: 0.0,
        };
        let c = ObservedCounts {
            commands: 5_000,
            replies: 5_000,
            writes: 4_968,
            round_trips: 4_933,
            unconfirmed_trips: 4_932,
            overlapping_writes: 35,
            max_depth: 3,
            phases: vec![
                phase(VerdictKind::WritePerCommand, 1_065, 300_000.0),
                phase(VerdictKind::OneAtATime, 1_800, 600_000.0),
                phase(VerdictKind::WritePerCommand, 933, 300_000.0),
            ],
            ..Default::default()
        };
        let t = ObservedTimes::default();
        let v = judge(&Evidence {
            probe: Some(&kept_sending()),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(
            (v.kind, v.decided_by),
            (VerdictKind::WritePerCommand, Some(DecidedBy::Probe)),
            "{}",
            v.text
        );
        assert_eq!(
            v.headline,
            "pipelined, a write per command: 5,000 commands in 4,968 writes, 1 wait — by the probe"
        );
    }

    #[test]
    fn the_probe_decides_when_the_client_did_the_same_with_every_held_reply() {
        let c = send_all();
        let t = ObservedTimes::default();
        let kept_sending = ProbeEvidence {
            held: 20,
            sent_while_held: 20,
            waited_for_release: 0,
            held_us: 4_000.0,
            late_us: 0.0,
        };
        let v = judge(&Evidence {
            probe: Some(&kept_sending),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(v.kind, VerdictKind::WritePerCommand, "{}", v.text);
        assert_eq!(v.decided_by, Some(DecidedBy::Probe));
        assert!(v.headline.ends_with(" — by the probe"), "{}", v.headline);
        assert!(
            v.text
                .contains("it kept sending while the reply was held, 20 of 20 holds"),
            "{}",
            v.text
        );
        let waited = ProbeEvidence {
            held: 20,
            sent_while_held: 0,
            waited_for_release: 20,
            held_us: 4_000.0,
            late_us: 0.0,
        };
        let v = judge(&Evidence {
            probe: Some(&waited),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(
            (v.kind, v.headline.as_str()),
            (
                VerdictKind::OneAtATime,
                "one at a time: 1,000 commands, 1,000 waits — by the probe"
            )
        );
        // Mixed (a connection that changed behaviour), or nothing held: the wire's verdict.
        for p in [
            ProbeEvidence {
                sent_while_held: 10,
                waited_for_release: 10,
                ..waited.clone()
            },
            ProbeEvidence::default(),
        ] {
            let v = judge(&Evidence {
                probe: Some(&p),
                ..Evidence::wire(&c, &t)
            });
            assert_eq!(v.kind, VerdictKind::Undetermined);
        }
        // The syscalls (a write per command) and the probe (it waited) disagree: neither
        // overrides the other.
        let s = syscalls(1_000, 1);
        let v = judge(&Evidence {
            probe: Some(&waited),
            syscalls: Some(&s),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!((v.kind, v.decided_by), (VerdictKind::Undetermined, None));
        assert_eq!(
            v.candidates,
            [VerdictKind::WritePerCommand, VerdictKind::OneAtATime]
        );
    }
}
