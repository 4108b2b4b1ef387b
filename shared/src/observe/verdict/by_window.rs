//! A verdict decided by the client's receive window in a capture, where it moved. A command
//! that left with the window down by replies lying unread was sent before those replies
//! were read: the client did not wait for them. Where such commands are more than a tenth
//! of the connection's, it did not wait before 9 in 10 of its commands, so one at a time
//! (the syscalls' measure of it) is ruled out. A window that stayed shows nothing either way
//! (Linux does not move it for a few KB unread), so it never rules anything in. Bytes lying
//! unread on a connection that Redis also pushed to may be pushes, not replies: there it
//! decides nothing.

use super::changed_behaviour::phased_headline;
use super::headline::{self, by_whom};
use super::kind::kind_and_text;
use crate::digits::group;
use crate::observe::numbers::count;
use crate::observe::{
    DecidedBy, ObservedCounts, ObservedTimes, Verdict, VerdictKind, WindowEvidence,
};

/// The verdict with one at a time ruled out by `w`, when the wire allowed it and the window
/// shows enough commands sent over unread replies to rule it out; else `None` (the wire's
/// verdict stands).
pub(super) fn by_window(
    c: &ObservedCounts,
    t: &ObservedTimes,
    w: &WindowEvidence,
    wire: &Verdict,
) -> Option<Verdict> {
    let n = c.commands;
    let k = w.commands_sent_with_replies_unread.min(n);
    if w.sent_with_replies_unread == 0
        || k * 10 <= n
        || c.pushes > 0
        || !wire.allows(VerdictKind::OneAtATime)
    {
        return None;
    }
    let saw = format!(
        "from the receive window: {} of its {} left while replies lay unread (its window down by up to {}), so it did not wait for them, and one at a time is ruled out",
        group(k),
        count(n, "command"),
        unread(w),
    );
    let left: Vec<VerdictKind> = match wire.kind {
        VerdictKind::Undetermined => wire
            .candidates
            .iter()
            .copied()
            .filter(|&k| k != VerdictKind::OneAtATime)
            .collect(),
        // The wire took its round trips as waits; at least `k` of them were not.
        _ => vec![kind_and_text(c, t, c.round_trips.saturating_sub(k)).0],
    };
    match left.as_slice() {
        [] | [VerdictKind::OneAtATime] => None,
        [kind] => {
            let kind = *kind;
            let by = by_whom(Some(DecidedBy::Window));
            let line = match phased_headline(c, by) {
                Some(phased) => phased,
                None => format!(
                    "{}: {} of {} sent with replies unread{by}",
                    kind.words(),
                    group(k),
                    group(n)
                ),
            };
            Some(Verdict {
                kind,
                headline: line,
                text: format!(
                    "{}: {saw}. As the wire showed it: {}",
                    kind.words(),
                    wire.text
                ),
                timing_dependent: None,
                candidates: Vec::new(),
                decided_by: Some(DecidedBy::Window),
            })
        }
        several => Some(Verdict {
            kind: VerdictKind::Undetermined,
            headline: headline::undetermined(several, c),
            text: format!("{}; {saw}", wire.text),
            timing_dependent: wire.timing_dependent.clone(),
            candidates: several.to_vec(),
            decided_by: None,
        }),
    }
}

