//! The key layouts and the modes beyond sequential and pipelined on a Redis Cluster (MULTI/EXEC,
//! MSET/MGET, multiplexed, GET, the other client), against a real three-master local cluster:
//! what each master executed is read from its own `INFO commandstats`.

use crate::support;

use pipescope::cluster::{LocalCluster, key_slot};
use pipescope::engine::{self, RunContext, RunOutcome, keys};
use pipescope::target::RedisTarget;
use shared::{Command, KeyLayout, Mode, RunSpec};

mod cli;

/// A local cluster of three masters, the cluster target, and each node as a target of its own.
fn three_masters() -> (LocalCluster, RedisTarget, Vec<RedisTarget>) {
    let cluster = LocalCluster::start(3).expect("a local cluster (redis-server must be installed)");
    let target = RedisTarget::parse(&cluster.url()).unwrap().as_cluster();
    let nodes = (0..3)
        .map(|i| RedisTarget::parse(&cluster.node_url(i)).unwrap())
        .collect();
    (cluster, target, nodes)
}

/// Each node's `INFO commandstats` calls of `command` (lower case), in node order.
async fn calls(nodes: &[RedisTarget], command: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for n in nodes {
        out.push(
            support::command_calls(n)
                .await
                .get(command)
                .copied()
                .unwrap_or(0),
        );
    }
    out
}

async fn dbsizes(nodes: &[RedisTarget]) -> Vec<u64> {
    let mut out = Vec::new();
    for n in nodes {
        out.push(support::dbsize(n).await);
    }
    out
}

fn minus(after: &[u64], before: &[u64]) -> Vec<u64> {
    after.iter().zip(before).map(|(a, b)| a - b).collect()
}

/// Runs `spec` and removes its keys, as the page and `bench` do.
async fn run(target: &RedisTarget, run_id: u64, spec: RunSpec) -> Result<RunOutcome, String> {
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    engine::run_and_clean_up(target, spec, ctx)
        .await
        .map_err(|e| e.to_string())
}

fn one_tag(spec: RunSpec) -> RunSpec {
    RunSpec {
        keys: KeyLayout::OneTag,
        ..spec
    }
}

/// The node (index into `nodes`) whose address is `addr`.
fn node_of(nodes: &[RedisTarget], addr: &str) -> usize {
    nodes
        .iter()
        .position(|n| n.addr() == addr)
        .unwrap_or_else(|| panic!("{addr} is not a node"))
}

/// The node of the one master that did all of the run's commands and round trips (the
/// others none), as the run's shares say.
fn only_master(outcome: &RunOutcome, nodes: &[RedisTarget]) -> usize {
    let cluster = outcome
        .summary
        .cluster
        .as_ref()
        .expect("a cluster run's shares");
    assert_eq!(cluster.masters.len(), 3, "{cluster:?}");
    let busy: Vec<usize> = cluster
        .masters
        .iter()
        .filter(|m| m.commands > 0)
        .map(|m| node_of(nodes, &m.addr))
        .collect();
    assert_eq!(busy.len(), 1, "one master does everything: {cluster:?}");
    for m in &cluster.masters {
        if m.commands == 0 {
            assert_eq!(m.round_trips, 0, "{cluster:?}");
        } else {
            assert_eq!(m.commands, outcome.summary.done, "{cluster:?}");
            assert_eq!(m.round_trips, outcome.summary.round_trips, "{cluster:?}");
        }
    }
    busy[0]
}

/// The run's kept spans counted by the master each names (`Span::node`, in the order of the
/// summary's masters), beside each master's commands from the summary. Every span must name one.
fn spans_by_master(outcome: &RunOutcome) -> (Vec<u64>, Vec<u64>) {
    let masters = &outcome
        .summary
        .cluster
        .as_ref()
        .expect("a cluster run")
        .masters;
    let mut drawn = vec![0u64; masters.len()];
    for span in &outcome.timeline.first {
        let node = span
            .node
            .unwrap_or_else(|| panic!("span {} names no master", span.i));
        drawn[usize::from(node)] += 1;
    }
    (drawn, masters.iter().map(|m| m.commands).collect())
}

