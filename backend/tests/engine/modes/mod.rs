//! Every mode × command against a real redis-server: what Redis executed (`INFO commandstats`
//! deltas) is exactly what the mode claims, the engine's write and wire-command counts agree
//! with it and with an outside count, values land as specified, and nothing is left behind.

use crate::support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pipescope::engine::{self, EngineError, RunContext, RunFailure, RunOutcome, keys};
use pipescope::local_redis::LocalRedis;
use pipescope::net::DelayProxy;
use pipescope::recorder::Progress;
use pipescope::target::RedisTarget;
use shared::{Command, Flush, Mode, RunSpec, Span};

mod cancel;
mod spans;
mod strace;

/// The commands a run may make Redis execute.
const COUNTED: [&str; 7] = ["set", "get", "incr", "mset", "mget", "multi", "exec"];

async fn run(target: &RedisTarget, run_id: u64, spec: RunSpec) -> Result<RunOutcome, RunFailure> {
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    engine::run(target, spec, ctx).await
}

async fn calls(target: &RedisTarget) -> HashMap<String, u64> {
    let all = support::command_calls(target).await;
    COUNTED
        .iter()
        .map(|c| (c.to_string(), all.get(*c).copied().unwrap_or(0)))
        .collect()
}

fn delta(before: &HashMap<String, u64>, after: &HashMap<String, u64>) -> HashMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before[k]))
        .filter(|(_, v)| *v > 0)
        .collect()
}

fn map(pairs: &[(&str, u64)]) -> HashMap<String, u64> {
    pairs
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
}

/// What Redis must execute for a run, worked out by hand from the mode's definition (not from
/// the engine): per batch, MULTI + the commands + EXEC; one MSET/MGET per batch; otherwise one
/// command per request. A GET run is seeded first with one SET per key (on another connection).
fn expected(spec: &RunSpec) -> (HashMap<String, u64>, u64) {
    let n = spec.count;
    let name = spec.command.name().to_lowercase();
    let seed = if spec.command == Command::Get { n } else { 0 };
    let (measured, wire): (Vec<(&str, u64)>, u64) = match spec.mode {
        Mode::Transaction { batch } => {
            let b = n.div_ceil(batch as u64);
            (vec![("multi", b), ("exec", b), (&name, n)], n + 2 * b)
        }
        Mode::Mset { batch } => {
            let b = n.div_ceil(batch as u64);
            let multi = if spec.command == Command::Set {
                "mset"
            } else {
                "mget"
            };
            (vec![(multi, b)], b)
        }
        _ => (vec![(&name, n)], n),
    };
    let mut want = map(&measured);
    if seed > 0 {
        *want.entry("set".into()).or_default() += seed;
    }
    (want, wire)
}

fn modes() -> Vec<Mode> {
    vec![
        Mode::Sequential,
        Mode::pipelined(10),
        Mode::Pipelined {
            batch: 10,
            flush: Flush::EachCommand,
        },
        Mode::Pipelined {
            batch: 10,
            flush: Flush::Buffered { commands: 3 },
        },
        Mode::Multiplexed { in_flight: 8 },
        Mode::Transaction { batch: 10 },
        Mode::Mset { batch: 10 },
        Mode::Connections { connections: 4 },
    ]
}

async fn get(target: &RedisTarget, cmd: &str, key: &str) -> redis::Value {
    redis::cmd(cmd)
        .arg(key)
        .query_async(&mut support::admin(target).await)
        .await
        .unwrap()
}

