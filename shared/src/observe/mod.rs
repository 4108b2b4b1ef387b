//! Observe mode: what the observing proxy measured of one client connection, and the verdict
//! it earns. The backend fills `ObservedConnection` as traffic crosses the proxy; the page and
//! the CLI show it. The verdict is worked out here, once, so both say the same words; so are the
//! page's other sentences about a connection (`words`), which the server sends with it.
//!
//! Everything is measured at the proxy, between the client and Redis:
//!
//! ```text
//! client ──write──▶ proxy ──▶ Redis          a "write" is one read at the proxy: TCP may
//! client ◀──────── proxy ◀── Redis           merge two client writes or split one
//! ```
//!
//! A **round trip** is the client waiting for replies with nothing more to send, then sending
//! again: it starts when a command arrives with none awaited and ends when the last awaited
//! reply is handed back. The wire shows every reply back before the next command; whether the
//! client waited for them is read from evidence (`WaitEvidence`): a client that waits sends
//! its next command a steady moment after the replies, one that does not keeps its own
//! cadence whatever the replies did. What the evidence cannot decide is counted and said to
//! be unconfirmed (`ObservedCounts::unconfirmed_trips`). **At Redis** is the part of waiting
//! during which some command had reached Redis and its reply had not yet come back to the proxy
//! (proxy → Redis → proxy). What lies between round trips (nothing awaited at the proxy) holds
//! the observer's own two hops (client → proxy, proxy → client), measured once at start and
//! charged per round trip (`ObservedTimes::observer_us`), and the client's **own time**: its
//! code and its kernel. `parts` takes the wall time apart, each part labelled for how it was
//! obtained; from a capture (`Vantage::Capture`) there is no proxy and the times are the
//! capture host's.
//!
//! # Layout
//!
//! - `verdict`: whether and how a connection pipelined, headline and detail; every check it
//!   makes (the kind its counts read as, the checks where another read of the same wire gives
//!   another kind, the kernel's counts on the proxy's socket, phases, and the evidence that
//!   decides beyond the wire's timing) is there.
//! - `evidence`: what else was seen of the client (the probe, its syscalls, its receive window).
//! - `parts`: its wall time taken apart.
//! - `advice`: what would help a connection that waits on round trips.
//! - `what_if`: what if it pipelined, as the page draws it.
//! - `figure`: one figure the page shows, and how it was obtained.
//! - `words`: what the page says of a connection beyond its numbers, worded here.
//! - `numbers`: how numbers are said in every sentence (a leaf).

use serde::{Deserialize, Serialize};

use crate::report::Timeline;
use crate::spec::{Command, Network};

/// How many connections the observing proxy follows at once; one more is refused with a RESP
/// error the client shows.
pub const MAX_OBSERVED_CONNECTIONS: usize = 256;

