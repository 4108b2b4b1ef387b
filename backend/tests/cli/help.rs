//! What the jobs say of themselves: each help text describes the flags that job has, as it
//! uses them; advice names only what the job accepts.

use crate::support;

fn help(args: &[&str]) -> String {
    let out = support::pipescope("pipescope=warn")
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn observe_and_clean_describe_their_own_flags() {
    for job in ["observe", "clean"] {
        let text = help(&[job]);
        assert!(!text.contains("one-tag"), "{job} has no --keys: {text}");
        assert!(
            !text.contains("starts its own redis-server"),
            "{job} starts no Redis of its own without being asked: {text}"
        );
    }
    let observe = help(&["observe"]);
    assert!(
        observe.contains("Redis to forward to")
            && observe.contains("127.0.0.1:6379 if something answers there"),
        "{observe}"
    );
    assert!(observe.contains("--own-redis"), "{observe}");
    let clean = help(&["clean"]);
    assert!(
        clean.contains("The Redis to remove pipescope's keys from"),
        "{clean}"
    );
}

#[test]
fn clean_never_advises_omitting_the_url_it_needs() {
    let closed = pipescope::local_redis::free_port().unwrap();
    let out = support::pipescope("pipescope=warn")
        .args(["clean", "--redis-url"])
        .arg(format!("redis://127.0.0.1:{closed}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "pipescope: cannot reach Redis at 127.0.0.1:{closed}: Connection refused (os error 111). Is redis-server running there? Check the address"
        )
    );
}

#[test]
fn the_sweep_is_described_as_the_batches_it_runs() {
    let bench = help(&["bench"]);
    assert!(!bench.contains("1, 2, 4"), "{bench}");
    // The batches the sweep plans up to 100, as the help lists them.
    let planned = shared::sweep::plan(100, 100, 1, &shared::Limits::DEFAULT).unwrap();
    let listed: Vec<String> = planned.iter().take(6).map(u32::to_string).collect();
    let listed = format!("{}, …", listed.join(", "));
    assert_eq!(listed, "1, 2, 5, 10, 20, 50, …");
    assert_eq!(
        bench.matches(&listed).count(),
        2,
        "--max-batch and the sweep mode list the same batches: {bench}"
    );
}

#[test]
fn observe_refuses_a_cluster_pointing_to_a_capture_per_master() {
    let out = support::pipescope("pipescope=warn")
        .args(["observe", "--cluster", "--redis-url", "redis://127.0.0.1:1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("observe's proxy stands in front of one Redis")
            && stderr.contains("pipescope observe --capture IFACE --redis-port 7000 --redis-port 7001 --redis-port 7002"),
        "{stderr}"
    );
}
