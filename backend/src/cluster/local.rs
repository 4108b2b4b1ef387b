//! A Redis Cluster of pipescope's own: `masters` redis-servers with `--cluster-enabled yes` on
//! free loopback ports, no persistence, the slots split evenly between them; stopped (and
//! their cluster files removed) when dropped, like the single embedded server. Optionally over
//! TLS as well (`start_tls`): each node also listens on a TLS port, and the nodes talk to each
//! other over TLS (`--tls-cluster yes`).

use std::time::{Duration, Instant};

use super::slot::SLOTS;
use crate::local_redis::{ClusterNode, Launch, LocalRedis, LocalRedisError, TlsFiles, free_port};

/// How long the nodes may take to agree that the cluster is whole.
const FORM_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum LocalClusterError {
    #[error("starting cluster node {node}: {source}")]
    Node {
        node: usize,
        source: LocalRedisError,
    },
    #[error("a cluster needs at least one master (asked for {0})")]
    NoMasters(usize),
    #[error("a place for the cluster's node files: {0}")]
    Files(std::io::Error),
    #[error("cluster node on port {port} refused {what}: {source}")]
    Command {
        port: u16,
        what: &'static str,
        source: redis::RedisError,
    },
    #[error(
        "the cluster did not form within {FORM_TIMEOUT:?}: node on port {port} still says {state}"
    )]
    NotFormed { port: u16, state: String },
}

/// A running local cluster.
#[derive(Debug)]
pub struct LocalCluster {
    nodes: Vec<LocalRedis>,
    /// Each node's TLS port, for a cluster started with `start_tls`.
    tls_ports: Vec<u16>,
    /// Holds the nodes' `nodes.conf` files; removed on drop.
    _files: tempfile::TempDir,
}

impl LocalCluster {
    /// Starts `masters` nodes, gives each an even share of the slots, introduces them to each
    /// other and waits until every node says `cluster_state:ok`.
    pub fn start(masters: usize) -> Result<LocalCluster, LocalClusterError> {
        Self::start_with(masters, None)
    }

    /// `start`, each node also listening on a TLS port with `tls`'s certificate (clients need
    /// no certificate of their own) and the nodes' bus over TLS (`--tls-cluster yes`), so a
    /// client on a TLS port is told the other nodes' TLS ports. The slots are assigned over
    /// the plain ports.
    pub fn start_tls(masters: usize, tls: TlsFiles<'_>) -> Result<LocalCluster, LocalClusterError> {
        Self::start_with(masters, Some(tls))
    }

    fn start_with(
        masters: usize,
        tls: Option<TlsFiles<'_>>,
    ) -> Result<LocalCluster, LocalClusterError> {
        if masters == 0 {
            return Err(LocalClusterError::NoMasters(masters));
        }
        let files = tempfile::Builder::new()
            .prefix("pipescope-cluster-")
            .tempdir()
            .map_err(LocalClusterError::Files)?;
        let mut nodes = Vec::with_capacity(masters);
        let mut buses = Vec::with_capacity(masters);
        for node in 0..masters {
            let bus_port = free_port().map_err(|e| LocalClusterError::Node {
                node,
                source: LocalRedisError::Spawn(e),
            })?;
            let config_file = format!("nodes-{node}.conf");
            let redis = LocalRedis::launch(&Launch {
                tls,
                cluster: Some(ClusterNode {
                    bus_port,
                    config_file: &config_file,
                    dir: files.path(),
                }),
                ..Launch::default()
            })
            .map_err(|source| LocalClusterError::Node { node, source })?;
            nodes.push(redis);
            buses.push(bus_port);
        }
        let tls_ports = nodes.iter().filter_map(LocalRedis::tls_port).collect();
        let cluster = LocalCluster {
            nodes,
            tls_ports,
            _files: files,
        };
        cluster.assign_slots()?;
        cluster.meet(&buses)?;
        cluster.wait_formed()?;
        Ok(cluster)
    }

    /// The masters' ports, in slot order (the first serves slot 0).
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(LocalRedis::port).collect()
    }

    /// A URL of one node: clients discover the others from it.
    pub fn url(&self) -> String {
        self.nodes[0].url()
    }

    /// A `rediss://` URL of one node's TLS port, for a cluster started with `start_tls`.
    pub fn tls_url(&self) -> Option<String> {
        self.tls_ports
            .first()
            .map(|port| format!("rediss://127.0.0.1:{port}/"))
    }

    /// Each node's TLS port (empty unless started with `start_tls`), in the order of `ports`.
    pub fn tls_ports(&self) -> &[u16] {
        &self.tls_ports
    }

    /// Node `i`'s URL.
    pub fn node_url(&self, i: usize) -> String {
        self.nodes[i].url()
    }

    fn connection(port: u16) -> Result<redis::Connection, LocalClusterError> {
        let url = format!("redis://127.0.0.1:{port}/");
        redis::Client::open(url)
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(5)))
            .map_err(|source| LocalClusterError::Command {
                port,
                what: "a connection",
                source,
            })
    }

    /// Slots `[i * n / masters, (i + 1) * n / masters)` to master `i`.
    fn assign_slots(&self) -> Result<(), LocalClusterError> {
        let n = usize::from(SLOTS);
        let masters = self.nodes.len();
        for (i, node) in self.nodes.iter().enumerate() {
            let (first, last) = (i * n / masters, (i + 1) * n / masters - 1);
            let port = node.port();
            redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(first)
                .arg(last)
                .exec(&mut Self::connection(port)?)
                .map_err(|source| LocalClusterError::Command {
                    port,
                    what: "CLUSTER ADDSLOTSRANGE",
                    source,
                })?;
        }
        Ok(())
    }

    /// The first node meets every other; gossip does the rest.
    fn meet(&self, buses: &[u16]) -> Result<(), LocalClusterError> {
        let first = self.nodes[0].port();
        let mut conn = Self::connection(first)?;
        for (node, bus) in self.nodes.iter().zip(buses).skip(1) {
            redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(node.port())
                .arg(*bus)
                .exec(&mut conn)
                .map_err(|source| LocalClusterError::Command {
                    port: first,
                    what: "CLUSTER MEET",
                    source,
                })?;
        }
        Ok(())
    }

    /// Until every node says `cluster_state:ok` and knows all the others.
    fn wait_formed(&self) -> Result<(), LocalClusterError> {
        let deadline = Instant::now() + FORM_TIMEOUT;
        for node in &self.nodes {
            let port = node.port();
            let mut conn = Self::connection(port)?;
            loop {
                let info: String =
                    redis::cmd("CLUSTER")
                        .arg("INFO")
                        .query(&mut conn)
                        .map_err(|source| LocalClusterError::Command {
                            port,
                            what: "CLUSTER INFO",
                            source,
                        })?;
                let field = |name: &str| {
                    info.lines()
                        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                        .map(str::trim)
                        .unwrap_or("?")
                        .to_string()
                };
                let (state, known) = (field("cluster_state"), field("cluster_known_nodes"));
                if state == "ok" && known == self.nodes.len().to_string() {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(LocalClusterError::NotFormed {
                        port,
                        state: format!("cluster_state:{state}, cluster_known_nodes:{known}"),
                    });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }
}