/// Exact counts for one connection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObservedCounts {
    /// Commands framed from the client (RESP arrays and inline commands; MULTI and EXEC count).
    pub commands: u64,
    /// Replies handed back to the client for those commands (push messages not included).
    pub replies: u64,
    /// The client's writes as seen: reads at the proxy (or segments in a capture) that start a
    /// new command, so never more than `commands` (a big command read in pieces is one write;
    /// small writes may arrive merged).
    pub writes: u64,
    /// The writes are TCP segments as a capture saw them (the kernel's, not the client's:
    /// Linux merges small writes as it sends), not reads at the proxy.
    #[serde(default)]
    pub writes_are_segments: bool,
    /// Of `writes`, those that arrived while replies to earlier commands were still awaited.
    pub overlapping_writes: u64,
    /// The client waited for replies with nothing more to send, then sent again (as the wire
    /// shows it; `unconfirmed_trips` of them could be its own pauses).
    pub round_trips: u64,
    /// Of `round_trips`, those the wire cannot confirm as waits: every reply was back before
    /// the next command, but too few such moments, or too mixed, to show that the client
    /// waited for them rather than paused on its own.
    #[serde(default)]
    pub unconfirmed_trips: u64,
    /// Round trips begun by a write of several commands (a batch, not a handshake's or a
    /// loop's one command): when they are unconfirmed, whether their writes followed a wait
    /// decides between pipelined and auto-pipelined.
    #[serde(default)]
    pub batch_trips: u64,
    /// Moments every reply was back before the next command that were no waits: the client's
    /// commands kept their own cadence whatever the replies did (not in `round_trips`).
    #[serde(default)]
    pub cadence_gaps: u64,
    /// How waits were told from the client's own pauses, when there were enough to weigh.
    #[serde(default)]
    pub wait_evidence: Option<WaitEvidence>,
    /// Commands in flight at most (the deepest the pipeline got).
    pub max_depth: u64,
    /// Messages from Redis that answer no command: RESP3 pushes, pub/sub messages, MONITOR.
    pub pushes: u64,
    /// Blocking commands (BLPOP, XREAD … BLOCK, WAIT …); their waits are not round trips.
    pub blocking: u64,
    /// EXECs sent (transactions).
    pub transactions: u64,
    pub bytes_from_client: u64,
    pub bytes_from_redis: u64,
    /// Its life as stretches of round trips that behaved alike, in order (`Phase`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
}

/// A stretch of a connection's round trips that behaved alike: each command its own write,
/// each round trip a single command (one at a time, `OneAtATime`) or some several
/// (`WritePerCommand`); or batches in fewer writes (`Pipelined`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub kind: VerdictKind,
    pub round_trips: u64,
    pub commands: u64,
    pub writes: u64,
    /// From its first round trip's start to the next phase's (or the last reply), µs.
    pub us: f64,
    /// Of `us`, its round trips' own time: from each one's first command to its last reply
    /// (0 in recordings made before it was kept).
    #[serde(default)]
    pub waiting_us: f64,
}

/// The moments every reply was back before the next command, weighed: did the next command
/// follow the replies (a wait) or come when it would have anyway (the client's own cadence)?
///
/// For each moment, `gap` is the previous command's write to the next one and `lag` the
/// previous write to the last reply. A client that waits sends a steady moment after the
/// reply, so `gap` grows one for one with `lag`; one that keeps its own cadence sends when
/// it would have, so `gap` does not follow `lag`. `follows` is the least-squares slope of
/// `gap` on `lag`, with its 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitEvidence {
    pub moments: u64,
    pub follows: f64,
    pub low: f64,
    pub high: f64,
    pub reading: WaitReading,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitReading {
    /// The interval lies above 0.7, and the client's reaction to a reply was shorter than
    /// the reply's lag: the next command followed the replies.
    Waited,
    /// The interval lies below 0.3, over at least 256 moments: the commands kept their own cadence.
    OwnCadence,
    /// Anything else (or the replies' times hardly varied; or the client's reaction was as
    /// long as the lag, where a shared CPU couples its writes to the replies): the wire
    /// cannot tell.
    Undecided,
}

/// The fewest moments weighed for `WaitEvidence`: below it, round trips are unconfirmed.
pub const WAIT_EVIDENCE_MIN: u64 = 8;

/// Where one connection's time went, in µs, measured at the proxy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObservedTimes {
    /// From the first command's arrival to the last reply handed back (or to now).
    pub wall_us: f64,
    /// Round trips: replies awaited (blocking commands' waits excluded).
    pub waiting_us: f64,
    /// Of `waiting_us`, the time a command was at Redis as the proxy sees it (proxy → Redis →
    /// proxy: Redis's work plus the loopback hop each way).
    pub at_redis_us: f64,
    /// Nothing awaited, less the observer's hops: the client's own time between round trips.
    pub client_us: f64,
    /// The observer's two hops (client → proxy, proxy → client) on each round trip, which the
    /// proxy's clock would otherwise book as the client's own time: round trips × the hop
    /// cost measured (`Vantage::Proxy::hop_us`), at most the time nothing was awaited.
    #[serde(default)]
    pub observer_us: f64,
    /// The hops were not taken out of the client's own time: their spread (10th to 90th
    /// percentile) is larger than the connection's mean wait, so charging their median to
    /// each round trip would split the time by a figure less certain than the waits.
    #[serde(default)]
    pub observer_uncharged: bool,
    /// Waiting on blocking commands.
    pub blocked_us: f64,
    /// Commands in flight, averaged over the time any were (effective pipeline depth).
    pub mean_depth: f64,
}