/// Runs `spec`, checks everything that can be checked exactly, then what `check` wants to see
/// in Redis before cleanup, then that cleanup leaves nothing.
async fn check_run<F, Fut>(target: &RedisTarget, run_id: u64, spec: RunSpec, check: F) -> RunOutcome
where
    F: FnOnce(RedisTarget, String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let label = format!("{} {}", spec.command.name(), spec.mode.label());
    let before = calls(target).await;
    let outcome = run(target, run_id, spec)
        .await
        .unwrap_or_else(|f| panic!("{label}: {}", f.error));
    let after = calls(target).await;
    let s = &outcome.summary;
    let (want, wire) = expected(&spec);
    assert_eq!(delta(&before, &after), want, "{label}: commandstats");
    assert_eq!(s.wire_commands, wire, "{label}: wire commands");
    assert_eq!(s.done, spec.count, "{label}: done");
    assert_eq!(outcome.written, spec.count, "{label}: keys written");
    match spec.mode.writes(spec.count) {
        // Every write here is small (well under a socket buffer), so one write call each.
        Some(writes) => assert_eq!(s.writes, writes, "{label}: writes"),
        // Multiplexed: at least one write per window's worth, at most one per command.
        None => {
            let window = spec.mode.batch() as u64;
            assert!(
                (spec.count.div_ceil(window)..=spec.count).contains(&s.writes),
                "{label}: {} writes",
                s.writes
            );
            assert!(s.round_trips >= spec.count.div_ceil(window), "{label}");
        }
    }
    if !matches!(spec.mode, Mode::Multiplexed { .. }) {
        assert_eq!(
            s.round_trips,
            spec.mode.round_trips(spec.count),
            "{label}: round trips"
        );
    }
    check(target.clone(), label.clone()).await;
    keys::remove_run_keys(target, run_id, outcome.written)
        .await
        .unwrap();
    assert!(
        support::pipescope_keys(target).await.is_empty(),
        "{label}: keys left behind"
    );
    outcome
}

#[tokio::test]
async fn set_in_every_mode_executes_exactly_what_the_mode_claims() {
    let (_redis, target) = support::redis();
    for (k, mode) in modes().into_iter().enumerate() {
        let run_id = 100 + k as u64;
        let spec = RunSpec::set(95, mode);
        check_run(&target, run_id, spec, |t, label| async move {
            for i in [0u64, 42, 94] {
                let v = get(&t, "GET", &format!("pipescope:{run_id}:k{i}")).await;
                assert_eq!(
                    v,
                    redis::Value::BulkString(format!("v{i}").into()),
                    "{label}"
                );
            }
        })
        .await;
    }
}

#[tokio::test]
async fn set_with_a_value_size_writes_values_of_that_size() {
    let (_redis, target) = support::redis();
    for (k, mode) in modes().into_iter().enumerate() {
        let run_id = 200 + k as u64;
        let spec = RunSpec {
            value_bytes: Some(100),
            ..RunSpec::set(95, mode)
        };
        check_run(&target, run_id, spec, |t, label| async move {
            for i in [0u64, 94] {
                let len = get(&t, "STRLEN", &format!("pipescope:{run_id}:k{i}")).await;
                assert_eq!(len, redis::Value::Int(100), "{label}");
            }
        })
        .await;
    }
}

#[tokio::test]
async fn get_reads_seeded_keys_in_every_mode() {
    let (_redis, target) = support::redis();
    for (k, mode) in modes().into_iter().enumerate() {
        let run_id = 300 + k as u64;
        let spec = RunSpec {
            command: Command::Get,
            value_bytes: Some(64),
            ..RunSpec::set(95, mode)
        };
        check_run(&target, run_id, spec, |t, label| async move {
            // Seeded with the run's value size.
            let len = get(&t, "STRLEN", &format!("pipescope:{run_id}:k94")).await;
            assert_eq!(len, redis::Value::Int(64), "{label}");
        })
        .await;
    }
}

#[tokio::test]
async fn incr_counts_once_per_key_in_every_mode_but_mset() {
    let (_redis, target) = support::redis();
    let modes = modes()
        .into_iter()
        .filter(|m| !matches!(m, Mode::Mset { .. }));
    for (k, mode) in modes.enumerate() {
        let run_id = 400 + k as u64;
        let spec = RunSpec {
            command: Command::Incr,
            ..RunSpec::set(95, mode)
        };
        check_run(&target, run_id, spec, |t, label| async move {
            for i in [0u64, 50, 94] {
                let v = get(&t, "GET", &format!("pipescope:{run_id}:k{i}")).await;
                assert_eq!(v, redis::Value::BulkString(b"1".to_vec()), "{label}");
            }
        })
        .await;
    }
    // INCR has no one-command-many-keys form: refused, nothing sent.
    let spec = RunSpec {
        command: Command::Incr,
        ..RunSpec::set(10, Mode::Mset { batch: 5 })
    };
    let failure = run(&target, 499, spec).await.unwrap_err();
    assert!(matches!(failure.error, EngineError::NoMultiKey("INCR")));
    assert_eq!((failure.written, failure.partial.wire_commands), (0, 0));
}

