//! The local cluster and the slot function, against real redis-servers in cluster mode.

use crate::support;
use pipescope::cluster::{LocalCluster, SLOTS, key_slot};

mod reshard;

fn conn(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

#[test]
fn three_masters_form_a_cluster_that_covers_every_slot_and_stops_on_drop() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let ports = cluster.ports();
    assert_eq!(ports.len(), 3);
    for i in 0..3 {
        let mut c = conn(&cluster.node_url(i));
        let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c).unwrap();
        assert!(info.contains("cluster_state:ok"), "node {i}: {info}");
        assert!(info.contains("cluster_known_nodes:3"), "node {i}: {info}");
        assert!(
            info.contains("cluster_slots_assigned:16384"),
            "node {i}: {info}"
        );
    }
    // CLUSTER SLOTS: [[first, last, [host, port, id], …], …], one range per master here.
    let mut c = conn(&cluster.url());
    let slots: Vec<(u16, u16, (String, u16))> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query::<Vec<redis::Value>>(&mut c)
        .unwrap()
        .into_iter()
        .map(|range| {
            let redis::Value::Array(parts) = range else {
                panic!("{range:?}")
            };
            let first: u16 = redis::from_redis_value(parts[0].clone()).unwrap();
            let last: u16 = redis::from_redis_value(parts[1].clone()).unwrap();
            let redis::Value::Array(node) = &parts[2] else {
                panic!("{parts:?}")
            };
            let host: String = redis::from_redis_value(node[0].clone()).unwrap();
            let port: u16 = redis::from_redis_value(node[1].clone()).unwrap();
            (first, last, (host, port))
        })
        .collect();
    let mut covered = 0u32;
    let mut masters: Vec<u16> = Vec::new();
    for (first, last, (host, port)) in &slots {
        assert_eq!(host, "127.0.0.1");
        covered += u32::from(last - first) + 1;
        masters.push(*port);
    }
    assert_eq!(covered, u32::from(SLOTS), "{slots:?}");
    masters.sort_unstable();
    let mut expected = ports.clone();
    expected.sort_unstable();
    assert_eq!(masters, expected, "each master serves one range");

    drop(cluster);
    for port in ports {
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "node on port {port} still answers after the cluster was dropped"
        );
    }
}

#[test]
fn key_slot_agrees_with_cluster_keyslot() {
    let cluster = LocalCluster::start(1).expect("a one-master cluster");
    let mut c = conn(&cluster.url());
    let mut keys: Vec<Vec<u8>> = (0..2_000u64)
        .map(|i| shared::keys::key(7, i).into_bytes())
        .collect();
    for tagged in [
        "{user1000}.following",
        "{user1000}.followers",
        "foo{}{bar}",
        "foo{{bar}}zap",
        "foo{bar}{zap}",
        "x{",
        "}{",
        "{pipescope:7}:k1",
        "",
        "ключ",
    ] {
        keys.push(tagged.as_bytes().to_vec());
    }
    keys.push(vec![0xff, 0x00, b'{', 0x80, b'}']);
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("CLUSTER").arg("KEYSLOT").arg(k.as_slice());
    }
    let theirs: Vec<u16> = pipe.query(&mut c).unwrap();
    for (k, slot) in keys.iter().zip(theirs) {
        assert_eq!(key_slot(k), slot, "{:?}", String::from_utf8_lossy(k));
    }
}

async fn discover(
    url: &str,
) -> Result<pipescope::cluster::SlotMap, pipescope::cluster::ClusterError> {
    let target = pipescope::target::RedisTarget::parse(url).unwrap();
    let mut admin = target.admin_connection().await.unwrap();
    pipescope::cluster::SlotMap::discover(&mut admin, &target.addr()).await
}

#[tokio::test]
async fn the_map_sends_each_key_to_the_master_that_takes_it_and_others_answer_moved() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let map = discover(&cluster.node_url(1)).await.expect("a slot map");
    let mut ports: Vec<u16> = map.masters().iter().map(|m| m.port).collect();
    ports.sort_unstable();
    let mut expected = cluster.ports();
    expected.sort_unstable();
    assert_eq!(ports, expected);
    let mut conns: Vec<redis::Connection> = map
        .masters()
        .iter()
        .map(|m| conn(&format!("redis://{}/", m.addr())))
        .collect();
    let mut moved = 0;
    for i in 0..300u64 {
        let key = shared::keys::key(9, i);
        let owner = map.master_of(key_slot(key.as_bytes()));
        let () = redis::cmd("SET")
            .arg(&key)
            .arg(i)
            .query(&mut conns[owner])
            .unwrap();
        let other = (owner + 1) % conns.len();
        let err = redis::cmd("SET")
            .arg(&key)
            .arg(i)
            .query::<()>(&mut conns[other])
            .expect_err("a master that does not serve the slot refuses the key");
        let text = format!("{err}");
        assert!(text.contains("Moved") || text.contains("MOVED"), "{text}");
        assert!(text.contains(&map.masters()[owner].addr()), "{text}");
        moved += 1;
    }
    assert_eq!(moved, 300);
}

