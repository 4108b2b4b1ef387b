//! Observe mode from a capture, a file's or a live one's: each Redis connection the capture
//! holds, fed into the same per-connection record the proxy fills, so the verdicts and the
//! report are the proxy's.
//!
//! What differs is where the figures come from. The proxy stamps a chunk when it reads it and
//! again when it hands it on; a capture sees each segment once, at the capture host. So a
//! segment is read and handed on at the one stamp the capture gave it: "at Redis" becomes all
//! of a request's wait as the capture host saw it (on the client's host: the network and
//! Redis; on Redis's host: Redis alone), and a "write" is a segment as captured (the kernel
//! may have merged the client's writes or split one).
//!
//! The record takes `Instant`s: capture stamps are laid onto one taken when reading starts,
//! keeping their distances (a stamp earlier than one before it, from interfaces whose clocks
//! disagree, counts as that one).

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use shared::observe::{ObservedConnection, ObservedTimeline};

use super::KEPT_ENDED_TIMELINES;
use super::receive_window::WindowWatch;
use super::record::Record;
use crate::capture::{self, CaptureError, Closing, Event, Facts, Origin, Side, Source, Stamp};
use crate::resp::framer::{self, Framer};

/// Ended connections reported in full (the latest); older ones are summed in a note, so a
/// capture of any number of connections costs the same memory.
const KEPT: usize = 10_000;

/// What a capture showed: its connections as the report shows them, and notes for the user.
pub struct FromCapture {
    pub facts: Facts,
    pub connections: Vec<ObservedConnection>,
    /// Said on stderr beside the report: resynchronisations, gaps, connections left out.
    pub notes: Vec<String>,
    /// The requests of the latest ended connections (at most `KEPT_ENDED_TIMELINES`, as the
    /// proxy keeps), for the page's timeline.
    pub timelines: Vec<ObservedTimeline>,
}

/// The header every report from a capture carries: what its figures are.
pub fn label(facts: &Facts) -> String {
    let from = match &facts.origin {
        Origin::File(path) => format!("the capture {}", path.display()),
        Origin::Live(interface) => format!("a live capture on {interface}"),
    };
    let kind: Vec<String> = (!facts.format.is_empty())
        .then(|| facts.format.to_string())
        .into_iter()
        .chain(facts.interfaces.iter().map(|(l, _)| l.name()))
        .collect();
    let partial = match facts.stopped {
        true => format!(
            "PARTIAL: reading was stopped (Ctrl-C) after {} packets; the rest of the file is not in this report. ",
            shared::digits::group(facts.packets)
        ),
        false => String::new(),
    };
    format!(
        "{partial}from {from} ({}; {} packets, {} connections): times are the capture host's clock; \"at Redis\" is each wait as that host saw it (the network included, unless captured on Redis's host); a \"write\" is a TCP segment as captured (the kernel may merge or split the client's writes)",
        kind.join(", "),
        shared::digits::group(facts.packets),
        shared::digits::group(facts.connections),
    )
}