#[tokio::test]
async fn big_values_and_big_batches_still_land_exactly() {
    // Batches far larger than a socket buffer: writes may be split, replies come in pieces.
    let (_redis, target) = support::redis();
    let cases = [
        (Command::Set, Mode::pipelined(1000), Some(20_000)),
        (Command::Set, Mode::Transaction { batch: 500 }, Some(20_000)),
        (Command::Get, Mode::Mset { batch: 1000 }, Some(20_000)),
        (Command::Set, Mode::Multiplexed { in_flight: 300 }, None),
        (Command::Incr, Mode::pipelined(20_000), None),
    ];
    for (k, (command, mode, value_bytes)) in cases.into_iter().enumerate() {
        let run_id = 500 + k as u64;
        let spec = RunSpec {
            command,
            value_bytes,
            ..RunSpec::set(3_001, mode)
        };
        let label = format!("{} {}", command.name(), mode.label());
        let before = calls(&target).await;
        let outcome = run(&target, run_id, spec)
            .await
            .unwrap_or_else(|f| panic!("{label}: {}", f.error));
        let (want, wire) = expected(&spec);
        assert_eq!(delta(&before, &calls(&target).await), want, "{label}");
        assert_eq!(outcome.summary.wire_commands, wire, "{label}");
        assert_eq!(outcome.summary.done, 3_001, "{label}");
        // A big write may take several calls, never fewer than the mode's.
        if let Some(writes) = mode.writes(3_001) {
            assert!(outcome.summary.writes >= writes, "{label}");
        }
        if let Some(bytes) = value_bytes {
            let len = get(&target, "STRLEN", &format!("pipescope:{run_id}:k3000")).await;
            assert_eq!(len, redis::Value::Int(bytes as i64), "{label}");
        }
        keys::remove_run_keys(&target, run_id, outcome.written)
            .await
            .unwrap();
        assert!(support::pipescope_keys(&target).await.is_empty(), "{label}");
    }
}

/// The engine's own write count, checked against the latency proxy's count of what it read
/// from the engine (`chunks_out`). Exact, not statistical: in these modes the engine writes
/// and then waits for every reply before writing again, so the proxy can never find two
/// writes' bytes waiting together (CLIENT ID before the run waits for its reply too); and
/// each write is one small segment on loopback, which the
/// proxy's 64 KiB read takes whole. So reads at the proxy == writes at the engine. (Flush
/// each command and multiplexed runs write without waiting, so there the proxy may merge
/// writes: not an exact check, and not made.) GET's seeding goes straight to Redis, so the
/// proxy sees only measured commands, as its wire tap must.
#[tokio::test]
async fn write_counts_match_what_the_proxy_reads() {
    let (_redis, target) = support::redis();
    let cases = [
        (Command::Set, Mode::Sequential, 200u64),
        (Command::Get, Mode::Sequential, 150),
        (Command::Set, Mode::pipelined(10), 95),
        (Command::Incr, Mode::Transaction { batch: 10 }, 95),
        (Command::Get, Mode::Mset { batch: 10 }, 95),
    ];
    for (k, (command, mode, count)) in cases.into_iter().enumerate() {
        let run_id = 600 + k as u64;
        let proxy = DelayProxy::raw(
            target.socket_addr().await.unwrap(),
            shared::Network::LOOPBACK,
        )
        .unwrap();
        let routed = target.through(proxy.addr());
        let spec = RunSpec {
            command,
            ..RunSpec::set(count, mode)
        };
        let outcome = run(&routed, run_id, spec).await.unwrap();
        let label = format!("{} {}", command.name(), mode.label());
        let s = &outcome.summary;
        assert_eq!(Some(s.writes), mode.writes(count), "{label}");
        // The proxy counts a chunk once it has handed it to Redis, so Redis's last reply (and
        // the run's end) can come a moment before the count: wait until it has settled.
        let tap = proxy
            .last_tap()
            .unwrap()
            .settle(Duration::from_secs(5))
            .await;
        // Before its first command the engine asks CLIENT ID, one write of one command.
        let before = routed.commands_before_run() as u64;
        assert_eq!(before, 1, "no AUTH or SELECT here, only CLIENT ID");
        assert_eq!(
            proxy.stats().chunks_out.load(Ordering::Relaxed),
            s.writes + before,
            "{label}: the proxy read what the engine wrote"
        );
        assert_eq!(
            tap.commands,
            s.wire_commands + before,
            "{label}: the tap saw only measured commands and CLIENT ID"
        );
        keys::remove_run_keys(&target, run_id, outcome.written)
            .await
            .unwrap();
    }
    assert!(support::pipescope_keys(&target).await.is_empty());
}

