//! One observed connection's record: its counts (exact), where its time went, and its first
//! requests' stamps (then a sample), kept as the proxy's hooks report each chunk.
//!
//! The hooks see chunks, so a record follows four counters along the connection: commands
//! arrived from the client, handed to Redis, replies read from Redis, handed to the client.
//! The proxy forwards each chunk whole, so how many messages a chunk completed, found once by
//! the framer on its way in, is queued and taken when that chunk leaves.
//!
//! - `timekeeping`: where the time went, advanced event by event.
//! - `protocol`: which message answers which command (subscriptions, CLIENT REPLY).
//! - `not_redis`: a client that does not speak RESP, told from its first bytes.
//! - `timeline`: its requests drawn like a run's.
//! - `waits`: whether the client waited for its replies, weighed from the moments they were
//!   all back.
//! - `holding`: the probe, replies held back on purpose to see whether the client waits.
//! - `kernel`: what the kernel counted arriving on the proxy's socket from the client
//!   (`TCP_INFO`), to tell when the proxy's reads merged the client's sends.
//! - `phases`: the connection's life as runs of round trips that behaved alike.
//! - `seen`: the record as the page and the CLI show it, at a moment, from a vantage.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

#[cfg(test)]
use shared::observe::ObservedConnection;
use shared::observe::ObservedCounts;

use crate::resp::framer::{Framer, Message, Name};
use crate::spans::FULL_SPANS;

pub(super) mod holding;
mod kernel;
mod not_redis;
mod phases;
mod protocol;
mod seen;
mod timekeeping;
mod timeline;
mod waits;
use holding::Probe;
use kernel::Kernel;
use phases::Phases;
use protocol::Protocol;
use timekeeping::{State, Timekeeping};
use waits::Waits;

/// Sampled requests kept beyond the first `FULL_SPANS`: when full, every other one is
/// dropped and the stride doubles, so a connection of any length keeps a spread-out sample.
const SAMPLED: usize = 2_000;

/// Commands a client may send before its application's own: its handshake (HELLO, CLIENT
/// SETINFO, SETNAME, SELECT, INFO), which some clients send pipelined whatever the
/// application does next.
const HANDSHAKE: u64 = 8;

/// Distinct command names counted; later names count as "other".
const NAMES: usize = 64;

/// What the framer's message means for reply matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandClass {
    /// Gets one reply.
    Plain,
    /// Gets one reply, maybe much later (BLPOP, XREAD … BLOCK, WAIT).
    Blocking,
    /// Gets no reply of its own: Redis pushes instead (SUBSCRIBE and friends, MONITOR).
    Subscribe,
}

/// Which commands block, by name (`m`'s `Message::name`; XREAD and XREADGROUP only with
/// BLOCK).
pub fn classify(name: &str, m: &Message) -> CommandClass {
    match name {
        "BLPOP" | "BRPOP" | "BRPOPLPUSH" | "BLMOVE" | "BLMPOP" | "BZPOPMIN" | "BZPOPMAX"
        | "BZMPOP" | "WAIT" | "WAITAOF" => CommandClass::Blocking,
        "XREAD" | "XREADGROUP" if m.args().any(|a| a.eq_ignore_ascii_case(b"BLOCK")) => {
            CommandClass::Blocking
        }
        "SUBSCRIBE" | "PSUBSCRIBE" | "SSUBSCRIBE" | "UNSUBSCRIBE" | "PUNSUBSCRIBE"
        | "SUNSUBSCRIBE" | "MONITOR" => CommandClass::Subscribe,
        _ => CommandClass::Plain,
    }
}

/// Counts `n` commands named `name` in `names` (as "other" once `NAMES` names are there).
fn count_name(names: &mut HashMap<String, u64>, name: &str, n: u64) {
    if let Some(count) = names.get_mut(name) {
        *count += n;
    } else {
        let key = if names.len() < NAMES { name } else { "other" };
        *names.entry(key.to_string()).or_default() += n;
    }
}

/// A run of commands of one name.
#[derive(Debug)]
struct Run {
    name: Name,
    n: u64,
    /// Its class, once known, when neither it nor anything noted depends on the arguments:
    /// the next command of the name needs no more look.
    plain: Option<CommandClass>,
}

/// Commands whose class or what they say of the connection depend on their arguments, or
/// that are counted on their own (EXEC: transactions).
fn looked_at_each_time(name: &str) -> bool {
    matches!(name, "EXEC" | "HELLO" | "CLIENT" | "XREAD" | "XREADGROUP")
}

/// A request's four stamps, µs from the connection's first command.
#[derive(Debug, Clone, Copy, Default)]
struct Stamps {
    arrived: f64,
    at_redis: Option<f64>,
    from_redis: Option<f64>,
    handed: Option<f64>,
}