/// Reads `source` (a file to its end, a live capture until stopped) and follows every
/// connection to one of `redis_ports` (none: to the ports found to be Redis's).
pub fn observe(source: Source, redis_ports: &[u16]) -> Result<FromCapture, CaptureError> {
    let base = Instant::now();
    let mut fed = Fed {
        base,
        first: None,
        latest: base,
        open: FxHashMap::default(),
        ended: VecDeque::new(),
        masters: BTreeMap::new(),
        timelines: VecDeque::new(),
        left_out: (0, 0),
        notes: Vec::new(),
    };
    let facts = capture::read(source, redis_ports, |e| fed.event(e))?;
    let mut notes = fed.notes;
    // Several Redis servers (a cluster's masters, one port each): one application's
    // connections, each named with the server it went to, and a tally per server.
    let several = fed.masters.len() > 1;
    if several {
        let each: Vec<String> = fed
            .masters
            .iter()
            .map(|(redis, (conns, commands))| {
                use shared::observe::count;
                format!(
                    "{redis}: {}, {}",
                    count(*conns, "connection"),
                    count(*commands, "command")
                )
            })
            .collect();
        notes.push(format!(
            "connections to {} Redis servers (a cluster's masters?), read as one application's: {}",
            fed.masters.len(),
            each.join("; ")
        ));
    }
    let mut connections: Vec<ObservedConnection> = fed
        .ended
        .into_iter()
        .map(|(mut c, redis)| {
            if several {
                c.client = format!("{} → {redis}", c.client);
            }
            c
        })
        .collect();
    // In the order they began (their ids), not the order they ended.
    connections.sort_by_key(|c| c.id);
    if fed.left_out.0 > 0 {
        notes.push(format!(
            "{} earlier connections ({} commands) are not listed: the report keeps the latest {KEPT}",
            shared::digits::group(fed.left_out.0),
            shared::digits::group(fed.left_out.1),
        ));
    }
    let ports = |ports: &[u16]| {
        let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
        ports.join(" and ")
    };
    match (redis_ports, facts.connections) {
        ([], 0) => notes.push(format!(
            "no Redis connection found in {} packets: none of its TCP connections carried RESP commands answered by RESP replies (if Redis is there, name its port with --redis-port)",
            shared::digits::group(facts.packets),
        )),
        ([], _) => notes.push(format!(
            "Redis found on port {}: the side answering RESP replies to RESP commands (name the ports with --redis-port to follow only those)",
            ports(&facts.found_ports),
        )),
        (named, 0) => notes.push(format!(
            "no TCP connection to port {} in {} packets: if Redis listened on another port, say which with --redis-port, or leave it out to find Redis in the capture",
            ports(named).replace(" and ", " or "),
            shared::digits::group(facts.packets),
        )),
        _ => {}
    }
    if facts.joins > 0 {
        notes.push(format!(
            "the capture's clock goes back {} (first at packet {}): it looks like captures joined end to end (mergecap -a, or cat); each part's times are moved on to follow the part before, so times within a part are right but the gaps between parts are not. To merge captures taken at the same time, merge them by time instead: mergecap -w merged.pcap a.pcap b.pcap",
            match facts.joins {
                1 => "once".to_string(),
                n => format!("{} times", shared::digits::group(n)),
            },
            shared::digits::group(facts.first_join.unwrap_or(0)),
        ));
    }
    if facts.cut_short {
        notes.push("the file ends inside a packet (the capture was stopped while writing it): that packet is not read".into());
    }
    if facts.dropped + facts.if_dropped > 0 {
        notes.push(format!(
            "libpcap dropped {} packets (its buffer was full) and the interface {} more: each connection they belonged to says which of its bytes are not in the capture",
            shared::digits::group(facts.dropped),
            shared::digits::group(facts.if_dropped),
        ));
    }
    if facts.fragments > 0 {
        notes.push(format!(
            "{} IP fragments were skipped (pipescope does not reassemble IP fragments)",
            facts.fragments
        ));
    }
    Ok(FromCapture {
        facts,
        connections,
        notes,
        timelines: fed.timelines.into(),
    })
}

/// One connection being fed: its record, a framer per direction, what befell it.
struct Open {
    record: Record,
    commands: Framer,
    replies: Framer,
    /// "the capture began mid-connection", gaps: added to how it ended.
    befell: Vec<String>,
    /// The Redis server it went to.
    redis: SocketAddr,
    /// The client's receive window on its command segments.
    window: WindowWatch,
}

struct Fed {
    base: Instant,
    first: Option<Stamp>,
    /// The latest instant handed to a record: stamps never go back.
    latest: Instant,
    open: FxHashMap<u64, Open>,
    /// Ended connections, each with the Redis server it went to.
    ended: VecDeque<(ObservedConnection, SocketAddr)>,
    /// Per Redis server: its connections and their commands (those left out too).
    masters: BTreeMap<SocketAddr, (u64, u64)>,
    /// The latest ended connections' requests.
    timelines: VecDeque<ObservedTimeline>,
    /// Connections dropped from `ended`, and their commands.
    left_out: (u64, u64),
    notes: Vec<String>,
}

impl Fed {
    /// The capture stamp `at` on the record's clock.
    fn instant(&mut self, at: Stamp) -> Instant {
        let first = *self.first.get_or_insert(at);
        let at = self.base + Duration::from_nanos(at.saturating_sub(first));
        self.latest = self.latest.max(at);
        self.latest
    }

