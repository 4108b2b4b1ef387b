//! A recording: finished runs with their timelines in one versioned JSON file, so the page can
//! show them with no Redis at all (`pipescope replay FILE`, or opened in the page). Written by
//! `pipescope bench --record FILE` and the page's "Save session".
//!
//! The version rule: `RECORDING_VERSION` is bumped on any change an older pipescope could not
//! read; a newer file is refused with a message saying so, never half-read. Fields added with
//! a default do not bump it.

use serde::{Deserialize, Serialize};

use crate::report::RunRecord;
use crate::spec::Network;

/// The `format` field of every recording.
pub const RECORDING_FORMAT: &str = "pipescope-recording";
/// The newest recording version this build reads, and the one it writes.
pub const RECORDING_VERSION: u32 = 1;
/// The file name suffix recordings are saved with.
pub const RECORDING_SUFFIX: &str = ".pipescope.json";

/// One recording file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// Always `RECORDING_FORMAT`: tells a recording from any other JSON.
    pub format: String,
    pub version: u32,
    /// When it was saved, RFC 3339 in UTC (e.g. `2026-12-04T07:00:00Z`).
    pub saved_at: String,
    /// The pipescope that measured the runs.
    pub server_version: String,
    /// The Redis they ran against: its version and address (password removed).
    pub redis_version: String,
    pub target: String,
    /// The network the measuring server offered by default (each run's own is in its spec).
    #[serde(default)]
    pub network: Network,
    /// The runs, in the order they ran, each with its summary and timeline.
    pub runs: Vec<RunRecord>,
    /// Saved from the guided tour: which step each run belongs to (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tour: Vec<TourStepRecord>,
}

/// A guided tour step's runs in a recording: the step (0-based) and its runs by role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TourStepRecord {
    pub step: usize,
    /// The step's roles (as the tour's script names them) and their runs' ids, in order.
    pub roles: Vec<String>,
    pub ids: Vec<u64>,
}

/// What the page says about the recording it shows: which file, when saved, what measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayInfo {
    /// The file's name (no directory).
    pub file: String,
    pub saved_at: String,
    pub server_version: String,
    pub redis_version: String,
    pub target: String,
    /// Saved from the guided tour: which runs were which step's (`Recording::tour`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tour: Vec<TourStepRecord>,
}

/// The kind of packet capture `bytes` begin as (pcap's magic numbers in either byte order
/// and stamp resolution, or pcapng's section header), if any.
pub fn capture_kind(bytes: &[u8]) -> Option<&'static str> {
    let magic: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    match magic {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0xa1, 0xb2, 0xc3, 0xd4] => Some("pcap"),
        [0x4d, 0x3c, 0xb2, 0xa1] | [0xa1, 0xb2, 0x3c, 0x4d] => Some("pcap, nanosecond"),
        [0x0a, 0x0d, 0x0d, 0x0a] => Some("pcapng"),
        _ => None,
    }
}

/// Why a file could not be read as a recording; each says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordingError {
    #[error(
        "this is a packet capture ({0}), not a pipescope recording: open it on the observe page (/observe, \"Open a capture…\"), or read it with pipescope observe --pcap FILE"
    )]
    IsACapture(&'static str),
    #[error("not a pipescope recording: the file is not UTF-8 text ({0})")]
    NotText(String),
    #[error("not a pipescope recording: the file is not JSON ({0})")]
    NotJson(String),
    #[error("not a pipescope recording: it has no \"format\": \"{RECORDING_FORMAT}\" field{found}")]
    NotARecording {
        /// What was there instead, as ` (found …)`, or empty.
        found: String,
    },
    #[error(
        "this recording was made by a newer pipescope (recording version {found}; this pipescope reads up to version {supported}): open it with a newer pipescope"
    )]
    TooNew { found: u64, supported: u32 },
    #[error("a broken pipescope recording (version {version}): {message}")]
    Malformed { version: u64, message: String },
}

/// The two fields read before the rest, so a newer file gets the version message, not a
/// complaint about a field this build does not know. Typed (no `serde_json::Value`): the page's
/// WASM stays smaller; `Format` alone tells a foreign `format` from a bad `version`.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u64>,
}

#[derive(Deserialize)]
struct Format {
    format: Option<String>,
}

