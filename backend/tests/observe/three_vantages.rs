//! Real clients across a real network seen from three vantages at once: each runs in the
//! client namespace of a veth pair (`support::wire`: Redis behind a relay holding each chunk
//! 5 ms each way), talking through `pipescope observe` in that namespace, while tcpdump
//! captures the client's side of the veth (the proxy's leg to the relay, read by
//! `observe --pcap`) and the client runs under strace (`support::oracle`: its writes, and how
//! many times it stopped sending to read).
//!
//! It prints the table the closing note shows, a row per client per vantage, and
//! checks what the evidence decides, not what pipescope is expected to say: the commands are
//! Redis's (commandstats, over each client's run) and the same from proxy and capture; the
//! client's waits lie within what both vantages report (confirmed round trips ≤ waits ≤ round
//! trips); the proxy saw no more writes than the client made; and the verdict's kind is the
//! one the client's syscalls show (a write and a wait per command: one at a time; fewer
//! writes than commands: batched; a write per command and one wait: a write per command),
//! or, where the wire cannot tell which, marked timing-dependent, and proxy and capture agree
//! wherever neither is so marked.
//!
//! Where this cannot run (not root, `ip netns` refused, strace, tcpdump or a client missing,
//! ptrace denied) it fails under `CI=true` saying why, and prints a visible SKIPPED otherwise.

use crate::support;

use std::process::Command;
use std::time::Duration;

use shared::digits::group;
use shared::observe::{ObservedConnection, VerdictKind, count, duration, parts};
use support::clients::{node, raw_writer, redis_py};
use support::observe::calls;
use support::oracle::{Syscalls, assert_right_or_undetermined, assert_waits_within, syscalls};
use support::wire::{D_US, DELAY_PORT, Wire};

/// redis-py's loop (a round trip each, ~10 ms: as network.rs's), and the batches' SETs.
const LOOP_N: u64 = 200;
const N: u64 = 1_000;
/// raw_writer.py on its own clock: a SET every 15 ms, slower than the 10 ms round trip.
const CLOCK_N: u64 = 50;
const EVERY_US: u64 = 15_000;
/// How long pipescope may take to report.
const REPORT_LIMIT: Duration = Duration::from_secs(60);

/// One client's run, and what Redis and its syscalls say of it.
struct Run {
    label: &'static str,
    /// Its CLIENT SETNAME; raw_writer.py names none and is told by its SET count.
    name: Option<&'static str>,
    sets: u64,
    /// Redis's commandstats over the run: SETs, and every command received.
    redis_sets: u64,
    received: u64,
    seen: Syscalls,
}

/// The client's connection in `conns`: by its name, or (unnamed) by its SETs.
fn find<'a>(conns: &'a [ObservedConnection], run: &Run) -> &'a ObservedConnection {
    conns
        .iter()
        .find(|c| {
            c.name.as_deref() == run.name && (run.name.is_some() || calls(c, "SET") == run.sets)
        })
        .unwrap_or_else(|| panic!("no connection for {}: {conns:#?}", run.label))
}

/// A Markdown row of what `vantage` reported of `c`.
fn row(label: &str, vantage: &str, c: &ObservedConnection) -> String {
    let k = &c.counts;
    // The proxy's writes are its reads of the client; a capture's, TCP segments.
    let writes = if k.writes_are_segments {
        "segment"
    } else {
        "read"
    };
    format!(
        "| {label} | {vantage} | {} | {} | {} ({} unconfirmed) | {} | {} |",
        group(k.commands),
        count(k.writes, writes),
        count(k.round_trips, "round trip"),
        group(k.unconfirmed_trips),
        c.verdict.headline,
        breakdown(c)
    )
}

/// The parts of its wall time, as pipescope takes it apart: "of 2.1 s: 97 % at Redis …, …".
fn breakdown(c: &ObservedConnection) -> String {
    let shares: Vec<String> = parts(c)
        .iter()
        .map(|p| format!("{} % {}", p.percent, p.label))
        .collect();
    format!("of {}: {}", duration(c.times.wall_us), shares.join(", "))
}

