//! What would help a connection that waits on round trips: what its commands would take
//! pipelined (derived from what was measured of it, and said to be a floor), and the change
//! for the client library it named. For a connection that changed behaviour, both are for
//! its costliest phase, from that phase's own time and round trips.

use super::numbers::{count, duration, percent};
use super::verdict::costliest_phase;
use super::{ObservedConnection, Phase, VerdictKind};
use crate::digits::group;

/// The batch sizes projected.
pub const BATCHES: [u64; 3] = [10, 100, 1_000];

/// The fewest round trips worth projecting from: below it pipelining has little to take.
const MIN_TRIPS: u64 = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub batch: u64,
    /// ⌈commands / batch⌉: the round trips it would wait.
    pub trips: u64,
    /// Its own time plus `trips` of its mean round trip.
    pub us: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    /// Its commands' time as measured, without the observer's hops: own time plus waiting.
    pub now_us: f64,
    pub projections: Vec<Projection>,
    /// How the projections were obtained.
    pub how: String,
    /// The concrete change for its library, when it named itself; else the general one.
    pub change: String,
    /// The commands it is for, when not all of the connection's: its costliest phase
    /// ("the 200 commands one at a time, 89 % of its time").
    pub scope: Option<String>,
}

impl Advice {
    /// "now 60.0 ms (its own time and its waits); pipelined in batches of 10 ~15.0 ms, of
    /// 100 ~10.5 ms (derived from …)", led by its scope where it has one; `None` where
    /// nothing was projected.
    pub fn projection_line(&self) -> Option<String> {
        if self.projections.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .projections
            .iter()
            .map(|p| format!("of {} ~{}", group(p.batch), duration(p.us)))
            .collect();
        let now = match &self.scope {
            None => format!("now {} (its own time and its waits)", duration(self.now_us)),
            Some(scope) => format!(
                "{scope}: now {} (their own time and their waits)",
                duration(self.now_us)
            ),
        };
        Some(format!(
            "{now}; pipelined in batches {} ({})",
            each.join(", "),
            self.how
        ))
    }
}

/// What would help `c`, if it waits on round trips (one at a time, or a write per command
/// over many round trips) or writes each pipelined command on its own. For an undetermined
/// verdict, the change for each of those it could be, each said for its case; its time is
/// not projected (that holds only if it waits).
pub fn advice(c: &ObservedConnection) -> Option<Advice> {
    // A connection that changed behaviour: what would help its costliest phase.
    if let Some(p) = costliest_phase(&c.counts)
        && matches!(
            p.kind,
            VerdictKind::OneAtATime | VerdictKind::WritePerCommand
        )
    {
        return Some(for_phase(c, p));
    }
    if c.verdict.kind == VerdictKind::Undetermined {
        return undetermined(c);
    }
    let kind = c.verdict.kind;
    let n = c.counts.commands;
    if !matches!(kind, VerdictKind::OneAtATime | VerdictKind::WritePerCommand) || n < 2 {
        return None;
    }
    let t = &c.times;
    let now_us = t.client_us + t.waiting_us;
    let projections = projections(c);
    if projections.is_empty() && kind == VerdictKind::OneAtATime {
        return None;
    }
    let how = format!(
        "derived from its {}: its own time ({}) plus ⌈{} / batch⌉ round trips of its mean {} measured; a floor, as Redis's work per command and bigger writes are left out",
        count(n, "command"),
        duration(t.client_us),
        group(n),
        duration(mean_trip_us(c)),
    );
    Some(Advice {
        now_us,
        projections,
        how,
        change: change(c.library.as_deref(), kind),
        scope: None,
    })
}

