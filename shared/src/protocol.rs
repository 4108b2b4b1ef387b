//! The websocket protocol: one JSON message per text frame, `{"<Variant>": {fields}}` (serde's
//! external tagging: unlike a `type` field inside the object, it decodes without buffering the
//! message first, which keeps the page's WASM small; `"Cancel"` and `"StopObserve"` are bare
//! strings).

use serde::{Deserialize, Serialize};

use crate::observe::{ObserveStatus, ObservedConnection, ObservedTimeline};
use crate::recording::ReplayInfo;
use crate::report::{RunRecord, RunSummary, Span, Timeline};
use crate::spec::{Limits, Network, RunSpec};

/// Bumped on any incompatible change; sent in `Welcome`.
pub const PROTOCOL_VERSION: u32 = 7;

/// Spans in one `Spans` frame at most (about 200 KB of JSON).
pub const MAX_SPANS_PER_FRAME: usize = 2_000;

/// Page → backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ClientMsg {
    /// Run these specs one after another (one spec, or a comparison such as sequential then
    /// pipelined with the same count). Refused as a whole if any spec is invalid.
    Start { runs: Vec<RunSpec> },
    /// Stop the current run at its next batch boundary; its keys are still removed.
    Cancel,
    /// Start the observing proxy (a presenter action): applications pointed at it are
    /// followed connection by connection, over `network`; with `probe`, a few replies per
    /// connection are held back to see whether the client waits for them.
    Observe {
        network: Network,
        #[serde(default)]
        probe: bool,
    },
    /// Stop observing (a presenter action): the proxy closes and its connections end.
    StopObserve,
    /// Send this page one observed connection's requests (`ObservedTimeline`).
    WantTimeline { id: u64 },
    /// Run the same number of commands through pipescope's engine, pipelined in batches of
    /// 1,000 over the observing network (a presenter action); the result lands on the
    /// connection's `equivalent`.
    MeasureEquivalent { id: u64 },
}

/// Backend → page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ServerMsg {
    /// First message on every connection: who we are, what we talk to, what we accept, and
    /// what happened before this page connected.
    Welcome {
        protocol: u32,
        server_version: String,
        redis_version: String,
        /// The Redis address with any password removed.
        target: String,
        limits: Limits,
        /// The network the server was started with (`--delay-us` …): the page's initial choice.
        #[serde(default)]
        network: Network,
        /// Whether this connection may start and cancel runs (false for a viewer without the
        /// presenter token).
        #[serde(default)]
        can_control: bool,
        busy: bool,
        /// The latest plan's finished runs, so a late page can show and replay them.
        recent: Vec<RunRecord>,
        /// The observing proxy, when it is running.
        #[serde(default)]
        observing: Option<ObserveStatus>,
        /// Connections it has followed (the latest observation's, even once stopped).
        #[serde(default)]
        observed: Vec<ObservedConnection>,
        /// Set when the server replays a recording (`pipescope replay FILE`): `recent` holds
        /// its runs, nothing can run and there is no Redis behind it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<ReplayInfo>,
    },
    RunStarted {
        run: u64,
        index: usize,
        of: usize,
        spec: RunSpec,
    },
    /// Sent at most ~30 times a second per run, whatever the count.
    Progress {
        run: u64,
        done: u64,
        total: u64,
        elapsed_us: u64,
        ops_per_sec: f64,
    },
    /// Live request timings of a run's first requests, in order, at most
    /// `MAX_SPANS_PER_FRAME` a frame and sent with the progress ticks.
    Spans { run: u64, spans: Vec<Span> },
    /// Live request timings past the first ones: every `stride`-th request of the run (the
    /// sample its finished `Timeline` holds), new ones since the last frame, in order of reply,
    /// at most `MAX_SPANS_PER_FRAME` a frame.
    Sampled {
        run: u64,
        stride: u64,
        spans: Vec<Span>,
    },
    Finished {
        run: u64,
        summary: RunSummary,
        timeline: Timeline,
    },
    /// The run stopped before its end (Redis error, timeout, cancel). Later runs of the same
    /// start are not attempted. `partial` holds what was measured up to the stop.
    Failed {
        run: Option<u64>,
        reason: String,
        partial: Option<RunSummary>,
    },
    /// The request was refused and nothing ran: invalid input, or a run already in progress.
    Rejected { reason: String },
    /// The observing proxy is listening: point an application at `status.connect_url`.
    ObserveStarted { status: ObserveStatus },
    /// The observing proxy closed (stopped by the presenter, or `reason`).
    ObserveStopped { reason: Option<String> },
    /// Connections whose numbers changed since the last such frame (a few times a second).
    Observed {
        connections: Vec<ObservedConnection>,
    },
    /// One observed connection's requests, sent to the page that asked (`WantTimeline`).
    ObservedTimeline(ObservedTimeline),
    /// A recording file the page sent to `POST /recording`, read by the server (the page does
    /// not parse recording files itself): its runs, shown as `Welcome`'s `recent` would be.
    /// The answer to that request only, never sent on the websocket.
    RecordingRead {
        info: ReplayInfo,
        runs: Vec<RunRecord>,
    },
    /// A capture file (pcap, pcapng) the page sent to `POST /capture`, read by the server as
    /// `pipescope observe --pcap` reads one: its connections and the requests of the latest
    /// ones, shown in place of the proxy's, headed by `label` (what the figures are) and
    /// `notes` (gaps, resynchronisations). The answer to that request only, never sent on the
    /// websocket.
    CaptureRead {
        label: String,
        notes: Vec<String>,
        connections: Vec<ObservedConnection>,
        timelines: Vec<ObservedTimeline>,
    },
}