/// The node serving the slot of run `run_id`'s one-tag keys, as the cluster itself says
/// (`CLUSTER KEYSLOT`, then the `CLUSTER SLOTS` range holding it).
async fn tag_owner(nodes: &[RedisTarget], run_id: u64) -> usize {
    let key = shared::keys::key_in(run_id, 0, KeyLayout::OneTag);
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(&key)
        .query_async(&mut support::admin(&nodes[0]).await)
        .await
        .unwrap();
    assert_eq!(
        slot,
        key_slot(shared::keys::key_in(run_id, 99_999, KeyLayout::OneTag).as_bytes()),
        "every one-tag key of the run hashes to one slot"
    );
    let map = {
        let mut admin = nodes[0].admin_connection().await.unwrap();
        pipescope::cluster::SlotMap::discover(&mut admin, &nodes[0].addr())
            .await
            .unwrap()
    };
    node_of(nodes, &map.masters()[map.master_of(slot)].addr())
}

#[tokio::test]
async fn one_tag_sends_a_pipelined_run_to_one_master_and_spread_spreads() {
    let (_cluster, target, nodes) = three_masters();
    let (n, batch) = (10_000u64, 1_000u32);
    let before = calls(&nodes, "set").await;
    let tagged = run(
        &target,
        51,
        one_tag(RunSpec::set(n, Mode::pipelined(batch))),
    )
    .await
    .expect("a one-tag pipelined run");
    let after = calls(&nodes, "set").await;
    assert_eq!(tagged.summary.done, n);
    assert_eq!(
        tagged.summary.round_trips,
        n / u64::from(batch),
        "one per batch"
    );
    let owner = only_master(&tagged, &nodes);
    assert_eq!(owner, tag_owner(&nodes, 51).await, "the tag's master");
    // The page's lanes: every kept span names that master.
    let (drawn, commands) = spans_by_master(&tagged);
    let busy = commands
        .iter()
        .position(|&c| c == n)
        .expect("one master did all");
    assert_eq!(
        drawn.iter().sum::<u64>(),
        drawn[busy],
        "all on master {busy}: {drawn:?}"
    );
    assert!(drawn[busy] > 0);
    let mut expected = vec![0; 3];
    expected[owner] = n;
    assert_eq!(
        minus(&after, &before),
        expected,
        "every SET once, on that master"
    );
    assert_eq!(dbsizes(&nodes).await, [0, 0, 0], "cleaned up");

    let before = calls(&nodes, "set").await;
    let spread = run(&target, 52, RunSpec::set(n, Mode::pipelined(batch)))
        .await
        .expect("a spread pipelined run");
    let done = minus(&calls(&nodes, "set").await, &before);
    assert_eq!(done.iter().sum::<u64>(), n);
    assert!(
        done.iter().all(|&d| d > 2_000),
        "spread over all three: {done:?}"
    );
    let shares = &spread.summary.cluster.as_ref().unwrap().masters;
    assert!(shares.iter().all(|m| m.round_trips == 10), "{shares:?}");
    assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);
}

#[tokio::test]
async fn one_tag_keys_carry_the_tag_on_one_server_and_any_cleanup_sweeps_them() {
    let (_redis, target) = support::redis();
    let spec = one_tag(RunSpec::set(300, Mode::pipelined(100)));
    let ctx = RunContext::new(61, Default::default(), Default::default());
    let outcome = engine::run(&target, spec, ctx).await.expect("the run");
    let mut con = support::admin(&target).await;
    let v: String = redis::cmd("GET")
        .arg("pipescope:{61}:k299")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(v, "v299");
    assert_eq!(support::dbsize(&target).await, 300);
    // The spread cleanup, told nothing was written, still finds them with its sweep.
    let removed = keys::remove_run_keys(&target, 61, 0).await.unwrap();
    assert_eq!(removed, 300);
    assert_eq!(support::dbsize(&target).await, 0);
    assert_eq!(outcome.written, 300);
    // A neighbour's keys (run 610, either layout) are left alone.
    for k in ["pipescope:610:k1", "pipescope:{610}:k1", "pipescope:{6}:k1"] {
        let _: () = redis::cmd("SET")
            .arg(k)
            .arg(1)
            .query_async(&mut con)
            .await
            .unwrap();
    }
    let removed = keys::remove_laid_out_keys(&target, 61, KeyLayout::OneTag, 300)
        .await
        .unwrap();
    assert_eq!(removed, 0);
    assert_eq!(support::dbsize(&target).await, 3);
}