#[derive(Debug)]
pub struct Record {
    pub id: u64,
    pub client: String,
    pub name: Option<String>,
    pub ended: Option<String>,
    counts: ObservedCounts,
    time: Timekeeping,
    names: HashMap<String, u64>,
    /// The latest command name and how many times in a row it came, not yet in `names`: a
    /// pipeline of one command costs a lookup when the name changes, not one per command.
    run: Option<Run>,
    /// Commands that expect a reply: arrived, handed to Redis; replies read, handed back.
    expecting: u64,
    delivered: u64,
    from_redis: u64,
    handed: u64,
    /// Expecting-indices of blocking commands not yet answered.
    blocking: VecDeque<u64>,
    /// Whether a command gets a reply and a message from Redis is a push.
    protocol: Protocol,
    /// Messages completed per chunk, queued between a chunk's arrival and its departure.
    out_chunks: VecDeque<u64>,
    back_chunks: VecDeque<(u64, u64)>,
    /// The first command's arrival; every stamp is µs after it.
    t0: Option<Instant>,
    first: Vec<Stamps>,
    sampled: Vec<(u64, Stamps)>,
    stride: u64,
    writes_us: Vec<f64>,
    /// A round trip that began with a blocking command is its wait, not a pipeline's trip.
    trip_is_blocking: bool,
    /// The latest write that started a command, and when the replies last all came back:
    /// a round trip's gap and lag, for `waits`.
    last_write: Option<Instant>,
    emptied: Option<Instant>,
    waits: Waits,
    /// Writes sent while replies were awaited, after the handshake.
    overlapped_later: u64,
    /// The client library, from `CLIENT SETINFO LIB-NAME`.
    library: Option<String>,
    /// SETs seen and their values' bytes, for the mean value size.
    set_values: (u64, u64),
    /// Chunks read from the client (all, not only those that start a command), and what the
    /// kernel counted arriving on its socket: whether the reads merged its sends.
    reads: u64,
    kernel: Kernel,
    /// What the client sent instead of Redis's protocol (`not_redis`), told from its first
    /// bytes: then nothing is framed.
    not_redis: Option<String>,
    phases: Phases,
    /// Replies held back on purpose, with the probe on.
    probe: Option<Probe>,
}

impl Record {
    pub fn new(id: u64, client: String) -> Record {
        Record {
            id,
            client,
            name: None,
            ended: None,
            counts: ObservedCounts::default(),
            time: Timekeeping::default(),
            names: HashMap::new(),
            run: None,
            expecting: 0,
            delivered: 0,
            from_redis: 0,
            handed: 0,
            blocking: VecDeque::new(),
            protocol: Protocol::default(),
            out_chunks: VecDeque::new(),
            back_chunks: VecDeque::new(),
            t0: None,
            first: Vec::new(),
            sampled: Vec::new(),
            stride: 1,
            writes_us: Vec::new(),
            trip_is_blocking: false,
            last_write: None,
            emptied: None,
            waits: Waits::default(),
            overlapped_later: 0,
            library: None,
            set_values: (0, 0),
            reads: 0,
            not_redis: None,
            kernel: Kernel::default(),
            phases: Phases::default(),
            probe: None,
        }
    }

    pub fn is_open(&self) -> bool {
        self.ended.is_none()
    }

    /// Commands framed so far.
    pub fn commands(&self) -> u64 {
        self.counts.commands
    }

    /// Open and awaiting a reply (a blocked BLPOP among them): its times run on unseen.
    pub fn awaits_reply(&self) -> bool {
        self.is_open() && self.in_flight() > 0
    }

    fn in_flight(&self) -> u64 {
        self.expecting - self.handed
    }

    fn us(&self, at: Instant) -> f64 {
        self.t0.map_or(0.0, |t0| {
            at.saturating_duration_since(t0).as_secs_f64() * 1e6
        })
    }

    /// Moves the time accounting up to `at`.
    fn advance(&mut self, at: Instant) {
        let now = self.state();
        self.time.advance(at, now);
    }

    fn state(&self) -> State {
        State {
            in_flight: self.in_flight(),
            blocked: !self.blocking.is_empty() || self.trip_is_blocking,
            at_redis: self.delivered > self.from_redis,
        }
    }

