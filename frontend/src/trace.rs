//! A run's request timings as the teaching view uses them: round trips (as the mode paid them),
//! what had happened by a playback position, and the moments a step can land on. Pure.

use shared::{Mode, Network, RunSummary, Span};

/// One run's timeline as drawn: its first requests in order of `i` (every one), then, for a
/// long run, a strided sample of the rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub run: u64,
    pub mode: Option<Mode>,
    /// The network the run crossed, once known.
    pub network: Option<Network>,
    pub spans: Vec<Span>,
    /// Every `stride`-th request of the whole run, once it finished (empty before).
    pub sampled: Vec<Span>,
    pub stride: u64,
    /// The run's total count (more than `spans.len()` for long runs).
    pub count: u64,
    /// Set once the run finished.
    pub summary: Option<RunSummary>,
    /// Set when this is an application's connection seen by the observing proxy, not a run:
    /// the panel's title. Its lanes are then the proxy's two sides (client ⇄ proxy, proxy ⇄
    /// Redis) and its round trips are found from the requests themselves.
    pub observed: Option<String>,
    /// Read from a capture, which stamped each segment once: its lanes are the capture's.
    pub captured: bool,
}

impl Trace {
    /// The mode's `kind` (`"unknown"` before the run's spec is known): the DOM's `data-mode`.
    pub fn kind(&self) -> &'static str {
        self.mode.map_or("unknown", Mode::kind)
    }

    pub fn is_sequential(&self) -> bool {
        self.mode.is_some_and(Mode::is_sequential)
    }

    pub fn is_pipelined(&self) -> bool {
        self.mode.is_some_and(Mode::is_pipelined)
    }

    /// The run's spans carry the wire tap's stamps (the proxy was in the path).
    pub fn measured_at_server(&self) -> bool {
        self.spans.iter().any(|s| s.at_server_us.is_some())
    }

    /// Drawn requests the wire tap did not stamp, in a run it otherwise measured: their arrival
    /// at Redis is drawn at the midpoint. 0 when the tap stamped all of them or none.
    pub fn unstamped(&self) -> usize {
        if !self.measured_at_server() {
            return 0;
        }
        self.spans
            .iter()
            .chain(self.sampled_beyond())
            .filter(|s| s.at_server_us.is_none())
            .count()
    }

    /// The sampled requests after the first ones (the part of the run drawn only by sample).
    pub fn sampled_beyond(&self) -> &[Span] {
        let next = self.spans.last().map_or(0, |s| s.i + 1);
        let k = self.sampled.partition_point(|s| s.i < next);
        &self.sampled[k..]
    }

    /// Its Redis lanes: on a cluster one per master (as many as the run's summary lists, or
    /// while it runs as its spans name), else one.
    pub fn redis_lanes(&self) -> u32 {
        let listed = self
            .summary
            .as_ref()
            .and_then(|s| s.cluster.as_ref())
            .map_or(0, |c| c.masters.len() as u32);
        let named = self
            .spans
            .iter()
            .chain(self.sampled_beyond())
            .filter_map(|s| s.node)
            .max()
            .map_or(0, |n| u32::from(n) + 1);
        listed.max(named).max(1)
    }

    /// Whether its requests went to a cluster's masters (the engine said which answered).
    pub fn on_cluster(&self) -> bool {
        self.summary.as_ref().is_some_and(|s| s.cluster.is_some())
            || self.spans.first().is_some_and(|s| s.node.is_some())
    }

    /// Redis lane `k`'s name: on a cluster its master's address (once the summary lists it).
    pub fn master_label(&self, k: u32) -> String {
        self.summary
            .as_ref()
            .and_then(|s| s.cluster.as_ref())
            .and_then(|c| c.masters.get(k as usize))
            .map_or_else(|| format!("master {}", k + 1), |m| m.addr.clone())
    }

    /// The latest moment drawn: the last reply among the spans and the sample beyond them.
    pub fn extent_us(&self) -> f64 {
        self.spans
            .iter()
            .chain(self.sampled_beyond())
            .map(|s| s.replied_us)
            .fold(0.0, f64::max)
    }
}

/// Requests answered by one wait for replies: one round trip as the mode paid it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trip {
    /// The first of its requests written.
    pub issued_us: f64,
    pub last_reply_us: f64,
    /// Index range into the spans.
    pub start: usize,
    pub end: usize,
}

