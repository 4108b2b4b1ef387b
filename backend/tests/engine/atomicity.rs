//! Atomicity, measured against a real redis-server: while a run INCRs one shared counter, the
//! other client INCRs it too, and the counter values Redis replied say where its commands
//! landed. A pipeline's commands interleave with the other client's; a MULTI/EXEC batch's
//! never do. Both sides' INCRs all count: the counter ends at their sum.
//!
//! The other client connects straight to Redis while the run may go through the delay line.
//! That gives it more turns (its round trips are shorter), not different rules: Redis decides
//! what may run between a batch's commands, and a MULTI/EXEC shuts everyone out whatever the
//! timing.

use crate::support;

use pipescope::engine::{self, RunContext};
use pipescope::net::DelayProxy;
use pipescope::target::RedisTarget;
use shared::interleave::Interleaving;
use shared::{Mode, Network, RunSpec};

/// Runs `count` shared-counter INCRs in `mode` with the other client, its keys then removed,
/// and returns what it measured, checked for what holds in every mode.
async fn measured(target: &RedisTarget, run_id: u64, count: u64, mode: Mode) -> Interleaving {
    let spec = RunSpec::with_other_client(count, mode);
    spec.validate(&shared::Limits::DEFAULT).unwrap();
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    let outcome = engine::run_and_clean_up(target, spec, ctx).await.unwrap();
    let s = outcome.summary;
    assert_eq!(s.done, count);
    let i = s
        .interleaving
        .expect("a run with the other client reports where it landed");
    println!(
        "{}: {}",
        mode.label(),
        i.sentence("batches", |n| n.to_string())
    );
    assert_eq!(i.batches, mode.round_trips(count));
    assert!(
        i.other_commands > 0,
        "the other client got no INCR in during the run"
    );
    assert_eq!(
        i.final_value,
        Some(count + i.other_commands),
        "every INCR of both sides counted, none lost"
    );
    // The other client's own replies say the same as the run's gaps: every one of its kept
    // INCRs inside a kept batch is one the run's values skipped.
    if i.first_batches.len() as u64 == i.batches && (i.other_first.len() as u64) == i.other_commands
    {
        let inside = i
            .other_first
            .iter()
            .filter(|o| i.batch_holding(o.value).is_some())
            .count() as u64;
        assert_eq!(inside, i.other_inside, "the two sides' replies disagree");
    }
    assert!(
        support::pipescope_keys(target).await.is_empty(),
        "the counter is removed with the run's keys"
    );
    i
}

#[tokio::test]
async fn a_pipeline_interleaves_and_a_transaction_does_not() {
    let (_redis, target) = support::redis();
    // Batches of 10,000 INCRs (about 420 KB each): Redis reads a client's requests 16 KB at a
    // time and serves the other client between reads.
    let pipelined = measured(&target, 1, 100_000, Mode::pipelined(10_000)).await;
    assert!(
        pipelined.batches_interleaved >= 1 && pipelined.other_inside >= 1,
        "no INCR of the other client landed inside any pipeline: {pipelined:?}"
    );
    let transaction = measured(&target, 2, 100_000, Mode::Transaction { batch: 10_000 }).await;
    assert_eq!(transaction.other_inside, 0, "{transaction:?}");
    assert_eq!(transaction.batches_interleaved, 0);
    for b in &transaction.first_batches {
        assert_eq!(
            b.last - b.first + 1,
            b.n,
            "a MULTI/EXEC's values are consecutive"
        );
    }
}

#[tokio::test]
async fn through_the_delay_line_the_result_is_the_same() {
    let (_redis, target) = support::redis();
    let proxy =
        DelayProxy::raw(target.socket_addr().await.unwrap(), Network::symmetric(500)).unwrap();
    let routed = target.through(proxy.addr());
    let pipelined = measured(&routed, 3, 50_000, Mode::pipelined(1_000)).await;
    assert!(
        pipelined.other_inside >= 1,
        "no INCR of the other client landed inside any pipeline: {pipelined:?}"
    );
    let transaction = measured(&routed, 4, 20_000, Mode::Transaction { batch: 1_000 }).await;
    assert_eq!(transaction.other_inside, 0, "{transaction:?}");
}

/// `bench --other-client` prints the measured result under each run's row.
#[test]
fn bench_prints_where_the_other_clients_incrs_landed() {
    let (redis, _target) = support::redis();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .env_remove("REDIS_URL")
        .args([
            "bench",
            "--redis-url",
            &redis.url(),
            "--mode",
            "transaction",
            "--batch",
            "1000",
            "--count",
            "20000",
            "--other-client",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("the other client's"))
        .unwrap_or_else(|| panic!("no atomicity line in:\n{stdout}"));
    // "the other client's N INCRs: 0 landed inside the run's 20 transactions (none
    // interleaved); counter ended at M (measured: …)", with M = 20,000 + N.
    let number_after = |word: &str| -> u64 {
        let rest = &line[line.find(word).unwrap() + word.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .find(|s| !s.is_empty())
            .unwrap()
            .parse()
            .unwrap()
    };
    let other = number_after("the other client's ");
    assert!(other > 0, "{line}");
    assert!(
        line.contains(": 0 landed inside the run's 20 transactions"),
        "{line}"
    );
    assert_eq!(number_after("counter ended at "), 20_000 + other, "{line}");
    assert!(
        line.contains("measured: INCR replies give Redis's order"),
        "{line}"
    );
}
