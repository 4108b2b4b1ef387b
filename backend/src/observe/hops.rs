//! The observer's own two hops, measured at start and again every `HOP_REMEASURE_SECS` while
//! a connection is open (an idle observer sends Redis nothing), kept as a distribution.
//!
//! The proxy stamps a command when its read from the client returns and a reply when its
//! write to the client returns, so the hop from the client to the proxy and the hop back lie
//! outside what it sees: between round trips, where they would read as the client's own time.
//! A probe client sends PINGs one at a time through a proxy like the observer's (the same
//! relay, the same network dialled in) and stamps each send and each reply; the proxy's hooks
//! stamp the same moments on its side, on the same clock. Each PING's hops are its round trip
//! at the client less its time at the proxy. A hop varies with how soon each side is woken
//! (on an idle machine, from a few µs to tens between starts), so every measurement's PINGs
//! join one distribution (`HopSamples`, the latest ones kept): its median is the cost charged
//! to each of a connection's round trips (`ObservedTimes::observer_us`), and its 10th to 90th
//! percentiles say how sure that figure is (`HopSpread`).

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shared::Network;
use shared::observe::HopSpread;

use crate::net::{Compensation, DelayProxy, Hooks};

/// PINGs sent, at most, and the time they may take (a dialled delay makes each slow).
const PINGS: usize = 200;
const BUDGET: Duration = Duration::from_secs(2);
/// The fewest PINGs whose median is worth a figure.
const FEWEST: usize = 5;

/// The stamps the proxy's hooks take: each read from the client, each write to it.
#[derive(Default)]
struct ProxySide {
    arrived: Vec<Instant>,
    handed: Vec<Instant>,
}

/// PINGs' hops kept across measurements (the latest), so one slow start does not stand for
/// the whole observation.
const KEPT_PINGS: usize = 2_000;

/// Every measurement's hops, the latest `KEPT_PINGS`.
#[derive(Debug, Default)]
pub struct HopSamples {
    hops: std::collections::VecDeque<f64>,
    pings: u64,
    measurements: u64,
}

impl HopSamples {
    /// One measurement's hops (`hop_cost`).
    pub fn add(&mut self, hops: &[f64]) {
        self.measurements += 1;
        self.pings += hops.len() as u64;
        self.hops.extend(hops);
        while self.hops.len() > KEPT_PINGS {
            self.hops.pop_front();
        }
    }

    /// The median hop, µs, and the spread around it; `None` before a measurement counted.
    pub fn figure(&self) -> Option<(f64, HopSpread)> {
        if self.hops.is_empty() {
            return None;
        }
        let mut sorted: Vec<f64> = self.hops.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        Some((
            at(0.5),
            HopSpread {
                low_us: at(0.1),
                high_us: at(0.9),
                pings: self.pings,
                measurements: self.measurements,
            },
        ))
    }
}

/// The observer's two hops a round trip, in µs, one per PING, through a proxy in front of
/// `upstream` over `network`; `None` when too few PINGs came back in the time allowed.
pub fn hop_cost(upstream: SocketAddr, network: Network) -> std::io::Result<Option<Vec<f64>>> {
    let seen = Arc::new(Mutex::new(ProxySide::default()));
    let admit = {
        let seen = seen.clone();
        Box::new(move |_: SocketAddr| {
            let (a, b) = (seen.clone(), seen.clone());
            Ok(Hooks {
                client_read: Box::new(move |at, _| a.lock().expect("probe").arrived.push(at)),
                to_client: Box::new(move |_, at, _| b.lock().expect("probe").handed.push(at)),
                ..Hooks::none()
            })
        })
    };
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let proxy = DelayProxy::start(listener, upstream, network, Compensation::default(), admit)?;
    let stream = TcpStream::connect(proxy.addr())?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(BUDGET))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut client = Vec::new();
    let mut line = Vec::new();
    let began = Instant::now();
    while client.len() < PINGS && began.elapsed() < BUDGET {
        let sent = Instant::now();
        writer.write_all(b"*1\r\n$4\r\nPING\r\n")?;
        // One line whatever it says: +PONG, or an error such as NOAUTH, is a round trip.
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        client.push((sent, Instant::now()));
    }
    drop((reader, writer));
    // The proxy's write hook runs just after its write returns: wait for the last stamp.
    let deadline = Instant::now() + Duration::from_secs(1);
    while seen.lock().expect("probe").handed.len() < client.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(proxy);
    let side = seen.lock().expect("probe");
    let mut hops: Vec<f64> = client
        .iter()
        .zip(side.arrived.iter().zip(&side.handed))
        .map(|(&(sent, got), (&arrived, &handed))| {
            let at_client = got.saturating_duration_since(sent);
            let at_proxy = handed.saturating_duration_since(arrived);
            at_client.saturating_sub(at_proxy).as_secs_f64() * 1e6
        })
        .collect();
    // Each PING is one read and one write at the proxy; anything else cannot be paired.
    if hops.len() < FEWEST || side.arrived.len() != client.len() {
        return Ok(None);
    }
    hops.sort_by(f64::total_cmp);
    Ok(Some(hops))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurements_join_one_distribution_with_its_percentiles() {
        let mut s = HopSamples::default();
        assert!(s.figure().is_none());
        s.add(&(1..=10).map(f64::from).collect::<Vec<_>>());
        s.add(&(91..=100).map(f64::from).collect::<Vec<_>>());
        let (median, spread) = s.figure().unwrap();
        assert_eq!((spread.pings, spread.measurements), (20, 2));
        assert!((10.0..=91.0).contains(&median), "{median}");
        assert_eq!((spread.low_us, spread.high_us), (3.0, 98.0));
    }

    #[test]
    fn only_the_latest_pings_are_kept() {
        let mut s = HopSamples::default();
        s.add(&vec![1_000.0; KEPT_PINGS]);
        s.add(&vec![5.0; KEPT_PINGS]);
        let (median, spread) = s.figure().unwrap();
        assert_eq!((median, spread.high_us), (5.0, 5.0));
        assert_eq!(spread.pings, 2 * KEPT_PINGS as u64);
    }
}
