//! Every mode cancelled midway, and a GET run cancelled while seeding, leaves no key.

use super::*;

/// Starts a long run of `mode`, cancels it once 1,000 requests are answered, and returns how
/// it ended.
async fn cancel_midway(target: &RedisTarget, run_id: u64, spec: RunSpec) -> RunFailure {
    let progress = Arc::new(Progress::default());
    let cancel = Arc::new(AtomicBool::new(false));
    let mut task = {
        let (target, progress, cancel) = (target.clone(), progress.clone(), cancel.clone());
        tokio::spawn(async move {
            engine::run(&target, spec, RunContext::new(run_id, progress, cancel)).await
        })
    };
    support::until_progress(&progress, 1_000, Duration::from_secs(60), &mut task).await;
    cancel.store(true, Ordering::Relaxed);
    support::within(Duration::from_secs(30), "the cancelled run ends", task)
        .await
        .unwrap()
        .unwrap_err()
}

#[tokio::test]
async fn every_mode_cancels_cleanly() {
    let (_redis, target) = support::redis();
    let modes = [
        Mode::Pipelined {
            batch: 100,
            flush: Flush::EachCommand,
        },
        Mode::Multiplexed { in_flight: 50 },
        Mode::Transaction { batch: 100 },
        Mode::Mset { batch: 100 },
        Mode::Connections { connections: 8 },
    ];
    for (k, mode) in modes.into_iter().enumerate() {
        let run_id = 900 + k as u64;
        let label = mode.label();
        let before = calls(&target).await;
        let failure = cancel_midway(&target, run_id, RunSpec::set(5_000_000, mode)).await;
        assert!(
            matches!(failure.error, EngineError::Cancelled),
            "{label}: {}",
            failure.error
        );
        let done = failure.partial.done;
        assert!((1_000..5_000_000).contains(&done), "{label}: {done}");
        if let Mode::Connections { .. } = mode {
            // Each connection stops after its own last command, so the answered requests are
            // not one unbroken range: the keys that may exist reach past their count.
            assert!(done <= failure.written, "{label}");
        } else {
            // Everything sent was answered before the run stopped (multiplexed drains its
            // window).
            assert_eq!(done, failure.written, "{label}");
        }
        if !matches!(mode, Mode::Multiplexed { .. } | Mode::Connections { .. }) {
            assert_eq!(done % 100, 0, "{label}: stops only between batches");
        }
        let d = delta(&before, &calls(&target).await);
        let executed = d.get("set").or(d.get("mset")).copied().unwrap_or(0);
        let expected_calls = match mode {
            Mode::Mset { batch } => done / batch as u64,
            _ => done,
        };
        assert_eq!(executed, expected_calls, "{label}: {d:?}");
        assert_eq!(
            failure.partial.wire_commands,
            expected(&RunSpec::set(done, mode)).1
        );
        keys::remove_run_keys(&target, run_id, failure.written)
            .await
            .unwrap();
        assert!(support::pipescope_keys(&target).await.is_empty(), "{label}");
    }
}

#[tokio::test]
async fn cancel_while_seeding_a_get_run_leaves_nothing() {
    let (_redis, target) = support::redis();
    let cancel = Arc::new(AtomicBool::new(true));
    let spec = RunSpec {
        command: Command::Get,
        ..RunSpec::set(10_000, Mode::pipelined(100))
    };
    let ctx = RunContext::new(950, Default::default(), cancel);
    let failure = engine::run(&target, spec, ctx).await.unwrap_err();
    assert!(matches!(failure.error, EngineError::Cancelled));
    assert_eq!(
        failure.partial.wire_commands, 0,
        "the measured connection sent nothing"
    );
    keys::remove_run_keys(&target, 950, failure.written)
        .await
        .unwrap();
    assert!(support::pipescope_keys(&target).await.is_empty());
}
