//! The verdict: whether and how a connection pipelined, as a headline of one line and the
//! detail beneath, worked out once for the CLI and the page. Every check it makes is here.
//!
//! Its input is explicit (`Evidence`): the wire's counts and times, and what else was seen
//! of the client. The client's own syscalls decide when told, as do replies the probe held
//! back when they show one way, and, from a capture, the client's receive window where it
//! moved (it rules out one at a time); where two of them decide differently, neither is taken
//! over the other: the verdict is undetermined, naming both. Else the wire (`wire`): the kind
//! its counts read as (`kind`), put through checks (`wire::CHECKS`: `checks`, `read_late`)
//! where another read of the same wire would give another kind. One that speaks makes the
//! verdict undetermined, naming the kinds it could be and what would decide it (less what was
//! tried), rather than guessing.
//!
//! # Layout
//!
//! - `wire`: the verdict as the wire's counts and timing show it.
//! - `kind`: the kind and sentence the counts alone read as.
//! - `checks`: the checks on counts where another read of the same wire gives another kind.
//! - `read_late`: the check for a proxy late to read, from the kernel's counts on its socket.
//! - `client_socket`: what the kernel counted on the proxy's socket from the client
//!   (`TCP_INFO`), which `read_late` reads.
//! - `changed_behaviour`: a connection read as phases: which matter, which cost the most, and
//!   the headline that names it by that one.
//! - `by_syscalls`: a verdict decided by the client's own syscalls.
//! - `by_probe`: a verdict decided by the replies the probe held back.
//! - `by_window`: a verdict decided by the client's receive window in a capture.
//! - `headline`: a verdict's one line, said before the detail.
//! - `syscalls_alone`: what the syscalls say of a socket when nothing saw its commands.

mod by_probe;
mod by_syscalls;
mod by_window;
mod changed_behaviour;
mod checks;
mod client_socket;
mod headline;
mod kind;
mod read_late;
mod syscalls_alone;
mod wire;

pub use changed_behaviour::{costliest_phase, phased_headline, phases_that_matter};
pub use client_socket::ClientSocket;
pub use syscalls_alone::{SendsWaited, read_sends};

use crate::observe::{
    DecidedBy, ObservedConnection, ObservedCounts, ObservedTimes, ProbeEvidence, SyscallEvidence,
    Verdict, VerdictKind, WindowEvidence,
};

/// Everything a verdict is worked out from.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    pub counts: &'a ObservedCounts,
    pub times: &'a ObservedTimes,
    /// What the kernel counted on the proxy's socket from the client (through the proxy).
    pub socket: Option<&'a ClientSocket>,
    /// Replies the proxy held back, and what the client did meanwhile (`observe --probe`).
    pub probe: Option<&'a ProbeEvidence>,
    /// The client process's syscalls on its socket (`observe --pid`).
    pub syscalls: Option<&'a SyscallEvidence>,
    /// The client's receive window on its command segments (a capture).
    pub window: Option<&'a WindowEvidence>,
}

impl<'a> Evidence<'a> {
    /// The wire's counts and times, nothing else.
    pub fn wire(counts: &'a ObservedCounts, times: &'a ObservedTimes) -> Evidence<'a> {
        Evidence {
            counts,
            times,
            socket: None,
            probe: None,
            syscalls: None,
            window: None,
        }
    }
}