/// What would help the costliest phase `p` of a connection that changed behaviour, projected
/// from that phase's own figures where its waits were confirmed and its round trips enough.
fn for_phase(c: &ObservedConnection, p: &Phase) -> Advice {
    let sure = c.counts.unconfirmed_trips == 0 || p.kind == VerdictKind::WritePerCommand;
    let total: f64 = c.counts.phases.iter().map(|p| p.us).sum();
    let n = p.commands;
    let trips = p.round_trips;
    let words = if sure {
        p.kind.words()
    } else {
        "a command at a time"
    };
    let mut scope = format!(
        "the {} {words}, {} % of its time",
        count(n, "command"),
        percent(p.us, total)
    );
    if !sure {
        // Had it not waited, its round trips were its own pauses and fewer would not help.
        scope += ", if each waited for its reply";
    }
    let own = (p.us - p.waiting_us).max(0.0);
    let rtt = p.waiting_us / trips.max(1) as f64;
    let projections = match p.waiting_us > 0.0 {
        true => projected(n, trips, own, rtt),
        false => Vec::new(),
    };
    let how = if projections.is_empty() {
        "not projected: its costliest phase's round trips were too few to project from".to_string()
    } else {
        format!(
            "derived from its costliest phase: its own time there ({}) plus ⌈{} / batch⌉ round trips of their mean {} measured there; a floor, as Redis's work per command and bigger writes are left out",
            duration(own),
            group(n),
            duration(rtt),
        )
    };
    let change = change(c.library.as_deref(), p.kind);
    Advice {
        now_us: p.us,
        projections,
        how,
        change: if sure {
            format!("for its {} commands {}: {change}", group(n), p.kind.words())
        } else {
            format!(
                "for its {} commands a command at a time, if it waits for each reply: {change}",
                group(n)
            )
        },
        scope: Some(scope),
    }
}

/// `c`'s commands projected in batches of each of `BATCHES` below its count, if it waits for
/// each round trip: its own time plus ⌈commands / batch⌉ of its mean round trip, both
/// measured. Empty with too few round trips or commands to project from.
pub fn projections(c: &ObservedConnection) -> Vec<Projection> {
    let (n, trips) = (c.counts.commands, c.counts.round_trips);
    projected(n, trips, c.times.client_us, mean_trip_us(c))
}

/// `n` commands that took `own` µs of the client's own time, projected in batches below `n`
/// with a round trip of `rtt` µs each; none from fewer than `MIN_TRIPS` round trips.
fn projected(n: u64, trips: u64, own: f64, rtt: f64) -> Vec<Projection> {
    if trips < MIN_TRIPS || n < 2 * MIN_TRIPS {
        return Vec::new();
    }
    BATCHES
        .iter()
        .filter(|&&b| b < n)
        .map(|&b| Projection {
            batch: b,
            trips: n.div_ceil(b),
            us: own + n.div_ceil(b) as f64 * rtt,
        })
        .collect()
}

/// Its mean round trip as measured: its waiting over its round trips.
pub fn mean_trip_us(c: &ObservedConnection) -> f64 {
    c.times.waiting_us / c.counts.round_trips.max(1) as f64
}

/// Whether what would help is said for a phase of it (it changed behaviour, and its costliest
/// phase waits on round trips): its whole time is then not projected.
pub fn phased(c: &ObservedConnection) -> bool {
    costliest_phase(&c.counts).is_some_and(|p| {
        matches!(
            p.kind,
            VerdictKind::OneAtATime | VerdictKind::WritePerCommand
        )
    })
}

/// Undetermined: the change if it waits for each reply, and if it writes each command on
/// its own, for those of the two it could be.
fn undetermined(c: &ObservedConnection) -> Option<Advice> {
    let cases: Vec<String> = c
        .verdict
        .candidates
        .iter()
        .filter_map(|&k| {
            let case = match k {
                VerdictKind::OneAtATime => "if it waits for each reply (one at a time)",
                VerdictKind::WritePerCommand => {
                    "if it writes each command without waiting (a write per command)"
                }
                _ => return None,
            };
            Some(format!("{case}: {}", change(c.library.as_deref(), k)))
        })
        .collect();
    (!cases.is_empty() && c.counts.commands >= 2).then(|| Advice {
        now_us: c.times.client_us + c.times.waiting_us,
        projections: Vec::new(),
        how: "not projected: which it is, the evidence could not decide".into(),
        change: cases.join("; "),
        scope: None,
    })
}

