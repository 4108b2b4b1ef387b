//! The engine against a real redis-server: what it claims to send is what Redis executed, its
//! keys go away, and pipelining beats one-at-a-time on the same work.

use crate::support;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use pipescope::engine::{self, EngineError, RunContext, RunFailure, RunOutcome, keys};
use pipescope::local_redis::LocalRedis;
use pipescope::recorder::Progress;
use pipescope::target::RedisTarget;
use shared::{Mode, RunSpec, Wait};

fn spec(count: u64, mode: Mode) -> RunSpec {
    RunSpec::set(count, mode)
}

async fn run(target: &RedisTarget, run_id: u64, spec: RunSpec) -> Result<RunOutcome, RunFailure> {
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    engine::run(target, spec, ctx).await
}

#[tokio::test]
async fn sequential_sets_land_exactly_and_are_removed() {
    let (_redis, target) = support::redis();
    let n = 3_001;
    let outcome = run(&target, 1, spec(n, Mode::Sequential)).await.unwrap();
    assert_eq!(outcome.summary.done, n);
    assert_eq!(outcome.written, n);
    assert_eq!(outcome.summary.round_trips, n);
    assert_eq!(support::command_calls(&target).await["set"], n);
    assert_eq!(support::dbsize(&target).await, n);
    let v: String = redis::cmd("GET")
        .arg("pipescope:1:k42")
        .query_async(&mut support::admin(&target).await)
        .await
        .unwrap();
    assert_eq!(v, "v42");

    let removed = keys::remove_run_keys(&target, 1, outcome.written)
        .await
        .unwrap();
    assert_eq!(removed, n);
    assert!(support::pipescope_keys(&target).await.is_empty());
    assert_eq!(support::dbsize(&target).await, 0);
}

#[tokio::test]
async fn pipelined_sets_land_exactly_with_one_round_trip_per_batch() {
    let (_redis, target) = support::redis();
    let n = 10_007; // not a multiple of the batch: the last batch is short
    let outcome = run(&target, 2, spec(n, Mode::pipelined(128)))
        .await
        .unwrap();
    assert_eq!(outcome.summary.done, n);
    assert_eq!(outcome.summary.round_trips, n.div_ceil(128));
    assert_eq!(support::command_calls(&target).await["set"], n);
    assert_eq!(support::dbsize(&target).await, n);
    let latency = outcome.summary.latency;
    assert!(
        latency.p50_us > 0.0
            && latency.p50_us <= latency.p99_us
            && latency.p99_us <= latency.max_us,
        "{latency:?}"
    );

    keys::remove_run_keys(&target, 2, outcome.written)
        .await
        .unwrap();
    assert!(support::pipescope_keys(&target).await.is_empty());
}

#[tokio::test]
async fn a_batch_larger_than_the_count_is_one_round_trip() {
    let (_redis, target) = support::redis();
    let outcome = run(&target, 3, spec(500, Mode::pipelined(100_000)))
        .await
        .unwrap();
    assert_eq!(outcome.summary.round_trips, 1);
    assert_eq!(support::command_calls(&target).await["set"], 500);
    keys::remove_run_keys(&target, 3, outcome.written)
        .await
        .unwrap();
    assert_eq!(support::dbsize(&target).await, 0);
}

#[tokio::test]
async fn pipelined_is_faster_than_sequential_on_the_same_work() {
    let (_redis, target) = support::redis();
    let n = 20_000;
    // Alternate S P S P and compare medians-of-two, so one noisy moment cannot decide it.
    let mut seq = Vec::new();
    let mut pipe = Vec::new();
    for round in 0..2u64 {
        let s = run(&target, 10 + round, spec(n, Mode::Sequential))
            .await
            .unwrap();
        keys::remove_run_keys(&target, 10 + round, s.written)
            .await
            .unwrap();
        let p = run(&target, 20 + round, spec(n, Mode::pipelined(1000)))
            .await
            .unwrap();
        keys::remove_run_keys(&target, 20 + round, p.written)
            .await
            .unwrap();
        seq.push(s.summary.ops_per_sec);
        pipe.push(p.summary.ops_per_sec);
    }
    let ratio = (pipe[0] + pipe[1]) / (seq[0] + seq[1]);
    println!("pipelined/sequential throughput ratio: {ratio:.1} (seq {seq:?}, pipe {pipe:?})");
    assert!(
        ratio > 1.0,
        "pipelined should beat sequential: ratio {ratio}"
    );
    assert!(support::pipescope_keys(&target).await.is_empty());
}