/// The verdict's kinds the client's own syscalls allow, given the commands Redis received
/// from it: each command its own write followed by a wait is one at a time; a write per
/// command with fewer waits is a write per command; fewer writes than commands, batched
/// (pipelined or auto-pipelined: whether a later piece of a batch left while an earlier
/// piece's replies were on their way is timing that the client's syscalls do not show).
fn allowed(seen: Syscalls, received: u64) -> &'static [VerdictKind] {
    let Syscalls { writes, waits, .. } = seen;
    if writes == received && waits == writes {
        &[VerdictKind::OneAtATime]
    } else if writes >= received {
        &[VerdictKind::WritePerCommand]
    } else {
        &[VerdictKind::Pipelined, VerdictKind::AutoPipelined]
    }
}

#[test]
fn real_clients_across_a_real_network_through_the_proxy_from_a_capture_and_under_strace() {
    let Some(wire) = Wire::new(&[(DELAY_PORT, D_US)]) else {
        return;
    };
    let (Some(_), Some(_), Some(_), Some(_)) = (
        redis_py(),
        node("ioredis", "ioredis.js"),
        node("redis", "node_redis.js"),
        raw_writer(),
    ) else {
        return;
    };
    let Some(mut capture) = wire.capture(DELAY_PORT) else {
        return;
    };
    let mut observe = wire.observe(DELAY_PORT);
    let (host, port) = (wire.pair.client_addr.clone(), observe.port().to_string());

    // Each client's command: PORT NAME MODE N HOST (raw_writer.py: PORT MODE N EVERY_US HOST),
    // its program found above.
    let cmd = |make: &dyn Fn() -> Option<Command>, args: &[&str]| {
        let mut c = make().expect("found above");
        c.args(args);
        c
    };
    let (py, raw) = (&redis_py, &raw_writer);
    let io = &|| node("ioredis", "ioredis.js");
    let nr = &|| node("redis", "node_redis.js");
    let (loop_n, n, clock_n) = (LOOP_N.to_string(), N.to_string(), CLOCK_N.to_string());
    let every = EVERY_US.to_string();
    let clients: Vec<(&str, Option<&str>, u64, Command)> = vec![
        (
            "redis-py loop",
            Some("py-loop"),
            LOOP_N,
            cmd(py, &[&port, "py-loop", "loop", &loop_n, &host]),
        ),
        (
            "redis-py pipeline",
            Some("py-pipe"),
            N,
            cmd(py, &[&port, "py-pipe", "pipeline", &n, &host]),
        ),
        (
            "ioredis pipeline()",
            Some("io-pipe"),
            N,
            cmd(io, &[&port, "io-pipe", "pipeline", &n, &host]),
        ),
        (
            "node-redis one tick",
            Some("nr-tick"),
            N,
            cmd(nr, &[&port, "nr-tick", "tick", &n, &host]),
        ),
        (
            "raw_writer each",
            None,
            N,
            cmd(raw, &[&port, "each", &n, "0", &host]),
        ),
        (
            "raw_writer clock 15 ms",
            None,
            CLOCK_N,
            cmd(raw, &[&port, "clock", &clock_n, &every, &host]),
        ),
    ];
    let mut runs = Vec::new();
    for (label, name, sets, cmd) in clients {
        let before = wire.counted();
        let Some(seen) = syscalls(wire.pair.client.wrap(&cmd), observe.port()) else {
            return;
        };
        let after = wire.counted();
        runs.push(Run {
            label,
            name,
            sets,
            redis_sets: after.since(&before, "set"),
            // Less PINGs: every 10 s the observer measures its own hops with PINGs that
            // reach Redis, and a run can span one (none of these clients PINGs: one that
            // did would show in its own count, below).
            received: after.received_since(&before) - after.since(&before, "ping"),
            seen,
        });
    }
    let proxied = observe.report(REPORT_LIMIT);
    let captured = capture.observe(DELAY_PORT);

    eprintln!(
        "\nReal clients across a veth pair (relay holding {} ms each way), a run each, seen three ways at once:\n",
        D_US / 1000
    );
    eprintln!(
        "| client | vantage | commands | writes | round trips / waits | headline | breakdown |"
    );
    eprintln!("| --- | --- | --- | --- | --- | --- | --- |");
    for run in &runs {
        let (p, c) = (find(&proxied, run), find(&captured, run));
        eprintln!("{}", row(run.label, "proxy", p));
        eprintln!("{}", row(run.label, "capture", c));
        eprintln!(
            "| {} | strace | {} (Redis's commandstats) | {} | {} | — | — |",
            run.label,
            group(run.received),
            count(run.seen.writes, "write"),
            count(run.seen.waits, "wait")
        );
    }
    eprintln!();

    for run in &runs {
        let what = run.label;
        let (p, c) = (find(&proxied, run), find(&captured, run));
        // The commands are Redis's, and the same from both vantages.
        assert_eq!(run.redis_sets, run.sets, "{what}: SETs by commandstats");
        for (view, x) in [("proxy", p), ("capture", c)] {
            assert_eq!(
                calls(x, "SET"),
                run.sets,
                "{what} ({view}): {:?}",
                x.top_commands
            );
            assert_eq!(
                x.counts.commands, run.received,
                "{what} ({view}): commands, and what Redis received over the run"
            );
            assert_eq!(
                x.counts.replies, x.counts.commands,
                "{what} ({view}): {:?}",
                x.counts
            );
            // The client's waits lie within what each vantage says.
            assert_waits_within(&format!("{what} ({view})"), x, run.seen);
            // The kind the client's syscalls show, unless the wire cannot tell and says so.
            // Seen once in 7 runs here (2 cores, other work beside): the proxy, late to read,
            // took raw_writer's 1,000 sends in 2 reads and said "pipelined" unmarked. The
            // issue asks for a write per command "or undetermined" through the proxy: the
            // kernel's counts on its socket now show such reads merged the client's sends and
            // mark it (read_late.rs makes the proxy read late), and an unmarked "pipelined"
            // still fails here rather than being allowed.
            let mut kinds = allowed(run.seen, run.received).to_vec();
            // The capture is of the proxy's leg: what it sees sent are the proxy's writes, one
            // per read, so where the proxy read the client's sends merged it sees those (the
            // same run: 2 reads, then 5 segments to the relay, which no capture could mark).
            if view == "capture" && p.counts.writes < run.seen.writes {
                let proxy_sent = Syscalls {
                    writes: p.counts.writes,
                    ..run.seen
                };
                kinds.extend_from_slice(allowed(proxy_sent, run.received));
            }
            assert_right_or_undetermined(
                &format!(
                    "{what} ({view}): strace shows {:?} over {} commands",
                    run.seen, run.received
                ),
                x,
                &kinds,
            );
        }
        assert_eq!(p.top_commands, c.top_commands, "{what}: the same commands");
        // The proxy's reads may merge the client's writes; they split one into two only where
        // a piece of it on the wire ended on a command's end (seen once in a fresh clone's
        // run: ioredis's pipeline, 9 writes at the proxy for its 8 of ~6 KB across the veth).
        // So never more than the client's writes where each fits one segment, and never more
        // than the pieces they can arrive in.
        assert!(
            p.counts.writes <= run.seen.pieces_at_most,
            "{what}: the proxy saw {} writes, the client made {} (at most {} pieces on the wire)",
            p.counts.writes,
            run.seen.writes,
            run.seen.pieces_at_most
        );
        if p.verdict.kind != VerdictKind::Undetermined
            && c.verdict.kind != VerdictKind::Undetermined
        {
            assert_eq!(
                p.verdict.kind, c.verdict.kind,
                "{what}: proxy {} / capture {}",
                p.verdict.text, c.verdict.text
            );
        }
    }
}
