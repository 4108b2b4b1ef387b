//! A verdict's headline: one line, about 90 characters at most, said before the detail. Its
//! waits are the round trips the wire showed (with blocking commands' waits), a range where
//! some are unconfirmed: never a count the evidence did not show.

use super::changed_behaviour::phased_headline;
use crate::digits::group;
use crate::observe::numbers::count;
use crate::observe::{DecidedBy, ObservedCounts, Verdict, VerdictKind};

/// "one at a time: 200 commands, 200 waits"; with what decided it beyond the wire's timing.
pub(super) fn decided(kind: VerdictKind, c: &ObservedCounts, by: Option<DecidedBy>) -> String {
    let n = count(c.commands, "command");
    let line = match kind {
        VerdictKind::Idle => return "no commands yet".into(),
        VerdictKind::Subscriber => format!(
            "subscriber: {} pushed to it after {n}",
            count(c.pushes, "message")
        ),
        VerdictKind::OneAtATime => format!("one at a time: {n}, {}", waits(c)),
        VerdictKind::WritePerCommand | VerdictKind::Pipelined => format!(
            "{}: {n} in {}, {}",
            kind.words(),
            count(c.writes, writes_noun(c)),
            waits(c)
        ),
        VerdictKind::AutoPipelined => format!(
            "auto-pipelined: {n} in {} sent while replies were awaited, {}",
            count(c.writes, writes_noun(c)),
            waits(c)
        ),
        VerdictKind::Undetermined => undetermined(&[], c),
    };
    line + by_whom(by)
}

/// " — from its syscalls", " — by the probe", " — from the receive window".
pub(super) fn by_whom(by: Option<DecidedBy>) -> &'static str {
    match by {
        None => "",
        Some(DecidedBy::Syscalls) => " — from its syscalls",
        Some(DecidedBy::Probe) => " — by the probe",
        Some(DecidedBy::Window) => " — from the receive window",
    }
}

/// "one at a time, or a pipeline written a command at a time: 1,000 commands, 1 to 1,000
/// waits".
pub(super) fn undetermined(candidates: &[VerdictKind], c: &ObservedCounts) -> String {
    let named: Vec<&str> = candidates
        .iter()
        .enumerate()
        .map(|(i, &k)| match k {
            // Said second of two, a write per command is what it looks like: a pipeline sent
            // a command at a time. Among three, shorter, to keep the line one line.
            VerdictKind::WritePerCommand if i > 0 && candidates.len() == 2 => {
                "a pipeline written a command at a time"
            }
            VerdictKind::WritePerCommand if i > 0 => "a write per command",
            k => k.words(),
        })
        .collect();
    let named = match named.split_last() {
        None => "undetermined".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, [one])) => format!("{one}, or {last}"),
        Some((last, rest)) => format!("{}, or {last}", rest.join(", ")),
    };
    format!("{named}: {}, {}", count(c.commands, "command"), waits(c))
}

/// What would decide between the candidates: evidence the wire's timing cannot give.
pub(super) fn what_would_decide(c: &ObservedCounts) -> &'static str {
    if c.writes_are_segments {
        "observe it through the proxy with --probe, or with --pid on the client's host"
    } else {
        "run with --probe, or --pid on this host"
    }
}

/// The waits the wire showed: "200 waits"; where some round trips are unconfirmed, from the
/// confirmed ones (less the last, which no next command confirms) to all: "1 to 934 waits",
/// "up to 934 waits".
pub(super) fn waits(c: &ObservedCounts) -> String {
    let most = c.round_trips + c.blocking;
    if c.unconfirmed_trips == 0 {
        return count(most, "wait");
    }
    let least =
        (c.round_trips - c.unconfirmed_trips.min(c.round_trips)).saturating_sub(1) + c.blocking;
    if least == 0 {
        format!("up to {}", count(most, "wait"))
    } else {
        format!("{} to {}", group(least), count(most, "wait"))
    }
}

fn writes_noun(c: &ObservedCounts) -> &'static str {
    if c.writes_are_segments {
        "segment"
    } else {
        "write"
    }
}

/// `v` decided by `by`: its headline says so.
pub(super) fn decided_by(mut v: Verdict, by: DecidedBy, c: &ObservedCounts) -> Verdict {
    v.headline = phased_by(c, by).unwrap_or_else(|| decided(v.kind, c, Some(by)));
    v.decided_by = Some(by);
    v
}

/// The headline of a connection that changed behaviour, decided by `by`, which it says.
pub(super) fn phased_by(c: &ObservedCounts, by: DecidedBy) -> Option<String> {
    phased_headline(c, by_whom(Some(by)))
}
