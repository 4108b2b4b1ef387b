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
    /// While the run is under way: the engine's count of commands done and its time so far
    /// (µs), which go on past the requests drawn.
    pub running: Option<(u64, u64)>,
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
        crate::format::group(drawn),
        crate::format::group(t.count)
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
    /// Set when the position is past the requests drawn in full: the counts beyond them are
    /// read from the sample, each sampled request standing for `stride`, so they are right to
    /// within this many.
    pub within: Option<u64>,
}

/// A run's counts by `position_us`, the whole run's and not only its first requests': those
/// exact, the rest from the sample beyond them: the `k`-th sampled request sent means the
/// requests up to it were (fewer than `stride` short of the truth). Round trips beyond the first requests are the
/// mode's per reply (1 per `batch`), or for a multiplexed run the drawn requests' own ratio.
pub fn run_counters(t: &Trace, trips: Option<&[Trip]>, position_us: f64) -> Counters {
    let mut c = counters(&t.spans, trips, position_us);
    let beyond = t.sampled_beyond();
    let Some(first_beyond) = beyond.first() else {
        return c;
    };
    let (sent, received) = beyond.iter().fold((0u64, 0u64), |(sent, received), s| {
        (
            sent + u64::from(s.issued_us <= position_us),
            received + u64::from(s.replied_us <= position_us),
        )
    });
    if sent == 0 {
        return c;
    }
    // Requests beyond those drawn in full, up to and with the `k`-th sampled one.
    let start = t.spans.len() as u64;
    let span_of = |k: u64| match k {
        0 => 0,
        k => (first_beyond.i + 1).saturating_sub(start) + (k - 1) * t.stride,
    };
    let left = t.count.saturating_sub(start);
    let sent_beyond = span_of(sent).min(left);
    let received_beyond = span_of(received).min(left);
    if let (Some(drawn), Some(mode)) = (c.round_trips, t.mode) {
        let beyond = received_beyond as f64 * trips_per_reply(mode, &c);
        c.round_trips = Some(drawn + beyond.round() as usize);
    }
    c.sent += sent_beyond as usize;
    c.received += received_beyond as usize;
    c.within = Some(t.stride);
    c
}

/// Round trips a reply, as the mode pays them: 1 per `batch`, or for a multiplexed run (whose
/// reads bring as many replies as happen to be ready) the ratio `drawn` counted.
pub fn trips_per_reply(mode: Mode, drawn: &Counters) -> f64 {
    match (mode, drawn.round_trips) {
        (Mode::Multiplexed { .. }, Some(trips)) if drawn.received > 0 => {
            trips as f64 / drawn.received as f64
        }
        _ => 1.0 / f64::from(mode.batch().max(1)),
    }
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
        within: None,
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
mod tests;
