//! The wire tap: when each command's bytes reached Redis and when its reply left, stamped by
//! the delay line as it forwards them, and how those stamps land on a run's spans.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use shared::{Mode, RoundTripSplit, Timeline};

use crate::median::median;
use crate::spans::FULL_SPANS;
use crate::target::MAX_HANDSHAKE_COMMANDS;

/// Server-side times of one proxied connection, per command in connection order: when its
/// bytes were delivered to Redis and when its reply was read from Redis. Bounded: the first
/// `limit` of each (`TAP_STAMPS` unless the run has several connections: `stamps_per_tap`),
/// and counts of all.
#[derive(Debug)]
pub struct WireTap {
    log: Mutex<TapLog>,
    /// Chunks read from the engine and not yet handed to Redis and stamped.
    pub(super) in_flight: AtomicU64,
    limit: usize,
}

impl Default for WireTap {
    fn default() -> Self {
        WireTap::with_limit(TAP_STAMPS)
    }
}

/// Wire commands per request at most, in any mode: a MULTI/EXEC of one (see `wire_indices`).
const MAX_WIRE_COMMANDS_PER_REQUEST: usize = 3;

/// Stamps kept per direction per connection: enough for every request a timeline holds in full
/// (`FULL_SPANS`, the ones drawn), in any mode, after the connection's handshake.
pub const TAP_STAMPS: usize =
    MAX_WIRE_COMMANDS_PER_REQUEST * FULL_SPANS as usize + MAX_HANDSHAKE_COMMANDS;

/// Stamps kept per connection when a run spreads its requests over `connections` of them
/// (`Mode::connection_of`): each carries a `1 / connections` share of the requests a timeline
/// holds in full, so the run's stamps stay within one connection's `TAP_STAMPS` however many
/// connections it opens.
pub fn stamps_per_tap(connections: u32) -> usize {
    MAX_WIRE_COMMANDS_PER_REQUEST * FULL_SPANS.div_ceil(connections.max(1) as u64) as usize
        + MAX_HANDSHAKE_COMMANDS
}

#[derive(Debug, Default, Clone)]
pub struct TapLog {
    pub at_server: Vec<Instant>,
    pub from_server: Vec<Instant>,
    pub commands: u64,
    pub replies: u64,
    /// The connection is TLS: its bytes cannot be read, so nothing was counted or stamped.
    pub encrypted: bool,
}

impl TapLog {
    /// The log without the first `n` commands and replies: those of the connection's handshake
    /// (`RedisTarget::handshake_commands`), sent before the run's first command.
    pub fn after_handshake(&self, n: usize) -> TapLog {
        let skip = |v: &Vec<Instant>| v.get(n..).unwrap_or_default().to_vec();
        TapLog {
            at_server: skip(&self.at_server),
            from_server: skip(&self.from_server),
            commands: self.commands.saturating_sub(n as u64),
            replies: self.replies.saturating_sub(n as u64),
            encrypted: self.encrypted,
        }
    }
}

impl WireTap {
    pub fn with_limit(limit: usize) -> WireTap {
        WireTap {
            log: Default::default(),
            in_flight: AtomicU64::new(0),
            limit,
        }
    }

    pub(super) fn delivered(&self, at: Instant, n: usize) {
        let mut log = self.log.lock().expect("wire tap");
        log.commands += n as u64;
        let room = self.limit.saturating_sub(log.at_server.len()).min(n);
        log.at_server.extend(std::iter::repeat_n(at, room));
    }

    /// The connection turned out to be TLS (`Framer::encrypted`).
    pub(super) fn encrypted(&self) {
        self.log.lock().expect("wire tap").encrypted = true;
    }

    pub(super) fn replied(&self, at: Instant, n: usize) {
        let mut log = self.log.lock().expect("wire tap");
        log.replies += n as u64;
        let room = self.limit.saturating_sub(log.from_server.len()).min(n);
        log.from_server.extend(std::iter::repeat_n(at, room));
    }

    pub fn snapshot(&self) -> TapLog {
        self.log.lock().expect("wire tap").clone()
    }

    /// True when every byte the engine sent has been handed to Redis and stamped. The writer
    /// stamps just after its write, so Redis's reply (and the engine's end of run) can come a
    /// moment before the last stamp is in.
    pub fn settled(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }

    /// Waits (briefly, at most `limit`) until `settled`, then returns the stamps.
    pub async fn settle(&self, limit: Duration) -> TapLog {
        let deadline = Instant::now() + limit;
        while !self.settled() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        self.snapshot()
    }
}

/// Where item `i` of a run of `count` items in `mode` is on the wire, as the tap counts
/// commands and replies (connection order, from 0): the command whose delivery to Redis is the
/// item's `at_server`, and the reply whose departure from Redis is its `from_server`.
///
/// - Sequential, pipelined, multiplexed: one command per item, so item `i` is command `i`.
/// - Transaction of `batch`: each batch is `MULTI`, its commands, `EXEC`. Item `j` of batch `b`
///   is command `b·(batch+2) + 1 + j`, and its reply travels in `EXEC`'s, command
///   `b·(batch+2) + n + 1` (`n` = the batch's commands; only the last batch may be short).
/// - MSET/MGET of `batch`: one command per batch, so item `i` is command `i / batch`.
/// - A pool of `C` connections: item `i` is command `i / C` of its connection
///   (`Mode::connection_of`), each connection tapped on its own.
pub fn wire_indices(mode: Mode, count: u64, i: u64) -> (u64, u64) {
    match mode {
        Mode::Connections { connections } => {
            let j = i / connections.max(1) as u64;
            (j, j)
        }
        Mode::Sequential | Mode::Pipelined { .. } | Mode::Multiplexed { .. } => (i, i),
        Mode::Transaction { batch } => {
            let batch = batch.max(1) as u64;
            let (b, j) = (i / batch, i % batch);
            let base = b * (batch + 2);
            let n = batch.min(count.saturating_sub(b * batch)).max(j + 1);
            (base + 1 + j, base + n + 1)
        }
        Mode::Mset { batch } => {
            let b = i / batch.max(1) as u64;
            (b, b)
        }
    }
}

