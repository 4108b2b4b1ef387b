//! A run's round trips as the engine paid them: which requests shared one wait for replies.
//!
//! The mode says it. Sequential, pipelined, MULTI/EXEC and MSET runs wait once per batch of
//! `batch` requests, however the batch was written (a pipeline that flushes each command still
//! waits once for the whole batch). A multiplexed run has no batches: it waits on the network
//! once per read that brought replies, so its requests are grouped by the read that answered
//! them (the same reply time). The engine counts `RunSummary::round_trips` by the same rules.

use std::ops::Range;

use crate::report::Span;
use crate::spec::Mode;

/// Consecutive `spans` (in request order, from request 0, none missing) grouped into the round
/// trips that answered them: index ranges into `spans`.
pub fn round_trips(mode: Mode, spans: &[Span]) -> Vec<Range<usize>> {
    let same_trip = |a: &Span, b: &Span| match mode {
        Mode::Multiplexed { .. } => a.replied_us == b.replied_us,
        _ => {
            let batch = mode.batch().max(1) as u64;
            a.i / batch == b.i / batch
        }
    };
    let mut out: Vec<Range<usize>> = Vec::new();
    for (k, s) in spans.iter().enumerate() {
        match out.last_mut() {
            Some(trip) if same_trip(&spans[trip.start], s) => trip.end = k + 1,
            _ => out.push(k..k + 1),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Flush;

    fn span(i: u64, issued_us: f64, replied_us: f64) -> Span {
        Span::new(i, issued_us, replied_us)
    }

    #[test]
    fn a_pipeline_that_flushes_each_command_still_waits_once_per_batch() {
        // Batch of 3, every command written on its own (different issue times).
        let spans: Vec<Span> = (0..7)
            .map(|i| span(i, i as f64, 10.0 + (i / 3) as f64 * 10.0))
            .collect();
        let mode = Mode::Pipelined {
            batch: 3,
            flush: Flush::EachCommand,
        };
        assert_eq!(round_trips(mode, &spans), vec![0..3, 3..6, 6..7]);
    }

    #[test]
    fn sequential_is_one_trip_per_request() {
        let spans: Vec<Span> = (0..4).map(|i| span(i, 0.0, 1.0)).collect();
        assert_eq!(round_trips(Mode::Sequential, &spans).len(), 4);
    }

    #[test]
    fn multiplexed_trips_are_the_reads_that_brought_replies() {
        // One write of 4, replies read as 1, 2, 1: three waits.
        let spans = [
            span(0, 0.0, 5.0),
            span(1, 0.0, 7.0),
            span(2, 0.0, 7.0),
            span(3, 0.0, 9.0),
        ];
        let mode = Mode::Multiplexed { in_flight: 4 };
        assert_eq!(round_trips(mode, &spans), vec![0..1, 1..3, 3..4]);
    }

    #[test]
    fn transactions_and_msets_wait_once_per_batch() {
        let spans: Vec<Span> = (0..5).map(|i| span(i, 0.0, 1.0)).collect();
        for mode in [Mode::Transaction { batch: 2 }, Mode::Mset { batch: 2 }] {
            assert_eq!(
                round_trips(mode, &spans),
                vec![0..2, 2..4, 4..5],
                "{mode:?}"
            );
        }
    }
}