/// The run's drawn requests grouped into the round trips its mode paid
/// (`shared::trips::round_trips`: per batch however it was written; for a multiplexed run, per
/// read that brought replies). `None` while the mode is unknown: the grouping is the mode's,
/// and issue times alone cannot tell a flushed command from a round trip.
pub fn round_trips(t: &Trace) -> Option<Vec<Trip>> {
    if t.observed.is_some() {
        return Some(overlapping(&t.spans));
    }
    let mode = t.mode?;
    let trips = shared::trips::round_trips(mode, &t.spans)
        .into_iter()
        .map(|r| {
            let spans = &t.spans[r.clone()];
            Trip {
                issued_us: spans
                    .iter()
                    .map(|s| s.issued_us)
                    .fold(f64::INFINITY, f64::min),
                last_reply_us: spans.iter().map(|s| s.replied_us).fold(0.0, f64::max),
                start: r.start,
                end: r.end,
            }
        })
        .collect();
    Some(trips)
}

/// An observed connection's round trips as the observing proxy counts them: a stretch during
/// which some reply was awaited. A request that arrives with none awaited starts the next one.
pub fn overlapping(spans: &[Span]) -> Vec<Trip> {
    let mut trips: Vec<Trip> = Vec::new();
    for (k, s) in spans.iter().enumerate() {
        match trips.last_mut() {
            Some(t) if s.issued_us < t.last_reply_us => {
                t.last_reply_us = t.last_reply_us.max(s.replied_us);
                t.end = k + 1;
            }
            _ => trips.push(Trip {
                issued_us: s.issued_us,
                last_reply_us: s.replied_us,
                start: k,
                end: k + 1,
            }),
        }
    }
    trips
}

/// What one round trip is called for a mode: a multiplexed run has no batches, its round
/// trips are the reads that brought replies.
pub fn trip_noun(mode: Option<Mode>) -> &'static str {
    match mode {
        Some(Mode::Multiplexed { .. }) => "read",
        _ => "round trip",
    }
}

/// What of a run is drawn, when it is not every request: "first 5,000 of 100,000 requests
/// drawn, then every 32nd (sampled, lighter)". `None` when every request is drawn.
pub fn drawn_note(t: &Trace) -> Option<String> {
    let drawn = t.spans.len() as u64;
    if drawn >= t.count {
        return None;
    }
    let mut note = format!(
        "first {} of {} requests drawn",
        crate::format::count(drawn),
        crate::format::count(t.count)
    );
    if !t.sampled_beyond().is_empty() {
        note += &format!(", then every {} (sampled, lighter)", ordinal(t.stride));
    }
    Some(note)
}

/// 2 → "2nd", 11 → "11th", 32 → "32nd".
pub fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// What a run had done by a playback position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    pub sent: usize,
    pub received: usize,
    /// Round trips completed (every reply of the trip read); `None` while the mode is unknown.
    pub round_trips: Option<usize>,
}

/// Counts by `position_us`. Issue and reply times grow with `i` (the engine writes and reads in
/// order), so these are binary searches.
pub fn counters(spans: &[Span], trips: Option<&[Trip]>, position_us: f64) -> Counters {
    // Counted, not searched: on a pool of connections, requests in order of `i` are not in
    // order of time (each connection keeps its own pace).
    Counters {
        sent: spans.iter().filter(|s| s.issued_us <= position_us).count(),
        received: spans.iter().filter(|s| s.replied_us <= position_us).count(),
        round_trips: trips.map(|t| t.iter().filter(|b| b.last_reply_us <= position_us).count()),
    }
}

/// Every distinct moment something happens (a request sent or a reply read) across the runs,
/// sorted: where "step" lands.
pub fn events<'a>(traces: impl IntoIterator<Item = &'a [Span]>) -> Vec<f64> {
    let mut out: Vec<f64> = traces
        .into_iter()
        .flat_map(|spans| spans.iter().flat_map(|s| [s.issued_us, s.replied_us]))
        .collect();
    out.sort_unstable_by(f64::total_cmp);
    out.dedup();
    out
}

/// The next event strictly after `position_us` (or the last one).
pub fn step_forward(events: &[f64], position_us: f64) -> f64 {
    let k = events.partition_point(|t| *t <= position_us + 1e-9);
    events
        .get(k)
        .or(events.last())
        .copied()
        .unwrap_or(position_us)
}

