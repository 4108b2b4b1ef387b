//! Observe mode as the page knows it, rebuilt from server messages (pure, host-tested): whether
//! the observing proxy runs and where, the connections it follows, the timelines this page
//! asked for; or, in their place, a capture file's connections this page opened. Plus what the
//! observe view derives from them: a connection's timeline as a `Trace` the existing timeline
//! draws. Its time taken apart comes worded by the server (`shared::observe::Words`).

use std::collections::BTreeMap;

use shared::ServerMsg;
use shared::observe::{ObserveStatus, ObservedConnection, ObservedTimeline, Vantage, VerdictKind};

use crate::trace::Trace;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObserveState {
    /// The observing proxy, while it runs.
    pub status: Option<ObserveStatus>,
    /// Why it stopped, when the server gave a reason.
    pub stopped: Option<String>,
    /// The latest observation's connections, by id (in the order they arrived).
    pub connections: BTreeMap<u64, ObservedConnection>,
    /// Timelines this page asked for, by connection id.
    pub timelines: BTreeMap<u64, ObservedTimeline>,
    /// The connection whose pipelined equivalent this page asked to measure, until it lands
    /// (or the server refuses).
    pub measuring: Option<u64>,
    /// A capture this page opened (`POST /capture`): `connections` and `timelines` are its,
    /// and the proxy's are kept aside, up to date, for `back_to_live`.
    pub capture: Option<CaptureShown>,
    /// While a capture is shown: the proxy's connections and timelines, as they go on.
    pub live_aside: Option<LiveAside>,
    /// How many captures this page has read since observing last started (each `CaptureRead`,
    /// the same file again too): the view opens each on its costliest connection.
    pub captures_read: u64,
}

/// The proxy's connections and timelines, kept while a capture is shown in their place.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveAside {
    pub connections: BTreeMap<u64, ObservedConnection>,
    pub timelines: BTreeMap<u64, ObservedTimeline>,
}

/// What heads a capture's connections: what their figures are, and what befell the capture.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureShown {
    pub label: String,
    pub notes: Vec<String>,
}

impl ObserveState {
    /// Folds one server message in; messages about runs leave it unchanged.
    pub fn apply(&mut self, msg: &ServerMsg) {
        match msg {
            ServerMsg::Welcome {
                observing,
                observed,
                ..
            } => {
                // A reconnected page keeps the capture it shows; the proxy's go aside.
                if self.capture.is_some() {
                    self.status = observing.clone();
                    let mut aside = LiveAside::default();
                    for c in observed {
                        aside.connections.insert(c.id, c.clone());
                    }
                    self.live_aside = Some(aside);
                    return;
                }
                *self = ObserveState {
                    status: observing.clone(),
                    ..Default::default()
                };
                // Inserted one by one: collecting into a map sorts first, with a stable sort
                // the page otherwise does without (its code is large).
                for c in observed {
                    self.connections.insert(c.id, c.clone());
                }
            }
            // A new observation: its connections are numbered from 1 again.
            ServerMsg::ObserveStarted { status } => {
                *self = ObserveState {
                    status: Some(status.clone()),
                    ..Default::default()
                };
            }
            ServerMsg::ObserveStopped { reason } => {
                self.status = None;
                self.stopped = reason.clone();
            }
            // The proxy's connections are not the capture's, whose ids they would overwrite:
            // they go on aside.
            ServerMsg::Observed { connections } if self.capture.is_some() => {
                let aside = self.live_aside.get_or_insert_default();
                for c in connections {
                    aside.connections.insert(c.id, c.clone());
                }
            }
            ServerMsg::ObservedTimeline(t) if self.capture.is_some() => {
                let aside = self.live_aside.get_or_insert_default();
                aside.timelines.insert(t.id, t.clone());
            }
            ServerMsg::Observed { connections } => {
                for c in connections {
                    if self.measuring == Some(c.id) && c.equivalent.is_some() {
                        self.measuring = None;
                    }
                    self.connections.insert(c.id, c.clone());
                }
            }
            ServerMsg::ObservedTimeline(t) => {
                self.timelines.insert(t.id, t.clone());
            }
            // Whatever was refused, a measurement this page waits for is not coming.
            ServerMsg::Rejected { .. } => self.measuring = None,
            ServerMsg::RunStarted { .. }
            | ServerMsg::Progress { .. }
            | ServerMsg::Spans { .. }
            | ServerMsg::Sampled { .. }
            | ServerMsg::Finished { .. }
            | ServerMsg::Failed { .. }
            | ServerMsg::RecordingRead { .. } => {}
            ServerMsg::CaptureRead {
                label,
                notes,
                connections,
                timelines,
            } => {
                // The proxy's, set aside the first time a capture takes their place.
                let aside = match self.live_aside.take() {
                    Some(aside) => aside,
                    None => LiveAside {
                        connections: std::mem::take(&mut self.connections),
                        timelines: std::mem::take(&mut self.timelines),
                    },
                };
                *self = ObserveState {
                    status: self.status.take(),
                    live_aside: Some(aside),
                    capture: Some(CaptureShown {
                        label: label.clone(),
                        notes: notes.clone(),
                    }),
                    captures_read: self.captures_read + 1,
                    ..Default::default()
                };
                for c in connections {
                    self.connections.insert(c.id, c.clone());
                }
                for t in timelines {
                    self.timelines.insert(t.id, t.clone());
                }
            }
        }
    }

