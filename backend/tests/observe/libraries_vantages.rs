//! The vantages that read a client by its wire alone — the proxy without the probe, a capture
//! on lo, a capture on the client's side of a real network (a veth pair, Redis behind a relay
//! holding each chunk 1 ms each way) — on the five libraries and patterns of `libraries.rs`,
//! each judged by the causal oracle's run of the same client. On one host every reply may be
//! back before the client looks, so timing alone may not decide; none of them may be wrong:
//! a client that waits for each reply is read as one at a time or undetermined naming it, one
//! that does not is never read as one at a time, and where a headline counts waits it counts
//! no more than the client made.

use crate::libraries::{HOLD, sets};
use crate::support;

use std::time::Duration;

use shared::observe::{ObservedConnection, VerdictKind};
use support::clients::output_within;
use support::libraries::{Library, Pattern};
use support::observe::Observe;
use support::oracle::held::{Causal, HeldRelay};
use support::tcpdump::Tcpdump;
use support::wire::Wire;

const REPORT_LIMIT: Duration = Duration::from_secs(60);
/// The relay's hold each way across the veth, µs.
const NETWORK_US: u64 = 1_000;
const NETWORK_PORT: u16 = 17_002;

const PATTERNS: [Pattern; 3] = [Pattern::Loop, Pattern::Pipeline, Pattern::Multi];

/// The busiest connection `what` read.
fn busiest<'a>(conns: &'a [ObservedConnection], what: &str) -> &'a ObservedConnection {
    conns
        .iter()
        .max_by_key(|c| c.counts.commands)
        .unwrap_or_else(|| panic!("{what}: no connection read"))
}

/// Right or undetermined, never wrong, against what the client did by cause.
fn never_wrong(c: &ObservedConnection, truth: Causal, what: &str) {
    let v = &c.verdict;
    eprintln!("{what}: oracle {truth:?} | {:?}: {}", v.kind, v.headline);
    let one = VerdictKind::OneAtATime;
    if truth.waits_each() {
        let right =
            v.kind == one || (v.kind == VerdictKind::Undetermined && v.candidates.contains(&one));
        assert!(
            right,
            "{what}: it waits for each reply (the oracle: {truth:?}), read as {:?} ({:?}): {} — {}",
            v.kind, v.candidates, v.headline, v.text
        );
    } else {
        let right = match v.kind {
            VerdictKind::Undetermined => v.candidates.iter().any(|k| *k != one),
            kind => kind != one,
        };
        assert!(
            right,
            "{what}: it sends on without waiting (the oracle: {truth:?}), read as {:?} ({:?}): {} — {}",
            v.kind, v.candidates, v.headline, v.text
        );
    }
    // Where it states its waits as one number, no more than the rounds the client made.
    if let Some(waits) = headline_waits(&v.headline) {
        let rounds = truth.after_release;
        assert!(
            waits <= rounds + 2 + rounds / 20,
            "{what}: {waits} waits said, {rounds} rounds made (the oracle: {truth:?}): {}",
            v.headline
        );
    }
}

/// "…, 53 waits" → 53; none where the headline says "up to" (a bound, not a claim).
fn headline_waits(headline: &str) -> Option<u64> {
    let before = &headline[..headline.find(" wait")?];
    let number = before.rsplit([' ', ':']).next()?;
    if before.ends_with(&format!("up to {number}")) {
        return None;
    }
    number.replace(',', "").parse().ok()
}

/// What the client did, by cause: its run through a relay holding each reply.
fn truth(library: Library, pattern: Pattern, what: &str) -> Option<Causal> {
    let (redis, _) = support::redis();
    let relay = HeldRelay::start(redis.port(), HOLD);
    let client = library.command(relay.port, pattern, sets(pattern))?;
    let out = output_within(client, what);
    assert!(out.status.success(), "{what}: the client failed: {out:?}");
    Some(relay.busiest())
}

fn on_one_host(library: Library) {
    for pattern in PATTERNS {
        let what = format!("{library:?} {pattern:?}");
        let Some(truth) = truth(library, pattern, &what) else {
            return;
        };
        let n = sets(pattern);

        // Through the proxy, without the probe.
        let (redis, _) = support::redis();
        let mut observe = Observe::start(&redis.url(), &["--json", "--no-equivalent"]);
        let client = library
            .command(observe.port(), pattern, n)
            .expect("found above");
        let out = output_within(client, &what);
        assert!(out.status.success(), "{what}: the client failed: {out:?}");
        let conns = observe.report(REPORT_LIMIT);
        never_wrong(busiest(&conns, &what), truth, &format!("{what}, proxy"));

        // Captured on lo, straight to Redis.
        let (redis, _) = support::redis();
        let Some(mut capture) = Tcpdump::start(redis.port()) else {
            return;
        };
        let client = library
            .command(redis.port(), pattern, n)
            .expect("found above");
        let out = output_within(client, &what);
        assert!(out.status.success(), "{what}: the client failed: {out:?}");
        let conns = capture.observe(redis.port());
        never_wrong(
            busiest(&conns, &what),
            truth,
            &format!("{what}, capture on lo"),
        );
    }
}

fn across_a_network(library: Library) {
    let Some(wire) = Wire::new(&[(NETWORK_PORT, NETWORK_US)]) else {
        return;
    };
    for pattern in PATTERNS {
        let what = format!("{library:?} {pattern:?}");
        let Some(truth) = truth(library, pattern, &what) else {
            return;
        };
        let Some(mut capture) = wire.capture(NETWORK_PORT) else {
            return;
        };
        let host = wire.pair.server_addr.clone();
        let client = library
            .command_to(&host, NETWORK_PORT, pattern, sets(pattern))
            .expect("found above");
        let out = output_within(wire.pair.client.wrap(&client), &what);
        assert!(out.status.success(), "{what}: the client failed: {out:?}");
        let conns = capture.observe(NETWORK_PORT);
        never_wrong(
            busiest(&conns, &what),
            truth,
            &format!("{what}, captured across the network"),
        );
    }
}

macro_rules! vantages {
    ($($name:ident: $library:expr;)*) => {
        $(
            mod $name {
                use super::*;

                #[test]
                fn on_one_host_the_proxy_and_a_capture_on_lo_are_never_wrong() {
                    on_one_host($library);
                }

                #[test]
                fn a_capture_across_a_network_is_never_wrong() {
                    across_a_network($library);
                }
            }
        )*
    };
}

vantages! {
    redis_rb: Library::Ruby;
    phpredis: Library::Php;
    perl_redis_pm: Library::Perl;
    redigo: Library::Go;
    hiredis: Library::C;
}
