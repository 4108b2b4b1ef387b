//! The verdict as the wire's counts and timing show it: the kind they read as (`kind`), put
//! through the checks (`CHECKS`) where another read of the same wire would give another kind;
//! the first that speaks makes it undetermined. Evidence beyond the wire's timing is weighed
//! by the verdict's other modules; the probe's (`by_probe`) reads the wire again through here.

use super::changed_behaviour::phased_headline;
use super::checks::{self, Check, Mark, Reading};
use super::client_socket::ClientSocket;
use super::headline;
use super::kind::kind_and_text;
use super::read_late::{read_apart, read_apart_words, read_late};
use crate::observe::{ObservedCounts, ObservedTimes, Verdict, VerdictKind};

/// The checks a verdict's kind is put through, in order; the first that speaks marks it.
/// A proxy read late undercounts the writes, so that is said before what they show.
const CHECKS: [Check; 5] = [
    checks::merged_writes,
    read_late,
    checks::unconfirmed_trips,
    checks::unwaited_batches,
    checks::batch_in_pieces,
];

/// The verdict as the wire's counts and timing show it: the kind they read as, undetermined
/// where a check marks it.
///
/// Round trips the wire cannot confirm as waits (`ObservedCounts::unconfirmed_trips`) are
/// counted as the wire shows them and said to be unconfirmed; in the headline, the waits are
/// a range.
pub(super) fn from_the_wire(
    c: &ObservedCounts,
    t: &ObservedTimes,
    socket: Option<&ClientSocket>,
) -> Verdict {
    if let (Some(apart), Some(s)) = (read_apart(c, socket), socket) {
        let mut v = from_the_wire(&apart, t, None);
        v.text += &format!(" ({})", read_apart_words(s));
        return v;
    }
    let (kind, text) = kind_and_text(c, t, c.round_trips);
    let again = |other: &ObservedCounts| from_the_wire(other, t, None);
    let reading = Reading {
        c,
        t,
        kind,
        socket,
        again: &again,
    };
    let mut v = match CHECKS.iter().find_map(|check| check(&reading)) {
        None => Verdict {
            kind,
            headline: headline::decided(kind, c, None),
            text,
            timing_dependent: None,
            candidates: Vec::new(),
            decided_by: None,
        },
        Some(mark) => undetermined(kind, &text, mark, c),
    };
    // A connection that changed behaviour is named by the phase that cost the most; only
    // where the wire allows batching at all (a phase that looks batched in a connection read
    // as a write per command is reads or segments merged on the way: a proxy read late).
    let batched = v.allows(VerdictKind::Pipelined) || v.allows(VerdictKind::AutoPipelined);
    if batched && let Some(phased) = phased_headline(c, "") {
        v.headline = phased;
    }
    v
}

/// The wire reads as `kind`, but `mark` says it could be others.
fn undetermined(kind: VerdictKind, text: &str, mark: Mark, c: &ObservedCounts) -> Verdict {
    let mut candidates = vec![kind];
    for k in mark.could_be {
        if !candidates.contains(&k) {
            candidates.push(k);
        }
    }
    let decide = headline::what_would_decide(c);
    Verdict {
        kind: VerdictKind::Undetermined,
        headline: headline::undetermined(&candidates, c),
        text: format!(
            "undetermined: {}; {decide}. As the wire shows it, {text} ({})",
            mark.reason, mark.why
        ),
        timing_dependent: Some(mark.why),
        candidates,
        decided_by: None,
    }
}
