//! One round trip taken apart: a run's from the engine's mean latency (cut at the proxy when the
//! wire tap measured it, else the known parts taken from it), or an observed connection's as
//! the observing proxy saw it.

use shared::observe::ObservedConnection;
use shared::{KeyLayout, RoundTripSplit, RunSummary, Wait};

use crate::timeaxis::duration;

use super::part::{Part, Segment, Source, Tint};
use super::wire_bytes::{
    ASSUMED_BANDWIDTH_LABEL, REPLY_BYTES, mean_request_bytes, transmission_us,
};

/// One round trip of a sequential run taken apart: the measured RTT (the engine's mean), the
/// parts in the legend's order, and the bar's segments in time order.
///
/// The seed's model is RTT = t1 transmission + 2 × t2 propagation + t3 at Redis. It is extended
/// with the time the hosts spend (system calls, the kernel's network stack, waking a sleeping
/// client and Redis) because on loopback there is no wire and that is most of a round trip:
/// forcing it into "propagation" would teach a wire that is not there.
#[derive(Debug, Clone, PartialEq)]
pub struct TripBreakdown {
    /// Measured by the engine: the run's mean latency (what N × RTT must use to add up).
    pub rtt_us: f64,
    pub p50_us: f64,
    /// Requests the RTT is the mean of.
    pub n: u64,
    pub parts: Vec<Part>,
    pub segments: Vec<Segment>,
    /// The wire tap cut the round trip at the proxy (`RunSummary::split`).
    pub tapped: bool,
    /// Busy-polled rather than slept waiting for replies.
    pub busy_poll: bool,
    /// Who timed it: the engine (a run) or the observing proxy (an application's connection).
    pub vantage: Vantage,
}

/// Where a round trip was timed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vantage {
    /// pipescope's engine, the client itself: the whole round trip.
    Engine,
    /// The observing proxy, between an application and Redis: from a command's arrival to its
    /// reply handed back. The hops between the application and the proxy are not seen.
    Proxy,
    /// A capture, on the client's host or Redis's: from a command's segment to its reply's,
    /// each stamped once by that host.
    Capture,
}

/// Redis's own time per call, when Redis reported it.
fn redis_part(s: &RunSummary) -> Option<Part> {
    let us = s
        .redis_usec_per_call
        .filter(|u| u.is_finite() && *u >= 0.0)?;
    Some(Part {
        key: "redis",
        name: "Redis's own time".into(),
        us,
        tint: Tint::Redis,
        source: Source::Measured("Redis (INFO commandstats usec_per_call)"),
        what: "executing the command inside Redis, as Redis times it".into(),
    })
}

fn t1_part(run: u64, layout: KeyLayout, n: u64) -> Part {
    let request = mean_request_bytes(run, layout, n);
    let bytes = request + REPLY_BYTES as f64;
    Part {
        key: "t1",
        name: "t1 transmission".into(),
        us: transmission_us(bytes),
        tint: Tint::Wire,
        source: Source::Assumed(format!(
            "{request:.0} B request + {REPLY_BYTES} B reply (their RESP encoding) at {ASSUMED_BANDWIDTH_LABEL}, a bandwidth taken, not measured"
        )),
        what: "putting the bytes on the wire, both ways".into(),
    }
}

impl TripBreakdown {
    /// The parts of `s`'s round trip (`run` names its keys, whose length the bytes depend on).
    pub fn of(run: u64, s: &RunSummary) -> TripBreakdown {
        let rtt_us = s.latency.mean_us;
        let t1 = t1_part(run, s.spec.keys, s.done.max(1));
        let redis = redis_part(s);
        let (parts, segments, tapped) = match s.split.filter(|sp| sp.samples > 0) {
            Some(sp) => {
                let (parts, segments) = tapped_parts(s, sp, t1, redis);
                (parts, segments, true)
            }
            None => {
                let (parts, segments) = untapped_parts(s, rtt_us, t1, redis);
                (parts, segments, false)
            }
        };
        TripBreakdown {
            rtt_us,
            p50_us: s.latency.p50_us,
            n: s.done,
            parts,
            segments,
            tapped,
            busy_poll: matches!(s.spec.wait, Wait::BusyPoll { .. }),
            vantage: Vantage::Engine,
        }
    }

