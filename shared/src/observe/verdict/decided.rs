//! Verdicts decided by evidence beyond the wire's timing: the client's own syscalls, and
//! replies the probe held back. On loopback a slow client has every reply back before its
//! next command whether or not it waited for it; these show which.

use super::super::read_late::read_apart;
use super::super::wording::{count, duration};
use super::super::{
    ClientSocket, DecidedBy, ObservedCounts, ObservedTimes, ProbeEvidence, SyscallEvidence,
    Verdict, VerdictKind,
};
use super::headline::by_whom;
use super::{decided_by, from_the_wire, phased_by};
use crate::digits::group;

/// The client's syscalls decide when they saw its sends on the socket and the wire counted
/// its commands: sends per command say whether it wrote each on its own, and its waits (a
/// sending thread blocked until a reply was read) whether it waited for each. Which of the
/// two batched kinds a batching client is, the wire says (both are batches; the syscalls do
/// not show whether a send left while replies were on their way).
pub(super) fn by_syscalls(
    c: &ObservedCounts,
    s: &SyscallEvidence,
    wire: &Verdict,
) -> Option<Verdict> {
    let n = c.commands;
    // Records the trace lost leave its counts short; waits it could not decide (an event
    // loop that found a reply already there) leave them a range: when the range spans
    // one at a time and not, the syscalls decide nothing.
    let one_at_a_time = |waits: u64| waits * 10 >= n * 9;
    if s.sends == 0
        || n == 0
        || wire.kind == VerdictKind::Subscriber
        || s.lost > 0
        || one_at_a_time(s.waits) != one_at_a_time(s.waits + s.undecided_waits)
    {
        return None;
    }
    let per_send = n as f64 / s.sends as f64;
    let kind = if one_at_a_time(s.waits) {
        VerdictKind::OneAtATime
    } else if per_send <= 1.5 {
        VerdictKind::WritePerCommand
    } else if wire.allows(VerdictKind::AutoPipelined) && !wire.allows(VerdictKind::Pipelined) {
        VerdictKind::AutoPipelined
    } else {
        VerdictKind::Pipelined
    };
    let sends = count(s.sends, "send");
    let waits = count(s.waits, "wait");
    // A batching connection that changed behaviour is named by its costliest phase, as the
    // wire reads them; its round trips were waits where the client waited as often.
    let mut sure = c.clone();
    if s.waits >= c.round_trips {
        sure.unconfirmed_trips = 0;
    }
    let phased = matches!(kind, VerdictKind::Pipelined | VerdictKind::AutoPipelined)
        .then(|| phased_by(&sure, DecidedBy::Syscalls))
        .flatten();
    let headline = phased.unwrap_or_else(|| {
        let line = match kind {
            VerdictKind::OneAtATime => format!("one at a time: {}, {waits}", count(n, "command")),
            VerdictKind::WritePerCommand => format!("{}: {sends}, {waits}", kind.words()),
            _ => format!(
                "{}: {} in {sends}, {waits}",
                kind.words(),
                count(n, "command")
            ),
        };
        line + by_whom(Some(DecidedBy::Syscalls))
    });
    let nonblocking = match s.nonblocking_receives {
        0 => String::new(),
        k => format!(", {} of them without blocking", group(k)),
    };
    let text = format!(
        "{}: from its syscalls (pid {}, {} on the socket): {sends} of {} bytes for {}, {} that returned data{nonblocking}, and {waits} (a sending thread blocked until a reply was read before it sent again). On the wire: {}",
        kind.words(),
        s.pid,
        count(s.threads.max(1), "thread"),
        group(s.sent_bytes),
        count(n, "command"),
        count(s.receives, "receive"),
        wire.text
    );
    Some(Verdict {
        kind,
        headline,
        text,
        timing_dependent: None,
        candidates: Vec::new(),
        decided_by: Some(DecidedBy::Syscalls),
    })
}

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
    // batched, and writes left while replies were awaited: a pipeline throughout.
    let batched_throughout = c.overlapping_writes > 0
        && c.phases
            .iter()
            .filter(|p| p.commands * 20 >= c.commands)
            .all(|p| matches!(p.kind, VerdictKind::Pipelined | VerdictKind::AutoPipelined));
    if waits && batched_throughout {
        // It waited at the moments the probe held, but it pipelines throughout: those moments
        // say nothing of the round trips the wire could not confirm, which stay unconfirmed
        // (a client paused through two holds on a busy machine looks the same at them:
        // Perl's Redis.pm with callbacks read "35 waits").
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
    use super::super::super::Phase;
    use super::super::{Evidence, judge, verdict};
    use super::*;

    /// patterns.py send-all at loopback's pace, through the proxy: every reply back before
    /// the next command, none of it confirmed as a wait.
    fn send_all() -> ObservedCounts {
        ObservedCounts {
            commands: 1_000,
            replies: 1_000,
            writes: 1_000,
            round_trips: 1_000,
            unconfirmed_trips: 999,
            max_depth: 1,
            ..Default::default()
        }
    }

    fn syscalls(sends: u64, waits: u64) -> SyscallEvidence {
        SyscallEvidence {
            pid: 4242,
            sends,
            sent_bytes: sends * 40,
            receives: 3,
            nonblocking_receives: 0,
            waits,
            threads: 1,
            ..Default::default()
        }
    }

    /// The verdict on `c` given its syscalls `s`.
    fn with_syscalls(c: &ObservedCounts, s: &SyscallEvidence) -> Verdict {
        judge(&Evidence {
            syscalls: Some(s),
            ..Evidence::wire(c, &ObservedTimes::default())
        })
    }

    /// The probe held 20 replies and the client sent while each was held.
    fn kept_sending() -> ProbeEvidence {
        ProbeEvidence {
            held: 20,
            sent_while_held: 20,
            waited_for_release: 0,
            held_us: 8_000.0,
            late_us: 0.0,
        }
    }

    #[test]
    fn syscalls_that_lost_records_or_left_waits_undecided_either_way_decide_nothing() {
        let c = send_all();
        let t = ObservedTimes::default();
        let n = c.commands;
        let lost = SyscallEvidence {
            lost: 3,
            ..syscalls(n, 1)
        };
        let v = judge(&Evidence {
            syscalls: Some(&lost),
            ..Evidence::wire(&c, &t)
        });
        assert_ne!(v.decided_by, Some(DecidedBy::Syscalls), "{}", v.text);
        let unsure = SyscallEvidence {
            undecided_waits: n,
            ..syscalls(n, 1)
        };
        let v = judge(&Evidence {
            syscalls: Some(&unsure),
            ..Evidence::wire(&c, &t)
        });
        assert_ne!(v.decided_by, Some(DecidedBy::Syscalls), "{}", v.text);
        // Undecided waits that cannot change the kind leave the decision standing.
        let few = SyscallEvidence {
            undecided_waits: 2,
            ..syscalls(n, 1)
        };
        let v = judge(&Evidence {
            syscalls: Some(&few),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(v.decided_by, Some(DecidedBy::Syscalls), "{}", v.text);
    }

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

    /// What was tried is not asked for again: a probe that held nothing leaves the verdict
    /// undetermined, naming only --pid as what could decide; a verdict the probe decided
    /// quotes the wire without asking for more.
    #[test]
    fn evidence_already_gathered_is_not_asked_for_again() {
        let c = send_all();
        let t = ObservedTimes::default();
        let wire = verdict(&c, &t);
        assert!(
            wire.text.contains("run with --probe, or --pid"),
            "{}",
            wire.text
        );
        let nothing = ProbeEvidence::default();
        let v = judge(&Evidence {
            probe: Some(&nothing),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(v.kind, VerdictKind::Undetermined);
        assert!(!v.text.contains("--probe"), "{}", v.text);
        assert!(
            v.text.contains("the probe decided nothing (0 of 0 held decided), and --pid on the client's host could"),
            "{}",
            v.text
        );
        let decided = judge(&Evidence {
            probe: Some(&kept_sending()),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(decided.decided_by, Some(DecidedBy::Probe));
        assert!(!decided.text.contains("--probe"), "{}", decided.text);
        assert!(!decided.text.contains("--pid"), "{}", decided.text);
        let s = syscalls(1_000, 1);
        let by_pid = judge(&Evidence {
            syscalls: Some(&s),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(by_pid.decided_by, Some(DecidedBy::Syscalls));
        assert!(!by_pid.text.contains("--pid"), "{}", by_pid.text);
    }

    /// Its syscalls count a wait per command (one at a time), the probe saw it send while
    /// replies were held (it does not wait): neither is taken over the other.
    #[test]
    fn two_vantages_that_disagree_leave_it_undetermined_naming_both() {
        let c = send_all();
        let t = ObservedTimes::default();
        let s = syscalls(1_000, 1_000);
        let agree = judge(&Evidence {
            syscalls: Some(&s),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(agree.kind, VerdictKind::OneAtATime);
        let v = judge(&Evidence {
            syscalls: Some(&s),
            probe: Some(&kept_sending()),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(v.kind, VerdictKind::Undetermined, "{}", v.text);
        assert_eq!(
            v.candidates,
            [VerdictKind::OneAtATime, VerdictKind::WritePerCommand]
        );
        assert_eq!(
            v.headline,
            "its syscalls: one at a time; the probe: pipelined, a write per command — they disagree"
        );
        assert!(v.text.contains("decided differently"), "{}", v.text);
        // Agreeing, the first decides and says so.
        let waited = ProbeEvidence {
            held: 4,
            sent_while_held: 0,
            waited_for_release: 4,
            held_us: 2_000.0,
            late_us: 0.0,
        };
        let v = judge(&Evidence {
            syscalls: Some(&s),
            probe: Some(&waited),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(
            (v.kind, v.decided_by),
            (VerdictKind::OneAtATime, Some(DecidedBy::Syscalls))
        );
    }

    #[test]
    fn the_wire_alone_leaves_it_undetermined() {
        let v = verdict(&send_all(), &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::Undetermined);
        assert!(v.allows(VerdictKind::WritePerCommand) && v.allows(VerdictKind::OneAtATime));
        assert!(v.headline.chars().count() <= 92, "{}", v.headline);
    }

    #[test]
    fn its_syscalls_decide_and_say_so() {
        let c = send_all();
        let t = ObservedTimes::default();
        let s = syscalls(1_000, 1);
        let v = judge(&Evidence {
            syscalls: Some(&s),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(v.kind, VerdictKind::WritePerCommand);
        assert_eq!(v.decided_by, Some(DecidedBy::Syscalls));
        assert_eq!(
            v.headline,
            "pipelined, a write per command: 1,000 sends, 1 wait — from its syscalls"
        );
        assert!(v.text.contains("pid 4242"), "{}", v.text);
        // A wait each: one at a time, whatever the wire could not confirm.
        let s = syscalls(1_000, 1_000);
        let v = judge(&Evidence {
            syscalls: Some(&s),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(
            (v.kind, v.headline.as_str()),
            (
                VerdictKind::OneAtATime,
                "one at a time: 1,000 commands, 1,000 waits — from its syscalls"
            )
        );
        // Fewer sends than commands: batched; which batched kind, the wire says.
        let mut batch = c.clone();
        batch.writes = 7;
        batch.round_trips = 6;
        batch.unconfirmed_trips = 5;
        batch.max_depth = 1_000;
        let s = syscalls(10, 4);
        let v = judge(&Evidence {
            syscalls: Some(&s),
            ..Evidence::wire(&batch, &t)
        });
        assert_eq!(v.kind, VerdictKind::Pipelined, "{}", v.text);
        assert_eq!(
            v.headline,
            "pipelined: 1,000 commands in 10 sends, 4 waits — from its syscalls"
        );
        // No sends seen (the socket was not found): the wire's verdict stands, asking only
        // for what was not tried.
        let s = syscalls(0, 0);
        let v = judge(&Evidence {
            syscalls: Some(&s),
            ..Evidence::wire(&c, &t)
        });
        let wire = verdict(&c, &t);
        assert_eq!((v.kind, &v.headline), (wire.kind, &wire.headline));
        assert!(
            v.text
                .contains("its syscalls decided nothing, and --probe through the proxy could"),
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
        let c = ObservedCounts {
            commands: 1_000,
            replies: 1_000,
            writes: 36,
            round_trips: 35,
            unconfirmed_trips: 34,
            overlapping_writes: 20,
            max_depth: 200,
            phases: vec![Phase {
                kind: VerdictKind::Pipelined,
                round_trips: 35,
                commands: 1_000,
                writes: 36,
                us: 10_000.0,
                waiting_us: 0.0,
            }],
            ..Default::default()
        };
        let t = ObservedTimes::default();
        let waited = ProbeEvidence {
            held: 3,
            sent_while_held: 0,
            waited_for_release: 2,
            held_us: 3_000.0,
            late_us: 0.0,
        };
        let v = judge(&Evidence {
            probe: Some(&waited),
            ..Evidence::wire(&c, &t)
        });
        assert!(!v.headline.contains(", 35 waits"), "{}", v.headline);
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

    /// patterns.py phases through the proxy with --pid: 100 SETs one at a time (each reply
    /// back before the next, unconfirmed by the wire), then 100 in one send. Its syscalls
    /// show 101 sends and 101 waits: batched, and every round trip a wait; the headline names
    /// the phase that cost the most, as the wire's would, and says what decided it.
    #[test]
    fn syscalls_name_the_costliest_phase_of_a_connection_that_changed_behaviour() {
        let one_by_one = Phase {
            kind: VerdictKind::OneAtATime,
            round_trips: 100,
            commands: 100,
            writes: 100,
            us: 96_000.0,
            waiting_us: 90_000.0,
        };
        let pipeline = Phase {
            kind: VerdictKind::Pipelined,
            round_trips: 1,
            commands: 100,
            writes: 1,
            us: 4_000.0,
            waiting_us: 1_000.0,
        };
        let c = ObservedCounts {
            commands: 200,
            replies: 200,
            writes: 101,
            round_trips: 101,
            unconfirmed_trips: 100,
            max_depth: 100,
            phases: vec![one_by_one, pipeline],
            ..Default::default()
        };
        let v = with_syscalls(&c, &syscalls(101, 101));
        assert_eq!(v.kind, VerdictKind::Pipelined, "{}", v.text);
        // Without "of its time", to keep the line about 90 characters.
        assert_eq!(
            v.headline,
            "one at a time for 96 %: 100 commands, 100 waits; then one pipeline of 100 — from its syscalls"
        );
        // Fewer waits than the wire's round trips: those stay a range.
        let v = with_syscalls(&c, &syscalls(101, 1));
        assert!(
            v.headline.starts_with("a command at a time for 96 %"),
            "{}",
            v.headline
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
