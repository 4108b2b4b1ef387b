//! A real network for the observe tests: a pair of network namespaces (`netns::Pair`), a real
//! redis-server in the server namespace behind relays that hold each chunk for a dialled delay
//! (tests/clients/relay.py, not pipescope's delay line: the kernel here has no netem), and
//! clients, tcpdump and `pipescope observe` run in the client namespace.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::clients::{output_within, redis_cli, redis_py, relay, run};
use super::commandstats::Counted;
use super::netns::{Pair, Running};
use super::observe::Observe;
use super::tcpdump::Tcpdump;

/// The relay's hold each way, µs: a dialled round trip of 2·D. A Python timer wakes ~0.1 ms
/// late here (0.15–0.25 ms a round trip was seen with D = 2 ms, +4–6 %): at 5 ms that is
/// ~2 %, well inside the 10 % the round trip is checked to.
pub const D_US: u64 = 5_000;
/// Ports in the pair's server namespace, which is new: every port there is free.
const REDIS_PORT: u16 = 16_379;
/// A relay holding nothing (the path's own round trip, the base) and one holding D.
pub const BASE_PORT: u16 = 17_000;
pub const DELAY_PORT: u16 = 17_001;
/// How long Redis or a relay may take to start.
const START: Duration = Duration::from_secs(30);

/// Redis and the relays in the pair's server namespace; clients run in its client namespace.
pub struct Wire {
    _redis: Running,
    _relays: Vec<Running>,
    /// Where each relay writes what it held of each connection (`relay.py`'s RELAY_LOG).
    logs: tempfile::TempDir,
    pub pair: Pair,
}

/// What a relay says it held of one connection: per direction, the chunks relayed and how
/// far past their due time they went out in all (µs).
#[derive(Debug, Clone, Copy)]
pub struct Held {
    pub out: (u64, f64),
    pub back: (u64, f64),
}

impl Held {
    /// The mean time a round trip's request and reply were held past the dialled delay, µs:
    /// each chunk's lateness, averaged per direction.
    pub fn late_per_trip_us(&self) -> f64 {
        let mean = |(n, us): (u64, f64)| us / n.max(1) as f64;
        mean(self.out) + mean(self.back)
    }
}

impl Wire {
    /// Everything started and ready, a relay on each of `relays` (its port, and its hold each
    /// way in µs); `None` (after `cannot_check`) where it cannot be here.
    pub fn new(relays: &[(u16, u64)]) -> Option<Wire> {
        Self::varied(relays, 0)
    }

    /// The same, each relay holding each chunk a further 0 to `jitter_us` µs (relay.py's
    /// JITTER_US), as a real path varies.
    pub fn varied(relays: &[(u16, u64)], jitter_us: u64) -> Option<Wire> {
        if Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            super::cannot_check("redis-server is missing: run scripts/setup test");
            return None;
        }
        redis_cli()?;
        redis_py()?;
        let relay_cmd = relay()?;
        let pair = Pair::new()?;
        // On the server namespace's loopback: only the relays reach it, and Redis's protected
        // mode (no password) refuses clients from other addresses.
        let mut redis = pair.server.command("redis-server");
        redis
            .args(["--port", &REDIS_PORT.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null());
        let redis = Running(redis.spawn().expect("redis-server starts"));
        let mut wire = Wire {
            _redis: redis,
            _relays: Vec::new(),
            logs: tempfile::tempdir().unwrap(),
            pair,
        };
        let deadline = Instant::now() + START;
        while wire.cli(&["PING"]).trim() != "PONG" {
            assert!(
                Instant::now() < deadline,
                "redis-server in {} did not answer PING within {START:?}",
                wire.pair.server.name
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        for &(port, delay_us) in relays {
            let addr = &wire.pair.server_addr;
            let mut cmd = wire.pair.server.wrap(&relay_cmd);
            cmd.args([
                addr,
                &port.to_string(),
                "127.0.0.1",
                &REDIS_PORT.to_string(),
            ])
            .args([delay_us, jitter_us].map(|us| us.to_string()))
            .env("RELAY_LOG", wire.log(port))
            .stdout(Stdio::piped());
            let mut child = cmd.spawn().expect("the relay starts");
            let stdout = child.stdout.take().unwrap();
            wire._relays.push(Running(child));
            let what = format!("the relay on port {port} saying \"relaying\"");
            super::stdout_line(stdout, START, &what, |l| (l == "relaying").then_some(()));
        }
        Some(wire)
    }

    fn log(&self, port: u16) -> std::path::PathBuf {
        self.logs.path().join(format!("relay-{port}.log"))
    }

    /// What the relay on `port` held of the connection from the client's port
    /// `client_port`, once that connection has ended (within 10 s).
    pub fn held(&self, port: u16, client_port: u16) -> Held {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = std::fs::read_to_string(self.log(port)).unwrap_or_default();
            let line = log.lines().find_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f.len() == 5 && f[0] == client_port.to_string()).then_some(f)
            });
            if let Some(f) = line {
                let n = |i: usize| f[i].parse::<f64>().expect("relay.py writes numbers");
                return Held {
                    out: (n(1) as u64, n(2)),
                    back: (n(3) as u64, n(4)),
                };
            }
            assert!(
                Instant::now() < deadline,
                "the relay on {port} said nothing of the connection from port {client_port}: {log:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `redis-cli ARGS` straight to Redis (not through a relay, so never captured).
    pub fn cli(&self, args: &[&str]) -> String {
        let mut c = self.pair.server.command("redis-cli");
        c.args(["-h", "127.0.0.1", "-p", &REDIS_PORT.to_string()])
            .args(args);
        String::from_utf8_lossy(&output_within(c, "redis-cli").stdout).into_owned()
    }

    /// Redis's counters now (one INFO).
    pub fn counted(&self) -> Counted {
        Counted::parse(&self.cli(&["INFO", "stats", "commandstats"]))
    }

    /// redis-py in the client namespace, connecting to `host`:`port`, run to its end.
    pub fn py(&self, host: &str, port: u16, name: &str, mode: &str, n: u64) {
        let mut c = redis_py().expect("checked by Wire::new");
        c.args([&port.to_string(), name, mode, &n.to_string(), host]);
        let what = format!("redis-py {mode} as {name}");
        run(self.pair.client.wrap(&c), None, &what);
    }

    /// `pipescope observe --json --no-equivalent` in the client namespace, listening on the
    /// client's veth address, forwarding to the relay on `port`: clients in the namespace
    /// connect to `pair.client_addr`:`Observe::port()`.
    pub fn observe(&self, port: u16) -> Observe {
        let url = format!("redis://{}:{port}", self.pair.server_addr);
        let listen = format!("{}:0", self.pair.client_addr);
        let args = ["--json", "--no-equivalent"];
        Observe::spawn(
            self.pair
                .client
                .wrap(&Observe::command(&url, &listen, &args)),
        )
    }

    /// tcpdump on the client's end of the veth, capturing traffic to `port`.
    pub fn capture(&self, port: u16) -> Option<Tcpdump> {
        let tcpdump = self.pair.client.command("tcpdump");
        Tcpdump::on(tcpdump, self.pair.client_if, &format!("tcp port {port}"))
    }
}
