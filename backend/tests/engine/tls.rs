//! `rediss://` against a real redis-server with a TLS port and certificates made at test
//! time, as an ACL user limited to `~pipescope:*`: every mode runs over TLS and leaves no key
//! (and never touches another), the delay line relays TLS while the wire tap says it cannot
//! read it, and a wrong CA, an expired certificate, a plain port and a user without SET each
//! fail with a clear message and no key behind.

use crate::support;

use pipescope::engine::{self, RunContext, RunError};
use pipescope::net::Proxies;
use pipescope::target::{RedisTarget, TlsOptions};
use shared::{Flush, Mode, Network, RunSpec, Wait};
use support::tls::{ServerCert, TlsRedis};

/// A key outside pipescope's namespace, set before the runs, that must survive them.
const OUTSIDE: &str = "app:untouched";

async fn set_outside(plain: &RedisTarget) {
    let mut con = plain.admin_connection().await.unwrap();
    let () = redis::cmd("SET")
        .arg(OUTSIDE)
        .arg("keep me")
        .query_async(&mut con)
        .await
        .unwrap();
}

async fn outside_value(plain: &RedisTarget) -> Option<String> {
    let mut con = plain.admin_connection().await.unwrap();
    redis::cmd("GET")
        .arg(OUTSIDE)
        .query_async(&mut con)
        .await
        .unwrap()
}

fn every_mode() -> Vec<Mode> {
    vec![
        Mode::Sequential,
        Mode::Pipelined {
            batch: 100,
            flush: Flush::Batch,
        },
        Mode::Pipelined {
            batch: 100,
            flush: Flush::EachCommand,
        },
        Mode::Pipelined {
            batch: 100,
            flush: Flush::Buffered { commands: 16 },
        },
        Mode::Multiplexed { in_flight: 32 },
        Mode::Transaction { batch: 50 },
        Mode::Mset { batch: 50 },
        Mode::Connections { connections: 4 },
    ]
}

async fn run_cleaned(
    target: &RedisTarget,
    run_id: u64,
    spec: RunSpec,
) -> Result<engine::RunOutcome, RunError> {
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    engine::run_and_clean_up(target, spec, ctx).await
}

#[tokio::test]
async fn every_mode_runs_over_tls_as_an_acl_user_and_leaves_no_key() {
    let redis = TlsRedis::start(ServerCert::Valid);
    redis.acl_user("pipe", &["~pipescope:*", "+@all"]).await;
    let plain = redis.plain();
    set_outside(&plain).await;
    for (user, base) in [(Some("pipe"), 1_000), (None, 2_000)] {
        let target = redis.target(user);
        assert!(target.redacted().starts_with("rediss://"), "{target:?}");
        for (k, mode) in every_mode().into_iter().enumerate() {
            let n = 1_000;
            let before = support::command_calls(&plain).await;
            let outcome = run_cleaned(&target, base + k as u64, RunSpec::set(n, mode))
                .await
                .unwrap_or_else(|e| panic!("{user:?} {mode:?}: {e}"));
            assert_eq!(outcome.summary.done, n, "{user:?} {mode:?}");
            let after = support::command_calls(&plain).await;
            let delta = |c: &str| after.get(c).unwrap_or(&0) - before.get(c).unwrap_or(&0);
            // Redis executed the run's commands: every SET, or one MSET per batch.
            match mode {
                Mode::Mset { batch } => assert_eq!(delta("mset"), n / batch as u64),
                _ => assert_eq!(delta("set"), n, "{user:?} {mode:?}"),
            }
            assert_eq!(
                support::pipescope_keys(&plain).await,
                Vec::<String>::new(),
                "{user:?} {mode:?}: keys left"
            );
        }
    }
    assert_eq!(outside_value(&plain).await.as_deref(), Some("keep me"));
    assert_eq!(support::dbsize(&plain).await, 1, "only the outside key");
}