#[tokio::test]
async fn cancel_stops_at_a_batch_boundary_and_cleanup_still_works() {
    let (_redis, target) = support::redis();
    let progress = std::sync::Arc::new(Progress::default());
    let cancel = std::sync::Arc::new(AtomicBool::new(false));
    let mut task = {
        let (target, progress, cancel) = (target.clone(), progress.clone(), cancel.clone());
        tokio::spawn(async move {
            let ctx = RunContext::new(4, progress, cancel);
            engine::run(&target, spec(5_000_000, Mode::pipelined(100)), ctx).await
        })
    };
    support::until_progress(&progress, 1_000, Duration::from_secs(60), &mut task).await;
    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    let failure = support::within(Duration::from_secs(30), "the cancelled run ends", task)
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(failure.error, EngineError::Cancelled),
        "{:?}",
        failure.error
    );
    assert!(failure.partial.done >= 1_000 && failure.partial.done < 5_000_000);
    assert_eq!(failure.partial.done % 100, 0, "stops only between batches");
    assert_eq!(
        support::command_calls(&target).await["set"],
        failure.written
    );
    keys::remove_run_keys(&target, 4, failure.written)
        .await
        .unwrap();
    assert!(support::pipescope_keys(&target).await.is_empty());
}

#[tokio::test]
async fn password_and_db_index_in_the_url_are_used() {
    let redis = LocalRedis::start_with_args(&["--requirepass", "s3cret"]).unwrap();
    let url = format!("redis://:s3cret@127.0.0.1:{}/3", redis.port());
    let target = RedisTarget::parse(&url).unwrap();
    let outcome = run(&target, 5, spec(100, Mode::pipelined(10)))
        .await
        .unwrap();
    assert_eq!(outcome.summary.done, 100);
    // The keys landed in db 3, not db 0.
    let in_db = |db: u32| {
        let url = format!("redis://:s3cret@127.0.0.1:{}/{db}", redis.port());
        async move { support::dbsize(&RedisTarget::parse(&url).unwrap()).await }
    };
    assert_eq!(in_db(3).await, 100);
    assert_eq!(in_db(0).await, 0);
    keys::remove_run_keys(&target, 5, outcome.written)
        .await
        .unwrap();
    assert_eq!(in_db(3).await, 0);

    let wrong = RedisTarget::parse(&format!("redis://:nope@127.0.0.1:{}/3", redis.port())).unwrap();
    let failure = run(&wrong, 6, spec(10, Mode::Sequential))
        .await
        .unwrap_err();
    let message = failure.error.to_string();
    assert!(message.contains("refused the password"), "{message}");
    assert!(
        !message.contains("nope"),
        "the password must not appear: {message}"
    );
}

#[tokio::test]
async fn an_unreachable_redis_is_a_clear_error() {
    let port = pipescope::local_redis::free_port().unwrap();
    let target = RedisTarget::parse(&format!("redis://127.0.0.1:{port}/")).unwrap();
    let failure = run(&target, 7, spec(10, Mode::Sequential))
        .await
        .unwrap_err();
    let message = failure.error.to_string();
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(message.contains("cannot reach Redis"), "{message}");
    assert_eq!(failure.written, 0);
}

/// Starts `spec` (long enough to be running), stops Redis after its 100th reply, and checks
/// the run fails with a closed connection, not the 10 s response timeout: a closed
/// connection is noticed at once.
async fn fails_promptly_when_redis_dies(run_id: u64, spec: RunSpec) {
    let (mut redis, target) = support::redis();
    let progress = std::sync::Arc::new(Progress::default());
    let mut task = {
        let (target, progress) = (target.clone(), progress.clone());
        tokio::spawn(async move {
            let ctx = RunContext::new(run_id, progress, Default::default());
            engine::run(&target, spec, ctx).await
        })
    };
    support::until_progress(&progress, 100, Duration::from_secs(60), &mut task).await;
    redis.stop();
    // A hang guard only: "promptly" is the cause below, a closed connection rather than the
    // response timeout (which a clock on a shared machine could not tell apart).
    let failure = support::within(
        Duration::from_secs(60),
        "the run ends once Redis dies",
        task,
    )
    .await
    .unwrap()
    .unwrap_err();
    assert!(
        matches!(failure.error, EngineError::Closed(_) | EngineError::Io(_)),
        "{:?}",
        failure.error
    );
    assert!(failure.partial.done >= 100);
}

#[tokio::test]
async fn redis_dying_mid_run_fails_the_run_promptly() {
    fails_promptly_when_redis_dies(8, spec(5_000_000, Mode::Sequential)).await;
}

/// Keys that are not ours, some of them close to our naming.
const UNRELATED: [&str; 7] = [
    "app:user:1",
    "app:h",
    "app:l",
    "app:s",
    "app:z",
    "pipescope-notours",
    "pipescope:notanid:k1",
];

