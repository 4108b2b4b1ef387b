//! What `observe --probe` costs a client: `redis-benchmark -c 1 -P 1` (a client that waits for
//! every reply, so it waits out every hold in full: the probe's worst case) through an
//! in-process observing proxy with the probe off and on, in rounds that alternate which goes
//! first; per run with the probe, the replies held, their time and its share of the
//! connection's wall, read from the connection's own evidence, and the share of its holds
//! that decided anything (how often the probe decides on this machine: a timing, so measured
//! here rather than asserted by a test).

use std::time::Instant;

use anyhow::Context;
use serde::Serialize;

use crate::observe::Observer;
use crate::target::RedisTarget;
use crate::versus::{Median, parse_csv};

/// One round: the same run without the probe and with it.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeCostRound {
    pub without_ops_per_sec: f64,
    pub with_ops_per_sec: f64,
    /// Replies held, and of those the holds the client sent during and waited out.
    pub held: u64,
    pub sent_while_held: u64,
    pub waited_for_release: u64,
    /// Time held in all, and the probed connection's wall (µs).
    pub held_us: f64,
    pub wall_us: f64,
    /// Of the time held, what outlasted the holds' plans (the proxy woke late).
    pub late_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeCost {
    pub count: u64,
    pub rounds: Vec<ProbeCostRound>,
    /// Throughput with the probe over without, per round.
    pub ratio: Median,
    /// Held time over the connection's wall, per round.
    pub held_share: Median,
    /// Holds decided (sent while held, or waited for the release) of all holds made, pooled
    /// over the rounds.
    pub decided: Share,
}

/// A share of trials with its 95 % interval (Wilson's score interval: honest near 0 and 1,
/// and for the few trials a probe makes).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Share {
    pub of: u64,
    pub hits: u64,
    pub share: f64,
    pub low: f64,
    pub high: f64,
}

impl Share {
    pub fn of(hits: u64, of: u64) -> Share {
        if of == 0 {
            return Share {
                of,
                hits,
                share: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        const Z: f64 = 1.959_964;
        let n = of as f64;
        let p = hits as f64 / n;
        let centre = (p + Z * Z / (2.0 * n)) / (1.0 + Z * Z / n);
        let half = Z / (1.0 + Z * Z / n) * (p * (1.0 - p) / n + Z * Z / (4.0 * n * n)).sqrt();
        Share {
            of,
            hits,
            share: p,
            // Exact at the ends, where rounding would leave a hair of 0 or 1 out.
            low: if hits == 0 { 0.0 } else { centre - half },
            high: if hits == of { 1.0 } else { centre + half },
        }
    }
}

/// `rounds` rounds of `count` SETs each way against `target` (our own server: the runs leave
/// keys behind), within `budget` (at least one round). Each round on stderr.
pub async fn measure(
    target: &RedisTarget,
    count: u64,
    rounds: usize,
    budget: std::time::Duration,
) -> anyhow::Result<ProbeCost> {
    let began = Instant::now();
    let mut done = Vec::new();
    for round in 0..rounds {
        if round > 0 && began.elapsed() > budget {
            break;
        }
        // Alternate who goes first, so a machine warming up or slowing down favours neither.
        let first_probed = round % 2 == 1;
        let mut without = None;
        let mut with = None;
        for probed in [first_probed, !first_probed] {
            let run = run(target, count, probed).await?;
            if probed {
                with = Some(run);
            } else {
                without = Some(run.0);
            }
        }
        let (with_ops, evidence, wall_us) = with.expect("ran with the probe");
        let r = ProbeCostRound {
            without_ops_per_sec: without.expect("ran without the probe"),
            with_ops_per_sec: with_ops,
            held: evidence.held,
            sent_while_held: evidence.sent_while_held,
            waited_for_release: evidence.waited_for_release,
            held_us: evidence.held_us,
            wall_us,
            late_us: evidence.late_us,
        };
        eprintln!(
            "round {}: {:.0} ops/s without the probe, {:.0} with ({:.3}×); held {} replies for {:.0} µs of {:.0} µs ({:.3} %)",
            round + 1,
            r.without_ops_per_sec,
            r.with_ops_per_sec,
            r.with_ops_per_sec / r.without_ops_per_sec,
            r.held,
            r.held_us,
            r.wall_us,
            100.0 * r.held_us / r.wall_us
        );
        done.push(r);
    }
    Ok(ProbeCost {
        count,
        ratio: Median::of(
            done.iter()
                .map(|r| r.with_ops_per_sec / r.without_ops_per_sec)
                .collect(),
        ),
        held_share: Median::of(done.iter().map(|r| r.held_us / r.wall_us).collect()),
        decided: Share::of(
            done.iter()
                .map(|r| r.sent_while_held + r.waited_for_release)
                .sum(),
            done.iter().map(|r| r.held).sum(),
        ),
        rounds: done,
    })
}

/// One redis-benchmark run through a fresh observer: its throughput, and with the probe the
/// evidence and wall of the connection that sent the SETs.
async fn run(
    target: &RedisTarget,
    count: u64,
    probed: bool,
) -> anyhow::Result<(f64, shared::observe::ProbeEvidence, f64)> {
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let observer = Observer::start_probing(listen, target, shared::Network::default(), probed)
        .await
        .context("starting the observing proxy")?;
    let out = tokio::process::Command::new("redis-benchmark")
        .args(["-h", "127.0.0.1", "-p"])
        .arg(observer.addr().port().to_string())
        .args(["-c", "1", "-P", "1", "-n"])
        .arg(count.to_string())
        .args([
            "-r",
            "100000",
            "--csv",
            "SET",
            "probecost:__rand_int__",
            "v00000",
        ])
        .output()
        .await
        .context("running redis-benchmark (Debian's redis-tools)")?;
    anyhow::ensure!(
        out.status.success(),
        "redis-benchmark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (ops, _) = parse_csv(&String::from_utf8_lossy(&out.stdout))
        .context("redis-benchmark printed no SET line")?;
    let conn = observer
        .connections()
        .snapshot()
        .into_iter()
        .max_by_key(|c| c.counts.commands)
        .context("the observer saw no connection")?;
    Ok((ops, conn.probe.unwrap_or_default(), conn.times.wall_us))
}

#[cfg(test)]
mod tests {
    use super::Share;

    #[test]
    fn wilson_intervals_hold_the_share_and_stay_within_0_and_1() {
        let s = Share::of(8, 10);
        assert!((s.share - 0.8).abs() < 1e-12);
        // Wilson's 95 % interval of 8 in 10: 0.490–0.943.
        assert!(
            (s.low - 0.490).abs() < 0.001 && (s.high - 0.943).abs() < 0.001,
            "{s:?}"
        );
        let all = Share::of(20, 20);
        assert!(all.high == 1.0 && all.low > 0.8 && all.low < 1.0, "{all:?}");
        let none = Share::of(0, 5);
        assert!(none.low == 0.0 && none.high > 0.4, "{none:?}");
        assert_eq!((Share::of(0, 0).low, Share::of(0, 0).high), (0.0, 1.0));
    }
}
