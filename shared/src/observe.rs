//! Observe mode: what the observing proxy measured of one client connection, and the verdict
//! it earns. The backend fills `ObservedConnection` as traffic crosses the proxy; the page and
//! the CLI show it. The verdict is worked out here, once, so both say the same words.
//!
//! Everything is measured at the proxy, between the client and Redis:
//!
//! ```text
//! client ──write──▶ proxy ──▶ Redis          a "write" is one read at the proxy: TCP may
//! client ◀──────── proxy ◀── Redis           merge two client writes or split one
//! ```
//!
//! A **round trip** is a stretch during which the client had replies outstanding: it starts
//! when a command arrives with none awaited and ends when the last awaited reply is handed
//! back. The client's **own time** is what lies between round trips (nothing awaited: its
//! code, its kernel, the loopback hop to the proxy). **At Redis** is the part of waiting during
//! which some command had reached Redis and its reply had not yet come back to the proxy.

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
    /// Reads at the proxy from the client: about one per client write (TCP may merge or split).
    pub writes: u64,
    /// Writes that arrived while replies to earlier commands were still awaited.
    pub overlapping_writes: u64,
    pub round_trips: u64,
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
}

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
    /// Nothing awaited: the client's own time between round trips.
    pub client_us: f64,
    /// Waiting on blocking commands.
    pub blocked_us: f64,
    /// Commands in flight, averaged over the time any were (effective pipeline depth).
    pub mean_depth: f64,
}

impl ObservedTimes {
    /// Waiting that was not at Redis: the network between the client and Redis, and the
    /// proxy (derived: `waiting_us - at_redis_us`).
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    /// E.g. "pipelined, but a write per command: 100,000 commands in 100,000 writes over 100
    /// round trips".
    pub text: String,
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
            runnable: group(total),
            commands: group(commands),
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
}

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

/// Works out the verdict from the counts and times.
pub fn verdict(c: &ObservedCounts, t: &ObservedTimes) -> Verdict {
    let n = c.commands;
    let text = |kind, s: String| Verdict { kind, text: s };
    if n == 0 {
        return text(VerdictKind::Idle, "no commands yet".into());
    }
    // A blocking command's wait (BLPOP until a push arrives) is no round trip, but a worker
    // that only blocks still waited once per command: both are counted, each by its name.
    let waits = c.round_trips + c.blocking;
    let trips = trips_text(c);
    let per_write = n as f64 / c.writes.max(1) as f64;
    // "…over 7 round trips, 1 MULTI/EXEC transaction; of 15.0 ms: …"
    let breakdown = match c.transactions {
        0 => breakdown(t),
        k => format!(", {}{}", count(k, "MULTI/EXEC transaction"), breakdown(t)),
    };
    if c.pushes > 0 && c.pushes >= c.replies {
        return text(
            VerdictKind::Subscriber,
            format!(
                "subscriber: {} pushed to it after {} of its own",
                count(c.pushes, "message"),
                count(n, "command"),
            ),
        );
    }
    // "Every command waited": at most one in flight, or as many round trips as commands.
    if c.max_depth <= 1 || waits * 10 >= n * 9 {
        return text(
            VerdictKind::OneAtATime,
            format!(
                "one at a time: {} over {trips}{breakdown}",
                count(n, "command")
            ),
        );
    }
    let per_trip = n as f64 / waits.max(1) as f64;
    if c.writes * 10 >= n * 9 {
        return text(
            VerdictKind::WritePerCommand,
            format!(
                "pipelined, but a write per command: {} in {} over {trips} (~{} per round trip){breakdown}",
                count(n, "command"),
                count(c.writes, "write"),
                group(per_trip.round() as u64),
            ),
        );
    }
    if c.overlapping_writes * 2 > c.writes {
        return text(
            VerdictKind::AutoPipelined,
            format!(
                "auto-pipelined: {} of ~{} commands, sent while replies were awaited, over {trips}{breakdown}",
                count(c.writes, "write"),
                group(per_write.round() as u64),
            ),
        );
    }
    text(
        VerdictKind::Pipelined,
        format!(
            "pipelined: {} in {}{} over {trips}{breakdown}",
            count(n, "command"),
            count(c.writes, "write"),
            write_size(c, per_write),
        ),
    )
}

/// "7 round trips", "5,000 blocking waits", or "100 round trips and 5,000 blocking waits".
fn trips_text(c: &ObservedCounts) -> String {
    match (c.round_trips, c.blocking) {
        (trips, 0) => count(trips.max(1), "round trip"),
        (0, blocking) => count(blocking, "blocking wait"),
        (trips, blocking) => format!(
            "{} and {}",
            count(trips, "round trip"),
            count(blocking, "blocking wait")
        ),
    }
}

/// A pipeline's writes: " of ~1,000" commands each; or, when they were far from alike (a
/// pipeline of 1,000 after a handful of set-up commands, whose mean of ~144 per write
/// describes no write), the deepest it got: " (up to 1,000 in flight at once)".
fn write_size(c: &ObservedCounts, per_write: f64) -> String {
    if c.max_depth as f64 > 2.0 * per_write {
        format!(" (up to {} in flight at once)", group(c.max_depth))
    } else {
        format!(" of ~{}", group(per_write.round() as u64))
    }
}

/// "; of 12.3 ms: 80 % waiting on round trips (5 % at Redis), 20 % the client's own time".
fn breakdown(t: &ObservedTimes) -> String {
    if t.wall_us <= 0.0 {
        return String::new();
    }
    let pct = |x: f64| (100.0 * x / t.wall_us).round();
    let mut s = format!(
        "; of {}: {} % waiting on round trips ({} % at Redis), {} % the client's own time",
        duration(t.wall_us),
        pct(t.waiting_us),
        pct(t.at_redis_us),
        pct(t.client_us),
    );
    if t.blocked_us > 0.0 {
        s += &format!(", {} % blocked", pct(t.blocked_us));
    }
    s
}