    /// An observed connection's mean round trip as the proxy saw it: the time at Redis
    /// (measured: handed to Redis until the reply came back) and the rest of the wait in the
    /// proxy (derived), half each way; from a capture, the whole wait as the capture's host saw
    /// it, in one part. `None` before its first round trip.
    pub fn observed(c: &ObservedConnection) -> Option<TripBreakdown> {
        let trips = c.counts.round_trips;
        if trips == 0 || c.times.waiting_us <= 0.0 {
            return None;
        }
        let per_trip = |us: f64| us / trips as f64;
        if c.vantage == shared::observe::Vantage::Capture {
            // One stamp a segment: the wait is all the capture's host saw, not to be split.
            let wait = Part {
                key: "capture",
                name: "request → reply".into(),
                us: per_trip(c.times.waiting_us),
                tint: Tint::Redis,
                source: Source::Measured("the capture on its host (mean per round trip)"),
                what: "from the command's segment to its reply's, as the capture's host saw them: Redis's work and, unless captured on Redis's host, the network".into(),
            };
            return Some(TripBreakdown {
                rtt_us: wait.us,
                p50_us: f64::NAN,
                n: trips,
                segments: vec![Segment {
                    part: 0,
                    us: wait.us,
                    half: false,
                }],
                parts: vec![wait],
                tapped: true,
                busy_poll: false,
                vantage: Vantage::Capture,
            });
        }
        let tap = Part {
            key: "tap",
            name: "proxy → Redis → proxy".into(),
            us: per_trip(c.times.at_redis_us),
            tint: Tint::Redis,
            source: Source::Measured("the observing proxy (mean per round trip)"),
            what: "from handing the commands to Redis until its replies came back: Redis's work, the hop each way and, when a delay is dialled, that delay".into(),
        };
        let proxy = Part {
            key: "proxy",
            name: "in the proxy".into(),
            us: per_trip(c.times.network_us()),
            tint: Tint::Host,
            source: Source::Derived(
                "the wait per round trip less proxy → Redis → proxy".into(),
            ),
            what: "a command's arrival until it was handed to Redis, and a reply's arrival until it was handed back (for a pipeline, also the batch still arriving)".into(),
        };
        let half = |us: f64| Segment {
            part: 1,
            us: us / 2.0,
            half: true,
        };
        Some(TripBreakdown {
            rtt_us: per_trip(c.times.waiting_us),
            p50_us: f64::NAN,
            n: trips,
            segments: vec![
                half(proxy.us),
                Segment {
                    part: 0,
                    us: tap.us,
                    half: false,
                },
                half(proxy.us),
            ],
            parts: vec![tap, proxy],
            tapped: true,
            busy_poll: false,
            vantage: Vantage::Proxy,
        })
    }

    pub fn part(&self, key: &str) -> Option<&Part> {
        self.parts.iter().find(|p| p.key == key)
    }
}

