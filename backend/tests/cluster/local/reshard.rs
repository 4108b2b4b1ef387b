//! Slots resharded mid-run, as `redis-cli --cluster reshard` moves them: MOVED and ASK are followed and every SET runs once.

use super::*;
use crate::support;

/// Moves `slots` from the node on `from` to the node on `to` as `redis-cli --cluster reshard`
/// does: IMPORTING on the target, MIGRATING on the source, held for `hold` (new keys of those
/// slots are answered ASK meanwhile), the keys MIGRATEd, then the slots given to the target
/// on every master.
fn reshard(ports: &[u16], from: u16, to: u16, slots: &[u16], hold: std::time::Duration) {
    let url = |p: u16| format!("redis://127.0.0.1:{p}/");
    let (mut src, mut dst) = (conn(&url(from)), conn(&url(to)));
    let id = |c: &mut redis::Connection| -> String {
        redis::cmd("CLUSTER").arg("MYID").query(c).unwrap()
    };
    let (src_id, dst_id) = (id(&mut src), id(&mut dst));
    for &s in slots {
        let () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(s)
            .arg("IMPORTING")
            .arg(&src_id)
            .query(&mut dst)
            .unwrap();
        let () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(s)
            .arg("MIGRATING")
            .arg(&dst_id)
            .query(&mut src)
            .unwrap();
    }
    std::thread::sleep(hold);
    for &s in slots {
        loop {
            let keys: Vec<String> = redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(s)
                .arg(1000)
                .query(&mut src)
                .unwrap();
            if keys.is_empty() {
                break;
            }
            let () = redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(to)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys)
                .query(&mut src)
                .unwrap();
        }
    }
    // The target first, then the source, then the rest (as CLUSTER SETSLOT's docs say): the
    // source answers MOVED only once the target takes the slot without ASKING.
    let mut order = vec![to, from];
    order.extend(ports.iter().filter(|&&p| p != to && p != from));
    for p in order {
        let mut c = conn(&url(p));
        for &s in slots {
            let () = redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(s)
                .arg("NODE")
                .arg(&dst_id)
                .query(&mut c)
                .unwrap();
        }
    }
}

#[tokio::test]
async fn slots_resharded_mid_run_are_followed_by_moved_and_ask_and_every_set_runs_once() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let ports = cluster.ports();
    let target = pipescope::target::RedisTarget::parse(&cluster.url())
        .unwrap()
        .as_cluster();
    // Long enough that the resharding, begun a tenth in, ends well before the run: it took
    // requests ~30,000–243,000 of 300,000 on a busy machine, and once all of them.
    let (n, run_id) = (1_000_000u64, 51);
    // The first 64 slots of the master serving slot 0 that the run's keys use, to the next.
    let map = discover(&cluster.url()).await.unwrap();
    let from = map.masters()[map.master_of(0)].port;
    let to = *ports.iter().find(|&&p| p != from).unwrap();
    let mut slots: Vec<u16> = (0..n)
        .map(|i| key_slot(shared::keys::key(run_id, i).as_bytes()))
        .filter(|&s| map.masters()[map.master_of(s)].port == from)
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots.truncate(64);
    let before = set_calls(&cluster);
    let progress = std::sync::Arc::new(pipescope::recorder::Progress::default());
    let ctx = pipescope::engine::RunContext::new(run_id, progress.clone(), Default::default());
    let run = pipescope::engine::run(
        &target,
        shared::RunSpec::set(n, shared::Mode::pipelined(1000)),
        ctx,
    );
    let resharding = {
        let (ports, slots) = (ports.clone(), slots.clone());
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while progress.read().0 < n / 10 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the run never got a tenth in"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let began = progress.read().0;
            reshard(
                &ports,
                from,
                to,
                &slots,
                std::time::Duration::from_millis(300),
            );
            (began, progress.read().0)
        })
    };
    let outcome = run.await.unwrap_or_else(|f| {
        panic!(
            "the run did not complete through the resharding: {}",
            f.error
        )
    });
    let (began, ended) = resharding.join().unwrap();
    assert!(
        ended < n,
        "the resharding ended before the run ({ended} of {n} done)"
    );
    let stats = outcome
        .summary
        .cluster
        .clone()
        .expect("a cluster run's figures");
    eprintln!(
        "resharded {} slots while requests {began}–{ended} were answered: {} MOVED, {} ASK, {} map reads",
        slots.len(),
        stats.moved,
        stats.ask,
        stats.map_refreshes
    );
    assert!(stats.moved > 0, "{stats:?}");
    assert!(stats.ask > 0, "{stats:?}");
    assert!(
        (1..=stats.moved).contains(&stats.map_refreshes),
        "the map is read again after MOVED, not per command: {stats:?}"
    );
    let after = set_calls(&cluster);
    let executed: u64 = after.iter().zip(&before).map(|(a, b)| a - b).sum();
    assert_eq!(executed, n, "every SET executed exactly once");
    assert_eq!(
        stats.masters.iter().map(|m| m.commands).sum::<u64>(),
        n,
        "{stats:?}"
    );
    // Each kept span names the master that ran it: for a slot that stayed, the one the map
    // gave it; a redirected request only in a moved slot, and run where the slot went.
    let port_of = |node: u16| -> u16 {
        let addr = &stats.masters[usize::from(node)].addr;
        addr.rsplit(':').next().unwrap().parse().unwrap()
    };
    let kept: Vec<&shared::Span> = outcome
        .timeline
        .first
        .iter()
        .chain(&outcome.timeline.sampled)
        .collect();
    assert!(kept.len() > 4_000, "{} spans kept", kept.len());
    let mut redirected = 0;
    for s in &kept {
        let node = s
            .node
            .unwrap_or_else(|| panic!("span {} names no master", s.i));
        let slot = key_slot(shared::keys::key(run_id, s.i).as_bytes());
        let ran_on = port_of(node);
        if slots.contains(&slot) {
            assert!(ran_on == from || ran_on == to, "span {}: {ran_on}", s.i);
        } else {
            assert_eq!(
                ran_on,
                map.masters()[map.master_of(slot)].port,
                "span {} (slot {slot})",
                s.i
            );
        }
        if s.redirect.is_some() {
            redirected += 1;
            assert!(
                slots.contains(&slot),
                "span {} redirected from a slot that stayed",
                s.i
            );
            assert_eq!(ran_on, to, "span {} ran where Redis sent it", s.i);
        }
    }
    eprintln!(
        "{redirected} of the {} spans kept are marked redirected",
        kept.len()
    );
    assert_eq!(support::dbsizes(&cluster).iter().sum::<u64>(), n);
    // The moved slots' keys are where the map now says, with their values.
    let map = discover(&cluster.url()).await.unwrap();
    for i in (0..n).step_by(997) {
        let key = shared::keys::key(run_id, i);
        let owner = &map.masters()[map.master_of(key_slot(key.as_bytes()))];
        let v: String = redis::cmd("GET")
            .arg(&key)
            .query(&mut conn(&format!("redis://{}/", owner.addr())))
            .unwrap();
        assert_eq!(v, format!("v{i}"));
    }
    let removed = pipescope::engine::keys::remove_run_keys(&target, run_id, outcome.written)
        .await
        .unwrap();
    assert_eq!(removed, n);
    assert_eq!(support::dbsizes(&cluster), [0, 0, 0]);
}