impl ClientMsg {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("ClientMsg always serialises")
    }
}

impl ServerMsg {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("ServerMsg always serialises")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("not a pipescope message: {0}")]
pub struct DecodeError(#[from] serde_json::Error);

impl ClientMsg {
    pub fn from_json(text: &str) -> Result<ClientMsg, DecodeError> {
        Ok(serde_json::from_str(text)?)
    }
}

impl ServerMsg {
    /// Structs only from JSON objects (`objects`: what the server writes), which keeps the
    /// page's WASM, the decoder of these messages, small.
    pub fn from_json(text: &str) -> Result<ServerMsg, DecodeError> {
        Ok(crate::objects::from_str(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Mode;

    #[test]
    fn start_round_trips_through_json() {
        let msg = ClientMsg::Start {
            runs: RunSpec::comparison(100_000, 1000),
        };
        let json = msg.to_json();
        assert!(json.starts_with(r#"{"Start":{"runs":"#), "{json}");
        assert!(
            json.contains(r#""kind":"pipelined","batch":1000,"flush":{"policy":"batch"}"#),
            "{json}"
        );
        assert_eq!(ClientMsg::from_json(&json).unwrap(), msg);
    }

    #[test]
    fn command_defaults_to_set() {
        let msg = ClientMsg::from_json(
            r#"{"Start":{"runs":[{"count":5,"mode":{"kind":"sequential"}}]}}"#,
        )
        .unwrap();
        let ClientMsg::Start { runs } = msg else {
            panic!("not a start")
        };
        assert_eq!(runs[0].mode, Mode::Sequential);
        assert_eq!(runs[0].command, crate::spec::Command::Set);
    }

    #[test]
    fn messages_are_tagged_from_outside() {
        assert_eq!(ClientMsg::Cancel.to_json(), r#""Cancel""#);
        let rejected = ServerMsg::Rejected {
            reason: "no".into(),
        };
        assert_eq!(rejected.to_json(), r#"{"Rejected":{"reason":"no"}}"#);
        assert_eq!(ServerMsg::from_json(&rejected.to_json()).unwrap(), rejected);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for text in [
            "",
            "{",
            "null",
            r#"{"Nope":{}}"#,
            r#"{"Start":{"runs":"x"}}"#,
            r#"{"type":"Cancel"}"#,
        ] {
            assert!(ClientMsg::from_json(text).is_err(), "{text}");
        }
    }
}