#[tokio::test]
async fn a_discarded_transaction_fails_the_run_with_redis_s_reason() {
    // SET renamed away: it is refused while queuing, so Redis discards the transaction.
    let redis = LocalRedis::start_with_args(&["--rename-command", "SET", ""]).unwrap();
    let target = RedisTarget::parse(&redis.url()).unwrap();
    let failure = run(
        &target,
        800,
        RunSpec::set(30, Mode::Transaction { batch: 10 }),
    )
    .await
    .unwrap_err();
    let message = failure.error.to_string();
    assert!(
        matches!(
            failure.error,
            EngineError::Transaction {
                first: 0,
                last: 9,
                ..
            }
        ),
        "{message}"
    );
    assert!(message.contains("EXECABORT"), "{message}");
    assert!(message.contains("request 0 was refused"), "{message}");
    assert!(message.contains("unknown command"), "{message}");
    assert_eq!(failure.partial.done, 0);
    assert!(support::pipescope_keys(&target).await.is_empty());
}

#[tokio::test]
async fn a_command_failing_inside_exec_fails_the_run() {
    let (_redis, target) = support::redis();
    // Key 3 of the run holds text, so its INCR fails when EXEC runs it.
    let _: () = redis::cmd("SET")
        .arg("pipescope:801:k3")
        .arg("not a number")
        .query_async(&mut support::admin(&target).await)
        .await
        .unwrap();
    let spec = RunSpec {
        command: Command::Incr,
        ..RunSpec::set(30, Mode::Transaction { batch: 10 })
    };
    let failure = run(&target, 801, spec).await.unwrap_err();
    let message = failure.error.to_string();
    assert!(
        matches!(failure.error, EngineError::Refused { index: 3, .. }),
        "{message}"
    );
    assert!(message.contains("not an integer"), "{message}");
    keys::remove_run_keys(&target, 801, failure.written)
        .await
        .unwrap();
    assert!(support::pipescope_keys(&target).await.is_empty());
}