/// Without the wire tap: the RTT less what is known (t1 assumed, the dialled delay, Redis's own
/// time when Redis said) is the hosts' time, drawn half each way.
fn untapped_parts(
    s: &RunSummary,
    rtt_us: f64,
    t1: Part,
    redis: Option<Part>,
) -> (Vec<Part>, Vec<Segment>) {
    let net = s.spec.network;
    let dialled = net.round_trip_us() as f64;
    let redis_us = redis.as_ref().map_or(0.0, |r| r.us);
    let host_us = (rtt_us - t1.us - dialled - redis_us).max(0.0);
    let mut formula = String::from("mean RTT − t1");
    if dialled > 0.0 {
        formula += " − the dialled delay";
    }
    let what = if redis.is_some() {
        formula += " − Redis's own time";
        "system calls, the kernel's network stack and waking the client (when it sleeps) and Redis (on loopback there is no wire: this is not propagation)"
    } else {
        "system calls, the kernel's network stack, waking the client and Redis, and Redis's own work (Redis did not report its time)"
    };
    let host = Part {
        key: "host",
        name: if redis.is_some() {
            "host: kernel + wake-ups".into()
        } else {
            "host + Redis: kernel, wake-ups, work".into()
        },
        us: host_us,
        tint: Tint::Host,
        source: Source::Derived(formula),
        what: what.into(),
    };
    let mut parts = vec![t1, host];
    let mut mid = Vec::new();
    if dialled > 0.0 {
        parts.push(Part {
            key: "t2",
            name: "t2 propagation".into(),
            us: net.delay_out_us as f64,
            tint: Tint::Trip,
            source: Source::Assumed(
                if s.split.is_some_and(|sp| sp.encrypted) {
                    "the latency proxy's dialled delay, out (the wire tap cannot read encrypted traffic: this run is TLS)"
                } else {
                    "the latency proxy's dialled delay, out (the wire tap did not measure this run)"
                }
                .into(),
            ),
            what: "the dialled-in network, one way".into(),
        });
    }
    if let Some(r) = redis {
        parts.push(r);
        mid.push(parts.len() - 1);
    }
    let half = |part: usize, us: f64| Segment {
        part,
        us: us / 2.0,
        half: true,
    };
    let whole = |part: usize, us: f64| Segment {
        part,
        us,
        half: false,
    };
    let mut segments = vec![half(0, parts[0].us), half(1, host_us)];
    if dialled > 0.0 {
        segments.push(whole(2, net.delay_out_us as f64));
    }
    segments.extend(mid.iter().map(|&k| whole(k, parts[k].us)));
    if dialled > 0.0 {
        segments.push(whole(2, net.delay_back_us as f64));
    }
    segments.push(half(1, host_us));
    segments.push(half(0, parts[0].us));
    (parts, segments)
}

/// A leg through the delay line: what the tap measured, beside the dialled delay and the
/// proxy's compensation (it releases each chunk that much early).
fn leg(key: &'static str, name: &str, measured: f64, dialled: u32, early: f64) -> Part {
    let held = dialled as f64 - early;
    let beyond = measured - held;
    Part {
        key,
        name: name.into(),
        us: measured,
        tint: Tint::Trip,
        source: Source::Measured("the wire tap (median)"),
        what: {
            let compensation = if early == 0.0 {
                "0 µs".to_string()
            } else {
                duration(early)
            };
            let rest = if beyond >= 0.0 {
                format!(
                    "{} beyond that: loopback hops and wake-ups",
                    duration(beyond)
                )
            } else {
                format!(
                    "yet the leg took {} less: the proxy released it earlier than the compensation it reports",
                    duration(-beyond)
                )
            };
            let below = if measured < dialled as f64 && early > 0.0 && beyond >= 0.0 {
                "; this leg reads below the dialled delay because of the compensation"
            } else {
                ""
            };
            format!(
                "dialled delay {} less the proxy's compensation {compensation} = {} held, {rest}{below}",
                duration(dialled as f64),
                duration(held),
            )
        },
    }
}