    fn event(&mut self, e: Event) {
        match e {
            Event::Opened {
                conn,
                client,
                redis,
                at,
                ..
            } => {
                self.instant(at);
                let (commands, replies) = framers();
                self.open.insert(
                    conn,
                    Open {
                        record: Record::new(conn, client.to_string()),
                        commands,
                        replies,
                        befell: Vec::new(),
                        redis,
                        window: WindowWatch::default(),
                    },
                );
            }
            Event::Data {
                conn,
                side,
                at,
                bytes,
            } => {
                let at = self.instant(at);
                let Some(o) = self.open.get_mut(&conn) else {
                    return;
                };
                // The capture saw the segment once: read and handed on at that stamp.
                match side {
                    Side::Client => {
                        let before = o.record.commands();
                        o.record.client_read(at, bytes, &mut o.commands);
                        o.window.commands(o.record.commands() - before);
                        o.record.handed_to_redis(at);
                    }
                    Side::Redis => {
                        o.window.replies();
                        o.record.redis_read(at, bytes, &mut o.replies);
                        o.record.handed_to_client(at);
                    }
                }
            }
            Event::Gap {
                conn,
                side,
                missing,
                ..
            } => self.gap(conn, side, missing),
            Event::Resynced {
                conn,
                at,
                skipped_client,
                skipped_redis,
            } => {
                let at = self.instant(at);
                let Some(o) = self.open.get_mut(&conn) else {
                    return;
                };
                o.record.resync(at);
                (o.commands, o.replies) = framers();
                o.befell.push(format!(
                    "resynchronised at a command boundary ({skipped_client} bytes of commands and {skipped_redis} of replies skipped to get there; counts start there)"
                ));
            }
            Event::Window {
                conn,
                bytes,
                unit,
                mss,
                scaled,
                ..
            } => {
                if let Some(o) = self.open.get_mut(&conn) {
                    o.window.command_segment(bytes, unit, mss, scaled);
                }
            }
            Event::Closed { conn, at, why } => self.closed(conn, at, why),
        }
    }

    /// Bytes of one side the capture lacks (`None`: it began mid-connection), said when the
    /// connection ends.
    fn gap(&mut self, conn: u64, side: Side, missing: Option<u64>) {
        let Some(o) = self.open.get_mut(&conn) else {
            return;
        };
        let from = match side {
            Side::Client => "from the client",
            Side::Redis => "from Redis",
        };
        o.befell.push(match missing {
            None => "the capture began mid-connection".into(),
            Some(n) => format!(
                "{} bytes {from} are not in the capture",
                shared::digits::group(n)
            ),
        });
    }

    /// The connection ended: its record, with what befell it, joins the ended ones (at most
    /// `KEPT`, the oldest let go and counted), and its requests the latest timelines.
    fn closed(&mut self, conn: u64, at: Stamp, why: Closing) {
        let at = self.instant(at);
        let Some(mut o) = self.open.remove(&conn) else {
            return;
        };
        let mut ended = why.to_string();
        if !o.befell.is_empty() {
            self.notes.push(format!(
                "connection {conn} ({}): {}",
                o.record.client,
                o.befell.join("; ")
            ));
            ended += &format!("; {}", o.befell.join("; "));
        }
        o.record.end(at, ended);
        let mut seen = o.record.seen_from(at, &shared::observe::Vantage::Capture);
        seen.window = o.window.evidence();
        // The window decides where it moved: the verdict is worked out again with it.
        let seen = seen.judged(None);
        let tally = self.masters.entry(o.redis).or_default();
        tally.0 += 1;
        tally.1 += seen.counts.commands;
        self.ended.push_back((seen, o.redis));
        let (timeline, writes_us) = o.record.timeline();
        self.timelines.push_back(ObservedTimeline {
            id: conn,
            timeline,
            writes_us,
        });
        if self.timelines.len() > KEPT_ENDED_TIMELINES {
            self.timelines.pop_front();
        }
        if self.ended.len() > KEPT
            && let Some((old, _)) = self.ended.pop_front()
        {
            self.left_out.0 += 1;
            self.left_out.1 += old.counts.commands;
        }
    }
}

/// A fresh framer for each direction.
fn framers() -> (Framer, Framer) {
    (
        Framer::new(framer::Side::Commands),
        Framer::new(framer::Side::Replies),
    )
}