/// "1 command", "100,000 commands".
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", group(n))
    }
}

/// 100000 → "100,000".
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// µs → "850 µs", "12.3 ms", "4.56 s".
pub fn duration(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(commands: u64, writes: u64, round_trips: u64, max_depth: u64) -> ObservedCounts {
        ObservedCounts {
            commands,
            replies: commands,
            writes,
            round_trips,
            max_depth,
            ..Default::default()
        }
    }

    #[test]
    fn the_issue_s_three_examples() {
        let t = ObservedTimes::default();
        let v = verdict(&counts(100_000, 100_000, 100, 1000), &t);
        assert_eq!(v.kind, VerdictKind::WritePerCommand);
        assert_eq!(
            v.text,
            "pipelined, but a write per command: 100,000 commands in 100,000 writes over 100 round trips (~1,000 per round trip)"
        );
        let v = verdict(&counts(100_000, 100_000, 100_000, 1), &t);
        assert_eq!(v.kind, VerdictKind::OneAtATime);
        assert_eq!(
            v.text,
            "one at a time: 100,000 commands over 100,000 round trips"
        );
        let mut auto = counts(99_840, 312, 3, 2000);
        auto.overlapping_writes = 309;
        let v = verdict(&auto, &t);
        assert_eq!(v.kind, VerdictKind::AutoPipelined);
        assert!(
            v.text
                .starts_with("auto-pipelined: 312 writes of ~320 commands"),
            "{}",
            v.text
        );
    }

    #[test]
    fn batches_that_wait_for_each_other_are_pipelined() {
        let v = verdict(&counts(10_000, 10, 10, 1000), &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::Pipelined);
        assert_eq!(
            v.text,
            "pipelined: 10,000 commands in 10 writes of ~1,000 over 10 round trips"
        );
    }

    #[test]
    fn a_pipeline_after_set_up_commands_is_told_by_its_depth_not_a_mean_write() {
        // redis-py's pipeline of 1,000 SETs after its handshake, as observed.
        let v = verdict(&counts(1_005, 7, 6, 1000), &ObservedTimes::default());
        assert_eq!(v.kind, VerdictKind::Pipelined);
        assert_eq!(
            v.text,
            "pipelined: 1,005 commands in 7 writes (up to 1,000 in flight at once) over 6 round trips"
        );
    }

    #[test]
    fn transactions_are_named() {
        let mut c = counts(1_007, 7, 7, 691);
        c.transactions = 1;
        let v = verdict(&c, &ObservedTimes::default());
        assert_eq!(
            v.text,
            "pipelined: 1,007 commands in 7 writes (up to 691 in flight at once) over 7 round trips, 1 MULTI/EXEC transaction"
        );
    }

    #[test]
    fn the_breakdown_adds_up_to_the_wall_time() {
        let t = ObservedTimes {
            wall_us: 47_000_000.0,
            waiting_us: 35_250_000.0,
            at_redis_us: 4_700_000.0,
            client_us: 11_750_000.0,
            ..Default::default()
        };
        let v = verdict(&counts(100_000, 100_000, 100_000, 1), &t);
        assert!(
            v.text.ends_with(
                "; of 47.00 s: 75 % waiting on round trips (10 % at Redis), 25 % the client's own time"
            ),
            "{}",
            v.text
        );
        assert_eq!(t.network_us(), 30_550_000.0);
    }

    #[test]
    fn idle_and_subscribers() {
        assert_eq!(
            verdict(&ObservedCounts::default(), &ObservedTimes::default()).kind,
            VerdictKind::Idle
        );
        let mut c = counts(2, 2, 2, 1);
        c.replies = 1;
        c.pushes = 40;
        assert_eq!(
            verdict(&c, &ObservedTimes::default()).kind,
            VerdictKind::Subscriber
        );
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(10_000_000), "10,000,000");
        assert_eq!(count(1, "write"), "1 write");
    }

    fn with_commands(top: &[(&str, u64)]) -> ObservedConnection {
        let commands = top.iter().map(|(_, n)| n).sum();
        let times = ObservedTimes::default();
        let counts = counts(commands, commands, commands, 1);
        ObservedConnection {
            id: 1,
            client: "127.0.0.1:1".into(),
            name: None,
            open: false,
            ended: None,
            top_commands: top.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
            verdict: verdict(&counts, &times),
            counts,
            times,
            equivalent: None,
        }
    }

    #[test]
    fn the_engine_stands_in_only_for_its_own_commands() {
        assert_eq!(
            stand_in(&with_commands(&[("GET", 700), ("SET", 300)])),
            Ok((Command::Get, 1000))
        );
        // Half SET/GET/INCR is enough; the count stays the connection's.
        assert_eq!(
            stand_in(&with_commands(&[("HSET", 50), ("INCR", 30), ("SET", 20)])),
            Ok((Command::Incr, 100))
        );
        // redis-benchmark's first connection: two CONFIG GETs, no SETs.
        let why = stand_in(&with_commands(&[("CONFIG", 2)])).unwrap_err();
        assert_eq!(
            why.to_string(),
            "no pipelined equivalent: 0 of its 2 commands are SET, GET or INCR (most common: CONFIG), the only ones pipescope's engine runs"
        );
        assert_eq!(stand_in(&with_commands(&[])), Err(NoEquivalent::NoCommands));
    }
}
