//! One observed connection's record: its counts (exact), where its time went, and its first
//! requests' stamps (then a sample), kept as the proxy's hooks report each chunk.
//!
//! The hooks see chunks, so a record follows four counters along the connection: commands
//! arrived from the client, handed to Redis, replies read from Redis, handed to the client.
//! The proxy forwards each chunk whole, so how many messages a chunk completed, found once by
//! the framer on its way in, is queued and taken when that chunk leaves.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use shared::observe::{ObservedConnection, ObservedCounts, ObservedTimes, verdict};
use shared::{Span, Timeline};

use crate::net::framer::{Framer, Message};
use crate::spans::FULL_SPANS;

/// Sampled requests kept beyond the first `FULL_SPANS`: when full, every other one is
/// dropped and the stride doubles, so a connection of any length keeps a spread-out sample.
const SAMPLED: usize = 2_000;

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

/// Which commands block, by name (XREAD and XREADGROUP only with BLOCK).
pub fn classify(m: &Message) -> CommandClass {
    match m.name().as_str() {
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
    time: Accounting,
    names: HashMap<String, u64>,
    /// Commands that expect a reply: arrived, handed to Redis; replies read, handed back.
    expecting: u64,
    delivered: u64,
    from_redis: u64,
    handed: u64,
    /// Expecting-indices of blocking commands not yet answered.
    blocking: VecDeque<u64>,
    /// RESP2 after SUBSCRIBE or MONITOR: everything Redis sends is a push.
    subscribed: bool,
    resp3: bool,
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
}

impl Record {
    pub fn new(id: u64, client: String) -> Record {
        Record {
            id,
            client,
            name: None,
            ended: None,
            counts: ObservedCounts::default(),
            time: Accounting::default(),
            names: HashMap::new(),
            expecting: 0,
            delivered: 0,
            from_redis: 0,
            handed: 0,
            blocking: VecDeque::new(),
            subscribed: false,
            resp3: false,
            out_chunks: VecDeque::new(),
            back_chunks: VecDeque::new(),
            t0: None,
            first: Vec::new(),
            sampled: Vec::new(),
            stride: 1,
            writes_us: Vec::new(),
            trip_is_blocking: false,
        }
    }

    pub fn is_open(&self) -> bool {
        self.ended.is_none()
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

    /// A chunk arrived from the client: `commands` frames it.
    pub fn client_read(&mut self, at: Instant, bytes: &[u8], commands: &mut Framer) {
        self.advance(at);
        self.counts.bytes_from_client += bytes.len() as u64;
        self.counts.writes += 1;
        if self.in_flight() > 0 {
            self.counts.overlapping_writes += 1;
        }
        let mut expecting = 0;
        commands.feed(bytes, |m| {
            if self.command(at, m) {
                expecting += 1;
            }
        });
        if self.writes_us.len() < FULL_SPANS as usize && self.t0.is_some() {
            let t = self.us(at);
            self.writes_us.push(t);
        }
        self.out_chunks.push_back(expecting);
    }

    /// One command; returns whether it expects a reply.
    fn command(&mut self, at: Instant, m: &Message) -> bool {
        if self.t0.is_none() {
            self.t0 = Some(at);
            self.time.clock = Some(at);
        }
        self.counts.commands += 1;
        self.note_name(m);
        let class = classify(m);
        if class == CommandClass::Subscribe {
            if !self.resp3 {
                self.subscribed = true;
            }
            return false;
        }
        if self.subscribed {
            // RESP2 pub/sub: its replies cannot be told from pushes.
            return false;
        }
        if self.in_flight() == 0 {
            self.trip_is_blocking = class == CommandClass::Blocking;
            if !self.trip_is_blocking {
                self.counts.round_trips += 1;
            }
        }
        let i = self.expecting;
        self.expecting += 1;
        if class == CommandClass::Blocking {
            self.counts.blocking += 1;
            self.blocking.push_back(i);
        }
        self.counts.max_depth = self.counts.max_depth.max(self.in_flight());
        let arrived = self.us(at);
        self.stamp(i, |s| s.arrived = arrived, true);
        true
    }

    fn note_name(&mut self, m: &Message) {
        let name = m.name();
        let name = name.as_str();
        let arg_is = |i: usize, s: &[u8]| m.arg(i).is_some_and(|a| a.eq_ignore_ascii_case(s));
        match name {
            "EXEC" => self.counts.transactions += 1,
            "HELLO" => {
                if m.arg(1) == Some(b"3") {
                    self.resp3 = true;
                }
                if let Some(at) = (1..m.args().count()).find(|&i| arg_is(i, b"SETNAME")) {
                    self.set_name(m.arg(at + 1));
                }
            }
            "CLIENT" if arg_is(1, b"SETNAME") => self.set_name(m.arg(2)),
            _ => {}
        }
        if let Some(n) = self.names.get_mut(name) {
            *n += 1;
        } else {
            let key = if self.names.len() < NAMES {
                name
            } else {
                "other"
            };
            *self.names.entry(key.to_string()).or_default() += 1;
        }
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
        for i in self.delivered..self.delivered + n {
            self.stamp(i, |s| s.at_redis = Some(t), false);
        }
        self.delivered += n;
    }

    /// A chunk arrived from Redis: `replies` frames it.
    pub fn redis_read(&mut self, at: Instant, bytes: &[u8], framer: &mut Framer) {
        self.advance(at);
        self.counts.bytes_from_redis += bytes.len() as u64;
        let (mut replies, mut pushes) = (0, 0);
        let (subscribed, asked) = (self.subscribed, self.expecting - self.from_redis);
        framer.feed(bytes, |m| {
            // Replies beyond what was asked (a RESP2 subscriber's, MONITOR's) are pushes too.
            if m.kind == b'>' || subscribed || replies >= asked {
                pushes += 1;
            } else {
                replies += 1;
            }
        });
        let t = self.us(at);
        for i in self.from_redis..self.from_redis + replies {
            self.stamp(i, |s| s.from_redis = Some(t), false);
        }
        self.from_redis += replies;
        self.counts.pushes += pushes;
        self.back_chunks.push_back((replies, pushes));
    }

    /// The chunk that arrived first from Redis has been handed to the client.
    pub fn handed_to_client(&mut self, at: Instant) {
        self.advance(at);
        let (n, _) = self.back_chunks.pop_front().unwrap_or((0, 0));
        let t = self.us(at);
        for i in self.handed..self.handed + n {
            self.stamp(i, |s| s.handed = Some(t), false);
        }
        self.handed += n;
        self.counts.replies += n;
        while self.blocking.front().is_some_and(|&b| b < self.handed) {
            self.blocking.pop_front();
        }
    }

    pub fn end(&mut self, at: Instant, why: String) {
        self.advance(at);
        self.ended = Some(why);
    }

    /// Sets request `i`'s stamp if it is kept (`create`: it arrives now).
    fn stamp(&mut self, i: u64, set: impl FnOnce(&mut Stamps), create: bool) {
        if i < FULL_SPANS {
            if create {
                self.first.push(Stamps::default());
            }
            if let Some(s) = self.first.get_mut(i as usize) {
                set(s);
            }
            return;
        }
        if create {
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
            self.sampled.push((i, Stamps::default()));
        }
        if let Ok(at) = self.sampled.binary_search_by_key(&i, |(j, _)| *j) {
            set(&mut self.sampled[at].1);
        }
    }

    /// The connection as the page and the CLI show it, its time accounted up to `now`
    /// while it awaits replies (an idle open connection's own time is counted when it next
    /// sends, or not at all if it never does).
    pub fn snapshot(&self, now: Instant) -> ObservedConnection {
        let mut time = self.time.clone();
        let state = self.state();
        if self.is_open() && state.in_flight > 0 {
            time.advance(now, state);
        }
        let times = time.times();
        let mut top: Vec<(String, u64)> = self.names.iter().map(|(k, v)| (k.clone(), *v)).collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        top.truncate(5);
        ObservedConnection {
            id: self.id,
            client: self.client.clone(),
            name: self.name.clone(),
            open: self.is_open(),
            ended: self.ended.clone(),
            top_commands: top,
            verdict: verdict(&self.counts, &times),
            counts: self.counts.clone(),
            times,
            equivalent: None,
        }
    }

    /// Its requests as a timeline: those whose reply was handed back.
    pub fn timeline(&self) -> (Timeline, Vec<f64>) {
        let span = |i: u64, s: &Stamps| {
            s.handed.map(|handed| Span {
                i,
                issued_us: s.arrived,
                replied_us: handed,
                at_server_us: s.at_redis,
                from_server_us: s.from_redis,
            })
        };
        let first = self
            .first
            .iter()
            .enumerate()
            .filter_map(|(i, s)| span(i as u64, s))
            .collect();
        let sampled = self
            .sampled
            .iter()
            .filter_map(|(i, s)| span(*i, s))
            .collect();
        (
            Timeline {
                first,
                sampled,
                stride: self.stride,
            },
            self.writes_us.clone(),
        )
    }
}

/// What the connection was doing between two events.
#[derive(Debug, Clone, Copy)]
struct State {
    in_flight: u64,
    blocked: bool,
    at_redis: bool,
}

/// Where the connection's time went, advanced event by event.
#[derive(Debug, Clone, Default)]
struct Accounting {
    times: ObservedTimes,
    /// Where the accounting has reached (from the first command on).
    clock: Option<Instant>,
    /// Commands in flight × µs, for the mean depth.
    depth_area: f64,
    /// Nothing awaited since this long (µs): counted as the client's own time once it sends
    /// again, so a connection left idle at its end adds none.
    idle_us: f64,
}

impl Accounting {
    /// The stretch from the clock to `at` was a round trip's wait (in part at Redis), a
    /// blocking command's wait, or the client's own time.
    fn advance(&mut self, at: Instant, s: State) {
        let Some(clock) = self.clock else { return };
        if at <= clock {
            return;
        }
        let dt = (at - clock).as_secs_f64() * 1e6;
        self.clock = Some(at);
        if s.in_flight == 0 {
            self.idle_us += dt;
            return;
        }
        // Waiting again: the idle stretch before it was the client's own time.
        self.times.client_us += std::mem::take(&mut self.idle_us);
        if s.blocked {
            self.times.blocked_us += dt;
        } else {
            self.times.waiting_us += dt;
            self.depth_area += s.in_flight as f64 * dt;
            if s.at_redis {
                self.times.at_redis_us += dt;
            }
        }
    }

    fn times(&self) -> ObservedTimes {
        let t = &self.times;
        ObservedTimes {
            wall_us: t.waiting_us + t.blocked_us + t.client_us,
            mean_depth: if t.waiting_us > 0.0 {
                self.depth_area / t.waiting_us
            } else {
                0.0
            },
            ..t.clone()
        }
    }
}