#[tokio::test]
async fn multi_exec_and_mset_run_on_the_tag_master_and_are_refused_over_spread_keys() {
    let (_cluster, target, nodes) = three_masters();
    let (n, batch) = (2_000u64, 100u32);
    let owner = tag_owner(&nodes, 71).await;
    let mut one = vec![0; 3];
    one[owner] = n / u64::from(batch);

    let before = (calls(&nodes, "multi").await, calls(&nodes, "exec").await);
    let sets = calls(&nodes, "set").await;
    let tx = run(
        &target,
        71,
        one_tag(RunSpec::set(n, Mode::Transaction { batch })),
    )
    .await
    .expect("a one-tag MULTI/EXEC run");
    assert_eq!(tx.summary.done, n);
    assert_eq!(only_master(&tx, &nodes), owner);
    assert_eq!(minus(&calls(&nodes, "multi").await, &before.0), one);
    assert_eq!(minus(&calls(&nodes, "exec").await, &before.1), one);
    let mut all = vec![0; 3];
    all[owner] = n;
    assert_eq!(
        minus(&calls(&nodes, "set").await, &sets),
        all,
        "every SET once"
    );
    assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);

    // MSET, then MGET of seeded keys: the seed's SETs and the MGETs on the same master.
    for (command, multi, run_id) in [(Command::Set, "mset", 72), (Command::Get, "mget", 73)] {
        let owner = tag_owner(&nodes, run_id).await;
        let before = calls(&nodes, multi).await;
        let outcome = run(
            &target,
            run_id,
            one_tag(RunSpec {
                command,
                ..RunSpec::set(n, Mode::Mset { batch })
            }),
        )
        .await
        .unwrap_or_else(|e| panic!("a one-tag {multi} run: {e}"));
        assert_eq!(outcome.summary.done, n);
        assert_eq!(only_master(&outcome, &nodes), owner);
        let mut one = vec![0; 3];
        one[owner] = n / u64::from(batch);
        assert_eq!(minus(&calls(&nodes, multi).await, &before), one, "{multi}");
        assert_eq!(dbsizes(&nodes).await, [0, 0, 0], "{multi}");
    }

    // Over spread keys, refused before anything is sent, saying why and what to choose.
    let before = calls(&nodes, "set").await;
    for mode in [Mode::Transaction { batch }, Mode::Mset { batch }] {
        let err = run(&target, 74, RunSpec::set(n, mode))
            .await
            .expect_err("keys of many slots in one transaction or MSET");
        assert!(
            err.contains("needs every key in one slot") && err.contains("one hash tag"),
            "{err}"
        );
    }
    assert_eq!(calls(&nodes, "set").await, before, "nothing ran");
    // Only the one-tag MSET run's.
    assert_eq!(
        calls(&nodes, "mset").await.iter().sum::<u64>(),
        n / u64::from(batch)
    );
    assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);
}

/// How many of run `run_id`'s spread keys `0..n` each node serves, as the cluster's own map
/// says.
async fn spread_share(nodes: &[RedisTarget], run_id: u64, n: u64) -> Vec<u64> {
    let mut admin = nodes[0].admin_connection().await.unwrap();
    let map = pipescope::cluster::SlotMap::discover(&mut admin, &nodes[0].addr())
        .await
        .unwrap();
    let mut share = vec![0; 3];
    for i in 0..n {
        let key = shared::keys::key(run_id, i);
        share[node_of(
            nodes,
            &map.masters()[map.master_of(key_slot(key.as_bytes()))].addr(),
        )] += 1;
    }
    share
}