#[tokio::test]
async fn leftovers_of_crashed_runs_are_swept_and_nothing_else_is_touched() {
    let (_redis, target) = support::redis();
    let mut con = support::admin(&target).await;
    // Unrelated data of several types, and keys an earlier crashed run left behind.
    let _: () = redis::pipe()
        .cmd("SET")
        .arg("app:user:1")
        .arg("alice")
        .ignore()
        .cmd("HSET")
        .arg("app:h")
        .arg("f")
        .arg("v")
        .ignore()
        .cmd("RPUSH")
        .arg("app:l")
        .arg("a")
        .arg("b")
        .ignore()
        .cmd("SADD")
        .arg("app:s")
        .arg("x")
        .ignore()
        .cmd("ZADD")
        .arg("app:z")
        .arg(1)
        .arg("m")
        .ignore()
        .cmd("SET")
        .arg("pipescope-notours")
        .arg("keep")
        .ignore()
        .cmd("SET")
        .arg("pipescope:notanid:k1")
        .arg("keep")
        .ignore()
        .cmd("SET")
        .arg("pipescope:12345:k0")
        .arg("v0")
        .ignore()
        .cmd("SET")
        .arg("pipescope:12345:k1")
        .arg("v1")
        .ignore()
        .query_async(&mut con)
        .await
        .unwrap();
    let dump = |key: &'static str| {
        let target = target.clone();
        async move {
            let v: Vec<u8> = redis::cmd("DUMP")
                .arg(key)
                .query_async(&mut support::admin(&target).await)
                .await
                .unwrap();
            v
        }
    };
    let before: Vec<Vec<u8>> = futures_util::future::join_all(UNRELATED.map(dump)).await;

    let removed = keys::sweep_leftovers(&target, pipescope::engine::keys::first_run_id())
        .await
        .unwrap();
    assert_eq!(removed, 2);
    let after: Vec<Vec<u8>> = futures_util::future::join_all(UNRELATED.map(dump)).await;
    assert_eq!(before, after, "unrelated keys are byte-identical");
    assert_eq!(support::dbsize(&target).await, 7);
    let calls = support::command_calls(&target).await;
    for forbidden in ["flushdb", "flushall", "keys", "config|set"] {
        assert_eq!(calls.get(forbidden), None, "{forbidden} must never be sent");
    }
}

#[tokio::test]
async fn a_stalled_redis_times_the_run_out_instead_of_hanging() {
    // DEBUG is off by default since Redis 7: this server of ours allows it.
    let _redis = LocalRedis::start_with_args(&["--enable-debug-command", "yes"]).unwrap();
    let target = RedisTarget::parse(&_redis.url()).unwrap();
    let progress = std::sync::Arc::new(Progress::default());
    let mut task = {
        let (target, progress) = (target.clone(), progress.clone());
        tokio::spawn(async move {
            let ctx = RunContext {
                response_timeout: Duration::from_millis(300),
                ..RunContext::new(9, progress, Default::default())
            };
            engine::run(&target, spec(5_000_000, Mode::Sequential), ctx).await
        })
    };
    support::until_progress(&progress, 100, Duration::from_secs(60), &mut task).await;
    // Redis stops answering anyone for 3 s; the run must give up after its 300 ms timeout.
    let admin = target.clone();
    let sleeper = tokio::spawn(async move {
        let _: Result<String, _> = redis::cmd("DEBUG")
            .arg("SLEEP")
            .arg(3)
            .query_async(&mut support::admin(&admin).await)
            .await;
    });
    // A hang guard only: what ended the run is asserted below.
    let failure = support::within(Duration::from_secs(30), "the stalled run ends", task)
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(failure.error, EngineError::Timeout(..)),
        "{:?}",
        failure.error
    );
    assert!(
        failure.error.to_string().contains("no reply"),
        "{}",
        failure.error
    );
    sleeper.await.unwrap();
    // Once Redis answers again, its keys can be removed.
    keys::remove_run_keys(&target, 9, failure.written)
        .await
        .unwrap();
    assert!(support::pipescope_keys(&target).await.is_empty());
}

fn busy_polling(count: u64, mode: Mode, us: u32) -> RunSpec {
    RunSpec {
        wait: Wait::BusyPoll { us },
        ..spec(count, mode)
    }
}