impl Recording {
    /// A recording of `runs`, stamped with this format and version.
    pub fn new(
        saved_at: String,
        server_version: String,
        redis_version: String,
        target: String,
        network: Network,
        runs: Vec<RunRecord>,
    ) -> Recording {
        Recording {
            format: RECORDING_FORMAT.to_string(),
            version: RECORDING_VERSION,
            saved_at,
            server_version,
            redis_version,
            target,
            network,
            runs,
            tour: Vec::new(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a recording always serialises")
    }

    /// Reads a recording from a file's bytes: a packet capture is named as one (it belongs to
    /// observe mode), then `from_json`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Recording, RecordingError> {
        if let Some(kind) = capture_kind(bytes) {
            return Err(RecordingError::IsACapture(kind));
        }
        let text =
            std::str::from_utf8(bytes).map_err(|e| RecordingError::NotText(e.to_string()))?;
        Recording::from_json(text)
    }

    /// Reads a recording: the format and version first, then the whole body.
    pub fn from_json(text: &str) -> Result<Recording, RecordingError> {
        let (format, version) = match serde_json::from_str::<Header>(text) {
            Ok(h) => (h.format, h.version),
            Err(e) if !e.is_data() => return Err(RecordingError::NotJson(e.to_string())),
            // `format` is not text, or `version` not a whole number, or no object at all.
            Err(_) => match serde_json::from_str::<Format>(text) {
                Ok(f) => (f.format, None),
                Err(_) => {
                    return Err(RecordingError::NotARecording {
                        found: " (the file holds JSON, but not an object with a text \"format\")"
                            .into(),
                    });
                }
            },
        };
        match format.as_deref() {
            Some(RECORDING_FORMAT) => {}
            Some(other) => {
                return Err(RecordingError::NotARecording {
                    found: format!(" (found \"format\": {:?})", clip(other)),
                });
            }
            None => {
                return Err(RecordingError::NotARecording {
                    found: String::new(),
                });
            }
        }
        let version = match version {
            Some(v) if v >= 1 => v,
            _ => {
                return Err(RecordingError::Malformed {
                    version: 0,
                    message: "\"version\" is missing or not a positive whole number".into(),
                });
            }
        };
        if version > u64::from(RECORDING_VERSION) {
            return Err(RecordingError::TooNew {
                found: version,
                supported: RECORDING_VERSION,
            });
        }
        serde_json::from_str(text).map_err(|e| RecordingError::Malformed {
            version,
            message: e.to_string(),
        })
    }

    /// The `Welcome` a page showing this recording (read from the file named `file`) gets:
    /// its runs as finished runs, and what it is. The replay server sends it; the one-file
    /// page carries it.
    pub fn welcome(self, file: &str) -> crate::ServerMsg {
        let network = self.runs_network();
        crate::ServerMsg::Welcome {
            protocol: crate::PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            replay: Some(self.info(file)),
            redis_version: self.redis_version,
            target: self.target,
            limits: crate::Limits::DEFAULT,
            network,
            can_control: false,
            busy: false,
            recent: self.runs,
            observing: None,
            observed: Vec::new(),
        }
    }

    /// The network its runs were measured over: the one they share, else the latest run's
    /// (each run's own is in its spec); the server's default only when it has no runs.
    pub fn runs_network(&self) -> Network {
        match self.runs.last() {
            Some(last) => last.summary.spec.network,
            None => self.network,
        }
    }

    /// Its runs' networks in words: "one-way delay 500 µs" when they share one, else each
    /// with how many runs it carried, in the order they first ran.
    pub fn networks_words(&self) -> String {
        let mut seen: Vec<(Network, u64)> = Vec::new();
        for r in &self.runs {
            let n = r.summary.spec.network;
            match seen.iter_mut().find(|(m, _)| *m == n) {
                Some((_, k)) => *k += 1,
                None => seen.push((n, 1)),
            }
        }
        match seen.as_slice() {
            [] => self.network.label(),
            [(one, _)] => one.label(),
            many => {
                let each: Vec<String> = many
                    .iter()
                    .map(|(n, k)| format!("{} ({})", n.label(), crate::digits::count(*k, "run")))
                    .collect();
                format!("per run: {}", each.join(", "))
            }
        }
    }

    pub fn info(&self, file: &str) -> ReplayInfo {
        ReplayInfo {
            file: file.to_string(),
            saved_at: self.saved_at.clone(),
            server_version: self.server_version.clone(),
            redis_version: self.redis_version.clone(),
            target: self.target.clone(),
            tour: self.tour.clone(),
        }
    }
}

/// At most 60 characters of a foreign value, for an error message.
fn clip(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// `unix_ms` as RFC 3339 in UTC, to the second (`1970-01-01T00:00:00Z`). Both sides stamp
/// recordings with it, without a calendar library.
pub fn rfc3339_utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{RunSummary, Span, Timeline};
    use crate::spec::{Mode, RunSpec};

    fn sample() -> Recording {
        let spec = RunSpec::set(10, Mode::Sequential);
        let summary = RunSummary {
            spec,
            done: 10,
            wall_us: 500,
            ops_per_sec: 20_000.0,
            round_trips: 10,
            writes: 10,
            wire_commands: 10,
            latency: Default::default(),
            split: None,
            redis_usec_per_call: None,
            redis_load: None,
            interleaving: None,
            redis_memory: None,
            cluster: None,
        };
        Recording::new(
            rfc3339_utc(1_796_367_600_000),
            "0.1.0".into(),
            "7.2.4".into(),
            "redis://127.0.0.1:6400/0".into(),
            Network::LOOPBACK,
            vec![RunRecord {
                run: 7,
                summary,
                timeline: Timeline {
                    first: vec![Span::new(0, 0.0, 40.0), Span::new(1, 41.0, 80.0)],
                    sampled: vec![Span::new(0, 0.0, 40.0)],
                    stride: 5,
                },
            }],
        )
    }

    #[test]
    fn round_trips_through_json() {
        let rec = sample();
        let json = rec.to_json();
        assert!(
            json.starts_with(r#"{"format":"pipescope-recording","version":1,"#),
            "{json}"
        );
        assert_eq!(Recording::from_json(&json).unwrap(), rec);
    }

    #[test]
    fn not_json_says_so() {
        let e = Recording::from_json("hello, I am a slide deck").unwrap_err();
        assert!(matches!(e, RecordingError::NotJson(_)), "{e:?}");
        assert!(
            e.to_string().starts_with(
                "not a pipescope recording: the file is not JSON (expected value at line 1 column 1"
            ),
            "{e}"
        );
    }

    #[test]
    fn other_json_is_not_a_recording() {
        let e = Recording::from_json(r#"{"mode":"sequential"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"not a pipescope recording: it has no "format": "pipescope-recording" field"#
        );
        let e = Recording::from_json(r#"{"format":"trace-event","version":1}"#).unwrap_err();
        assert!(
            e.to_string()
                .ends_with(r#"(found "format": "trace-event")"#),
            "{e}"
        );
        let e = Recording::from_json("[1, 2]").unwrap_err();
        assert!(matches!(e, RecordingError::NotARecording { .. }), "{e:?}");
    }

    #[test]
    fn a_newer_version_is_refused_before_its_body_is_read() {
        // Version 2 with a body this build cannot read: the version is what it hears about.
        let json = sample()
            .to_json()
            .replacen(r#""version":1"#, r#""version":2"#, 1)
            .replacen(r#""runs":["#, r#""runs_v2":{"x":1},"runs":["#, 1)
            .replace(r#""done":10,"#, "");
        let e = Recording::from_json(&json).unwrap_err();
        assert_eq!(
            e,
            RecordingError::TooNew {
                found: 2,
                supported: 1
            }
        );
        assert_eq!(
            e.to_string(),
            "this recording was made by a newer pipescope (recording version 2; this pipescope reads up to version 1): open it with a newer pipescope"
        );
    }

    #[test]
    fn a_missing_field_names_it_with_its_place() {
        let json = serde_json::to_string_pretty(&sample())
            .unwrap()
            .replace("\"done\": 10,", "");
        let e = Recording::from_json(&json).unwrap_err();
        let RecordingError::Malformed { version, message } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(*version, 1);
        assert!(message.contains("missing field `done`"), "{message}");
        assert!(message.contains(" at line "), "{message}");
        assert!(
            e.to_string().starts_with(
                "a broken pipescope recording (version 1): missing field `done` at line "
            ),
            "{e}"
        );
    }

    #[test]
    fn a_missing_version_is_malformed() {
        let e = Recording::from_json(r#"{"format":"pipescope-recording"}"#).unwrap_err();
        assert!(
            matches!(e, RecordingError::Malformed { version: 0, .. }),
            "{e:?}"
        );
        let e = Recording::from_json(r#"{"format":"pipescope-recording","version":"one"}"#)
            .unwrap_err();
        assert!(e.to_string().contains("\"version\" is missing"), "{e}");
    }

    #[test]
    fn dates_are_utc_rfc3339() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_796_367_599_999), "2026-12-04T06:59:59Z");
    }

    #[test]
    fn a_recording_names_its_runs_networks_not_the_servers_default() {
        let mut r = sample();
        let dialled = Network::symmetric(500);
        r.runs[0].summary.spec.network = dialled;
        assert_eq!(r.networks_words(), "one-way delay 500 µs");
        let crate::ServerMsg::Welcome { network, .. } = r.clone().welcome("f.json") else {
            panic!("a welcome")
        };
        assert_eq!(network, dialled);
        let mut other = r.runs[0].clone();
        other.summary.spec.network = Network::LOOPBACK;
        r.runs.push(other);
        assert_eq!(
            r.networks_words(),
            "per run: one-way delay 500 µs (1 run), loopback (1 run)"
        );
    }
}