/// "52,000 bytes", or in the field's units where the scale is unknown.
fn unread(w: &WindowEvidence) -> String {
    if w.scaled {
        format!("{} bytes", group(w.most_unread))
    } else {
        format!("{} of the field's units", group(w.most_unread))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Evidence, judge, verdict};
    use super::*;
    use crate::observe::SyscallEvidence;

    /// A client that sends 5,000 SETs a write each and reads at the end, captured: every
    /// reply back before the next command, none of it confirmed as a wait.
    fn send_all() -> ObservedCounts {
        ObservedCounts {
            commands: 5_000,
            replies: 5_000,
            writes: 5_000,
            writes_are_segments: true,
            round_trips: 5_000,
            unconfirmed_trips: 4_999,
            max_depth: 1,
            ..Default::default()
        }
    }

    fn moved(commands: u64) -> WindowEvidence {
        WindowEvidence {
            segments: 5_000,
            sent_with_replies_unread: commands,
            commands_sent_with_replies_unread: commands,
            most_unread: 52_000,
            scaled: true,
        }
    }

    fn with_window(c: &ObservedCounts, w: &WindowEvidence) -> Verdict {
        let t = ObservedTimes::default();
        judge(&Evidence {
            window: Some(w),
            ..Evidence::wire(c, &t)
        })
    }

    #[test]
    fn a_window_down_under_most_commands_rules_out_one_at_a_time() {
        let c = send_all();
        let wire = verdict(&c, &ObservedTimes::default());
        assert_eq!(wire.kind, VerdictKind::Undetermined);
        assert!(wire.allows(VerdictKind::OneAtATime), "{wire:?}");
        let v = with_window(&c, &moved(4_000));
        assert_eq!(v.kind, VerdictKind::WritePerCommand, "{}", v.text);
        assert_eq!(v.decided_by, Some(DecidedBy::Window));
        assert_eq!(
            v.headline,
            "pipelined, a write per command: 4,000 of 5,000 sent with replies unread — from the receive window"
        );
        assert!(v.headline.chars().count() <= 100);
        assert!(
            v.text.contains(
                "from the receive window: 4,000 of its 5,000 commands left while replies lay unread (its window down by up to 52,000 bytes)"
            ),
            "{}",
            v.text
        );
    }

    #[test]
    fn the_window_overrules_a_wire_that_read_one_at_a_time() {
        // Every round trip taken as a wait by the wire's timing; the window shows 3,000
        // commands sent over unread replies.
        let c = ObservedCounts {
            round_trips: 5_000,
            unconfirmed_trips: 0,
            max_depth: 1,
            ..send_all()
        };
        assert_eq!(
            verdict(&c, &ObservedTimes::default()).kind,
            VerdictKind::OneAtATime
        );
        let v = with_window(&c, &moved(3_000));
        assert_eq!(v.kind, VerdictKind::WritePerCommand, "{}", v.text);
        assert_eq!(v.decided_by, Some(DecidedBy::Window));
    }

    #[test]
    fn a_steady_window_or_a_few_commands_over_unread_replies_decide_nothing() {
        let c = send_all();
        let wire = verdict(&c, &ObservedTimes::default());
        // Steady: no command left with the window down. It is no proof that the client read.
        assert_eq!(with_window(&c, &moved(0)), wire);
        // A tenth or fewer: one at a time could still hold for 9 in 10 commands.
        assert_eq!(with_window(&c, &moved(500)), wire);
        // Redis pushed to it too: what lay unread may have been pushes.
        let pushed = ObservedCounts {
            pushes: 3,
            ..send_all()
        };
        assert_eq!(
            with_window(&pushed, &moved(4_000)),
            verdict(&pushed, &ObservedTimes::default())
        );
        // A client the wire shows waiting, whose window never moved: one at a time stands,
        // not decided by the window.
        let waits = ObservedCounts {
            round_trips: 5_000,
            unconfirmed_trips: 0,
            max_depth: 1,
            ..send_all()
        };
        let v = with_window(&waits, &moved(0));
        assert_eq!((v.kind, v.decided_by), (VerdictKind::OneAtATime, None));
    }

    #[test]
    fn a_batched_verdict_is_not_the_windows_to_change() {
        let c = ObservedCounts {
            writes: 5,
            round_trips: 5,
            unconfirmed_trips: 0,
            max_depth: 1_000,
            ..send_all()
        };
        let wire = verdict(&c, &ObservedTimes::default());
        assert_eq!(wire.kind, VerdictKind::Pipelined);
        assert_eq!(with_window(&c, &moved(4_000)), wire);
    }

    #[test]
    fn among_three_candidates_it_leaves_the_other_two() {
        let c = send_all();
        let wire = Verdict {
            kind: VerdictKind::Undetermined,
            headline: String::new(),
            text: "undetermined".into(),
            timing_dependent: Some("why".into()),
            candidates: vec![
                VerdictKind::OneAtATime,
                VerdictKind::WritePerCommand,
                VerdictKind::Pipelined,
            ],
            decided_by: None,
        };
        let v = by_window(&c, &ObservedTimes::default(), &moved(4_000), &wire).unwrap();
        assert_eq!(v.kind, VerdictKind::Undetermined);
        assert_eq!(
            v.candidates,
            [VerdictKind::WritePerCommand, VerdictKind::Pipelined]
        );
        assert!(v.text.contains("one at a time is ruled out"), "{}", v.text);
    }

    #[test]
    fn the_syscalls_come_first() {
        let c = send_all();
        let t = ObservedTimes::default();
        let s = SyscallEvidence {
            pid: 1,
            sends: 5_000,
            waits: 1,
            ..Default::default()
        };
        let w = moved(4_000);
        let v = judge(&Evidence {
            syscalls: Some(&s),
            window: Some(&w),
            ..Evidence::wire(&c, &t)
        });
        assert_eq!(v.decided_by, Some(DecidedBy::Syscalls));
    }
}
