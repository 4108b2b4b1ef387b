//! What forwarding through the proxy costs by itself, measured, and the compensation that
//! cancels it: the proxy releases each chunk that much earlier than arrival + delay.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use shared::{Mode, Network};

use super::delay_line::{DelayProxy, micros_u32};
use crate::median::median;
use crate::target::{RedisTarget, TargetError};

/// The proxy's own cost taken off each direction's delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Compensation {
    pub out: Duration,
    pub back: Duration,
}

/// The one-way delay used to measure the proxy's own cost is the network's own (the cost
/// grows with it on a busy machine: threads idle longer wake slower), within these bounds:
/// long enough that the hand-over between the proxy's threads is hidden in the delay, as it is
/// then, short enough to measure quickly (beyond 1 ms the cost is under 5 % of the delay).
const CALIBRATION_DELAY: std::ops::RangeInclusive<Duration> =
    Duration::from_micros(100)..=Duration::from_millis(1);
const CALIBRATION_ROUNDS: usize = 150;

/// What forwarding through the proxy adds to a round trip beyond the delays dialled in.
///
/// Why: a connection through the proxy crosses two extra loopback hops, and each direction
/// pays a thread wake-up (the reader only stamps a chunk's arrival once the kernel has woken
/// it) and a second write. That was ~70 µs per round trip on a busy 2-core machine: a 250 µs
/// delay measured 600 µs instead of 2·250 + 31. The cost is the machine's (and its load's), so
/// it is measured, once per proxy: round trips directly and through an uncompensated proxy at
/// `delay` (see `calibration_delay`), interleaved so both see the same load, medians. The proxy
/// then releases chunks that much earlier, never before they arrived.
///
/// This one times small request/reply round trips to an echo server, so it works in front of
/// anything (`DelayProxy::start`); it is a lower bound of what the engine pays. The hub and
/// `bench` calibrate with the engine and Redis themselves (`engine_forwarding_cost`).
pub fn forwarding_cost(delay: Duration) -> std::io::Result<Duration> {
    let echo = EchoServer::start(2)?;
    forwarding_cost_to(echo.addr, delay)
}

/// The delay to calibrate at for `network`: its mean one-way delay, within `CALIBRATION_DELAY`.
pub fn calibration_delay(network: &Network) -> Duration {
    let mean = Duration::from_micros(network.round_trip_us() / 2);
    mean.clamp(*CALIBRATION_DELAY.start(), *CALIBRATION_DELAY.end())
}

/// `forwarding_cost` measured against an echo server at `upstream` (two connections to it) at
/// one-way `delay`.
fn forwarding_cost_to(upstream: SocketAddr, delay: Duration) -> std::io::Result<Duration> {
    let raw = DelayProxy::start_compensated(
        upstream,
        Network::symmetric(micros_u32(delay)),
        Compensation::default(),
    )?;
    // About the size of a SET.
    let request: &[u8] = b"*3\r\n$3\r\nSET\r\n$14\r\npipescope:0:k0\r\n$2\r\nv0\r\n";
    // The client is what the engine is: a single-threaded tokio runtime on a thread of its
    // own, writing, then awaiting the reply (a blocking client measured half the cost the
    // engine then paid).
    let via_addr = raw.addr();
    let measure = move || -> std::io::Result<Duration> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut direct = tokio::net::TcpStream::connect(upstream).await?;
            let mut via = tokio::net::TcpStream::connect(via_addr).await?;
            direct.set_nodelay(true)?;
            via.set_nodelay(true)?;
            let mut reply = Vec::with_capacity(256);
            let (mut d, mut v) = (Vec::new(), Vec::new());
            for round in 0..CALIBRATION_ROUNDS + 10 {
                for (s, times) in [(&mut direct, &mut d), (&mut via, &mut v)] {
                    let t = Instant::now();
                    s.write_all(request).await?;
                    reply.clear();
                    loop {
                        let read =
                            tokio::time::timeout(Duration::from_secs(5), s.read_buf(&mut reply))
                                .await
                                .map_err(|_| {
                                    std::io::Error::from(std::io::ErrorKind::TimedOut)
                                })??;
                        if read == 0 {
                            return Err(std::io::ErrorKind::UnexpectedEof.into());
                        }
                        if reply.len() >= request.len() {
                            break;
                        }
                    }
                    // The first rounds warm up caches and connections.
                    if round >= 10 {
                        times.push(t.elapsed());
                    }
                }
            }
            let (d, v) = (median(d).unwrap_or_default(), median(v).unwrap_or_default());
            Ok(v.saturating_sub(2 * delay).saturating_sub(d))
        })
    };
    std::thread::Builder::new()
        .name("proxy-calibrate".into())
        .spawn(measure)?
        .join()
        .map_err(|_| std::io::Error::other("calibration panicked"))?
}