impl ObservedTimes {
    /// Waiting that was not at Redis: the proxy's forwarding and any network dialled in at
    /// it (derived: `waiting_us - at_redis_us`).
    pub fn network_us(&self) -> f64 {
        (self.waiting_us - self.at_redis_us).max(0.0)
    }
}

/// How a connection used Redis, in one word; `Verdict::text` says it with the numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// No commands yet.
    Idle,
    /// Every command waited for the one before it.
    OneAtATime,
    /// Several commands in flight, but each in its own write.
    WritePerCommand,
    /// Commands batched into writes, each batch waiting for the one before.
    Pipelined,
    /// Writes sent while earlier replies were still awaited: a client that batches by itself.
    AutoPipelined,
    /// Subscribed (pub/sub) or MONITOR: Redis pushes, the client mostly listens.
    Subscriber,
    /// The evidence cannot decide between some of the kinds above (`Verdict::candidates`):
    /// said, with what would decide it, rather than guessed.
    Undetermined,
}

/// What decided a verdict beyond the wire's timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The client process's own syscalls (`observe --pid`).
    Syscalls,
    /// Replies the proxy held back (`observe --probe`).
    Probe,
    /// The client's receive window in a capture, down by replies lying unread as it sent.
    Window,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    /// One line, about 90 characters at most, said first: e.g. "pipelined, a write per
    /// command: 1,000 sends, 1 wait — from its syscalls". Empty in recordings made before
    /// headlines (`Verdict::lead`).
    #[serde(default)]
    pub headline: String,
    /// The detail beneath it, e.g. "pipelined, but a write per command: 100,000 commands in
    /// 100,000 writes over 100 round trips".
    pub text: String,
    /// Set when another read of the same wire would give another kind (the verdict is then
    /// undetermined): why, said instead of picking one.
    #[serde(default)]
    pub timing_dependent: Option<String>,
    /// When undetermined: the kinds it may be, the one the wire reads as first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<VerdictKind>,
    /// What decided it, when evidence beyond the wire's timing did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
}

impl DecidedBy {
    /// Who decided, as a sentence names it.
    pub fn words(self) -> &'static str {
        match self {
            DecidedBy::Syscalls => "its syscalls",
            DecidedBy::Probe => "the probe",
            DecidedBy::Window => "the receive window",
        }
    }
}

impl Verdict {
    /// What to say first: the headline, or the sentence in a recording made before them.
    pub fn lead(&self) -> &str {
        if self.headline.is_empty() {
            &self.text
        } else {
            &self.headline
        }
    }

    /// Whether `kind` is what this verdict says, or one of the kinds it cannot tell apart.
    pub fn allows(&self, kind: VerdictKind) -> bool {
        self.kind == kind || self.candidates.contains(&kind)
    }
}

impl VerdictKind {
    /// The verdict in a few words, for a table's column and a timeline's title.
    pub fn words(self) -> &'static str {
        match self {
            VerdictKind::Idle => "no commands yet",
            VerdictKind::OneAtATime => "one at a time",
            VerdictKind::WritePerCommand => "pipelined, a write per command",
            VerdictKind::Pipelined => "pipelined",
            VerdictKind::AutoPipelined => "auto-pipelined",
            VerdictKind::Subscriber => "subscriber",
            VerdictKind::Undetermined => "undetermined",
        }
    }
}