#[tokio::test]
async fn a_single_server_and_a_cluster_with_a_hole_are_named_as_such() {
    let single = pipescope::local_redis::LocalRedis::start().unwrap();
    let err = discover(&single.url()).await.expect_err("not a cluster");
    assert!(
        matches!(err, pipescope::cluster::ClusterError::NotACluster { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("is not a cluster"), "{err}");

    let cluster = LocalCluster::start(3).expect("a local cluster");
    let mut c = conn(&cluster.node_url(2));
    let () = redis::cmd("CLUSTER")
        .arg("DELSLOTSRANGE")
        .arg(16_000)
        .arg(16_383)
        .query(&mut c)
        .unwrap();
    let err = discover(&cluster.node_url(2)).await.expect_err("a hole");
    assert!(err.to_string().contains("slots 16000–16383"), "{err}");
}

/// Each master's `cmdstat_set` calls.
fn set_calls(cluster: &LocalCluster) -> Vec<u64> {
    (0..cluster.ports().len())
        .map(|i| {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query(&mut conn(&cluster.node_url(i)))
                .unwrap();
            info.lines()
                .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
                .and_then(|rest| rest.split(',').next())
                .map_or(0, |n| n.parse().unwrap())
        })
        .collect()
}

async fn run_on(
    target: &pipescope::target::RedisTarget,
    run_id: u64,
    spec: shared::RunSpec,
) -> Result<pipescope::engine::RunOutcome, pipescope::engine::RunFailure> {
    let ctx = pipescope::engine::RunContext::new(run_id, Default::default(), Default::default());
    pipescope::engine::run(target, spec, ctx).await
}

#[tokio::test]
async fn a_pipelined_run_sends_each_master_its_keys_once_in_parallel_sub_batches() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    let (n, batch, run_id) = (10_000u64, 1_000u32, 41);
    let before = set_calls(&cluster);
    let outcome = run_on(
        &target,
        run_id,
        shared::RunSpec::set(n, shared::Mode::pipelined(batch)),
    )
    .await
    .expect("the run");
    let after = set_calls(&cluster);
    // Which master each key's slot is on, as CLUSTER SLOTS says (the node order of the map
    // may differ from the cluster's: compare by port).
    let map = discover(&cluster.url()).await.unwrap();
    let mut expected = vec![0u64; 3];
    let mut touched = 0u64;
    for b in 0..n / u64::from(batch) {
        let mut in_batch = [false; 3];
        for i in b * u64::from(batch)..(b + 1) * u64::from(batch) {
            let key = shared::keys::key(run_id, i);
            let port = map.masters()[map.master_of(key_slot(key.as_bytes()))].port;
            let node = cluster.ports().iter().position(|&p| p == port).unwrap();
            expected[node] += 1;
            in_batch[node] = true;
        }
        touched += in_batch.iter().filter(|&&t| t).count() as u64;
    }
    let done: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(
        done, expected,
        "SETs executed per master, exactly once each"
    );
    assert!(
        expected.iter().all(|&e| e > 2_000),
        "spread over all three: {expected:?}"
    );
    assert_eq!(outcome.summary.done, n);
    assert_eq!(
        outcome.summary.round_trips, touched,
        "a round trip per master per batch"
    );
    assert_eq!(touched, 30);
    assert_eq!(support::dbsizes(&cluster), expected);
    let v: String = redis::cmd("GET")
        .arg(shared::keys::key(run_id, 4242))
        .query(&mut conn(&format!(
            "redis://{}/",
            map.masters()[map.master_of(key_slot(shared::keys::key(run_id, 4242).as_bytes()))]
                .addr()
        )))
        .unwrap();
    assert_eq!(v, "v4242");
    let removed = pipescope::engine::keys::remove_run_keys(&target, run_id, outcome.written)
        .await
        .unwrap();
    assert_eq!(removed, n);
    assert_eq!(support::dbsizes(&cluster), [0, 0, 0]);
}

#[tokio::test]
async fn sequential_on_a_cluster_pays_a_round_trip_per_command_and_multi_exec_over_spread_keys_says_why()
 {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    let outcome = run_on(
        &target,
        43,
        shared::RunSpec::set(300, shared::Mode::Sequential),
    )
    .await
    .expect("the run");
    assert_eq!(outcome.summary.round_trips, 300);
    assert_eq!(support::dbsizes(&cluster).iter().sum::<u64>(), 300);
    pipescope::engine::keys::remove_run_keys(&target, 43, outcome.written)
        .await
        .unwrap();
    assert_eq!(support::dbsizes(&cluster), [0, 0, 0]);
    let failure = run_on(
        &target,
        44,
        shared::RunSpec::set(10, shared::Mode::Transaction { batch: 5 }),
    )
    .await
    .expect_err("MULTI/EXEC over spread keys spans slots");
    assert!(
        failure.error.to_string().contains("one hash tag"),
        "{}",
        failure.error
    );
    assert_eq!(support::dbsizes(&cluster), [0, 0, 0], "nothing sent");
}

#[test]
fn bench_with_cluster_starts_three_masters_and_runs_both_modes() {
    let out = support::pipescope("warn")
        .args(["bench", "--cluster", "--count", "3000", "--batch", "500"])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Redis Cluster, 3 masters: 127.0.0.1:"),
        "{stderr}"
    );
    let sequential = stdout
        .lines()
        .find(|l| l.starts_with("sequential"))
        .expect(&stdout);
    assert!(
        sequential.contains("3000 cmds") && sequential.contains("3000 round trips"),
        "{sequential}"
    );
    let pipelined = stdout
        .lines()
        .find(|l| l.starts_with("pipelined"))
        .expect(&stdout);
    // Six batches, each touching all three masters.
    assert!(
        pipelined.contains("3000 cmds") && pipelined.contains("18 round trips"),
        "{pipelined}"
    );
    // Each master's share: six round trips each, 3,000 commands in all.
    let shares = stdout
        .lines()
        .skip_while(|l| !l.starts_with("pipelined"))
        .find_map(|l| l.trim().strip_prefix("per master: "))
        .expect(&stdout);
    let (masters, redirects) = shares.split_once("; ").expect(shares);
    let commands: u64 = masters
        .split(" · ")
        .map(|m| {
            assert!(m.ends_with(" cmds in 6 round trips"), "{m}");
            m.split(' ').nth(1).unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(commands, 3000, "{shares}");
    assert!(redirects.starts_with("0 MOVED, 0 ASK"), "{shares}");
}

#[test]
fn a_single_server_given_as_a_cluster_is_refused_before_anything_runs() {
    let single = pipescope::local_redis::LocalRedis::start().unwrap();
    let out = support::pipescope("warn")
        .args([
            "bench",
            "--cluster",
            "--count",
            "100",
            "--redis-url",
            &single.url(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("is not a cluster"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let dbsize: u64 = redis::cmd("DBSIZE")
        .query(&mut conn(&single.url()))
        .unwrap();
    assert_eq!(dbsize, 0, "nothing written");
}

#[test]
fn cluster_cost_prints_a_ratio_per_depth() {
    let out = support::pipescope("warn")
        .args([
            "cost",
            "cluster",
            "--count",
            "2000",
            "--batch",
            "500",
            "--rounds",
            "1",
            "--time-budget-secs",
            "0",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let ks: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(ks, ["1 (sequential)", "16", "500"], "{stdout}");
    for r in &rows {
        assert_eq!(r.len(), 5, "{r:?}");
        for ops in &r[2..4] {
            assert!(ops.parse::<f64>().unwrap() > 0.0, "{r:?}");
        }
        let (median, interval) = r[4].split_once("× [").expect(r[4]);
        assert!(median.parse::<f64>().unwrap() > 0.0, "{r:?}");
        assert!(interval.ends_with(']'), "{r:?}");
    }
    assert!(
        stderr.contains("on the cluster "),
        "a line per round: {stderr}"
    );
}

#[tokio::test]
async fn a_master_dying_mid_run_is_named_and_the_others_are_cleaned() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let ports = cluster.ports();
    let dead = ports[2];
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    let (n, run_id) = (2_000_000u64, 61);
    let progress = std::sync::Arc::new(pipescope::recorder::Progress::default());
    let ctx = pipescope::engine::RunContext::new(run_id, progress.clone(), Default::default());
    let run = pipescope::engine::run(
        &target,
        shared::RunSpec::set(n, shared::Mode::pipelined(1000)),
        ctx,
    );
    let killer = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while progress.read().0 < 50_000 {
            assert!(
                std::time::Instant::now() < deadline,
                "the run never got going"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // SHUTDOWN closes the connection instead of replying.
        let _ = redis::cmd("SHUTDOWN")
            .arg("NOSAVE")
            .query::<()>(&mut conn(&format!("redis://127.0.0.1:{dead}/")));
    });
    let failure = run.await.expect_err("a run whose master died fails");
    killer.join().unwrap();
    let said = failure.error.to_string();
    assert!(
        said.contains(&format!("cluster master 127.0.0.1:{dead}")),
        "the dead master is named: {said}"
    );
    assert!(failure.written < n, "it stopped: {}", failure.written);
    let cleanup = pipescope::engine::keys::remove_run_keys(&target, run_id, failure.written)
        .await
        .expect_err("the dead master cannot be cleaned");
    assert!(cleanup.to_string().contains(&dead.to_string()), "{cleanup}");
    for (i, port) in ports.iter().enumerate().take(2) {
        let left: u64 = redis::cmd("DBSIZE")
            .query(&mut conn(&cluster.node_url(i)))
            .unwrap();
        assert_eq!(left, 0, "keys left on the living master {port}");
    }
}
