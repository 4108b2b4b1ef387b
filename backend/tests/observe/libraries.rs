//! `observe --pid` (a command started traced, its syscalls alone) on real client libraries of
//! five languages from Debian's packages — redis-rb, phpredis, Perl's Redis.pm, redigo,
//! hiredis — each as a loop of 100 SETs, its pipeline of 1,000 and its MULTI of 100, judged by
//! the causal oracle (`support::oracle::held`): a relay that holds every reply for 10 ms and
//! records whether each command arrived while an earlier reply was held.
//!
//! - Through the relay the client must sleep for each reply it waits for (whatever call it
//!   sleeps in: a blocking read, `poll`, `ppoll`, a parked goroutine), so `--pid` must count
//!   the oracle's rounds, decided.
//! - Straight to Redis on loopback a reply is often there before the client looks; `--pid`
//!   may then leave waits undecided, but the oracle's rounds must lie in its range: right or
//!   undetermined, never wrong.
//!
//! The oracle itself is checked on what each library's code does for certain: a loop waits
//! for each reply; a pipeline sends every command before reading.

use crate::support;

use std::time::Duration;

use shared::observe::SyscallEvidence;
use shared::observe::verdict::SendsWaited;
use support::clients::output_within;
use support::libraries::{Library, Pattern};
use support::observe::can_trace;
use support::oracle::held::{Causal, HeldRelay};

/// How long the oracle holds each reply: far above a client's own work per command, and
/// above how long a busy machine keeps a running client off its core (a pipelining client
/// paused longer would find every reply released, and look as if it had waited).
pub const HOLD: Duration = Duration::from_millis(10);

pub fn sets(pattern: Pattern) -> u64 {
    match pattern {
        Pattern::Pipeline => 1000,
        Pattern::Loop | Pattern::Multi => 100,
    }
}

/// What `--pid` said of the client's busiest socket to `port`.
struct Reading {
    evidence: SyscallEvidence,
    sends_waited: SendsWaited,
    text: String,
}

/// Runs the library's client under `pipescope observe --json --redis-port PORT -- …`,
/// connecting to `port`. `None`: a visible skip.
fn traced(library: Library, pattern: Pattern, port: u16) -> Option<Reading> {
    let client = library.command(port, pattern, sets(pattern))?;
    let mut observe = support::pipescope("pipescope=warn");
    observe
        .args(["observe", "--json", "--redis-port", &port.to_string(), "--"])
        .arg(client.get_program())
        .args(client.get_args());
    let out = output_within(observe, &format!("observe -- {library:?} {pattern:?}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pipescope observe failed: {stderr}");
    assert!(
        !stderr.contains("ended with"),
        "the {library:?} client failed: {stderr}"
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not the JSON report ({e}): {stderr}"));
    let busiest = rows
        .iter()
        .max_by_key(|r| r["syscalls"]["sends"].as_u64())
        .unwrap_or_else(|| panic!("no socket to port {port}: {stderr}"));
    Some(Reading {
        evidence: serde_json::from_value(busiest["syscalls"].clone()).unwrap(),
        sends_waited: serde_json::from_value(busiest["sends_waited"].clone()).unwrap(),
        text: busiest["reading"].as_str().unwrap_or_default().to_string(),
    })
}

/// How far `--pid`'s count may stray from the oracle's: a library's own commands at connect,
/// and the last reply, read after no next command.
fn slack(rounds: u64) -> u64 {
    2 + rounds / 20
}

/// The oracle's rounds lie within what `--pid` counted: its waits, up to those undecided.
fn within(rounds: u64, e: &SyscallEvidence) -> bool {
    e.waits <= rounds + slack(rounds) && rounds <= e.waits + e.undecided_waits + slack(rounds)
}

fn library(library: Library) {
    if !can_trace() {
        return;
    }
    for pattern in [Pattern::Loop, Pattern::Pipeline, Pattern::Multi] {
        let (redis, _) = support::redis();
        let what = format!("{library:?} {pattern:?}");

        // The oracle's run, with --pid watching the same run.
        let relay = HeldRelay::start(redis.port(), HOLD);
        let Some(held) = traced(library, pattern, relay.port) else {
            return;
        };
        let truth: Causal = relay.busiest();
        let n = sets(pattern);
        assert!(truth.commands >= n, "{what}: the oracle saw {truth:?}");
        match pattern {
            Pattern::Loop => assert!(truth.waits_each(), "{what}: the oracle: {truth:?}"),
            Pattern::Pipeline => assert!(
                truth.while_held * 10 >= truth.commands * 9,
                "{what}: a pipeline sends on before it reads; the oracle: {truth:?}"
            ),
            Pattern::Multi => {}
        }
        let rounds = truth.after_release;
        let e = &held.evidence;
        assert!(
            within(rounds, e),
            "{what}, replies held {HOLD:?}: the client made {rounds} rounds (the oracle: {truth:?}); --pid counted {} waits, {} undecided: {} — {e:?}",
            e.waits,
            e.undecided_waits,
            held.text
        );
        // Decided, and right.
        let right = if truth.waits_each() {
            SendsWaited::EachSend
        } else if e.sends >= 10 * rounds {
            SendsWaited::NotEachSend
        } else {
            held.sends_waited
        };
        assert_eq!(
            held.sends_waited, right,
            "{what}, replies held: {}",
            held.text
        );

        // Straight to Redis: right or undetermined.
        let Some(plain) = traced(library, pattern, redis.port()) else {
            return;
        };
        let p = &plain.evidence;
        assert!(
            within(rounds, p),
            "{what} on loopback: the client makes {rounds} rounds (the oracle: {truth:?}); --pid counted {} waits and {} undecided, which leave that out: {} — {p:?}",
            p.waits,
            p.undecided_waits,
            plain.text
        );
        let wrong = if truth.waits_each() {
            plain.sends_waited == SendsWaited::NotEachSend
        } else {
            p.sends >= 10 * rounds && plain.sends_waited == SendsWaited::EachSend
        };
        assert!(!wrong, "{what} on loopback: {}", plain.text);
        eprintln!(
            "{what}: oracle {} commands, {rounds} rounds, {} sent while held | --pid held: {} sends, {} waits, {} undecided | --pid on loopback: {} sends, {} waits, {} undecided: {}",
            truth.commands,
            truth.while_held,
            e.sends,
            e.waits,
            e.undecided_waits,
            p.sends,
            p.waits,
            p.undecided_waits,
            plain.text
        );
    }
}

#[test]
fn redis_rb_is_read_right_by_its_syscalls() {
    library(Library::Ruby);
}

#[test]
fn phpredis_is_read_right_by_its_syscalls() {
    library(Library::Php);
}

#[test]
fn perl_redis_pm_is_read_right_by_its_syscalls() {
    library(Library::Perl);
}

#[test]
fn redigo_is_read_right_by_its_syscalls() {
    library(Library::Go);
}

#[test]
fn hiredis_is_read_right_by_its_syscalls() {
    library(Library::C);
}