/// The previous event strictly before `position_us` (or 0).
pub fn step_back(events: &[f64], position_us: f64) -> f64 {
    let k = events.partition_point(|t| *t < position_us - 1e-9);
    if k == 0 { 0.0 } else { events[k - 1] }
}

/// Arrival at Redis as drawn: the wire tap's stamp when the proxy measured it, else the
/// midpoint of the round trip (an estimate). Kept within the round trip.
pub fn at_server_us(s: &Span) -> f64 {
    s.at_server_us
        .unwrap_or((s.issued_us + s.replied_us) / 2.0)
        .clamp(s.issued_us, s.replied_us.max(s.issued_us))
}

/// The reply leaving Redis as drawn: the wire tap's stamp, else the arrival (no time at Redis
/// can be told apart without it). Never before the arrival nor after the reply is read.
pub fn from_server_us(s: &Span) -> f64 {
    let at = at_server_us(s);
    s.from_server_us
        .unwrap_or(at)
        .clamp(at, s.replied_us.max(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(i: u64, issued_us: f64, replied_us: f64) -> Span {
        Span::new(i, issued_us, replied_us)
    }

    /// Two pipelined batches of three, replies in chunks.
    fn pipelined() -> Vec<Span> {
        vec![
            span(0, 0.0, 10.0),
            span(1, 0.0, 10.0),
            span(2, 0.0, 12.0),
            span(3, 12.5, 20.0),
            span(4, 12.5, 21.0),
            span(5, 12.5, 21.0),
        ]
    }

    fn trace(mode: Option<Mode>, spans: Vec<Span>) -> Trace {
        Trace {
            run: 1,
            mode,
            network: None,
            count: spans.len() as u64,
            spans,
            sampled: vec![],
            stride: 1,
            summary: None,
            observed: None,
            captured: false,
        }
    }

    #[test]
    fn an_observed_connection_s_round_trips_are_its_overlapping_requests() {
        // Two one-at-a-time requests, then a batch of three awaited together.
        let spans = vec![
            span(0, 0.0, 2.0),
            span(1, 3.0, 5.0),
            span(2, 6.0, 9.0),
            span(3, 6.0, 9.5),
            span(4, 6.5, 10.0),
        ];
        let trips: Vec<(usize, usize)> = overlapping(&spans)
            .iter()
            .map(|t| (t.start, t.end))
            .collect();
        assert_eq!(trips, [(0, 1), (1, 2), (2, 5)]);
        let t = Trace {
            observed: Some("connection 1".into()),
            captured: false,
            ..trace(None, spans)
        };
        assert_eq!(round_trips(&t).map(|t| t.len()), Some(3));
    }

    /// (start, end) of each trip.
    fn ranges(mode: Mode, spans: Vec<Span>) -> Vec<(usize, usize)> {
        round_trips(&trace(Some(mode), spans))
            .unwrap()
            .iter()
            .map(|t| (t.start, t.end))
            .collect()
    }

    /// `n` requests in batches of `batch`, each written `every` commands at a time, each batch's
    /// replies read at its end.
    fn written(n: u64, batch: u64, every: u64) -> Vec<Span> {
        (0..n)
            .map(|i| {
                let (b, k) = (i / batch, i % batch);
                let issued = b as f64 * 100.0 + (k / every) as f64;
                span(i, issued, b as f64 * 100.0 + 50.0 + k as f64 * 0.1)
            })
            .collect()
    }

    #[test]
    fn sequential_pays_a_round_trip_per_request() {
        let seq = (0..4).map(|i| span(i, i as f64 * 10.0, i as f64 * 10.0 + 5.0));
        assert_eq!(
            ranges(Mode::Sequential, seq.collect()),
            [(0, 1), (1, 2), (2, 3), (3, 4)]
        );
    }

    #[test]
    fn a_pipeline_pays_one_round_trip_per_batch_however_it_was_written() {
        use shared::Flush;
        let expected = [(0, 4), (4, 8), (8, 10)];
        for (flush, every) in [
            (Flush::Batch, 4),
            (Flush::EachCommand, 1),
            (Flush::Buffered { commands: 2 }, 2),
        ] {
            let mode = Mode::Pipelined { batch: 4, flush };
            assert_eq!(ranges(mode, written(10, 4, every)), expected, "{flush:?}");
        }
        // Grouping by issue time would have counted every flushed write as a round trip.
        let each = Mode::Pipelined {
            batch: 4,
            flush: Flush::EachCommand,
        };
        let trips = round_trips(&trace(Some(each), written(10, 4, 1))).unwrap();
        assert_eq!(trips.len(), 3);
        assert_eq!(
            (trips[1].issued_us, trips[1].last_reply_us),
            (100.0, 150.3),
            "a trip runs from its first write to its last reply"
        );
    }

    #[test]
    fn transactions_and_msets_pay_one_round_trip_per_batch() {
        for mode in [Mode::Transaction { batch: 3 }, Mode::Mset { batch: 3 }] {
            assert_eq!(
                ranges(mode, written(7, 3, 3)),
                [(0, 3), (3, 6), (6, 7)],
                "{mode:?}"
            );
        }
    }

    #[test]
    fn a_multiplexed_run_pays_one_round_trip_per_read_that_brought_replies() {
        // Four written together; their replies read as 1, then 2, then 1.
        let spans = vec![
            span(0, 0.0, 5.0),
            span(1, 0.0, 7.0),
            span(2, 0.0, 7.0),
            span(3, 0.0, 9.0),
        ];
        let mode = Mode::Multiplexed { in_flight: 4 };
        assert_eq!(ranges(mode, spans), [(0, 1), (1, 3), (3, 4)]);
        assert_eq!(trip_noun(Some(mode)), "read");
        assert_eq!(trip_noun(Some(Mode::Sequential)), "round trip");
    }

    #[test]
    fn a_pool_s_counters_count_requests_in_any_order_of_time() {
        // Two connections: connection 1 (odd i) runs ahead of connection 0.
        let spans = vec![
            span(0, 0.0, 10.0),
            span(1, 0.0, 2.0),
            span(2, 10.0, 20.0),
            span(3, 2.0, 4.0),
            span(4, 20.0, 30.0),
            span(5, 4.0, 6.0),
        ];
        let mode = Mode::Connections { connections: 2 };
        let t = trace(Some(mode), spans.clone());
        let trips = round_trips(&t).unwrap();
        let c = counters(&spans, Some(&trips), 5.0);
        assert_eq!((c.sent, c.received, c.round_trips), (4, 2, Some(2)));
    }

    #[test]
    fn without_the_mode_no_round_trips_are_counted() {
        let t = trace(None, written(8, 4, 4));
        assert_eq!(round_trips(&t), None);
        assert_eq!(counters(&t.spans, None, 1e9).round_trips, None);
    }

    #[test]
    fn counters_tick_with_the_position() {
        let s = pipelined();
        let t = round_trips(&trace(Some(Mode::pipelined(3)), s.clone())).unwrap();
        let at = |pos| counters(&s, Some(&t), pos);
        let c = |sent, received, trips| Counters {
            sent,
            received,
            round_trips: Some(trips),
        };
        assert_eq!(at(-1.0), c(0, 0, 0));
        assert_eq!(at(0.0), c(3, 0, 0));
        assert_eq!(at(11.0), c(3, 2, 0));
        assert_eq!(at(12.5), c(6, 3, 1));
        assert_eq!(at(100.0), c(6, 6, 2));
    }

    #[test]
    fn steps_land_on_events_of_either_run() {
        let p = pipelined();
        let q = [span(0, 0.0, 7.0), span(1, 7.0, 15.0)];
        let e = events([&p[..], &q[..]]);
        assert_eq!(e, [0.0, 7.0, 10.0, 12.0, 12.5, 15.0, 20.0, 21.0]);
        assert_eq!(step_forward(&e, 0.0), 7.0);
        assert_eq!(step_forward(&e, 8.0), 10.0);
        assert_eq!(step_forward(&e, 21.0), 21.0);
        assert_eq!(step_back(&e, 10.0), 7.0);
        assert_eq!(step_back(&e, 0.0), 0.0);
        assert_eq!(step_back(&e, 100.0), 21.0);
    }

    #[test]
    fn the_server_is_reached_at_the_midpoint_unless_measured() {
        assert_eq!(at_server_us(&span(0, 10.0, 30.0)), 20.0);
        assert_eq!(from_server_us(&span(0, 10.0, 30.0)), 20.0);
        let tapped = Span {
            at_server_us: Some(12.0),
            from_server_us: Some(25.0),
            ..span(0, 10.0, 30.0)
        };
        assert_eq!(at_server_us(&tapped), 12.0);
        assert_eq!(from_server_us(&tapped), 25.0);
        // Stamps outside the round trip (clock noise) are kept inside it, in order.
        let odd = Span {
            at_server_us: Some(5.0),
            from_server_us: Some(40.0),
            ..span(0, 10.0, 30.0)
        };
        assert_eq!((at_server_us(&odd), from_server_us(&odd)), (10.0, 30.0));
        let mut t = trace(None, vec![tapped, span(1, 30.0, 50.0)]);
        assert!(t.measured_at_server());
        assert_eq!(
            t.unstamped(),
            1,
            "the second request is drawn at its midpoint"
        );
        t.spans.truncate(1);
        assert_eq!(t.unstamped(), 0);
        assert_eq!(
            trace(None, vec![span(0, 0.0, 1.0)]).unstamped(),
            0,
            "no tap at all"
        );
    }

    #[test]
    fn a_cluster_run_gets_a_redis_lane_per_master() {
        let on = |i, node| Span {
            node: Some(node),
            ..span(i, i as f64, i as f64 + 5.0)
        };
        let mut t = trace(Some(Mode::pipelined(3)), vec![on(0, 1), on(1, 0), on(2, 1)]);
        assert!(t.on_cluster());
        // While it runs: as many lanes as its spans name, named by number.
        assert_eq!(t.redis_lanes(), 2);
        assert_eq!(t.master_label(1), "master 2");
        // Finished: every master the engine listed, by address.
        let share = |addr: &str| shared::MasterShare {
            addr: addr.to_string(),
            commands: 1,
            round_trips: 1,
        };
        t.summary = Some(RunSummary {
            spec: shared::RunSpec::set(3, Mode::pipelined(3)),
            done: 3,
            wall_us: 8,
            ops_per_sec: 0.0,
            round_trips: 2,
            writes: 2,
            wire_commands: 3,
            latency: shared::Latency::default(),
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: Some(shared::ClusterRun {
                masters: vec![
                    share("127.0.0.1:7001"),
                    share("127.0.0.1:7002"),
                    share("127.0.0.1:7003"),
                ],
                ..Default::default()
            }),
        });
        assert_eq!(t.redis_lanes(), 3);
        assert_eq!(t.master_label(2), "127.0.0.1:7003");
        let single = trace(Some(Mode::pipelined(3)), pipelined());
        assert!(!single.on_cluster());
        assert_eq!(single.redis_lanes(), 1);
    }

    #[test]
    fn the_sample_beyond_the_first_requests_extends_the_picture() {
        let first: Vec<Span> = (0..4)
            .map(|i| Span::new(i, i as f64, i as f64 + 1.0))
            .collect();
        let sampled: Vec<Span> = (0..5)
            .map(|k| Span::new(k * 2, k as f64 * 2.0, k as f64 * 2.0 + 1.0))
            .collect();
        let t = Trace {
            run: 1,
            mode: Some(Mode::Sequential),
            network: None,
            spans: first,
            sampled,
            stride: 2,
            count: 10,
            summary: None,
            observed: None,
            captured: false,
        };
        let beyond: Vec<u64> = t.sampled_beyond().iter().map(|s| s.i).collect();
        assert_eq!(beyond, [4, 6, 8]);
        assert_eq!(t.extent_us(), 9.0);
        assert_eq!(
            drawn_note(&t).as_deref(),
            Some("first 4 of 10 requests drawn, then every 2nd (sampled, lighter)")
        );
        let whole = Trace {
            count: 4,
            ..t.clone()
        };
        assert_eq!(drawn_note(&whole), None);
        let running = Trace {
            sampled: vec![],
            ..t
        };
        assert_eq!(
            drawn_note(&running).as_deref(),
            Some("first 4 of 10 requests drawn")
        );
        assert_eq!(
            [1, 2, 3, 4, 11, 12, 13, 21, 32, 64, 1024].map(ordinal),
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "32nd", "64th",
                "1024th"
            ]
        );
    }
}