/// Puts the wire taps' stamps into a finished run's timeline (µs since `started`, the instant
/// its spans count from) and returns the split of a round trip: medians of engine → Redis
/// (at_server − issued), in Redis (from_server − at_server) and Redis → engine (replied −
/// from_server) over the spans the taps stamped. `None` if they stamped none.
///
/// `taps` holds one log per connection of the run, in connection order (one, except for a
/// pool: `Mode::connections`); a request's stamps are in its connection's log.
pub fn stamp_timeline(
    timeline: &mut Timeline,
    mode: Mode,
    count: u64,
    started: Instant,
    taps: &[TapLog],
) -> Option<RoundTripSplit> {
    // Signed: a stamp before `started` would mean stamps and requests are mismatched, and
    // must show as a negative leg, not as a plausible zero.
    let us = |t: Instant| match t.checked_duration_since(started) {
        Some(after) => after.as_nanos() as f64 / 1000.0,
        None => -(started.duration_since(t).as_nanos() as f64 / 1000.0),
    };
    let stamp = |span: &mut shared::Span| {
        let (at, from) = wire_indices(mode, count, span.i);
        let Some(tap) = taps.get(mode.connection_of(span.i) as usize) else {
            return;
        };
        if let (Some(&a), Some(&f)) = (
            tap.at_server.get(at as usize),
            tap.from_server.get(from as usize),
        ) {
            span.at_server_us = Some(us(a));
            span.from_server_us = Some(us(f));
        }
    };
    timeline.first.iter_mut().for_each(stamp);
    timeline.sampled.iter_mut().for_each(stamp);
    // Each request once: the first ones in full, then the sample beyond them.
    let covered = timeline.first.len() as u64;
    let spans = timeline
        .first
        .iter()
        .chain(timeline.sampled.iter().filter(|s| s.i >= covered));
    let (mut out, mut server, mut back) = (Vec::new(), Vec::new(), Vec::new());
    for s in spans {
        if let (Some(a), Some(f)) = (s.at_server_us, s.from_server_us) {
            out.push(a - s.issued_us);
            server.push(f - a);
            back.push(s.replied_us - f);
        }
    }
    if out.is_empty() {
        return None;
    }
    let negative = [&out, &server, &back]
        .iter()
        .map(|legs| legs.iter().filter(|&&l| l < 0.0).count())
        .sum::<usize>();
    if negative > 0 {
        tracing::warn!(
            negative,
            samples = out.len(),
            "wire tap: legs below zero (stamps matched to the wrong requests?); reported as they are"
        );
    }
    Some(RoundTripSplit {
        samples: out.len() as u64,
        out_us: median(out)?,
        server_us: median(server)?,
        back_us: median(back)?,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_wire_command_per_item_in_the_plain_modes() {
        for mode in [
            Mode::Sequential,
            Mode::pipelined(100),
            Mode::Multiplexed { in_flight: 8 },
        ] {
            for i in [0, 1, 99, 100, 4_999] {
                assert_eq!(wire_indices(mode, 5_000, i), (i, i), "{mode:?}");
            }
        }
    }

    #[test]
    fn a_transaction_item_is_its_queued_command_and_replies_with_exec() {
        let mode = Mode::Transaction { batch: 3 };
        // Wire: MULTI c0 c1 c2 EXEC | MULTI c3 c4 c5 EXEC | MULTI c6 EXEC
        //       0     1  2  3  4      5     6  7  8  9      10    11 12
        let expect = [(1, 4), (2, 4), (3, 4), (6, 9), (7, 9), (8, 9), (11, 12)];
        for (i, e) in expect.iter().enumerate() {
            assert_eq!(wire_indices(mode, 7, i as u64), *e, "item {i}");
        }
    }

    #[test]
    fn an_mset_item_is_its_batch() {
        let mode = Mode::Mset { batch: 10 };
        assert_eq!(wire_indices(mode, 25, 0), (0, 0));
        assert_eq!(wire_indices(mode, 25, 9), (0, 0));
        assert_eq!(wire_indices(mode, 25, 10), (1, 1));
        assert_eq!(wire_indices(mode, 25, 24), (2, 2));
    }

    #[test]
    fn the_tap_keeps_a_stamp_for_every_full_span_in_every_mode() {
        let last = FULL_SPANS - 1;
        for mode in [
            Mode::Sequential,
            Mode::pipelined(1_000),
            Mode::Multiplexed { in_flight: 8 },
            Mode::Transaction { batch: 1 },
            Mode::Transaction { batch: 2 },
            Mode::Transaction { batch: 10 },
            Mode::Transaction { batch: 1_000 },
            Mode::Mset { batch: 1 },
            Mode::Mset { batch: 10 },
            Mode::Connections { connections: 1 },
            Mode::Connections { connections: 8 },
        ] {
            for count in [FULL_SPANS, 1_000_000] {
                let (at, from) = wire_indices(mode, count, last);
                let needed = at.max(from) as usize + 1 + MAX_HANDSHAKE_COMMANDS;
                assert!(needed <= TAP_STAMPS, "{mode:?}: {needed} stamps needed");
            }
        }
    }

    #[test]
    fn a_pool_s_taps_together_keep_what_one_connection_s_would() {
        assert_eq!(stamps_per_tap(1), TAP_STAMPS);
        for c in [2u32, 8, 50, 256] {
            // Every request the timeline holds in full is stamped on its connection…
            let mode = Mode::Connections { connections: c };
            let (last, _) = wire_indices(mode, 1_000_000, FULL_SPANS - 1);
            assert!(
                (last as usize) < stamps_per_tap(c) - MAX_HANDSHAKE_COMMANDS,
                "C = {c}"
            );
            // …and all of them together stay near one connection's budget.
            let total = stamps_per_tap(c) * c as usize;
            assert!(
                total <= TAP_STAMPS + (3 + MAX_HANDSHAKE_COMMANDS) * c as usize,
                "C = {c}"
            );
        }
        let tap = WireTap::with_limit(3);
        tap.delivered(Instant::now(), 5);
        tap.replied(Instant::now(), 2);
        let log = tap.snapshot();
        assert_eq!((log.commands, log.at_server.len()), (5, 3));
        assert_eq!((log.replies, log.from_server.len()), (2, 2));
    }

    #[test]
    fn the_handshake_is_not_counted_as_requests() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        // AUTH and SELECT before the run started, then two SETs.
        let tap = TapLog {
            at_server: vec![t0 - Duration::from_micros(50), t0, at(100), at(300)],
            from_server: vec![t0 - Duration::from_micros(40), t0, at(110), at(310)],
            commands: 4,
            replies: 4,
            encrypted: false,
        };
        let after = tap.after_handshake(2);
        assert_eq!((after.commands, after.replies), (2, 2));
        let mut timeline = Timeline {
            first: vec![
                shared::Span::new(0, 10.0, 200.0),
                shared::Span::new(1, 210.0, 400.0),
            ],
            ..Default::default()
        };
        let split = stamp_timeline(&mut timeline, Mode::Sequential, 2, t0, &[after]).unwrap();
        assert_eq!(timeline.first[1].at_server_us, Some(300.0));
        assert_eq!(
            (split.out_us, split.server_us, split.back_us),
            (90.0, 10.0, 90.0)
        );
    }

    #[test]
    fn a_stamp_before_the_run_reads_negative_not_zero() {
        let t0 = Instant::now() + Duration::from_millis(1);
        let tap = TapLog {
            at_server: vec![t0 - Duration::from_micros(50)],
            from_server: vec![t0 + Duration::from_micros(20)],
            commands: 1,
            replies: 1,
            encrypted: false,
        };
        let mut timeline = Timeline {
            first: vec![shared::Span::new(0, 10.0, 200.0)],
            ..Default::default()
        };
        let split = stamp_timeline(&mut timeline, Mode::Sequential, 1, t0, &[tap]).unwrap();
        assert_eq!(timeline.first[0].at_server_us, Some(-50.0));
        assert_eq!(split.out_us, -60.0);
    }

    #[test]
    fn a_pool_request_is_stamped_from_its_own_connection() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let mode = Mode::Connections { connections: 3 };
        assert_eq!(wire_indices(mode, 10, 7), (2, 2));
        // Connection k's command j reached Redis at 1000·k + 10·j.
        let taps: Vec<TapLog> = (0..3)
            .map(|k| TapLog {
                at_server: (0..4).map(|j| at(1000 * k + 10 * j)).collect(),
                from_server: (0..4).map(|j| at(1000 * k + 10 * j + 5)).collect(),
                commands: 4,
                replies: 4,
                encrypted: false,
            })
            .collect();
        let mut timeline = Timeline {
            first: (0..8).map(|i| shared::Span::new(i, 0.0, 5_000.0)).collect(),
            ..Default::default()
        };
        stamp_timeline(&mut timeline, mode, 8, t0, &taps).unwrap();
        let got: Vec<f64> = timeline
            .first
            .iter()
            .map(|s| s.at_server_us.unwrap())
            .collect();
        assert_eq!(
            got,
            [0.0, 1000.0, 2000.0, 10.0, 1010.0, 2010.0, 20.0, 1020.0]
        );
        // Without its connection's tap a request stays unstamped.
        let mut timeline = Timeline {
            first: (0..3).map(|i| shared::Span::new(i, 0.0, 5_000.0)).collect(),
            ..Default::default()
        };
        stamp_timeline(&mut timeline, mode, 3, t0, &taps[..1]).unwrap();
        assert!(timeline.first[1].at_server_us.is_none());
    }

    #[test]
    fn stamps_land_on_their_spans_and_make_the_split() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        // Transaction of 2, 4 items: wire MULTI c0 c1 EXEC MULTI c2 c3 EXEC.
        let tap = TapLog {
            at_server: (0..8).map(|k| at(100 + k)).collect(),
            from_server: (0..8).map(|k| at(200 + k)).collect(),
            commands: 8,
            replies: 8,
            encrypted: false,
        };
        let span = |i| shared::Span::new(i, 10.0, 400.0);
        let mut timeline = Timeline {
            first: (0..3).map(span).collect(),
            sampled: vec![span(0), span(2)],
            stride: 2,
        };
        let split = stamp_timeline(
            &mut timeline,
            Mode::Transaction { batch: 2 },
            4,
            t0,
            &[TapLog {
                at_server: tap.at_server[..6].to_vec(),
                ..tap
            }],
        )
        .unwrap();
        let got: Vec<_> = timeline
            .first
            .iter()
            .map(|s| (s.at_server_us, s.from_server_us))
            .collect();
        assert_eq!(
            got,
            [
                (Some(101.0), Some(203.0)),
                (Some(102.0), Some(203.0)),
                (Some(105.0), Some(207.0)),
            ]
        );
        assert_eq!(timeline.sampled[1].at_server_us, Some(105.0));
        // Three distinct spans (the sample repeats the first ones).
        assert_eq!(split.samples, 3);
        assert_eq!(split.out_us, 92.0);
        assert_eq!(split.server_us, 102.0);
        assert_eq!(split.back_us, 197.0);
    }
}