/// A pool of C connections through the delay line: exactly C connections reach Redis (the
/// proxy's taps, and Redis's own count of accepted connections), each carries exactly its
/// share one command at a time, every key is written once, and the timeline stays within the
/// span budget, in order, with each request stamped from its own connection's tap.
#[tokio::test]
async fn a_pool_opens_c_connections_each_sending_its_share_one_at_a_time() {
    let (_redis, target) = support::redis();
    let (c, n) = (8u32, 50_000u64);
    let mode = Mode::Connections { connections: c };
    let proxy = DelayProxy::raw(
        target.socket_addr().await.unwrap(),
        shared::Network::LOOPBACK,
    )
    .unwrap();
    let routed = pipescope::net::Route {
        target: target.through(proxy.addr()),
        proxy: Some(Arc::new(proxy)),
        masters: Vec::new(),
    };
    let run_id = 1_100;
    let spec = RunSpec::set(n, mode);
    // As `Route::run` does: the pool's taps share one connection's stamp budget.
    routed.proxy.as_ref().unwrap().expect_run(c);
    let before = calls(&target).await;
    let dbsize_before = support::dbsize(&target).await;
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    // Keys are checked before cleanup: run the engine, then Redis's counters by hand.
    let outcome = run(&routed.target, run_id, spec).await.unwrap();
    let s = &outcome.summary;
    assert_eq!(delta(&before, &calls(&target).await), map(&[("set", n)]));
    assert_eq!(
        support::dbsize(&target).await - dbsize_before,
        n,
        "every key once"
    );
    for i in [0u64, 1, 7, 8, 12_345, n - 1] {
        let v = get(&target, "GET", &format!("pipescope:{run_id}:k{i}")).await;
        assert_eq!(v, redis::Value::BulkString(format!("v{i}").into()));
    }
    assert_eq!((s.done, s.round_trips, s.writes), (n, n, n));
    assert_eq!(outcome.written, n);

    // Exactly C connections crossed the proxy, each with its share (requests k, k + C, …),
    // and each write was one command answered before the next (one chunk per command).
    let proxy = routed.proxy.as_ref().unwrap();
    let taps = proxy.last_taps(c as usize).expect("C connections");
    assert!(
        proxy.last_taps(c as usize + 1).is_none(),
        "more than C connections"
    );
    for (k, tap) in taps.iter().enumerate() {
        let log = tap.settle(Duration::from_secs(5)).await;
        let share = (n - k as u64).div_ceil(c as u64);
        assert_eq!(
            (log.commands, log.replies),
            (share, share),
            "connection {k}"
        );
        let kept = pipescope::net::stamps_per_tap(c).min(share as usize);
        assert_eq!(log.at_server.len(), kept, "connection {k}");
    }
    assert_eq!(proxy.stats().chunks_out.load(Ordering::Relaxed), n);

    // One at a time per connection, at the engine: each request of a connection is issued
    // only after the connection's previous reply.
    let t = &outcome.timeline;
    assert_eq!(t.first.len() as u64, pipescope::spans::FULL_SPANS);
    assert!(t.first.iter().enumerate().all(|(k, s)| s.i == k as u64));
    assert!(t.sampled.len() < pipescope::spans::MAX_SAMPLED && t.stride > 1);
    assert!(t.sampled.windows(2).all(|w| w[1].i == w[0].i + t.stride));
    for w in t.first.windows(c as usize + 1) {
        let (prev, next) = (w[0], w[c as usize]);
        assert_eq!(mode.connection_of(prev.i), mode.connection_of(next.i));
        assert!(next.issued_us >= prev.replied_us, "{prev:?} then {next:?}");
    }
    // The taps' stamps land on each request from its own connection: never before it was
    // issued, never after its reply.
    let mut timeline = outcome.timeline.clone();
    let split = routed
        .stamp(&spec, outcome.started, &mut timeline)
        .await
        .expect("stamped");
    // Every request held in full is stamped (below); of the sample beyond them, those within
    // their connection's budget.
    assert!(split.samples >= pipescope::spans::FULL_SPANS, "{split:?}");
    for s in &timeline.first {
        let (a, f) = (s.at_server_us.unwrap(), s.from_server_us.unwrap());
        assert!(s.issued_us <= a && a <= f && f <= s.replied_us, "{s:?}");
    }
    keys::remove_run_keys(&target, run_id, outcome.written)
        .await
        .unwrap();
    assert!(support::pipescope_keys(&target).await.is_empty());

    // Redis's own count: a run with its counters read around it accepts exactly C
    // connections, and its CPU per command is Redis's CPU time over the commands.
    let outcome = engine::run_and_clean_up(&routed.target, spec, ctx)
        .await
        .unwrap();
    let load = outcome.summary.redis_load.expect("INFO cpu and stats");
    assert_eq!(load.connections_received, c as u64);
    assert!(load.cpu_us > 0.0);
    assert_eq!(load.cpu_us_per_command, load.cpu_us / n as f64);
    assert!(support::pipescope_keys(&target).await.is_empty());
}