impl Compensation {
    /// Takes a round trip's forwarding cost off the return leg, as far as its delay allows,
    /// and only the rest off the outbound one. So a request never reaches Redis sooner than the
    /// outbound delay after it reached the proxy (the tap's engine → Redis leg is ≥ D), and
    /// the round trip as a whole comes out at 2·D plus the direct one.
    pub fn for_network(cost: Duration, network: &Network) -> Compensation {
        let back = cost.min(Duration::from_micros(network.delay_back_us as u64));
        Compensation {
            out: cost - back,
            back,
        }
    }
}

/// An echo server for `connections` connections (a thread each), for calibration.
struct EchoServer {
    addr: SocketAddr,
}

impl EchoServer {
    fn start(connections: usize) -> std::io::Result<EchoServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        std::thread::Builder::new()
            .name("proxy-calibrate".into())
            .spawn(move || {
                for s in listener.incoming().take(connections) {
                    let Ok(mut s) = s else { continue };
                    let _ = s.set_nodelay(true);
                    let _ =
                        std::thread::Builder::new()
                            .name("proxy-echo".into())
                            .spawn(move || {
                                let mut buf = [0u8; 4096];
                                while let Ok(n @ 1..) = s.read(&mut buf) {
                                    if s.write_all(&buf[..n]).is_err() {
                                        break;
                                    }
                                }
                            });
                }
            })?;
        Ok(EchoServer { addr })
    }
}

/// The calibration's cost is capped: a stall during it must not make the proxy release
/// chunks much earlier than the delay dialled in.
pub(super) const MAX_COMPENSATION: Duration = Duration::from_micros(200);
/// Sequential SETs per calibration run, and runs per side: many short runs, alternating, so a
/// burst of load lands on both sides alike.
const ENGINE_CALIBRATION: (u64, usize) = (50, 8);
/// The share of the measured cost taken off. On a busy machine one calibration's estimate
/// varies by ±20–30 % from the next; taking off a little less keeps a round trip from coming
/// out under 2·D (a network never delivers faster than its delay), at the price of a few µs
/// over 2·D + loopback.
const COMPENSATED_SHARE: f64 = 0.8;

/// `forwarding_cost`, measured with the engine itself against Redis: short sequential runs
/// directly and through an uncompensated proxy at `calibration_delay(network)`, alternating,
/// medians of their median round trips. The engine is what the page's numbers come from, and
/// it pays more for the proxy than a bare client does: directly its reply often arrives before
/// it has gone to sleep, through the proxy it always sleeps and is woken (on a busy machine,
/// tens of µs more per round trip). Its keys are removed after each run, as a run's are.
pub async fn engine_forwarding_cost(
    target: &RedisTarget,
    upstream: SocketAddr,
    network: &Network,
) -> Result<Duration, TargetError> {
    use crate::engine::{self, RunContext, RunError, keys};
    let delay = calibration_delay(network);
    let raw = DelayProxy::start_compensated(
        upstream,
        Network::symmetric(micros_u32(delay)),
        Compensation::default(),
    )
    .map_err(|cause| TargetError::Unreachable {
        addr: target.addr(),
        cause,
    })?;
    let routed = target.through(raw.addr());
    let (count, runs) = ENGINE_CALIBRATION;
    let mut run_id = keys::first_run_id();
    let (mut direct, mut via) = (Vec::new(), Vec::new());
    for round in 0..runs * 2 {
        run_id += 1;
        let (route, times) = if round % 2 == 0 {
            (target, &mut direct)
        } else {
            (&routed, &mut via)
        };
        let ctx = RunContext {
            record_spans: false,
            ..RunContext::new(run_id, Default::default(), Default::default())
        };
        let spec = shared::RunSpec::set(count, Mode::Sequential);
        match engine::run_and_clean_up(route, spec, ctx).await {
            Ok(o) => times.push(o.summary.latency.p50_us),
            Err(RunError::Cleanup { source, .. }) => return Err(source),
            Err(e) => {
                return Err(TargetError::Unreachable {
                    addr: target.addr(),
                    cause: std::io::Error::other(format!("calibrating the latency proxy: {e}")),
                });
            }
        }
    }
    let excess = median(via).unwrap_or_default()
        - 2.0 * delay.as_micros() as f64
        - median(direct).unwrap_or_default();
    let cost = Duration::from_nanos((excess.max(0.0) * COMPENSATED_SHARE * 1000.0) as u64)
        .min(MAX_COMPENSATION);
    tracing::debug!(
        ?delay,
        ?cost,
        "calibrated the latency proxy with the engine"
    );
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_return_leg_absorbs_the_compensation_first() {
        let cost = Duration::from_micros(40);
        let c = Compensation::for_network(cost, &Network::symmetric(250));
        assert_eq!((c.out, c.back), (Duration::ZERO, cost));
        let short_back = Network {
            delay_back_us: 10,
            ..Network::symmetric(250)
        };
        let c = Compensation::for_network(cost, &short_back);
        assert_eq!(
            (c.out, c.back),
            (Duration::from_micros(30), Duration::from_micros(10))
        );
    }
}
