//! A verdict decided by the client's own syscalls (`observe --pid`): sends per command say
//! whether it wrote each on its own, and its waits whether it waited for each. On loopback a
//! slow client has every reply back before its next command whether or not it waited for it;
//! its syscalls show which.

use super::headline::{by_whom, phased_by};
use crate::digits::group;
use crate::observe::numbers::count;
use crate::observe::{DecidedBy, ObservedCounts, SyscallEvidence, Verdict, VerdictKind};

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

#[cfg(test)]
mod tests {
    use super::super::tests::{send_all, syscalls, with_syscalls};
    use super::super::{Evidence, judge, verdict};
    use crate::observe::{
        DecidedBy, ObservedCounts, ObservedTimes, Phase, SyscallEvidence, VerdictKind,
    };

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
}
