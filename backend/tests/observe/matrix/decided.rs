//! Through the proxy with evidence beyond the wire's timing, where every reply is back before
//! the next command on loopback: `--probe` (replies held back) and `--pid` (the client's own
//! syscalls). Each pattern must be right, on a quiet machine and beside two busy processes.
//!
//! With `--pid`, the threads pattern's sending thread may be counted a few waits it did not
//! make: Python's GIL, handed to it by the reader after a read, is a wake-up the scheduler's
//! tracepoints cannot tell from a reply handed over (syscalls.rs, `THREADS_WOKEN`). Far fewer
//! than a wait per command, they do not change its kind; its headline, which states
//! pipescope's count, is checked against strace's plus those hand-offs.
//!
//! With `--pid`, the nonblocking pattern may read as undetermined (naming what it is): after
//! each send its `recv(MSG_DONTWAIT)` returns the reply to the command before, which came
//! back during its own work, and its syscalls show bytes, not which reply they were. A read
//! that found a reply there is a wait or not by what the client would have done without it,
//! which only a reply held back shows (`--probe`, decided above). Where a read found nothing
//! and the client sent on, its syscalls decide.

use super::{MODES, Must, N, Via, check, observed, pattern};
use crate::support;

use support::hogs::Hogs;
use support::observe::can_trace;

/// Commands per probed client: at 200 µs of work each (and the GIL's hand-offs, which stretch
/// the threads pattern's gaps and so its holds), time for a few holds within the 1 %
/// of it the probe may hold.
const PROBED_N: u64 = 5_000;

/// Each pattern, observed `via`, right; the syscalls' waits strace's (but for the GIL's
/// hand-offs to the threads pattern's sender). Probed, the phases pattern sends twice as
/// many, so that its half one at a time is as long as the others: beside busy processes a
/// hold is left undecided when the client wakes late after its release, and a shorter run
/// may have none decided.
fn each_right(via: Via, n: u64) {
    super::head();
    let clients = MODES.map(|m| {
        let longer = via == Via::Probe && m == "phases";
        pattern(m, if longer { 2 * n } else { n })
    });
    for client in clients {
        let Some((c, seen)) = observed(via, &client) else {
            return;
        };
        let must = if via == Via::Pid && client.label.ends_with("nonblocking") {
            Must::RightOrUndetermined
        } else {
            Must::Right
        };
        check(&client, via, &c, seen, must);
        match via {
            Via::Probe => assert!(c.probe.is_some(), "{}: probed: {c:#?}", client.label),
            Via::Pid => {
                let e = c
                    .syscalls
                    .as_ref()
                    .unwrap_or_else(|| panic!("{}: its syscalls: {c:#?}", client.label));
                // A hand-off of the GIL at most every 5 ms (Python's switch interval) of the
                // client's run, and the sender's join after its last send.
                let woken = if client.label.ends_with("threads") {
                    1 + (c.times.wall_us / 5_000.0) as u64
                } else {
                    0
                };
                assert!(
                    e.waits + 1 >= seen.waits && e.waits <= seen.waits + woken,
                    "{}: pipescope {e:?}, strace {seen:?}",
                    client.label
                );
            }
            _ => {}
        }
    }
}

#[test]
fn each_pattern_probed_through_the_proxy_is_right() {
    each_right(Via::Probe, PROBED_N);
}

#[test]
fn each_pattern_with_its_syscalls_through_the_proxy_is_right() {
    if can_trace() {
        each_right(Via::Pid, N);
    }
}

#[test]
fn beside_cpu_hogs_each_pattern_probed_is_right() {
    let _hogs = Hogs::start();
    eprintln!("\nbeside two busy processes:");
    each_right(Via::Probe, PROBED_N);
}

#[test]
fn beside_cpu_hogs_each_pattern_with_its_syscalls_is_right() {
    if can_trace() {
        let _hogs = Hogs::start();
        eprintln!("\nbeside two busy processes:");
        each_right(Via::Pid, N);
    }
}