/// Busy-polling changes how the engine waits, not what it sends or reads: with a budget long
/// enough that it never sleeps and with one so short that it nearly always does.
#[tokio::test]
async fn busy_polling_for_replies_sends_and_reads_exactly_the_same() {
    let (_redis, target) = support::redis();
    let mut expected_sets = 0;
    for (run_id, us, mode, n) in [
        (21, 5_000, Mode::Sequential, 2_001),
        (22, 5_000, Mode::pipelined(100), 10_007),
        (23, 1, Mode::Sequential, 2_001),
        (24, 1, Mode::pipelined(1000), 10_007),
    ] {
        let outcome = run(&target, run_id, busy_polling(n, mode, us))
            .await
            .unwrap();
        expected_sets += n;
        assert_eq!(outcome.summary.done, n);
        assert_eq!(outcome.summary.round_trips, n.div_ceil(mode.batch() as u64));
        assert_eq!(support::command_calls(&target).await["set"], expected_sets);
        let last: String = redis::cmd("GET")
            .arg(format!("pipescope:{run_id}:k{}", n - 1))
            .query_async(&mut support::admin(&target).await)
            .await
            .unwrap();
        assert_eq!(last, format!("v{}", n - 1));
        assert_eq!(
            keys::remove_run_keys(&target, run_id, outcome.written)
                .await
                .unwrap(),
            n
        );
    }
    assert_eq!(support::dbsize(&target).await, 0);
}

#[tokio::test]
async fn redis_dying_while_the_engine_busy_polls_fails_the_run_promptly() {
    fails_promptly_when_redis_dies(25, busy_polling(5_000_000, Mode::Sequential, 50_000)).await;
}

/// Marks where each run of `busy_poll_strace_child` begins and ends in the trace.
const MARK: &str = "pipescope-trace-mark";

/// The other half of `busy_polling_waits_without_sleeping_in_the_kernel`: run by it under
/// strace, against a Redis it started (so Redis's own syscalls are not traced).
#[tokio::test]
#[ignore = "run under strace by busy_polling_waits_without_sleeping_in_the_kernel"]
async fn busy_poll_strace_child() {
    let Some(url) = std::env::var_os("PIPESCOPE_STRACE_REDIS") else {
        eprintln!("SKIPPED: the traced half of busy_polling_waits_without_sleeping_in_the_kernel");
        return;
    };
    let target = RedisTarget::parse(url.to_str().unwrap()).unwrap();
    let mark = std::env::temp_dir().join(format!("{MARK}-{}", std::process::id()));
    for (run_id, spec) in [
        (31, spec(300, Mode::Sequential)),
        (32, busy_polling(300, Mode::Sequential, 10_000)),
    ] {
        std::fs::write(&mark, format!("{MARK} begin {run_id}")).unwrap();
        // Without the memory sampler: it polls Redis from this process's runtime, and its
        // epoll_waits would be counted with the engine's.
        let ctx = RunContext {
            sample_memory: false,
            ..RunContext::new(run_id, Default::default(), Default::default())
        };
        let o = engine::run(&target, spec, ctx).await.unwrap();
        std::fs::write(&mark, format!("{MARK} end {run_id}")).unwrap();
        keys::remove_run_keys(&target, run_id, o.written)
            .await
            .unwrap();
    }
    let _ = std::fs::remove_file(&mark);
}

/// What busy-polling is for, seen by the kernel: 300 sequential SETs sleeping for replies make
/// an `epoll_wait` per round trip; busy-polling makes (almost) none and tries the socket
/// instead. Where strace is not installed or may not trace: a failure under `CI=true`, else a
/// printed skip.
#[test]
fn busy_polling_waits_without_sleeping_in_the_kernel() {
    let (redis, _target) = support::redis();
    let Some((_, syscalls)) = support::under_strace(
        &["-s", "40", "-e", "trace=epoll_wait,recvfrom,write"],
        "runs::busy_poll_strace_child",
        ("PIPESCOPE_STRACE_REDIS", &redis.url()),
    ) else {
        return;
    };
    // (epoll_wait calls, recvfrom calls) between a run's marks.
    let count = |run_id: u64| {
        let lines: Vec<&str> = syscalls
            .lines()
            .skip_while(|l| !l.contains(&format!("{MARK} begin {run_id}")))
            .take_while(|l| !l.contains(&format!("{MARK} end {run_id}")))
            .collect();
        assert!(!lines.is_empty(), "run {run_id} is not in the trace");
        let calls = |name: &str| lines.iter().filter(|l| l.contains(name)).count();
        (calls("epoll_wait("), calls("recvfrom("))
    };
    let (sleeping_waits, _) = count(31);
    let (polling_waits, polling_reads) = count(32);
    eprintln!(
        "sleeping: {sleeping_waits} epoll_waits; busy-polling: {polling_waits} epoll_waits, {polling_reads} recvfroms"
    );
    assert!(
        sleeping_waits >= 300,
        "sleeping: {sleeping_waits} epoll_waits for 300 round trips"
    );
    assert!(
        polling_waits < 30 && polling_reads > 300,
        "busy-polling: {polling_waits} epoll_waits, {polling_reads} recvfroms for 300 round trips"
    );
}