/// What a cluster run's shares say each node did: (commands, round trips) in node order.
fn shares(outcome: &RunOutcome, nodes: &[RedisTarget]) -> Vec<(u64, u64)> {
    let mut out = vec![(0, 0); 3];
    for m in &outcome.summary.cluster.as_ref().expect("shares").masters {
        out[node_of(nodes, &m.addr)] = (m.commands, m.round_trips);
    }
    out
}

#[tokio::test]
async fn get_runs_seed_each_master_with_its_keys_and_read_each_once() {
    let (_cluster, target, nodes) = three_masters();
    for (mode, n, run_id) in [
        (Mode::pipelined(500), 5_000u64, 81),
        (Mode::Sequential, 300, 82),
    ] {
        let expected = spread_share(&nodes, run_id, n).await;
        let (sets, gets) = (calls(&nodes, "set").await, calls(&nodes, "get").await);
        let outcome = run(
            &target,
            run_id,
            RunSpec {
                command: Command::Get,
                ..RunSpec::set(n, mode)
            },
        )
        .await
        .unwrap_or_else(|e| panic!("GET {mode:?}: {e}"));
        assert_eq!(outcome.summary.done, n);
        assert_eq!(
            minus(&calls(&nodes, "set").await, &sets),
            expected,
            "seeded"
        );
        assert_eq!(
            minus(&calls(&nodes, "get").await, &gets),
            expected,
            "read once"
        );
        let by_share: Vec<u64> = shares(&outcome, &nodes).iter().map(|s| s.0).collect();
        assert_eq!(by_share, expected);
        assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);
    }
}

#[tokio::test]
async fn multiplexed_runs_send_each_command_once_to_its_keys_master() {
    let (_cluster, target, nodes) = three_masters();
    let n = 5_000u64;
    for (command, stat, run_id) in [(Command::Set, "set", 91), (Command::Get, "get", 92)] {
        let expected = spread_share(&nodes, run_id, n).await;
        let before = calls(&nodes, stat).await;
        let outcome = run(
            &target,
            run_id,
            RunSpec {
                command,
                ..RunSpec::set(n, Mode::Multiplexed { in_flight: 64 })
            },
        )
        .await
        .unwrap_or_else(|e| panic!("multiplexed {stat}: {e}"));
        assert_eq!(outcome.summary.done, n);
        assert_eq!(
            minus(&calls(&nodes, stat).await, &before),
            expected,
            "{stat}"
        );
        let s = shares(&outcome, &nodes);
        assert_eq!(s.iter().map(|s| s.0).collect::<Vec<_>>(), expected);
        // Every request is kept (5,000) and names the master that answered it.
        let (drawn, commands) = spans_by_master(&outcome);
        assert_eq!(
            drawn, commands,
            "{stat}: spans per master against commands per master"
        );
        assert!(s.iter().all(|s| s.1 > 0), "every master read from: {s:?}");
        assert_eq!(
            s.iter().map(|s| s.1).sum::<u64>(),
            outcome.summary.round_trips
        );
        // A window of 64 over three masters: at least count / 64 reads.
        assert!(
            outcome.summary.round_trips >= n / 64,
            "{}",
            outcome.summary.round_trips
        );
        assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);
    }

    // One hash tag: every INCR on the tag's master.
    let owner = tag_owner(&nodes, 93).await;
    let before = calls(&nodes, "incr").await;
    let outcome = run(
        &target,
        93,
        one_tag(RunSpec {
            command: Command::Incr,
            ..RunSpec::set(3_000, Mode::Multiplexed { in_flight: 32 })
        }),
    )
    .await
    .expect("a one-tag multiplexed run");
    assert_eq!(only_master(&outcome, &nodes), owner);
    let mut one = vec![0; 3];
    one[owner] = 3_000;
    assert_eq!(minus(&calls(&nodes, "incr").await, &before), one);
    assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);

    // Busy-polling one socket would hold off the others' replies: refused in words.
    let err = run(
        &target,
        94,
        RunSpec {
            wait: shared::Wait::BusyPoll { us: 100 },
            ..RunSpec::set(100, Mode::Multiplexed { in_flight: 8 })
        },
    )
    .await
    .expect_err("busy-poll over spread masters");
    assert!(err.contains("busy-polling a multiplexed run"), "{err}");
}

