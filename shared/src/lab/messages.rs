//! The lab's messages on `/lab/ws`. A page joins with the join link's code and a key of its
//! own (kept across reloads, so a reload is the same participant); the server answers every
//! request, refuses in a sentence (the connection stays), and sends each page its own view of
//! the lab whenever it changes, at most a few times a second. A presenter action carries the
//! presenter's token and is checked by the server each time, whatever the page.

use serde::{Deserialize, Serialize};

use super::Ceilings;
use crate::{RunSpec, RunSummary};

/// Page → server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LabClientMsg {
    /// Join the room: `code` from the join link, `key` the page's own (a reload keeps it).
    Join { code: String, key: String },
    /// A nickname of one's own instead of the one generated.
    Rename { nickname: String },
    /// Queue one run on the lane.
    Run { spec: RunSpec },
    /// Take back the run waiting.
    Withdraw,
    /// A presenter action, with the presenter's token.
    Presenter {
        token: String,
        action: PresenterAction,
    },
}

/// What only the presenter may do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PresenterAction {
    /// Follow the room as the presenter (the room's list, the queue, the join code).
    Watch,
    /// The presenter's own runs (a comparison, a sweep): ahead of the room's on the lane,
    /// not held to the ceilings.
    Run {
        runs: Vec<RunSpec>,
    },
    Pause {
        paused: bool,
    },
    /// Show the room's chart to the participants.
    Reveal {
        revealed: bool,
    },
    ClearResults,
    SetCeilings {
        ceilings: Ceilings,
    },
    /// Remove a participant (they may rejoin) or ban them (until the join link changes).
    Remove {
        id: u64,
        ban: bool,
    },
    /// Let nobody new join (those in stay).
    Lock {
        locked: bool,
    },
    /// A new join link: the old one stops working and the room starts anew.
    RotateLink,
    /// Close the lab: nothing more is queued or joined.
    Close,
}

/// Server → page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LabServerMsg {
    /// The room as everyone sees it, whenever it changes (the same frame for every page).
    Room(LabView),
    /// This page's participant, whenever their state changes.
    You(Box<LabYou>),
    /// The room as the presenter sees it (to a page that sent `PresenterAction::Watch`).
    Presenter(PresenterView),
    /// A request not taken, and why, in words the participant can act on.
    Refused { reason: String },
    /// This page is out of the room (removed, banned, the link changed, the lab closed, idle
    /// too long); it may still watch the lane.
    Left { reason: String },
}

/// The room as everyone sees it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LabView {
    pub ceilings: Ceilings,
    pub paused: bool,
    pub locked: bool,
    pub revealed: bool,
    pub closed: bool,
    /// Participants in the room.
    pub participants: usize,
    /// Runs waiting for the lane.
    pub waiting: usize,
    /// Whose run is on the lane now ("presenter", or a nickname).
    pub on_lane: Option<String>,
    /// The room's finished runs, once the presenter reveals them (empty before).
    pub results: Vec<LabPoint>,
}

/// A participant's own state.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LabYou {
    pub id: u64,
    pub nickname: String,
    /// Their run waiting: its place (1 is next), how long it has waited and the estimated
    /// wait still to come, ms.
    pub waiting: Option<LabWaiting>,
    /// Their run is on the lane now: its run id (its events stream on `/ws`).
    pub running: Option<u64>,
    /// What became of their latest run: finished (its summary) or not, in words.
    pub last: Option<LabOutcome>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabWaiting {
    pub place: usize,
    pub queued_ms: u64,
    pub estimate_ms: u64,
}

/// A participant's latest run: measured (its time queued kept apart from the time measured),
/// or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabOutcome {
    pub spec: RunSpec,
    pub run: Option<u64>,
    pub queued_ms: u64,
    pub summary: Option<RunSummary>,
    /// Why it did not finish (dropped after waiting too long, cancelled at the time limit,
    /// failed), in words.
    pub note: Option<String>,
}

/// One finished run of the room: a point of the room's chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabPoint {
    /// `None` for the presenter's (the chart's reference line).
    pub participant: Option<u64>,
    pub nickname: String,
    pub summary: RunSummary,
}

/// What the presenter sees of the room.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PresenterView {
    pub join_code: String,
    /// The join link at each address the room may reach the server on (the first is drawn
    /// as a QR code at `/lab/qr.svg`).
    pub join_urls: Vec<String>,
    pub participants: Vec<LabParticipant>,
    /// The queue in order.
    pub queue: Vec<LabQueued>,
    /// The room's finished runs, revealed or not.
    pub results: Vec<LabPoint>,
}

/// A run waiting, as the presenter sees it: whose, and its place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabQueued {
    pub who: String,
    pub waiting: LabWaiting,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabParticipant {
    pub id: u64,
    pub nickname: String,
}

impl LabClientMsg {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a lab message serialises")
    }
}

impl LabServerMsg {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a lab message serialises")
    }
}
