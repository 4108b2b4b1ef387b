//! From `TargetArgs` to a Redis to run against: the user's, or a redis-server (or a
//! three-master cluster) of pipescope's own, stopped when the job ends.

use anyhow::Context;

use pipescope::cluster::LocalCluster;
use pipescope::local_redis::LocalRedis;
use pipescope::target::{RedisTarget, TlsOptions};

use super::args::TargetArgs;

/// A Redis a job can use, and whatever pipescope started to provide it (stopped on drop).
pub struct Connected {
    pub target: RedisTarget,
    pub redis_version: String,
    /// pipescope started it (no --redis-url).
    pub own: bool,
    _local: Option<pipescope::local_redis::Supervised>,
    _cluster: Option<LocalCluster>,
}

impl TargetArgs {
    /// Parses the URL (or starts pipescope's own Redis), warns about an unverified TLS
    /// certificate, reads the server's version and, on a cluster, names its masters.
    ///
    /// Call it on the main task: redis-server is tied to the thread that spawned it (see
    /// local_redis::die_with_parent), and the main thread lives as long as the process.
    pub async fn connect(&self) -> anyhow::Result<Connected> {
        self.connect_or("omit --redis-url to use pipescope's own local redis-server")
            .await
    }

    /// `connect`, with what else the job offers when the named Redis cannot be reached
    /// (`otherwise`, e.g. "omit --redis-url …"; empty where it offers nothing else).
    pub async fn connect_or(&self, otherwise: &str) -> anyhow::Result<Connected> {
        let tls = TlsOptions {
            ca: self.tls_ca.clone(),
            insecure: self.tls_insecure,
        };
        let (mut local, mut cluster) = (None, None);
        let target = match &self.redis_url {
            Some(url) if self.cluster => RedisTarget::parse_with(url, &tls)?.as_cluster(),
            Some(url) => RedisTarget::parse_with(url, &tls)?,
            None if self.tls_ca.is_some() || self.tls_insecure => {
                anyhow::bail!("--tls-ca and --tls-insecure need a rediss:// --redis-url")
            }
            None if self.cluster => {
                let c =
                    LocalCluster::start(3).context("starting the embedded three-master cluster")?;
                tracing::info!(ports = ?c.ports(), "started embedded cluster");
                let target = RedisTarget::parse(&c.url())?.as_cluster();
                cluster = Some(c);
                target
            }
            None => {
                let l = LocalRedis::supervised().context("starting the embedded redis-server")?;
                tracing::info!(port = l.port(), "started embedded redis-server");
                let target = RedisTarget::parse(&l.url())?;
                local = Some(l);
                target
            }
        };
        if target.tls_trust() == Some(&pipescope::tls::Trust::Insecure) {
            eprintln!(
                "pipescope: WARNING: --tls-insecure: the Redis server's certificate is NOT verified; \
                 anyone between here and {} can read and change this traffic. Use --tls-ca FILE instead.",
                target.addr()
            );
        }
        let redis_version = match target.server_version().await {
            Err(e @ pipescope::target::TargetError::Unreachable { .. })
                if !otherwise.is_empty() =>
            {
                anyhow::bail!("{e}, or {otherwise}")
            }
            version => version?,
        };
        if target.is_cluster() {
            // Said now, before anything runs: not a cluster, or slots no master serves.
            let mut admin = target.admin_connection().await?;
            let map = pipescope::cluster::SlotMap::discover(&mut admin, &target.addr()).await?;
            let masters: Vec<String> = map.masters().iter().map(|m| m.addr()).collect();
            eprintln!(
                "pipescope: Redis Cluster, {} masters: {}",
                masters.len(),
                masters.join(", ")
            );
        }
        Ok(Connected {
            target,
            redis_version,
            own: self.redis_url.is_none(),
            _local: local,
            _cluster: cluster,
        })
    }
}