#[tokio::test]
async fn the_other_client_incrs_the_runs_counter_on_its_master() {
    let (_cluster, target, nodes) = three_masters();
    for (layout, mode, run_id) in [
        (KeyLayout::OneTag, Mode::Transaction { batch: 100 }, 101),
        (KeyLayout::OneTag, Mode::pipelined(100), 102),
        (KeyLayout::Spread, Mode::pipelined(100), 103),
    ] {
        let before = calls(&nodes, "incr").await;
        let outcome = run(
            &target,
            run_id,
            RunSpec {
                keys: layout,
                ..RunSpec::with_other_client(3_000, mode)
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{layout:?} {mode:?}: {e}"));
        let owner = only_master(&outcome, &nodes);
        // The counter's master, as the cluster's map says.
        let counter = shared::keys::counter(run_id, layout);
        let mut admin = nodes[0].admin_connection().await.unwrap();
        let map = pipescope::cluster::SlotMap::discover(&mut admin, &nodes[0].addr())
            .await
            .unwrap();
        assert_eq!(
            owner,
            node_of(
                &nodes,
                &map.masters()[map.master_of(key_slot(counter.as_bytes()))].addr()
            )
        );
        let seen = outcome.summary.interleaving.as_ref().expect("interleaving");
        assert_eq!(seen.batches, 30, "{layout:?} {mode:?}");
        assert_eq!(
            seen.final_value,
            Some(3_000 + seen.other_commands),
            "nothing lost: {seen:?}"
        );
        let mut one = vec![0; 3];
        one[owner] = 3_000 + seen.other_commands;
        assert_eq!(
            minus(&calls(&nodes, "incr").await, &before),
            one,
            "both sides' INCRs there"
        );
        assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);
    }
}

#[tokio::test]
async fn a_pool_over_spread_keys_sends_each_command_to_its_master_and_one_tag_to_one() {
    let (_cluster, target, nodes) = three_masters();
    let n = 3_000u64;
    for (command, stat, run_id) in [(Command::Set, "set", 97), (Command::Get, "get", 98)] {
        let expected = spread_share(&nodes, run_id, n).await;
        let before = calls(&nodes, stat).await;
        let outcome = run(
            &target,
            run_id,
            RunSpec {
                command,
                ..RunSpec::set(n, Mode::Connections { connections: 8 })
            },
        )
        .await
        .unwrap_or_else(|e| panic!("a pool of {stat}s over spread keys: {e}"));
        assert_eq!(outcome.summary.done, n);
        assert_eq!(outcome.summary.round_trips, n, "one round trip per command");
        assert_eq!(
            minus(&calls(&nodes, stat).await, &before),
            expected,
            "{stat}: every command once, on its key's master"
        );
        let s = shares(&outcome, &nodes);
        assert_eq!(s.iter().map(|s| s.0).collect::<Vec<_>>(), expected);
        assert_eq!(
            s.iter().map(|s| s.1).collect::<Vec<_>>(),
            expected,
            "a round trip per command on each master"
        );
        let (drawn, commands) = spans_by_master(&outcome);
        assert_eq!(drawn, commands, "every request named on its master's lane");
        assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);
    }

    // One hash tag: the pool on that slot's master.
    let owner = tag_owner(&nodes, 95).await;
    let before = calls(&nodes, "set").await;
    let outcome = run(
        &target,
        95,
        one_tag(RunSpec::set(2_000, Mode::Connections { connections: 8 })),
    )
    .await
    .expect("a one-tag pool");
    assert_eq!(outcome.summary.round_trips, 2_000);
    assert_eq!(only_master(&outcome, &nodes), owner);
    let mut one = vec![0; 3];
    one[owner] = 2_000;
    assert_eq!(minus(&calls(&nodes, "set").await, &before), one);
    let (drawn, commands) = spans_by_master(&outcome);
    assert_eq!(drawn, commands);
    assert_eq!(dbsizes(&nodes).await, [0, 0, 0]);
}