/// With the wire tap: out, proxy → Redis → proxy and back, as measured, with Redis's own time
/// inside the middle one when Redis reported it.
fn tapped_parts(
    s: &RunSummary,
    sp: RoundTripSplit,
    t1: Part,
    redis: Option<Part>,
) -> (Vec<Part>, Vec<Segment>) {
    let net = s.spec.network;
    let around = redis.as_ref().map(|r| (sp.server_us - r.us).max(0.0));
    let tap = Part {
        key: "tap",
        name: "proxy → Redis → proxy".into(),
        us: sp.server_us,
        tint: Tint::Redis,
        source: Source::Measured("the wire tap (median)"),
        what: match around {
            Some(a) => format!(
                "two loopback hops and two wake-ups ({} derived: this less Redis's own time) around Redis's work",
                duration(a)
            ),
            None => "two loopback hops and two wake-ups around Redis's work (Redis did not report its own time)".into(),
        },
    };
    let mut parts = vec![
        leg("out", "out", sp.out_us, net.delay_out_us, sp.early_out_us),
        tap,
        leg(
            "back",
            "back",
            sp.back_us,
            net.delay_back_us,
            sp.early_back_us,
        ),
        Part {
            what: "inside out and back, too small to draw".into(),
            ..t1
        },
    ];
    parts.extend(redis);
    let segments = (0..3)
        .map(|k| Segment {
            part: k,
            us: parts[k].us,
            half: false,
        })
        .collect();
    (parts, segments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt_model::fixtures::summary;
    use crate::testing::test;
    use shared::Mode;

    #[test]
    fn loopback_has_no_propagation_only_the_hosts_time() {
        let mut seq = summary(Mode::Sequential, 52_000, 50.0);
        let trip = TripBreakdown::of(1, &seq);
        assert!(!trip.tapped);
        assert_eq!(trip.part("t2"), None, "no wire on loopback");
        let t1 = trip.part("t1").unwrap();
        assert_eq!(t1.source.kind(), "assumed");
        assert!(t1.source.describe().contains(ASSUMED_BANDWIDTH_LABEL));
        let host = trip.part("host").unwrap();
        assert_eq!(host.source.kind(), "derived");
        assert!(
            host.name.contains("Redis"),
            "Redis's work is in it: {host:?}"
        );
        assert!((host.us + t1.us - 50.0).abs() < 1e-9);
        // Redis's own time, measured by Redis, comes out of the hosts' share.
        seq.redis_usec_per_call = Some(1.5);
        let trip = TripBreakdown::of(1, &seq);
        let redis = trip.part("redis").unwrap();
        assert_eq!(
            redis.source,
            Source::Measured("Redis (INFO commandstats usec_per_call)")
        );
        let host = trip.part("host").unwrap();
        assert_eq!(host.name, "host: kernel + wake-ups");
        assert_eq!(
            host.source.describe(),
            "derived: mean RTT − t1 − Redis's own time"
        );
        assert!((host.us + trip.part("t1").unwrap().us + 1.5 - 50.0).abs() < 1e-9);
        // The bar is the round trip, in time order: t1 and host split each way, Redis between.
        let drawn: f64 = trip.segments.iter().map(|s| s.us).sum();
        assert!((drawn - 50.0).abs() < 1e-9);
        let keys: Vec<&str> = trip
            .segments
            .iter()
            .map(|s| trip.parts[s.part].key)
            .collect();
        assert_eq!(keys, ["t1", "host", "redis", "host", "t1"]);
    }

    #[test]
    fn the_hosts_time_never_goes_negative() {
        let mut seq = summary(Mode::Sequential, 5_000, 1.0);
        seq.redis_usec_per_call = Some(4.0);
        assert_eq!(TripBreakdown::of(1, &seq).part("host").unwrap().us, 0.0);
    }

    #[test]
    fn tapped_legs_show_the_dialled_delay_and_the_compensation() {
        let mut seq = summary(Mode::Sequential, 600_000, 560.0);
        seq.spec.network = shared::Network::symmetric(250);
        seq.split = Some(RoundTripSplit {
            out_us: 262.0,
            server_us: 52.0,
            back_us: 240.0,
            samples: 1000,
            early_out_us: 20.0,
            early_back_us: 20.0,
            encrypted: false,
        });
        seq.redis_usec_per_call = Some(1.2);
        let trip = TripBreakdown::of(1, &seq);
        assert!(trip.tapped);
        for key in ["out", "tap", "back"] {
            assert_eq!(
                trip.part(key).unwrap().source,
                Source::Measured("the wire tap (median)"),
                "{key}"
            );
        }
        let back = trip.part("back").unwrap();
        assert_eq!(back.us, 240.0);
        // Below the dialled 250 µs, and the label says why rather than hiding it.
        assert!(
            back.what.contains("250 µs") && back.what.contains("20 µs"),
            "{}",
            back.what
        );
        assert!(
            back.what.contains("below the dialled delay"),
            "{}",
            back.what
        );
        assert!(
            back.what.contains("10 µs beyond"),
            "240 − (250 − 20): {}",
            back.what
        );
        let out = trip.part("out").unwrap();
        assert!(!out.what.contains("below"), "{}", out.what);
        // A leg shorter than even the compensation explains says so.
        seq.split = seq.split.map(|s| RoundTripSplit {
            back_us: 146.0,
            early_back_us: 0.0,
            ..s
        });
        let short = TripBreakdown::of(1, &seq);
        let back = &short.part("back").unwrap().what;
        assert!(
            back.contains("0 µs = 250 µs held, yet the leg took 104 µs less"),
            "{back}"
        );
        // The tap's middle leg is not Redis's time: Redis's own is beside it.
        let tap = trip.part("tap").unwrap();
        assert_eq!(tap.name, "proxy → Redis → proxy");
        assert!(
            tap.what.contains("51 µs"),
            "52 − 1.2 around the work: {}",
            tap.what
        );
        assert_eq!(trip.part("redis").unwrap().us, 1.2);
        assert_eq!(trip.part("t1").unwrap().source.kind(), "assumed");
        let keys: Vec<&str> = trip
            .segments
            .iter()
            .map(|s| trip.parts[s.part].key)
            .collect();
        assert_eq!(keys, ["out", "tap", "back"]);
        // Without samples the tap measured nothing: back to the derived split.
        seq.split = seq.split.map(|s| RoundTripSplit { samples: 0, ..s });
        let trip = TripBreakdown::of(1, &seq);
        assert!(!trip.tapped);
        assert_eq!(trip.part("t2").unwrap().source.kind(), "assumed");
        assert_eq!(
            trip.part("host").unwrap().source.describe(),
            "derived: mean RTT − t1 − the dialled delay − Redis's own time"
        );
    }

    #[test]
    fn over_tls_the_dialled_delay_says_the_wire_tap_cannot_read_the_run() {
        let mut seq = summary(Mode::Sequential, 600_000, 560.0);
        seq.spec.network = shared::Network::symmetric(250);
        seq.split = Some(RoundTripSplit {
            encrypted: true,
            ..Default::default()
        });
        let trip = TripBreakdown::of(1, &seq);
        assert!(!trip.tapped);
        let t2 = trip.part("t2").unwrap();
        assert_eq!(t2.source.kind(), "assumed");
        assert!(
            t2.source
                .describe()
                .contains("the wire tap cannot read encrypted traffic: this run is TLS"),
            "{}",
            t2.source.describe()
        );
    }

    #[test]
    fn an_observed_round_trip_is_at_redis_and_in_the_proxy_as_the_proxy_saw_it() {
        let json = serde_json::json!({
            "id": 1, "client": "127.0.0.1:5000", "name": null, "open": false, "ended": null,
            "top_commands": [],
            "counts": { "commands": 10, "replies": 10, "writes": 10, "overlapping_writes": 0,
              "round_trips": 10, "max_depth": 1, "pushes": 0, "blocking": 0, "transactions": 0,
              "bytes_from_client": 300, "bytes_from_redis": 50 },
            "times": { "wall_us": 3000.0, "waiting_us": 1000.0, "at_redis_us": 700.0,
              "client_us": 2000.0, "blocked_us": 0.0, "mean_depth": 1.0 },
            "verdict": { "kind": "one_at_a_time", "text": "" }
        });
        let mut c: ObservedConnection = serde_json::from_value(json).unwrap();
        let t = TripBreakdown::observed(&c).unwrap();
        assert_eq!(t.vantage, Vantage::Proxy);
        c.vantage = shared::observe::Vantage::Capture;
        let captured = TripBreakdown::observed(&c).unwrap();
        assert_eq!(captured.vantage, Vantage::Capture);
        assert_eq!(
            captured.parts.len(),
            1,
            "one stamp a segment: the wait is not split"
        );
        assert_eq!(captured.part("capture").unwrap().us, 100.0);
        assert_eq!(captured.rtt_us, 100.0);
        c.vantage = Default::default();
        assert_eq!((t.rtt_us, t.n), (100.0, 10));
        assert_eq!(t.part("tap").unwrap().us, 70.0);
        assert_eq!(t.part("tap").unwrap().source.kind(), "measured");
        assert_eq!(t.part("proxy").unwrap().us, 30.0);
        assert_eq!(t.part("proxy").unwrap().source.kind(), "derived");
        let drawn: f64 = t.segments.iter().map(|s| s.us).sum();
        assert_eq!(drawn, 100.0);
        c.counts.round_trips = 0;
        assert!(TripBreakdown::observed(&c).is_none());
    }
}