/// GET (seeded on a connection of its own) and the other client (a second connection on its
/// own thread) over TLS too.
#[tokio::test]
async fn seeding_and_the_other_client_work_over_tls() {
    let redis = TlsRedis::start(ServerCert::Valid);
    redis.acl_user("pipe", &["~pipescope:*", "+@all"]).await;
    let target = redis.target(Some("pipe"));
    let get = RunSpec {
        command: shared::Command::Get,
        ..RunSpec::set(500, Mode::pipelined(100))
    };
    let outcome = run_cleaned(&target, 1, get).await.unwrap();
    assert_eq!(outcome.summary.done, 500);
    let other = RunSpec {
        command: shared::Command::Incr,
        other_client: true,
        ..RunSpec::set(2_000, Mode::pipelined(100))
    };
    let outcome = run_cleaned(&target, 2, other).await.unwrap();
    assert_eq!(outcome.summary.done, 2_000);
    assert!(outcome.summary.interleaving.is_some());
    assert_eq!(support::dbsize(&redis.plain()).await, 0);
}

#[tokio::test]
async fn the_delay_line_relays_tls_and_the_wire_tap_says_it_cannot_read_it() {
    let redis = TlsRedis::start(ServerCert::Valid);
    let target = redis.target(None);
    let delay_us = 2_000;
    let proxies = Proxies::default();
    let route = proxies
        .route(&target, Network::symmetric(delay_us))
        .await
        .unwrap();
    let ctx = RunContext::new(7, Default::default(), Default::default());
    let outcome = route
        .run(RunSpec::set(50, Mode::Sequential), ctx)
        .await
        .unwrap();
    let s = outcome.summary;
    assert_eq!(s.done, 50);
    let split = s.split.expect("the proxy reports on its tap");
    assert!(split.encrypted, "{split:?}");
    assert_eq!(split.samples, 0, "nothing stamped from ciphertext");
    assert!(
        outcome
            .timeline
            .first
            .iter()
            .all(|s| s.at_server_us.is_none())
    );
    // The calibrated proxy releases each chunk early by what it measured it costs itself.
    let floor = 2.0 * delay_us as f64 - split.early_out_us - split.early_back_us;
    assert!(
        s.latency.p50_us >= floor * 0.999,
        "p50 {} µs below 2·D − compensation = {floor} µs",
        s.latency.p50_us
    );
    println!(
        "over TLS through {delay_us} µs each way: p50 {:.0} µs (floor {floor:.0} µs)",
        s.latency.p50_us
    );
    assert_eq!(support::dbsize(&redis.plain()).await, 0);
}

#[tokio::test]
async fn a_wrong_ca_an_expired_certificate_and_a_plain_port_each_say_what_is_wrong() {
    let redis = TlsRedis::start(ServerCert::Valid);
    let wrong = TlsOptions {
        ca: Some(redis.wrong_ca.clone()),
        insecure: false,
    };
    let err = redis
        .target_with(None, wrong)
        .server_version()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not signed by a CA pipescope trusts") && err.contains("--tls-ca"),
        "{err}"
    );

    let expired = TlsRedis::start(ServerCert::Expired);
    let err = expired
        .target(None)
        .server_version()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("certificate has expired"), "{err}");

    // A self-signed CA certificate as the server's own, trusted as the CA.
    let the_ca = TlsRedis::start(ServerCert::TheCa);
    let err = the_ca
        .target(None)
        .server_version()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("presents a CA certificate as its own"),
        "{err}"
    );

    // rediss:// to the plain port.
    let url = format!("rediss://127.0.0.1:{}/0", redis.redis.port());
    let err = RedisTarget::parse_with(&url, &redis.trust_ca())
        .unwrap()
        .server_version()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is this port a TLS port"), "{err}");

    // --tls-insecure accepts the expired certificate, and says so on the target line.
    let insecure = TlsOptions {
        ca: None,
        insecure: true,
    };
    let target = expired.target_with(None, insecure);
    assert!(
        target.shown().contains("NOT VERIFIED"),
        "{}",
        target.shown()
    );
    let outcome = run_cleaned(&target, 1, RunSpec::set(100, Mode::pipelined(10)))
        .await
        .unwrap();
    assert_eq!(outcome.summary.done, 100);
    assert_eq!(support::dbsize(&expired.plain()).await, 0);

    // Busy-polling reads below TLS: refused, not silently turned into sleeping.
    let busy = RunSpec {
        wait: Wait::BusyPoll { us: 100 },
        ..RunSpec::set(10, Mode::Sequential)
    };
    let err = run_cleaned(&redis.target(None), 2, busy)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("busy-polling"), "{err}");
}