    /// Leaves a capture for the proxy's connections, as they are now.
    pub fn back_to_live(&mut self) {
        let aside = self.live_aside.take().unwrap_or_default();
        self.capture = None;
        self.connections = aside.connections;
        self.timelines = aside.timelines;
        self.measuring = None;
    }

    pub fn observing(&self) -> bool {
        self.status.is_some()
    }

    /// Whether the connections shown are a capture's (their requests came with them; there is
    /// no Redis to measure an equivalent against).
    pub fn from_capture(&self) -> bool {
        self.capture.is_some()
    }

    /// The connection a file or a capture opens on, its costliest: the one whose round trips
    /// cost the most time that pipelining would win back, what the file is handed over to
    /// show. That is its what-if's measured waits less its fewest-waits projection (`words`'
    /// `WhatIf`, the figure the page then draws). A connection with no what-if (it pipelines
    /// already, or waited too few times to project) ranks after every one with one, by its
    /// time waiting on replies (`ObservedTimes::waiting_us`): a pipeline's replies are awaited
    /// while it streams, so that time is not one pipelining would win back. Then the longer
    /// wall, then the lower id. Not the largest wall alone: a connection open and idle the whole
    /// capture would win that and show nothing. `None` without connections.
    pub fn costliest(&self) -> Option<u64> {
        self.connections
            .values()
            .fold(None::<&ObservedConnection>, |best, c| match best {
                Some(b) if cost(b) >= cost(c) => Some(b),
                _ => Some(c),
            })
            .map(|c| c.id)
    }

    /// The chosen connections that have a timeline, drawn like runs.
    pub fn traces(&self, chosen: &[u64]) -> Vec<Trace> {
        chosen
            .iter()
            .filter_map(|id| Some(trace(self.connections.get(id)?, self.timelines.get(id)?)))
            .collect()
    }
}

/// How much `c`'s round trips cost, compared as `ObserveState::costliest` says: whether it has a
/// what-if, the waits that would win back, its time waiting, its wall.
fn cost(c: &ObservedConnection) -> (bool, f64, f64, f64) {
    let win = c
        .words
        .as_ref()
        .and_then(|w| w.what_if.as_ref())
        .and_then(|w| Some(w.waits_us.first()? - w.waits_us.last()?));
    (
        win.is_some(),
        win.unwrap_or(0.0),
        c.times.waiting_us,
        c.times.wall_us,
    )
}

/// "#2 · bulk-loader · 127.0.0.1:51234": how the page names a connection.
pub fn title(c: &ObservedConnection) -> String {
    match &c.name {
        Some(name) => format!("#{} · {name} · {}", c.id, c.client),
        None => format!("#{} · {}", c.id, c.client),
    }
}

/// One connection's requests as the timeline draws a run's.
pub fn trace(c: &ObservedConnection, t: &ObservedTimeline) -> Trace {
    Trace {
        run: c.id,
        mode: None,
        network: None,
        spans: t.timeline.first.clone(),
        sampled: t.timeline.sampled.clone(),
        stride: t.timeline.stride,
        count: c.counts.commands,
        summary: None,
        observed: Some(format!("{} · {}", title(c), verdict_word(c.verdict.kind))),
        captured: c.vantage == Vantage::Capture,
        running: None,
    }
}