    /// A chunk arrived from the client: `commands` frames it. It is one of the client's
    /// writes if a command starts in it (the rest of a big command read in pieces is not).
    pub fn client_read(&mut self, at: Instant, bytes: &[u8], commands: &mut Framer) {
        self.advance(at);
        self.reads += 1;
        if self.counts.bytes_from_client == 0 {
            self.not_redis = not_redis::what(bytes);
        }
        if self.not_redis.is_some() {
            // Counted, not framed: no commands, so no verdict on them and no advice.
            self.counts.bytes_from_client += bytes.len() as u64;
            self.out_chunks.push_back(0);
            return;
        }
        self.counts.bytes_from_client += bytes.len() as u64;
        let overlapping = self.in_flight() > 0;
        let trips_before = self.counts.round_trips;
        let continued = commands.mid_message();
        let (mut expecting, mut completed) = (0, 0);
        // Every command of the chunk arrived at `at`: µs after the first command's arrival,
        // which is 0 when the first command is in this chunk (`at` is then t0).
        let arrived = self.us(at);
        commands.feed(bytes, |m| {
            completed += 1;
            if self.command(at, arrived, m) {
                expecting += 1;
            }
        });
        let begun =
            (completed + u64::from(commands.mid_message())).saturating_sub(u64::from(continued));
        let started = begun > 0;
        self.probe_sent(at, started);
        if begun >= 2 && self.counts.round_trips > trips_before {
            self.counts.batch_trips += 1;
        }
        if started {
            self.counts.writes += 1;
            self.phases.write();
            if overlapping {
                self.counts.overlapping_writes += 1;
                if self.counts.commands > HANDSHAKE {
                    self.overlapped_later += 1;
                }
            }
            self.last_write = Some(at);
            if self.writes_us.len() < FULL_SPANS as usize && self.t0.is_some() {
                let t = self.us(at);
                self.writes_us.push(t);
            }
        }
        self.out_chunks.push_back(expecting);
    }

    /// One command, arrived `at` (`arrived` µs after t0); returns whether it expects a reply.
    fn command(&mut self, at: Instant, arrived: f64, m: &Message) -> bool {
        if self.t0.is_none() {
            self.t0 = Some(at);
            self.time.clock = Some(at);
        }
        self.counts.commands += 1;
        let (name, class) = self.note_name(m);
        if name.as_bytes() == b"SET"
            && let Some(len) = m.third_len()
        {
            self.set_values.0 += 1;
            self.set_values.1 += len;
        }
        if !self.protocol.command(name.as_bytes(), m, class) {
            return false;
        }
        if self.in_flight() == 0 {
            let after_a_block = self.trip_is_blocking;
            self.trip_is_blocking = class == CommandClass::Blocking;
            if !self.trip_is_blocking {
                self.counts.round_trips += 1;
                self.phases.trip(at);
                // Every reply was back: weighed later for whether the client waited for them.
                if let (Some(write), Some(emptied)) = (self.last_write, self.emptied)
                    && !after_a_block
                    && emptied >= write
                {
                    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
                    self.waits.moment(us(at - write), us(emptied - write));
                }
            }
        }
        self.phases.command();
        let i = self.expecting;
        self.expecting += 1;
        if class == CommandClass::Blocking {
            self.counts.blocking += 1;
            self.blocking.push_back(i);
        }
        self.counts.max_depth = self.counts.max_depth.max(self.in_flight());
        self.arrive(i, arrived);
        true
    }

    /// Counts the command by name and notes what it says of the connection; returns its name
    /// and class.
    fn note_name(&mut self, m: &Message) -> (Name, CommandClass) {
        let name = match &mut self.run {
            Some(run) if m.is_named(&run.name) => {
                run.n += 1;
                if let Some(class) = run.plain {
                    return (run.name, class);
                }
                run.name
            }
            _ => {
                let name = m.name();
                if let Some(run) = self.run.take() {
                    count_name(&mut self.names, run.name.as_str(), run.n);
                }
                self.run = Some(Run {
                    name,
                    n: 1,
                    plain: None,
                });
                name
            }
        };
        let full = name;
        let name = name.as_str();
        let class = classify(name, m);
        if !looked_at_each_time(name)
            && let Some(run) = &mut self.run
        {
            run.plain = Some(class);
        }
        let arg_is = |i: usize, s: &[u8]| m.arg(i).is_some_and(|a| a.eq_ignore_ascii_case(s));
        match name {
            "EXEC" => self.counts.transactions += 1,
            "HELLO" => {
                if let Some(at) = (1..m.args().count()).find(|&i| arg_is(i, b"SETNAME")) {
                    self.set_name(m.arg(at + 1));
                }
            }
            "CLIENT" if arg_is(1, b"SETNAME") => self.set_name(m.arg(2)),
            "CLIENT" if arg_is(1, b"SETINFO") && arg_is(2, b"LIB-NAME") => {
                self.library = m.arg(3).map(|n| String::from_utf8_lossy(n).into_owned());
            }
            _ => {}
        }
        (full, class)
    }

    fn set_name(&mut self, name: Option<&[u8]>) {
        if let Some(n) = name {
            self.name = Some(String::from_utf8_lossy(n).into_owned());
        }
    }

