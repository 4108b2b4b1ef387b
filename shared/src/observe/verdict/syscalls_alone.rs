//! What a client's syscalls alone say of one socket, when nothing saw its commands
//! (`observe --pid` without the proxy or a capture): whether it waited for a reply after
//! each send. Sends are not commands (one send may carry a whole pipeline), so it says
//! round trips per send, never "one at a time", and says undetermined where reads that found
//! the reply already there leave the waits a range that spans "after every send" and not.

use crate::digits::group;
use crate::observe::SyscallEvidence;
use crate::observe::numbers::count;

/// What the syscalls decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendsWaited {
    /// It blocked for a reply after (nearly) every send: a round trip per send.
    EachSend,
    /// It sent again without waiting, for more than a tenth of its sends.
    NotEachSend,
    /// The waits it may have made span both.
    Undetermined,
}

/// The reading and its sentence.
pub fn read_sends(e: &SyscallEvidence) -> (SendsWaited, String) {
    let each = |waits: u64| waits * 10 >= e.sends * 9;
    let (lo, hi) = (e.waits, e.waits + e.undecided_waits);
    let sends = count(e.sends, "send");
    let waits = count(lo, "wait");
    if e.lost > 0 {
        return (
            SendsWaited::Undetermined,
            format!(
                "undetermined: the trace lost {} records, so {waits} for {sends} may be short",
                group(e.lost)
            ),
        );
    }
    if e.sends == 0 {
        return (
            SendsWaited::Undetermined,
            "undetermined: it sent nothing on the socket while traced".into(),
        );
    }
    if each(lo) {
        let unsure = match e.undecided_waits {
            0 => String::new(),
            u => format!(", {} undecided", group(u)),
        };
        return (
            SendsWaited::EachSend,
            format!(
                "it waits for a reply after each send ({waits} for {sends}{unsure}): a round trip per send; whether a send carried one command or many, the proxy or a capture shows"
            ),
        );
    }
    if !each(hi) {
        let unsure = match e.undecided_waits {
            0 => String::new(),
            u => format!(" (at most {} with the {} undecided)", group(hi), group(u)),
        };
        return (
            SendsWaited::NotEachSend,
            format!("it sent again without waiting for a reply: {waits} for {sends}{unsure}"),
        );
    }
    (
        SendsWaited::Undetermined,
        format!(
            "undetermined: {waits} for {sends}, and after {} more its non-blocking reads found the reply already there, so whether it would have waited its syscalls do not show; what would decide: run it through the proxy with --probe, which holds a few replies back",
            group(e.undecided_waits)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(sends: u64, waits: u64, undecided_waits: u64) -> SyscallEvidence {
        SyscallEvidence {
            sends,
            waits,
            undecided_waits,
            ..SyscallEvidence::default()
        }
    }

    #[test]
    fn replies_found_already_there_leave_it_undetermined_never_not_waiting() {
        let (kind, text) = read_sends(&ev(100, 0, 100));
        assert_eq!(kind, SendsWaited::Undetermined);
        assert!(text.contains("--probe"), "{text}");
        assert_eq!(read_sends(&ev(100, 100, 0)).0, SendsWaited::EachSend);
        assert_eq!(read_sends(&ev(1000, 1, 2)).0, SendsWaited::NotEachSend);
        let lost = SyscallEvidence {
            lost: 3,
            ..ev(100, 100, 0)
        };
        assert_eq!(read_sends(&lost).0, SendsWaited::Undetermined);
    }
}