#[tokio::test]
async fn a_user_without_set_gets_redis_s_refusal_and_no_key_is_left() {
    let redis = TlsRedis::start(ServerCert::Valid);
    redis
        .acl_user("noset", &["~pipescope:*", "+@all", "-set"])
        .await;
    let plain = redis.plain();
    set_outside(&plain).await;
    let target = redis.target(Some("noset"));
    for (k, mode) in [Mode::Sequential, Mode::pipelined(100)]
        .into_iter()
        .enumerate()
    {
        let err = run_cleaned(&target, 10 + k as u64, RunSpec::set(200, mode))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("NOPERM") && err.contains("set"),
            "{mode:?}: {err}"
        );
    }
    assert_eq!(support::pipescope_keys(&plain).await, Vec::<String>::new());
    assert_eq!(outside_value(&plain).await.as_deref(), Some("keep me"));
}

/// The CLI: a clear message and a non-zero exit, never a panic.
#[test]
fn the_cli_says_what_is_wrong_and_exits_non_zero() {
    let redis = TlsRedis::start(ServerCert::Valid);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(redis.acl_user("noset", &["~pipescope:*", "+@all", "-set"]));
    let bench = |url: &str, extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"))
            .env_remove("REDIS_URL")
            .args([
                "bench",
                "--mode",
                "sequential",
                "--count",
                "20",
                "--redis-url",
                url,
            ])
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (
            out.status,
            stderr,
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let wrong = redis.wrong_ca.to_str().unwrap();
    let (status, stderr, _) = bench(&redis.url(None), &["--tls-ca", wrong]);
    assert!(!status.success());
    assert!(
        stderr.contains("not signed by a CA pipescope trusts"),
        "{stderr}"
    );

    let ca = redis.ca.to_str().unwrap();
    let (status, stderr, _) = bench(&redis.url(Some("noset")), &["--tls-ca", ca]);
    assert!(!status.success());
    assert!(stderr.contains("NOPERM"), "{stderr}");
    assert!(!stderr.contains(support::tls::ACL_PASSWORD), "{stderr}");

    let (status, stderr, stdout) = bench(&redis.url(None), &["--tls-insecure"]);
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("WARNING: --tls-insecure"), "{stderr}");
    assert!(stdout.contains("20"), "{stdout}");

    let (status, stderr, _) = bench(&redis.redis.url(), &["--tls-insecure"]);
    assert!(!status.success());
    assert!(stderr.contains("only apply to rediss://"), "{stderr}");
    assert_eq!(rt.block_on(support::dbsize(&redis.plain())), 0);
}

/// `cost tls`: plain against TLS on one server of its own, a row per depth with both
/// throughputs measured and the ratio their rounds gave.
#[test]
fn bench_tls_cost_prints_a_row_per_depth() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .env_remove("REDIS_URL")
        .args(["cost", "tls", "--count", "300", "--batch", "100"])
        .args(["--rounds", "1", "--time-budget-secs", "1", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ks: Vec<u64> = rows.iter().map(|r| r["k"].as_u64().unwrap()).collect();
    assert_eq!(ks, [1, 16, 100]);
    for r in &rows {
        let (plain, tls) = (
            r["plain_ops_per_sec"].as_f64().unwrap(),
            r["tls_ops_per_sec"].as_f64().unwrap(),
        );
        assert!(plain > 0.0 && tls > 0.0, "{r}");
        assert!(r["rounds"].as_u64().unwrap() >= 1, "{r}");
        let m = |f: &str| r["ratio"][f].as_f64().unwrap();
        assert!(
            0.0 < m("low") && m("low") <= m("median") && m("median") <= m("high"),
            "{r}"
        );
    }
}

/// Observe mode reads an application's RESP as it passes: against a `rediss://` Redis it
/// refuses to start, saying why, rather than misreading ciphertext.
#[tokio::test]
async fn observe_mode_refuses_a_tls_redis_in_words() {
    let redis = TlsRedis::start(ServerCert::Valid);
    let listen = "127.0.0.1:0".parse().unwrap();
    let err =
        match pipescope::observe::Observer::start(listen, &redis.target(None), Network::default())
            .await
        {
            Ok(_) => panic!("observing a TLS Redis started"),
            Err(e) => e.to_string(),
        };
    assert!(
        err.contains("cannot observe a rediss:// Redis") && err.contains("plain redis:// port"),
        "{err}"
    );
}
