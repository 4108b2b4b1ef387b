//! Where a run's engine connects: straight to Redis on loopback, else through a delay-line
//! proxy for the run's network, kept for the runs after it.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shared::{Mode, Network, RoundTripSplit, RunSpec, Timeline};

use super::calibration::{forwarding_cost, forwarding_cost_on_node};
use super::delay_line::DelayProxy;
use super::schedule::Compensation;
use super::wire_tap::stamp_timeline;
use crate::cluster::{SlotMap, key_slot};
use crate::engine::{self, RunContext, RunError, RunOutcome};
use crate::target::{RedisTarget, TargetError};

/// Delay-line proxies in front of one Redis, one per network in use: started when a run first
/// asks for that network and reused by later runs with the same one (a run at a time uses
/// one; the few most recent are kept, so switching between presets is quick).
#[derive(Default)]
pub struct Proxies {
    kept: tokio::sync::Mutex<Vec<Arc<DelayProxy>>>,
}

/// Proxies kept for reuse (a cluster's masters each have one per network).
const KEPT_PROXIES: usize = 8;

/// Where a run's engine connects: straight to Redis, or through a proxy.
pub struct Route {
    pub target: RedisTarget,
    pub proxy: Option<Arc<DelayProxy>>,
    /// On a cluster behind a dialled network: each master's proxy (`target` routes each
    /// master's connections through its own). Their wire taps are not read: a cluster run's
    /// timeline has no split of the round trip.
    pub masters: Vec<Arc<DelayProxy>>,
}

impl Proxies {
    /// The route for a run over `network` to `target`: direct for loopback, else through a
    /// proxy with that profile (started, and calibrated with the engine, if there is none yet:
    /// see `forwarding_cost`). On a cluster, one such proxy per master.
    pub async fn route(
        &self,
        target: &RedisTarget,
        network: Network,
    ) -> Result<Route, TargetError> {
        if network.is_loopback() {
            return Ok(Route {
                target: target.clone(),
                proxy: None,
                masters: Vec::new(),
            });
        }
        if target.is_cluster() {
            return self.cluster_route(target, network).await;
        }
        let upstream = target.socket_addr().await?;
        let proxy = self
            .proxy_for(target, upstream, network, || {
                forwarding_cost(target, upstream, &network)
            })
            .await?;
        Ok(Route {
            target: target.through(proxy.addr()),
            proxy: Some(proxy),
            masters: Vec::new(),
        })
    }

    /// On a cluster: a proxy per master of its slot map (read now), each calibrated against
    /// its own master, so each master's round trips cross the network dialled in.
    async fn cluster_route(
        &self,
        target: &RedisTarget,
        network: Network,
    ) -> Result<Route, TargetError> {
        let mut admin = target.admin_connection().await?;
        let map = SlotMap::discover(&mut admin, &target.addr()).await?;
        let mut via = Vec::new();
        let mut masters = Vec::new();
        for (m, master) in map.masters().iter().enumerate() {
            let node = target.at(&master.host, master.port)?;
            let upstream = node.socket_addr().await?;
            // Calibrating writes keys under one hash tag, the run id: only ids whose slot
            // this master serves.
            let on_node = |id: u64| map.master_of(key_slot(id.to_string().as_bytes())) == m;
            let proxy = self
                .proxy_for(&node, upstream, network, || {
                    forwarding_cost_on_node(&node, upstream, &network, &on_node)
                })
                .await?;
            via.push((master.addr(), proxy.addr()));
            masters.push(proxy);
        }
        Ok(Route {
            target: target.through_masters(via),
            proxy: None,
            masters,
        })
    }

    /// The kept proxy for `network` in front of `upstream`, or a new one compensated by what
    /// `calibrate` measures.
    async fn proxy_for<F>(
        &self,
        target: &RedisTarget,
        upstream: SocketAddr,
        network: Network,
        calibrate: impl FnOnce() -> F,
    ) -> Result<Arc<DelayProxy>, TargetError>
    where
        F: Future<Output = Result<Duration, TargetError>>,
    {
        let mut kept = self.kept.lock().await;
        if let Some(at) = kept
            .iter()
            .position(|p| p.network() == network && p.upstream() == upstream)
        {
            let p = kept.remove(at);
            kept.push(p.clone());
            return Ok(p);
        }
        let unreachable = |cause| TargetError::Unreachable {
            addr: target.addr(),
            cause,
        };
        let cost = calibrate().await?;
        let compensation = Compensation::for_network(cost, &network);
        let p =
            DelayProxy::start_compensated(upstream, network, compensation).map_err(unreachable)?;
        tracing::info!(
            network = %network.label(),
            %upstream,
            compensation = ?p.compensation(),
            "started a delay-line proxy"
        );
        let p = Arc::new(p);
        kept.push(p.clone());
        if kept.len() > KEPT_PROXIES {
            kept.remove(0);
        }
        Ok(p)
    }
}

impl Route {
    /// Runs `spec` over this route as the hub and `bench` do: the run with Redis's own time
    /// and its keys removed (`engine::run_and_clean_up`), then, through the proxy, its wire-tap
    /// stamps in the timeline and the split.
    pub async fn run(&self, spec: RunSpec, ctx: RunContext) -> Result<RunOutcome, RunError> {
        if let Some(proxy) = &self.proxy {
            proxy.expect_run(spec.mode.connections());
        }
        let mut outcome = engine::run_and_clean_up(&self.target, spec, ctx).await?;
        outcome.summary.split = self
            .stamp(&spec, outcome.started, &mut outcome.timeline)
            .await;
        Ok(outcome)
    }

    /// After a finished run over this route: its wire-tap stamps in `timeline` (the
    /// connection's handshake skipped), and the split with the proxy's compensation.
    pub async fn stamp(
        &self,
        spec: &RunSpec,
        started: Instant,
        timeline: &mut Timeline,
    ) -> Option<RoundTripSplit> {
        let proxy = self.proxy.as_ref()?;
        // One tap per connection of the run, in the order the engine opened them.
        let taps = proxy.last_taps(spec.mode.connections() as usize)?;
        // A run's one connection asks CLIENT ID before its first command (for the memory
        // sampler); a pool's connections do not.
        let handshake = match spec.mode {
            Mode::Connections { .. } => self.target.handshake_commands().len(),
            _ => self.target.commands_before_run(),
        };
        let mut logs = Vec::with_capacity(taps.len());
        for tap in taps {
            let log = tap.settle(Duration::from_secs(1)).await;
            logs.push(log.after_handshake(handshake));
        }
        let early = proxy.compensation();
        let us = |d: Duration| d.as_nanos() as f64 / 1000.0;
        if logs.iter().any(|l| l.encrypted) {
            // TLS: the tap read nothing, and says so instead of a split.
            return Some(RoundTripSplit {
                encrypted: true,
                early_out_us: us(early.out),
                early_back_us: us(early.back),
                ..Default::default()
            });
        }
        let split = stamp_timeline(timeline, spec.mode, spec.count, started, &logs)?;
        Some(RoundTripSplit {
            early_out_us: us(early.out),
            early_back_us: us(early.back),
            ..split
        })
    }
}
