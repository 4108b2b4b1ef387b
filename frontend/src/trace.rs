//! A run's request timings as the teaching view uses them: batches (requests issued together),
//! what had happened by a playback position, and the moments a step can land on. Pure.

use shared::{Mode, Network, RunSummary, Span};

/// One run's timeline as drawn: its requests in order of `i` (the first few thousand, every one).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub run: u64,
    pub mode: Option<Mode>,
    /// The network the run crossed, once known.
    pub network: Option<Network>,
    pub spans: Vec<Span>,
    /// The run's total count (more than `spans.len()` for long runs).
    pub count: u64,
    /// Set once the run finished.
    pub summary: Option<RunSummary>,
}

impl Trace {
    pub fn kind(&self) -> &'static str {
        self.mode.map_or("unknown", crate::state::mode_kind)
    }

    /// The run's spans carry the wire tap's stamps (the proxy was in the path).
    pub fn measured_at_server(&self) -> bool {
        self.spans.iter().any(|s| s.at_server_us.is_some())
    }

    /// The latest moment drawn: the last reply among the spans.
    pub fn extent_us(&self) -> f64 {
        self.spans.iter().map(|s| s.replied_us).fold(0.0, f64::max)
    }
}

/// Requests written together and answered by one round trip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Batch {
    pub issued_us: f64,
    pub last_reply_us: f64,
    /// Index range into the spans.
    pub start: usize,
    pub end: usize,
}

/// Consecutive spans with the same issue time form a batch (a pipelined write); a sequential
/// run has one batch per request.
pub fn batches(spans: &[Span]) -> Vec<Batch> {
    let mut out: Vec<Batch> = Vec::new();
    for (k, s) in spans.iter().enumerate() {
        match out.last_mut() {
            Some(b) if b.issued_us == s.issued_us => {
                b.end = k + 1;
                b.last_reply_us = b.last_reply_us.max(s.replied_us);
            }
            _ => out.push(Batch {
                issued_us: s.issued_us,
                last_reply_us: s.replied_us,
                start: k,
                end: k + 1,
            }),
        }
    }
    out
}

/// What a run had done by a playback position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    pub sent: usize,
    pub received: usize,
    /// Round trips completed: batches whose every reply had arrived.
    pub round_trips: usize,
}

/// Counts by `position_us`. Issue and reply times grow with `i` (the engine writes and reads in
/// order), so these are binary searches.
pub fn counters(spans: &[Span], batches: &[Batch], position_us: f64) -> Counters {
    Counters {
        sent: spans.partition_point(|s| s.issued_us <= position_us),
        received: spans.partition_point(|s| s.replied_us <= position_us),
        round_trips: batches.partition_point(|b| b.last_reply_us <= position_us),
    }
}

/// Every distinct moment something happens (a request sent or a reply read) across the runs,
/// sorted: where "step" lands.
pub fn events<'a>(traces: impl IntoIterator<Item = &'a [Span]>) -> Vec<f64> {
    let mut out: Vec<f64> = traces
        .into_iter()
        .flat_map(|spans| spans.iter().flat_map(|s| [s.issued_us, s.replied_us]))
        .collect();
    out.sort_by(f64::total_cmp);
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

    #[test]
    fn batches_group_by_issue_time() {
        let b = batches(&pipelined());
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].start, b[0].end, b[0].last_reply_us), (0, 3, 12.0));
        assert_eq!((b[1].start, b[1].end, b[1].issued_us), (3, 6, 12.5));
        let seq = [span(0, 0.0, 5.0), span(1, 5.0, 9.0)];
        assert_eq!(batches(&seq).len(), 2);
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn counters_tick_with_the_position() {
        let s = pipelined();
        let b = batches(&s);
        assert_eq!(counters(&s, &b, -1.0), Counters::default());
        assert_eq!(
            counters(&s, &b, 0.0),
            Counters {
                sent: 3,
                received: 0,
                round_trips: 0
            }
        );
        assert_eq!(
            counters(&s, &b, 11.0),
            Counters {
                sent: 3,
                received: 2,
                round_trips: 0
            }
        );
        assert_eq!(
            counters(&s, &b, 12.5),
            Counters {
                sent: 6,
                received: 3,
                round_trips: 1
            }
        );
        assert_eq!(
            counters(&s, &b, 100.0),
            Counters {
                sent: 6,
                received: 6,
                round_trips: 2
            }
        );
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
        let t = Trace {
            run: 1,
            mode: None,
            network: None,
            spans: vec![tapped],
            count: 1,
            summary: None,
        };
        assert!(t.measured_at_server());
    }
}