/// What the same number of commands cost through pipescope's own engine, pipelined in batches
/// of 1,000 over the same network: measured by running it, not predicted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelinedEquivalent {
    /// The command the engine ran (`stand_in`: the connection's most common of SET, GET and
    /// INCR) and how many.
    pub command: String,
    pub count: u64,
    pub batch: u32,
    pub wall_us: u64,
    /// The connection's time on round trips when the equivalent was measured (its waiting
    /// and the observer's hops, not its own time nor idle gaps), for the same commands: what
    /// the equivalent is compared with.
    #[serde(default)]
    pub compared_us: f64,
    /// The values' size the engine used: the connection's mean SET value, when it sent SETs.
    #[serde(default)]
    pub value_bytes: Option<u32>,
    /// Whether the engine's run went through a relay like the observer's (uncompensated, the
    /// same network dialled in), as the connection's commands did.
    #[serde(default)]
    pub through_relay: bool,
}

/// Why no pipelined equivalent stands beside a connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoEquivalent {
    #[error("it sent no commands")]
    NoCommands,
    /// Its commands were mostly ones the engine does not run (CONFIG, EVAL, …): a run of SETs
    /// beside them would compare different work.
    #[error(
        "no pipelined equivalent: {runnable} of its {commands} commands are SET, GET or INCR (most common: {top}), the only ones pipescope's engine runs"
    )]
    OtherCommands {
        runnable: String,
        commands: String,
        top: String,
    },
}

/// The engine's stand-in for `conn`'s commands: its most common of SET, GET and INCR, and how
/// many commands in all. Only when those three make up at least half of what it sent, so the
/// equivalent compares like with like.
pub fn stand_in(conn: &ObservedConnection) -> Result<(Command, u64), NoEquivalent> {
    let commands = conn.counts.commands;
    if commands == 0 {
        return Err(NoEquivalent::NoCommands);
    }
    let runnable: Vec<(Command, u64)> = conn
        .top_commands
        .iter()
        .filter_map(|(name, n)| Command::parse(name).map(|c| (c, *n)))
        .collect();
    let total: u64 = runnable.iter().map(|(_, n)| n).sum();
    match runnable.first() {
        Some(&(command, _)) if total * 2 >= commands => Ok((command, commands)),
        _ => Err(NoEquivalent::OtherCommands {
            runnable: crate::digits::group(total),
            commands: crate::digits::group(commands),
            top: conn
                .top_commands
                .first()
                .map_or_else(|| "none".into(), |(name, _)| name.clone()),
        }),
    }
}

/// One client connection through the observing proxy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedConnection {
    /// Numbered from 1 in the order connections arrived.
    pub id: u64,
    /// The client's address as the proxy saw it.
    pub client: String,
    /// From `CLIENT SETNAME` or `HELLO … SETNAME`, when the client gave one.
    pub name: Option<String>,
    /// Still connected.
    pub open: bool,
    /// How it ended, once it has: "closed by the client", "closed by Redis", an I/O error.
    pub ended: Option<String>,
    /// The most frequent commands, most frequent first (at most five).
    pub top_commands: Vec<(String, u64)>,
    pub counts: ObservedCounts,
    pub times: ObservedTimes,
    pub verdict: Verdict,
    #[serde(default)]
    pub equivalent: Option<PipelinedEquivalent>,
    /// Where it was seen from, which decides what its times mean.
    #[serde(default)]
    pub vantage: Vantage,
    /// The client library, as it named itself (`CLIENT SETINFO LIB-NAME`, sent by redis-py,
    /// node-redis, Lettuce, Jedis, go-redis, redis-rs).
    #[serde(default)]
    pub library: Option<String>,
    /// The mean size of its SET values, in bytes (when it sent SETs).
    #[serde(default)]
    pub mean_set_value: Option<u32>,
    /// What the page says of it beyond its numbers, worded by the server as it sends the
    /// connection to a page (`with_words`); `None` elsewhere (the CLI prints from the numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<Words>,
    /// What the probe saw, when the proxy held replies back (`observe --probe`). The verdict
    /// reads it and `syscalls` once worked out again (`ObservedConnection::judged`).
    ///
    /// The evidence is not read by the page (built for wasm32): the server words what the
    /// page shows of it (`words`), and its decoders would cost the page's WASM budget. The
    /// CLI's JSON carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub probe: Option<ProbeEvidence>,
    /// What the client process's syscalls showed, when it was traced (`observe --pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub syscalls: Option<SyscallEvidence>,
    /// What the client's receive window showed, from a capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub window: Option<WindowEvidence>,
}

