//! Several pipescopes on one Redis, as in a workshop where everyone points at the same one:
//! each removes only the keys of runs that are no longer live. A live run holds its lease
//! (`pipescope:lease:{<run>}`), so a second pipescope's start-up sweep and `pipescope clean`
//! leave its keys alone, while a dead run's leftovers (no lease) still go; and a run whose
//! keys something else removed says so instead of printing normal results.
//!
//! The live run is a real `bench` of GETs through a 2 ms delay each way (so it is still
//! running when the second pipescope starts, whatever the machine's speed); Redis's own
//! INFO commandstats and SCAN are the oracles.

use crate::support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use pipescope::local_redis::LocalRedis;
use pipescope::target::RedisTarget;

/// GETs in the live run: at least 2 × 2 ms each, 12 s.
const GETS: u64 = 3_000;
const DELAY_US: &str = "2000";
const LIMIT: Duration = Duration::from_secs(120);

fn bench(url: &str) -> Child {
    support::pipescope("pipescope=warn")
        .args([
            "bench",
            "--count",
            &GETS.to_string(),
            "--mode",
            "sequential",
        ])
        .args(["--command", "GET", "--delay-us", DELAY_US, "--json"])
        .args(["--redis-url", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The keys under `pipescope:` now: the live run's lease and its `k` keys, and the rest.
struct Keys {
    leases: Vec<String>,
    run_keys: Vec<String>,
    others: Vec<String>,
}

async fn keys(target: &RedisTarget) -> Keys {
    let all = support::pipescope_keys(target).await;
    let (leases, rest): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|k| k.starts_with("pipescope:lease:"));
    let (run_keys, others) = match leases.first() {
        Some(lease) => {
            let run = lease
                .trim_start_matches("pipescope:lease:{")
                .trim_end_matches('}');
            rest.into_iter()
                .partition(|k| k.starts_with(&format!("pipescope:{run}:")))
        }
        None => (Vec::new(), rest),
    };
    Keys {
        leases,
        run_keys,
        others,
    }
}

/// Waits until the bench's run holds its lease and has seeded all its keys; its run id.
async fn seeded(target: &RedisTarget, bench: &mut Child) -> String {
    let deadline = Instant::now() + LIMIT;
    loop {
        let k = keys(target).await;
        if k.leases.len() == 1 && k.run_keys.len() as u64 == GETS {
            return k.leases[0]
                .trim_start_matches("pipescope:lease:{")
                .trim_end_matches('}')
                .into();
        }
        if let Some(status) = bench.try_wait().unwrap() {
            panic!("the bench ended ({status}) before its keys were all seeded");
        }
        assert!(
            Instant::now() < deadline,
            "the bench's run did not seed its {GETS} keys within {LIMIT:?}: {} leases, {} keys",
            k.leases.len(),
            k.run_keys.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A child stopped with SIGTERM, and waited for, when dropped: also when a check fails
/// before the test would stop it.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

fn finished(mut bench: Child) -> (std::process::ExitStatus, String, String) {
    let deadline = Instant::now() + LIMIT;
    while bench.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the bench did not end within {LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = bench.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_pipescope_and_clean_leave_a_live_runs_keys_and_remove_a_dead_ones() {
    let redis = LocalRedis::start().unwrap();
    let url = redis.url();
    let target = RedisTarget::parse(&url).unwrap();
    // A run that died long ago: its keys and no lease.
    let mut con = support::admin(&target).await;
    let _: () = redis::cmd("MSET")
        .arg(&["pipescope:12345:k0", "v0", "pipescope:12345:k1", "v1"])
        .query_async(&mut con)
        .await
        .unwrap();

    let before = support::command_calls(&target).await;
    let mut live = bench(&url);
    let run = seeded(&target, &mut live).await;

    // A second pipescope starts on the same Redis: its sweep runs before it listens.
    let mut serve = Stopped(
        support::pipescope("pipescope=info")
            .args(["serve", "--port", "0", "--redis-url", &url])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    support::stdout_line(
        serve.0.stdout.take().unwrap(),
        LIMIT,
        "the second pipescope prints the URL to open",
        |l| l.strip_prefix("open ").map(str::to_string),
    );
    // `clean` of every run, and of the live one by name.
    let clean_all = support::pipescope("pipescope=warn")
        .args(["clean", "--redis-url", &url])
        .output()
        .unwrap();
    let clean_live = support::pipescope("pipescope=warn")
        .args(["clean", "--redis-url", &url, "--run", &run])
        .output()
        .unwrap();
    let during = keys(&target).await;
    let still_running = live.try_wait().unwrap().is_none();
    drop(serve);

    assert!(
        still_running,
        "the bench ended before the second pipescope and clean had run: nothing was checked"
    );
    assert_eq!(
        (during.leases.len(), during.run_keys.len() as u64),
        (1, GETS),
        "the live run's lease and every one of its keys are still there"
    );
    assert!(
        during.others.is_empty(),
        "the dead run's keys were removed: {:?}",
        during.others
    );
    assert!(clean_all.status.success(), "{clean_all:?}");
    let refused = String::from_utf8_lossy(&clean_live.stderr);
    assert!(
        !clean_live.status.success(),
        "clean --run of a live run is refused"
    );
    assert!(
        refused.contains(&format!("run {run} is live")) && refused.contains("nothing was removed"),
        "{refused}"
    );

    let (status, stdout, stderr) = finished(live);
    assert!(status.success(), "the live run ended normally: {stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(summary["done"].as_u64(), Some(GETS), "{summary}");
    let after = support::command_calls(&target).await;
    let gets = after.get("get").copied().unwrap_or(0) - before.get("get").copied().unwrap_or(0);
    assert_eq!(gets, GETS, "Redis ran every GET of the live run");
    let left = keys(&target).await;
    assert!(
        left.leases.is_empty() && left.run_keys.is_empty() && left.others.is_empty(),
        "nothing of pipescope's left: {:?} {:?} {:?}",
        left.leases,
        left.run_keys,
        left.others
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_keys_are_removed_under_it_says_so() {
    let redis = LocalRedis::start().unwrap();
    let url = redis.url();
    let target = RedisTarget::parse(&url).unwrap();
    let mut live = bench(&url);
    seeded(&target, &mut live).await;
    // Something else (not pipescope) removes the run's keys, lease aside.
    let mut con = support::admin(&target).await;
    let mut pipe = redis::pipe();
    for k in keys(&target).await.run_keys {
        pipe.cmd("UNLINK").arg(k).ignore();
    }
    let _: () = pipe.query_async(&mut con).await.unwrap();
    let removed_early = live.try_wait().unwrap().is_none();

    let (status, stdout, stderr) = finished(live);
    assert!(
        removed_early,
        "the bench ended before its keys were removed: nothing was checked"
    );
    assert!(
        !status.success(),
        "the run does not end as if all were well: {stdout}"
    );
    assert!(
        stderr.contains(&format!(
            "{} of the run's {} keys were gone when it ended",
            shared::digits::group(GETS),
            shared::digits::group(GETS)
        )),
        "it says its keys vanished: {stderr}"
    );
    assert!(
        stdout.is_empty(),
        "no results printed as if normal: {stdout}"
    );
}