/// The verdict in a few words, for the table's column and the timeline's title.
pub fn verdict_word(kind: VerdictKind) -> &'static str {
    kind.words()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;
    use shared::observe::verdict::verdict;
    use shared::observe::{ObservedCounts, ObservedTimes, PipelinedEquivalent};
    use shared::{Span, Timeline};

    fn conn(id: u64, commands: u64, round_trips: u64) -> ObservedConnection {
        let counts = ObservedCounts {
            commands,
            replies: commands,
            writes: commands,
            round_trips,
            max_depth: 1,
            ..Default::default()
        };
        let times = ObservedTimes {
            wall_us: 1_000.0,
            waiting_us: 800.0,
            at_redis_us: 100.0,
            client_us: 200.0,
            ..Default::default()
        };
        ObservedConnection {
            id,
            client: "127.0.0.1:50000".into(),
            name: Some("loop".into()),
            open: true,
            ended: None,
            top_commands: vec![("SET".into(), commands)],
            verdict: verdict(&counts, &times),
            counts,
            times,
            equivalent: None,
            vantage: Default::default(),
            library: None,
            mean_set_value: None,
            words: None,
            probe: None,
            syscalls: None,
            window: None,
        }
    }

    fn status() -> ObserveStatus {
        ObserveStatus {
            connect_url: "redis://127.0.0.1:6380".into(),
            network: Default::default(),
            note: None,
            forwards_to: "redis://127.0.0.1:6379/0".into(),
            own_redis: false,
            probe: false,
        }
    }

    #[test]
    fn observed_updates_replace_by_id_and_a_new_observation_starts_afresh() {
        let mut s = ObserveState::default();
        s.apply(&ServerMsg::ObserveStarted { status: status() });
        assert!(s.observing());
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(1, 10, 10), conn(2, 5, 5)],
        });
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(1, 200, 200)],
        });
        assert_eq!(s.connections.len(), 2);
        assert_eq!(s.connections[&1].counts.commands, 200);
        s.apply(&ServerMsg::ObserveStopped {
            reason: Some("shutting down".into()),
        });
        assert!(!s.observing());
        assert_eq!(s.connections.len(), 2, "kept once stopped");
        s.apply(&ServerMsg::ObserveStarted { status: status() });
        assert!(s.connections.is_empty());
    }

    #[test]
    fn a_measurement_waits_for_its_equivalent_or_a_refusal() {
        let mut s = ObserveState {
            measuring: Some(1),
            ..Default::default()
        };
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(1, 10, 10)],
        });
        assert_eq!(s.measuring, Some(1));
        let mut measured = conn(1, 10, 10);
        measured.equivalent = Some(PipelinedEquivalent {
            command: "SET".into(),
            count: 10,
            batch: 1000,
            wall_us: 50,
            compared_us: 1_000.0,
            value_bytes: None,
            through_relay: true,
        });
        s.apply(&ServerMsg::Observed {
            connections: vec![measured],
        });
        assert_eq!(s.measuring, None);
        s.measuring = Some(2);
        s.apply(&ServerMsg::Rejected {
            reason: "busy".into(),
        });
        assert_eq!(s.measuring, None);
    }

    #[test]
    fn the_costliest_connection_waited_longest_on_round_trips() {
        fn waits(s: &mut ObserveState, id: u64, waiting_us: f64, wall_us: f64) {
            let mut c = conn(id, 10, 10);
            c.times.waiting_us = waiting_us;
            c.times.wall_us = wall_us;
            s.connections.insert(id, c);
        }
        let mut s = ObserveState::default();
        assert_eq!(s.costliest(), None);
        // #3 was open longest but waited least; #2 waited most.
        waits(&mut s, 1, 800.0, 1_000.0);
        waits(&mut s, 2, 900.0, 1_000.0);
        waits(&mut s, 3, 100.0, 60_000.0);
        assert_eq!(s.costliest(), Some(2));
        // Equal waits: the longer wall; then the lower id.
        waits(&mut s, 4, 900.0, 2_000.0);
        assert_eq!(s.costliest(), Some(4));
        waits(&mut s, 5, 900.0, 2_000.0);
        assert_eq!(s.costliest(), Some(4));
        // One with a what-if comes first, however little it waited: its waits would be won
        // back; the others' are a pipeline's replies awaited while it streams.
        let mut loop_ = conn(6, 10, 10);
        loop_.times.waiting_us = 50.0;
        let lane = |label: &str| shared::observe::Figure {
            label: label.into(),
            value: String::new(),
            how: String::new(),
        };
        loop_.words = Some(shared::observe::Words {
            what_if: Some(shared::observe::WhatIf {
                lanes: vec![lane("measured"), lane("batches of 10")],
                waits_us: vec![50.0, 5.0],
                own_us: 10.0,
                how: String::new(),
            }),
            ..Default::default()
        });
        s.connections.insert(6, loop_);
        assert_eq!(s.costliest(), Some(6));
    }

    #[test]
    fn a_chosen_connection_with_its_timeline_is_a_trace() {
        let mut s = ObserveState::default();
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(1, 2, 2), conn(2, 3, 3)],
        });
        s.apply(&ServerMsg::ObservedTimeline(ObservedTimeline {
            id: 1,
            timeline: Timeline {
                first: vec![Span::new(0, 0.0, 5.0), Span::new(1, 6.0, 9.0)],
                sampled: vec![],
                stride: 1,
            },
            writes_us: vec![0.0, 6.0],
        }));
        let traces = s.traces(&[1, 2]);
        assert_eq!(traces.len(), 1, "connection 2 has no timeline yet");
        assert_eq!(
            traces[0].observed.as_deref(),
            Some("#1 · loop · 127.0.0.1:50000 · one at a time")
        );
        assert_eq!(crate::trace::round_trips(&traces[0]).unwrap().len(), 2);
    }

    #[test]
    fn a_capture_replaces_the_connections_until_observing_starts_again() {
        let mut s = ObserveState::default();
        s.apply(&ServerMsg::ObserveStarted { status: status() });
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(1, 10, 10), conn(2, 5, 5)],
        });
        let mut captured = conn(1, 3, 3);
        captured.vantage = Vantage::Capture;
        let timeline = ObservedTimeline {
            id: 1,
            timeline: Timeline {
                first: vec![Span::new(0, 0.0, 5.0)],
                sampled: vec![],
                stride: 1,
            },
            writes_us: vec![0.0],
        };
        s.apply(&ServerMsg::CaptureRead {
            label: "from the capture x.pcap".into(),
            notes: vec!["a gap".into()],
            connections: vec![captured],
            timelines: vec![timeline],
        });
        assert!(s.observing(), "the proxy still runs");
        assert!(s.from_capture());
        assert_eq!(s.captures_read, 1);
        assert_eq!(s.connections.len(), 1);
        assert_eq!(s.connections[&1].counts.commands, 3);
        let traces = s.traces(&[1]);
        assert_eq!(traces.len(), 1, "its requests came with it");
        assert!(traces[0].captured, "drawn on the capture's lanes");
        // The proxy's updates and a reconnection leave the capture shown.
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(1, 20, 20)],
        });
        s.apply(&ServerMsg::Welcome {
            protocol: shared::PROTOCOL_VERSION,
            server_version: String::new(),
            redis_version: String::new(),
            target: String::new(),
            limits: Default::default(),
            network: Default::default(),
            can_control: true,
            busy: false,
            recent: vec![],
            observing: None,
            observed: vec![conn(1, 30, 30)],
            replay: None,
        });
        assert_eq!(s.connections[&1].counts.commands, 3);
        assert_eq!(s.capture.as_ref().unwrap().notes, vec!["a gap".to_string()]);
        assert!(!s.observing());
        // Observing again shows the proxy's connections.
        s.apply(&ServerMsg::ObserveStarted { status: status() });
        assert!(!s.from_capture());
        assert!(s.connections.is_empty() && s.timelines.is_empty());
    }

    #[test]
    fn back_to_live_from_a_capture_shows_the_proxys_connections_as_they_went_on() {
        let mut s = ObserveState::default();
        s.apply(&ServerMsg::ObserveStarted { status: status() });
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(1, 10, 10), conn(2, 5, 5)],
        });
        let mut captured = conn(1, 3, 3);
        captured.vantage = Vantage::Capture;
        for _ in 0..2 {
            s.apply(&ServerMsg::CaptureRead {
                label: "from the capture x.pcap".into(),
                notes: vec![],
                connections: vec![captured.clone()],
                timelines: vec![],
            });
        }
        // While the capture is shown, the proxy's go on aside.
        s.apply(&ServerMsg::Observed {
            connections: vec![conn(2, 50, 50), conn(3, 7, 7)],
        });
        assert_eq!(s.connections[&1].counts.commands, 3, "the capture's");
        s.back_to_live();
        assert!(!s.from_capture() && s.observing());
        let commands: Vec<(u64, u64)> = s
            .connections
            .values()
            .map(|c| (c.id, c.counts.commands))
            .collect();
        assert_eq!(commands, [(1, 10), (2, 50), (3, 7)]);
    }
}
