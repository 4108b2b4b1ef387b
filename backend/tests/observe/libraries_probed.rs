//! `observe --probe` through the proxy on the same five libraries and patterns as
//! `libraries.rs`, each judged by the causal oracle's run of the same client: a client that
//! waits for each reply reads as one at a time (it holds the first few replies of even a short
//! connection; only where a busy machine left every hold undecided may it say undetermined,
//! naming one at a time); one that does not is never read as one at a time (right, or
//! undetermined among kinds that include the truth).

use crate::libraries::{HOLD, sets};
use crate::support;

use std::time::Duration;

use shared::observe::{DecidedBy, VerdictKind};
use support::clients::output_within;
use support::libraries::{Library, Pattern};
use support::observe::Observe;
use support::oracle::held::HeldRelay;

const REPORT_LIMIT: Duration = Duration::from_secs(60);

fn probed(library: Library) {
    for pattern in [Pattern::Loop, Pattern::Pipeline, Pattern::Multi] {
        let (redis, _) = support::redis();
        let what = format!("{library:?} {pattern:?}");
        let n = sets(pattern);

        let relay = HeldRelay::start(redis.port(), HOLD);
        let Some(client) = library.command(relay.port, pattern, n) else {
            return;
        };
        output_within(client, &what);
        let truth = relay.busiest();

        let mut observe = Observe::start(&redis.url(), &["--json", "--no-equivalent", "--probe"]);
        let Some(client) = library.command(observe.port(), pattern, n) else {
            return;
        };
        let out = output_within(client, &what);
        assert!(out.status.success(), "{what}: the client failed: {out:?}");
        let conns = observe.report(REPORT_LIMIT);
        let c = conns
            .iter()
            .max_by_key(|c| c.counts.commands)
            .unwrap_or_else(|| panic!("{what}: no connection observed"));
        let v = &c.verdict;
        eprintln!(
            "{what}: oracle {truth:?} | probed: {:?} by {:?}: {}",
            v.kind, v.decided_by, v.headline
        );
        if truth.waits_each() {
            // Right: one at a time (decided by the probe, or by what the holds made plain on
            // the wire: nothing sent while a reply was held). Only where a busy machine left
            // every hold undecided may it say undetermined, naming one at a time.
            let p = c.probe.clone().unwrap_or_default();
            let undecided = p.held > 0 && p.sent_while_held == 0 && p.waited_for_release == 0;
            let right = v.kind == VerdictKind::OneAtATime;
            let honest = v.kind == VerdictKind::Undetermined
                && v.candidates.contains(&VerdictKind::OneAtATime);
            assert!(
                right || (undecided && honest),
                "{what}: it waits for each reply (the oracle: {truth:?}); probed ({p:?}): {} — {}",
                v.headline,
                v.text
            );
            if v.decided_by != Some(DecidedBy::Probe) {
                eprintln!(
                    "{what}: not decided by the probe on this machine: {}",
                    v.headline
                );
            }
        } else {
            let never = VerdictKind::OneAtATime;
            let right = if v.kind == VerdictKind::Undetermined {
                v.candidates.iter().any(|k| *k != never)
            } else {
                v.kind != never
            };
            assert!(
                right,
                "{what}: it sends on without waiting (the oracle: {truth:?}); probed: {:?} ({:?}): {} — {}",
                v.kind, v.candidates, v.headline, v.text
            );
            // Where it states its waits as one number, no more than it made.
            if let Some(waits) = headline_waits(&v.headline) {
                let rounds = truth.after_release;
                assert!(
                    waits <= rounds + 2 + rounds / 20,
                    "{what}: {waits} waits said, {rounds} rounds made (the oracle: {truth:?}): {}",
                    v.headline
                );
            }
        }
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

#[test]
fn redis_rb_probed_is_right() {
    probed(Library::Ruby);
}

#[test]
fn phpredis_probed_is_right() {
    probed(Library::Php);
}

#[test]
fn perl_redis_pm_probed_is_right() {
    probed(Library::Perl);
}

#[test]
fn redigo_probed_is_right() {
    probed(Library::Go);
}

#[test]
fn hiredis_probed_is_right() {
    probed(Library::C);
}