/// Works out the verdict from everything seen of the connection.
pub fn judge(e: &Evidence) -> Verdict {
    let mut wire = wire::from_the_wire(e.counts, e.times, e.socket);
    let decided_nothing = wire.clone();
    // Quoted beside a decision, the wire's reading asks for no more evidence.
    wire.text = tried(&wire.text, e.counts, None);
    // Each vantage beyond the wire's timing that decides; where two decide differently,
    // neither overrides the other: the verdict says both.
    let decided: Vec<Verdict> = [
        e.syscalls
            .and_then(|s| by_syscalls::by_syscalls(e.counts, s, &wire)),
        e.probe
            .and_then(|p| by_probe::by_probe(e.counts, e.times, e.socket, p, &wire)),
        e.window
            .and_then(|w| by_window::by_window(e.counts, e.times, w, &wire)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(first) = decided.first() {
        return match decided.iter().find(|v| v.kind != first.kind) {
            None => first.clone(),
            Some(other) => disagreeing(first, other),
        };
    }
    // Undecided: what would decide it, less what was tried.
    let mut v = decided_nothing;
    let left = match (e.probe, e.syscalls) {
        (None, None) => return v,
        (Some(p), None) => format!(
            "the probe decided nothing ({} of {} held decided), and --pid on the client's host could",
            crate::digits::group(p.sent_while_held + p.waited_for_release),
            crate::digits::group(p.held)
        ),
        (None, Some(_)) => {
            "its syscalls decided nothing, and --probe through the proxy could".to_string()
        }
        (Some(_), Some(_)) => "neither the probe nor its syscalls decided".to_string(),
    };
    v.text = tried(&v.text, e.counts, Some(&left));
    v
}

/// Two vantages that decided differently (`first` the one read first: the syscalls, then
/// the probe, then the window): undetermined between their kinds, both named.
fn disagreeing(first: &Verdict, other: &Verdict) -> Verdict {
    let by = |v: &Verdict| v.decided_by.map_or("the wire", DecidedBy::words);
    Verdict {
        kind: VerdictKind::Undetermined,
        headline: format!(
            "{}: {}; {}: {} — they disagree",
            by(first),
            first.kind.words(),
            by(other),
            other.kind.words()
        ),
        text: format!(
            "undetermined: {} and {} decided differently, and neither is taken over the other. From {}: {} From {}: {}",
            by(first),
            by(other),
            by(first),
            first.text,
            by(other),
            other.text
        ),
        timing_dependent: None,
        candidates: vec![first.kind, other.kind],
        decided_by: None,
    }
}

/// `text` with its "what would decide" clause (`headline::what_would_decide`) replaced by
/// `left` (what is left to try, given what was tried), or dropped.
fn tried(text: &str, c: &ObservedCounts, left: Option<&str>) -> String {
    let clause = format!("; {}.", headline::what_would_decide(c));
    match left {
        Some(left) => text.replacen(&clause, &format!("; {left}."), 1),
        None => text.replacen(&clause, ".", 1),
    }
}

/// Works out the verdict from the counts and times alone.
pub fn verdict(c: &ObservedCounts, t: &ObservedTimes) -> Verdict {
    judge(&Evidence::wire(c, t))
}

/// Works out the verdict from the counts and times, and what the kernel counted on the
/// proxy's socket from the client, if told (`read_late`).
pub fn verdict_at_proxy(
    c: &ObservedCounts,
    t: &ObservedTimes,
    socket: Option<&ClientSocket>,
) -> Verdict {
    judge(&Evidence {
        socket,
        ..Evidence::wire(c, t)
    })
}

impl ObservedConnection {
    /// The connection with its verdict worked out again from its counts, times, probe,
    /// syscalls and window (and the proxy's socket's counts, when told): call it once the evidence
    /// beyond the wire is filled in. A connection with no commands keeps its verdict: there is
    /// nothing to judge, and it may say what the client sent instead of Redis's protocol.
    pub fn judged(mut self, socket: Option<&ClientSocket>) -> ObservedConnection {
        if self.counts.commands == 0 {
            return self;
        }
        self.verdict = judge(&Evidence {
            counts: &self.counts,
            times: &self.times,
            socket,
            probe: self.probe.as_ref(),
            syscalls: self.syscalls.as_ref(),
            window: self.window.as_ref(),
        });
        self
    }

    /// Gives the connection the client process's syscalls on its socket (`observe --pid`),
    /// once its verdict was judged from the rest, and judges it again with them. Where they
    /// decide nothing, the verdict stands as the wire gave it: with the proxy's socket counts,
    /// which are not kept to be read again.
    pub fn add_syscalls(&mut self, syscalls: SyscallEvidence) {
        self.syscalls = Some(syscalls);
        let judged = self.clone().judged(None);
        if judged.verdict.decided_by == Some(DecidedBy::Syscalls) {
            self.verdict = judged.verdict;
        }
    }
}

#[cfg(test)]
mod tests;