/// Where a connection was seen from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vantage {
    /// Through pipescope's observing proxy: times are the proxy's.
    Proxy {
        /// The observer's two hops a round trip (client → proxy → client, less the time at
        /// the proxy): the median of a probe's PINGs, measured at start and again while
        /// observing; `None` if the probe could not run.
        hop_us: Option<f64>,
        /// Redis is on another host: "at Redis" holds the network to it.
        remote_redis: bool,
        /// How the probe's PINGs spread around `hop_us` (not read by the page, as the
        /// connection's evidence is not: the server words it).
        #[serde(default)]
        #[cfg_attr(target_arch = "wasm32", serde(skip))]
        hop_spread: Option<HopSpread>,
    },
    /// From a packet capture, a file or live: times are the capture host's, writes are
    /// TCP segments as captured.
    Capture,
}

impl Default for Vantage {
    fn default() -> Vantage {
        Vantage::Proxy {
            hop_us: None,
            remote_redis: false,
            hop_spread: None,
        }
    }
}

/// The spread of the observer's hops as its probe measured them: a hop varies with how soon
/// each side is woken, from one PING to the next and between measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopSpread {
    /// The 10th and 90th percentiles of the PINGs' hops, µs.
    pub low_us: f64,
    pub high_us: f64,
    /// PINGs weighed, over this many measurements (one at start, then one every
    /// `HOP_REMEASURE_SECS` while a connection is open).
    pub pings: u64,
    pub measurements: u64,
}

/// How often the observer's hops are measured again while a connection is open.
pub const HOP_REMEASURE_SECS: u64 = 10;

/// The observing proxy as the page sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObserveStatus {
    /// What to point an application at, e.g. `redis://127.0.0.1:6380`.
    pub connect_url: String,
    /// The network dialled in between the proxy and Redis.
    pub network: Network,
    /// Anything the presenter should know about the address, e.g. that the usual port was
    /// taken and another was chosen.
    #[serde(default)]
    pub note: Option<String>,
    /// Where the proxy forwards, the Redis URL without its password.
    #[serde(default)]
    pub forwards_to: String,
    /// Whether that Redis is the page's own throwaway redis-server (started with no
    /// `--redis-url`), where an application's data is not.
    #[serde(default)]
    pub own_redis: bool,
    /// The probe is on: a few replies per connection are held back to see whether the
    /// client waits for them (`observe --probe`).
    #[serde(default)]
    pub probe: bool,
}

/// One observed connection's requests, drawn like a run's: a span per command from its
/// arrival at the proxy (`issued_us`) to its reply handed back (`replied_us`), with when it
/// reached Redis and when its reply left Redis; µs from the connection's first command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedTimeline {
    pub id: u64,
    pub timeline: Timeline,
    /// Arrivals of the client's writes (µs, the first `Timeline::first`-worth of them).
    pub writes_us: Vec<f64>,
}

mod advice;
mod evidence;
mod figure;
mod numbers;
mod parts;
pub mod verdict;
mod what_if;
mod words;
pub use advice::{Advice, Projection, advice, mean_trip_us, projections};
pub use evidence::{ProbeEvidence, SyscallEvidence, WindowEvidence};
pub use figure::Figure;
pub use numbers::{count, duration, percent};
pub use parts::{Part, largest_remainder, parts};
pub use what_if::{WhatIf, what_if};
pub use words::{Help, Words, time_split, words};
