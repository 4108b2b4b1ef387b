//! Redis's memory for a run's own connection, sampled while it is in flight
//! (`engine::client_memory`: `CLIENT LIST ID` and `INFO memory` polled on a second
//! connection), against a real redis-server.

use crate::support;

use pipescope::engine::{self, RunContext, keys};
use pipescope::target::RedisTarget;
use shared::{Command, Mode, RedisMemory, RunSpec, RunSummary};

async fn run(target: &RedisTarget, run_id: u64, command: Command, batch: u32) -> RunSummary {
    let spec = RunSpec {
        command,
        value_bytes: Some(1024),
        ..RunSpec::set(100_000, Mode::pipelined(batch))
    };
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    let outcome = engine::run(target, spec, ctx)
        .await
        .expect("the run finishes");
    keys::remove_run_keys(target, run_id, outcome.written)
        .await
        .unwrap();
    let s = outcome.summary;
    println!(
        "{command:?} batch {batch}: {:?}, p99 {:.0} µs",
        s.redis_memory, s.latency.p99_us
    );
    s
}

fn memory(s: &RunSummary) -> RedisMemory {
    let m = s.redis_memory.expect("Redis's memory was sampled");
    assert!(m.samples >= 1 && m.interval_us > 0, "{m:?}");
    assert!(m.client_tot_mem_peak > 0, "{m:?}");
    assert!(m.used_memory_peak >= m.used_memory_before, "{m:?}");
    m
}

/// A batch of 100,000 GETs of 1 KB values makes Redis hold most of the batch's replies for the
/// connection (it executes a whole read of requests at once but writes at most 64 KB of replies
/// per event loop turn), so its output buffer grows with the batch; a batch of 10 never queues.
/// The same batch of SETs costs Redis little: their replies are 5 bytes each, and requests wait
/// in the socket, not in Redis, until Redis reads them (16 KB at a time).
#[tokio::test]
async fn a_big_batch_of_reads_makes_redis_hold_its_replies() {
    let (_redis, target) = support::redis();
    let small = run(&target, 1, Command::Get, 10).await;
    let big = run(&target, 2, Command::Get, 100_000).await;
    let set = run(&target, 3, Command::Set, 100_000).await;
    let (small_m, big_m, set_m) = (memory(&small), memory(&big), memory(&set));
    assert!(
        big_m.client_tot_mem_peak > 10 * small_m.client_tot_mem_peak,
        "batch 100,000: {big_m:?}; batch 10: {small_m:?}"
    );
    assert!(
        big_m.client_omem_peak > 1_000_000,
        "replies waited in the output list: {big_m:?}"
    );
    assert_eq!(small_m.client_omem_peak, 0, "{small_m:?}");
    assert!(
        set_m.client_tot_mem_peak * 10 < big_m.client_tot_mem_peak,
        "SETs: {set_m:?}; GETs: {big_m:?}"
    );
    for s in [&small, &big, &set] {
        let l = s.latency;
        assert!(l.p99_us > 0.0 && l.p99_us <= l.max_us, "{l:?}");
    }
}

/// A run that is not instrumented is not sampled either, and a summary from before the field
/// existed still parses.
#[tokio::test]
async fn uninstrumented_runs_are_not_sampled() {
    let (_redis, target) = support::redis();
    let mut ctx = RunContext::new(4, Default::default(), Default::default());
    ctx.instrument = false;
    let spec = RunSpec::set(1_000, Mode::pipelined(100));
    let outcome = engine::run(&target, spec, ctx).await.unwrap();
    keys::remove_run_keys(&target, 4, outcome.written)
        .await
        .unwrap();
    assert_eq!(outcome.summary.redis_memory, None);
    let mut json = serde_json::to_value(&outcome.summary).unwrap();
    json.as_object_mut().unwrap().remove("redis_memory");
    let old: RunSummary = serde_json::from_value(json).unwrap();
    assert_eq!(old.redis_memory, None);
}
