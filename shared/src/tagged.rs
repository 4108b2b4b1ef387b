//! How `Mode`, `Flush` and `Wait` are read: the same JSON as serde's internally tagged form
//! (`{"kind":"pipelined","batch":1000,"flush":{"policy":"batch"}}`), decoded through one flat
//! struct per enum instead. serde's derive for a tag inside the object buffers the whole
//! object first (its `Content` path), which costs the page's WASM far more code than these.
//! Fields another kind has are ignored, as the derive ignores them, but must still be of the
//! right type.

use serde::Deserialize;
use thiserror::Error;

use crate::spec::{Flush, Mode, Wait};

#[derive(Debug, Error)]
#[error("missing field `{0}`")]
pub(crate) struct MissingField(&'static str);

fn required(value: Option<u32>, field: &'static str) -> Result<u32, MissingField> {
    value.ok_or(MissingField(field))
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ModeKind {
    Sequential,
    Pipelined,
    Multiplexed,
    Transaction,
    Mset,
    Connections,
}

#[derive(Deserialize)]
pub(crate) struct ModeFields {
    kind: ModeKind,
    batch: Option<u32>,
    flush: Option<Flush>,
    in_flight: Option<u32>,
    connections: Option<u32>,
}

impl TryFrom<ModeFields> for Mode {
    type Error = MissingField;

    fn try_from(m: ModeFields) -> Result<Mode, MissingField> {
        Ok(match m.kind {
            ModeKind::Sequential => Mode::Sequential,
            ModeKind::Pipelined => Mode::Pipelined {
                batch: required(m.batch, "batch")?,
                flush: m.flush.unwrap_or_default(),
            },
            ModeKind::Multiplexed => Mode::Multiplexed {
                in_flight: required(m.in_flight, "in_flight")?,
            },
            ModeKind::Transaction => Mode::Transaction {
                batch: required(m.batch, "batch")?,
            },
            ModeKind::Mset => Mode::Mset {
                batch: required(m.batch, "batch")?,
            },
            ModeKind::Connections => Mode::Connections {
                connections: required(m.connections, "connections")?,
            },
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum FlushPolicy {
    Batch,
    EachCommand,
    Buffered,
}

#[derive(Deserialize)]
pub(crate) struct FlushFields {
    policy: FlushPolicy,
    commands: Option<u32>,
}

impl TryFrom<FlushFields> for Flush {
    type Error = MissingField;

    fn try_from(f: FlushFields) -> Result<Flush, MissingField> {
        Ok(match f.policy {
            FlushPolicy::Batch => Flush::Batch,
            FlushPolicy::EachCommand => Flush::EachCommand,
            FlushPolicy::Buffered => Flush::Buffered {
                commands: required(f.commands, "commands")?,
            },
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum WaitKind {
    Sleep,
    BusyPoll,
}

#[derive(Deserialize)]
pub(crate) struct WaitFields {
    kind: WaitKind,
    us: Option<u32>,
}

impl TryFrom<WaitFields> for Wait {
    type Error = MissingField;

    fn try_from(w: WaitFields) -> Result<Wait, MissingField> {
        Ok(match w.kind {
            WaitKind::Sleep => Wait::Sleep,
            WaitKind::BusyPoll => Wait::BusyPoll {
                us: required(w.us, "us")?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value reads back from what serde's internally tagged derive writes.
    #[test]
    fn every_kind_reads_back() {
        let modes = [
            Mode::Sequential,
            Mode::pipelined(1000),
            Mode::Pipelined {
                batch: 10,
                flush: Flush::EachCommand,
            },
            Mode::Pipelined {
                batch: 10,
                flush: Flush::Buffered { commands: 3 },
            },
            Mode::Multiplexed { in_flight: 7 },
            Mode::Transaction { batch: 5 },
            Mode::Mset { batch: 4 },
            Mode::Connections { connections: 8 },
        ];
        for mode in modes {
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(serde_json::from_str::<Mode>(&json).unwrap(), mode, "{json}");
        }
        for wait in [Wait::Sleep, Wait::BusyPoll { us: 2000 }] {
            let json = serde_json::to_string(&wait).unwrap();
            assert_eq!(serde_json::from_str::<Wait>(&json).unwrap(), wait, "{json}");
        }
    }

    #[test]
    fn the_tag_may_come_anywhere_and_a_missing_field_is_named() {
        let mode: Mode = serde_json::from_str(
            r#"{"batch":9,"flush":{"commands":2,"policy":"buffered"},"kind":"pipelined"}"#,
        )
        .unwrap();
        assert_eq!(
            mode,
            Mode::Pipelined {
                batch: 9,
                flush: Flush::Buffered { commands: 2 }
            }
        );
        let e = serde_json::from_str::<Mode>(r#"{"kind":"transaction"}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `batch`"), "{e}");
        let e = serde_json::from_str::<Wait>(r#"{"kind":"busy_poll"}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `us`"), "{e}");
        assert!(serde_json::from_str::<Mode>(r#"{"kind":"warp"}"#).is_err());
        assert!(serde_json::from_str::<Mode>(r#"{"batch":1}"#).is_err());
    }
}
