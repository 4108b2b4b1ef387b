//! A Redis Cluster over TLS: three masters of our own with TLS ports and their bus over TLS
//! (`LocalCluster::start_tls`, a throwaway CA), and a pipelined run over `rediss://` on it.

use pipescope::cluster::LocalCluster;
use pipescope::engine::{self, RunContext};
use pipescope::local_redis::TlsFiles;
use pipescope::target::{RedisTarget, TlsOptions};
use pipescope::tls::throwaway::Throwaway;

use crate::support;

#[tokio::test]
async fn a_pipelined_run_over_tls_reaches_every_master_on_its_tls_port() {
    let certs = Throwaway::new().expect("a throwaway CA");
    let files = TlsFiles {
        cert: &certs.cert,
        key: &certs.key,
        ca: &certs.ca,
    };
    let cluster = LocalCluster::start_tls(3, files).expect("a local cluster over TLS");
    let trust = TlsOptions {
        ca: Some(certs.ca.clone()),
        insecure: false,
    };
    let target = RedisTarget::parse_with(&cluster.tls_url().unwrap(), &trust)
        .unwrap()
        .as_cluster();
    let (n, batch, run_id) = (3_000u64, 100u32, 77);
    let spec = shared::RunSpec::set(n, shared::Mode::pipelined(batch));
    let ctx = RunContext::new(run_id, Default::default(), Default::default());
    let outcome = engine::run_and_clean_up(&target, spec, ctx)
        .await
        .expect("a pipelined run over TLS on the cluster");
    assert_eq!(outcome.summary.done, n);
    let shares = outcome.summary.cluster.expect("a cluster run's shares");
    // The engine reached every master on its TLS port (CLUSTER SLOTS over TLS names those).
    let mut reached: Vec<u16> = shares
        .masters
        .iter()
        .map(|m| m.addr.rsplit_once(':').unwrap().1.parse().unwrap())
        .collect();
    reached.sort_unstable();
    let mut tls_ports = cluster.tls_ports().to_vec();
    tls_ports.sort_unstable();
    assert_eq!(reached, tls_ports);
    assert_eq!((shares.moved, shares.ask), (0, 0));
    // Each master executed the SETs the engine says it sent it, and none is left.
    let tls_of = |plain: u16| {
        let i = cluster.ports().iter().position(|&p| p == plain).unwrap();
        cluster.tls_ports()[i]
    };
    let mut total = 0;
    for plain in cluster.ports() {
        let (sets, keys) = support::set_calls_and_keys(&format!("redis://127.0.0.1:{plain}/"));
        let share = shares
            .masters
            .iter()
            .find(|m| m.addr == format!("127.0.0.1:{}", tls_of(plain)))
            .unwrap();
        assert_eq!(sets, share.commands, "master on {plain}");
        assert!(sets > 0, "every master took some of the keys");
        assert_eq!(keys, 0, "the run's keys removed from {plain}");
        total += sets;
    }
    assert_eq!(total, n);
}