    /// The chunk that arrived first from the client has been handed to Redis.
    pub fn handed_to_redis(&mut self, at: Instant) {
        self.advance(at);
        let n = self.out_chunks.pop_front().unwrap_or(0);
        let t = self.us(at);
        self.stamp(self.delivered..self.delivered + n, |s| s.at_redis = Some(t));
        self.delivered += n;
    }

    /// A chunk arrived from Redis: `replies` frames it.
    pub fn redis_read(&mut self, at: Instant, bytes: &[u8], framer: &mut Framer) {
        self.advance(at);
        self.counts.bytes_from_redis += bytes.len() as u64;
        if self.not_redis.is_some() {
            self.back_chunks.push_back((0, 0));
            return;
        }
        let (mut replies, mut pushes) = (0, 0);
        let asked = self.expecting - self.from_redis;
        let protocol = &mut self.protocol;
        framer.feed(bytes, |m| {
            if protocol.is_push(m) {
                pushes += 1;
            } else if replies < asked {
                replies += 1;
            } else if m.kind != b'-' {
                // Replies beyond what was asked (MONITOR's) are pushes too. An error beyond
                // it is no push: Redis answering bytes that framed as no command (its
                // protocol error, just before it closes the connection).
                pushes += 1;
            }
        });
        let t = self.us(at);
        self.stamp(self.from_redis..self.from_redis + replies, |s| {
            s.from_redis = Some(t)
        });
        self.from_redis += replies;
        self.counts.pushes += pushes;
        self.back_chunks.push_back((replies, pushes));
    }

    /// The chunk that arrived first from Redis has been handed to the client.
    pub fn handed_to_client(&mut self, at: Instant) {
        self.advance(at);
        let (n, _) = self.back_chunks.pop_front().unwrap_or((0, 0));
        let t = self.us(at);
        self.stamp(self.handed..self.handed + n, |s| s.handed = Some(t));
        self.handed += n;
        self.counts.replies += n;
        if n > 0 && self.in_flight() == 0 {
            self.emptied = Some(at);
            self.phases.emptied(at);
            self.probe_emptied(at);
        }
        while self.blocking.front().is_some_and(|&b| b < self.handed) {
            self.blocking.pop_front();
        }
    }

    /// The stream was picked up again at a command boundary after bytes the observer did
    /// not see (a capture's gap): what was awaited is forgotten, as its replies were skipped.
    /// Request numbers go on, so the kept stamps stay in place.
    pub fn resync(&mut self, at: Instant) {
        self.advance(at);
        self.delivered = self.expecting;
        self.from_redis = self.expecting;
        self.handed = self.expecting;
        self.blocking.clear();
        self.out_chunks.clear();
        self.back_chunks.clear();
        self.trip_is_blocking = false;
        self.last_write = None;
        self.emptied = None;
    }

    /// Lets go of the requests' stamps (the counts and times stay): for ended connections no
    /// longer among the latest, so memory stays bounded however many come and go.
    pub fn forget_requests(&mut self) {
        self.first = Vec::new();
        self.sampled = Vec::new();
        self.writes_us = Vec::new();
    }

    pub fn end(&mut self, at: Instant, why: String) {
        self.advance(at);
        self.ended = Some(why);
        self.kernel.end();
    }

    /// The client's socket, to ask the kernel what arrived on it (`kernel`).
    pub fn watch(&mut self, socket: std::net::TcpStream) {
        self.kernel.watch(socket);
    }

    /// Request `i` arrived: it is kept if among the first `FULL_SPANS` or on the stride of
    /// the sample (which thins out, every other one dropped, when it fills).
    fn arrive(&mut self, i: u64, arrived: f64) {
        let stamps = Stamps {
            arrived,
            ..Stamps::default()
        };
        if i < FULL_SPANS {
            self.first.push(stamps);
            return;
        }
        if !i.is_multiple_of(self.stride) {
            return;
        }
        if self.sampled.len() == SAMPLED {
            let stride = self.stride * 2;
            self.sampled.retain(|(j, _)| j.is_multiple_of(stride));
            self.stride = stride;
            if !i.is_multiple_of(stride) {
                return;
            }
        }
        self.sampled.push((i, stamps));
    }

    /// Sets the stamps of the kept requests among `requests`.
    fn stamp(&mut self, requests: std::ops::Range<u64>, set: impl Fn(&mut Stamps)) {
        // The first requests are all kept, at their own index.
        let end = (requests.end.min(FULL_SPANS) as usize).min(self.first.len());
        let start = (requests.start as usize).min(end);
        self.first[start..end].iter_mut().for_each(&set);
        let from = self.sampled.partition_point(|(j, _)| *j < requests.start);
        for (_, s) in self.sampled[from..]
            .iter_mut()
            .take_while(|(j, _)| *j < requests.end)
        {
            set(s);
        }
    }
}

#[cfg(test)]
mod tests;