/// The change for `library` (as it named itself), or the general one.
fn change(library: Option<&str>, kind: VerdictKind) -> String {
    let lib = library.unwrap_or("").to_ascii_lowercase();
    let per_command = kind == VerdictKind::WritePerCommand;
    let known = if lib.contains("lettuce") {
        Some(if per_command {
            "Lettuce writes each command as it is issued: connection.setAutoFlushCommands(false), issue the batch, then connection.flushCommands() sends it in one write (Spring Data Redis: executePipelined with LettuceConnectionFactory.setPipeliningFlushPolicy(PipeliningFlushPolicy.buffered(n)))"
        } else {
            "Lettuce: issue the commands without awaiting each (async API), with connection.setAutoFlushCommands(false) and connection.flushCommands() every n (Spring Data Redis: executePipelined, PipeliningFlushPolicy.buffered(n))"
        })
    } else if lib.contains("redis-py") {
        Some(
            "redis-py: pipe = r.pipeline(transaction=False), queue the commands on pipe, pipe.execute() every n",
        )
    } else if lib.contains("node-redis") {
        Some(
            "node-redis pipelines the commands issued in one tick: start them all, then await Promise.all(…), instead of awaiting each",
        )
    } else if lib.contains("ioredis") {
        Some("ioredis: const p = redis.pipeline(); p.set(…) for each; await p.exec()")
    } else if lib.contains("jedis") {
        Some("Jedis: Pipeline p = jedis.pipelined(); p.set(…) for each; p.sync()")
    } else if lib.contains("go-redis") {
        Some("go-redis: pipe := rdb.Pipeline(); pipe.Set(ctx, …) for each; pipe.Exec(ctx)")
    } else if lib.contains("redis-rs") {
        Some("redis-rs: let mut p = redis::pipe(); p.set(…).ignore() for each; p.query(&mut con)")
    } else {
        None
    };
    let general = if per_command {
        "send the commands in fewer writes: your client's pipeline or flush setting, every n commands"
    } else {
        "pipeline the commands: your client's pipeline API, sending n before reading their replies"
    };
    match (known, library) {
        (Some(said), _) => said.to_string(),
        (None, Some(name)) => format!("{general} (the client named itself {name})"),
        (None, None) => general.to_string(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::observe::{ObservedCounts, ObservedTimes, Phase, Verdict};

    /// A connection of `n` SETs over `trips` round trips, 50 ms waiting and 10 ms its own.
    pub(in crate::observe) fn conn(
        kind: VerdictKind,
        n: u64,
        trips: u64,
        library: Option<&str>,
    ) -> ObservedConnection {
        ObservedConnection {
            id: 1,
            client: "127.0.0.1:50000".into(),
            name: None,
            open: false,
            ended: None,
            top_commands: vec![("SET".into(), n)],
            counts: ObservedCounts {
                commands: n,
                writes: n,
                round_trips: trips,
                ..Default::default()
            },
            times: ObservedTimes {
                wall_us: 60_000.0,
                waiting_us: 50_000.0,
                client_us: 10_000.0,
                ..Default::default()
            },
            verdict: Verdict {
                kind,
                headline: String::new(),
                text: String::new(),
                timing_dependent: None,
                candidates: Vec::new(),
                decided_by: None,
            },
            equivalent: None,
            vantage: Default::default(),
            library: library.map(Into::into),
            mean_set_value: None,
            words: None,
            probe: None,
            syscalls: None,
            window: None,
        }
    }

    #[test]
    fn a_loop_of_1000_at_50_us_projects_its_own_time_plus_fewer_round_trips() {
        let a = advice(&conn(VerdictKind::OneAtATime, 1000, 1000, Some("redis-py"))).unwrap();
        assert_eq!(a.now_us, 60_000.0);
        let us: Vec<(u64, u64, f64)> = a
            .projections
            .iter()
            .map(|p| (p.batch, p.trips, p.us))
            .collect();
        assert_eq!(us, vec![(10, 100, 15_000.0), (100, 10, 10_500.0)]);
        assert!(
            a.change
                .starts_with("redis-py: pipe = r.pipeline(transaction=False)")
        );
        assert!(a.how.starts_with("derived"), "{}", a.how);
    }

    #[test]
    fn lettuce_writing_each_command_is_told_to_flush_by_hand() {
        let a = advice(&conn(
            VerdictKind::WritePerCommand,
            1000,
            1,
            Some("Lettuce"),
        ))
        .unwrap();
        assert!(a.projections.is_empty());
        assert!(
            a.change.contains("setAutoFlushCommands(false)"),
            "{}",
            a.change
        );
        assert!(a.change.contains("PipeliningFlushPolicy.buffered(n)"));
    }

    #[test]
    fn a_pipelined_client_or_a_short_loop_needs_nothing() {
        assert_eq!(advice(&conn(VerdictKind::Pipelined, 1000, 1, None)), None);
        assert_eq!(advice(&conn(VerdictKind::OneAtATime, 5, 5, None)), None);
    }

    #[test]
    fn a_connection_that_changed_behaviour_is_advised_for_its_costliest_phase() {
        // redis-py: 200 single SETs over 1 ms round trips (its own time 20 ms), then one
        // pipeline of 200 in 2 ms.
        let mut c = conn(VerdictKind::OneAtATime, 400, 201, Some("redis-py"));
        c.counts.phases = vec![
            Phase {
                kind: VerdictKind::OneAtATime,
                round_trips: 200,
                commands: 200,
                writes: 200,
                us: 220_000.0,
                waiting_us: 200_000.0,
            },
            Phase {
                kind: VerdictKind::Pipelined,
                round_trips: 1,
                commands: 200,
                writes: 1,
                us: 2_000.0,
                waiting_us: 2_000.0,
            },
        ];
        let a = advice(&c).unwrap();
        assert_eq!(a.now_us, 220_000.0);
        let us: Vec<(u64, f64)> = a.projections.iter().map(|p| (p.batch, p.us)).collect();
        // Its own 20 ms plus ⌈200 / batch⌉ of its 1 ms round trips.
        assert_eq!(us, vec![(10, 40_000.0), (100, 22_000.0)]);
        assert_eq!(
            a.projection_line().unwrap(),
            "the 200 commands one at a time, 99 % of its time: now 220.0 ms (their own time and their waits); pipelined in batches of 10 ~40.0 ms, of 100 ~22.0 ms (derived from its costliest phase: its own time there (20.0 ms) plus ⌈200 / batch⌉ round trips of their mean 1.0 ms measured there; a floor, as Redis's work per command and bigger writes are left out)"
        );
        assert!(
            a.change
                .starts_with("for its 200 commands one at a time: redis-py: pipe = r.pipeline"),
            "{}",
            a.change
        );
        // Waits not confirmed: the change and the projection only if it waited.
        c.counts.unconfirmed_trips = 199;
        let a = advice(&c).unwrap();
        assert!(
            a.projection_line().unwrap().starts_with(
                "the 200 commands a command at a time, 99 % of its time, if each waited for its reply: now 220.0 ms"
            ),
            "{:?}",
            a.projection_line()
        );
        assert!(
            a.change.contains("if it waits for each reply"),
            "{}",
            a.change
        );
        // A recording made before phases kept their waits: nothing projected.
        c.counts.unconfirmed_trips = 0;
        c.counts.phases[0].waiting_us = 0.0;
        assert!(advice(&c).unwrap().projections.is_empty());
    }

    #[test]
    fn an_undetermined_connection_is_told_both_cases() {
        let mut c = conn(VerdictKind::Undetermined, 1000, 1000, Some("redis-py"));
        c.verdict.candidates = vec![VerdictKind::OneAtATime, VerdictKind::WritePerCommand];
        let a = advice(&c).unwrap();
        assert!(a.projections.is_empty());
        assert!(
            a.change.starts_with(
                "if it waits for each reply (one at a time): redis-py: pipe = r.pipeline(transaction=False)"
            ),
            "{}",
            a.change
        );
        assert!(
            a.change
                .contains("; if it writes each command without waiting (a write per command): "),
            "{}",
            a.change
        );
        // Undetermined between batched kinds: nothing to change either way.
        c.verdict.candidates = vec![VerdictKind::Pipelined, VerdictKind::AutoPipelined];
        assert_eq!(advice(&c), None);
    }
}
