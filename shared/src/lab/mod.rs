//! The lab (`serve --lab`): what its pages and the server say to each other on `/lab/ws`,
//! and what a participant's run may be.
//!
//! - `ceilings`: the presenter's limits on a participant's run, checked by the server.
//! - `messages`: the lab's messages, both ways. The lane's runs themselves stream on `/ws`
//!   as every run does; `/lab/ws` says whose they are, who waits, and the room's results.

pub mod ceilings;
pub mod messages;

pub use ceilings::Ceilings;
pub use messages::{
    LabClientMsg, LabOutcome, LabParticipant, LabPoint, LabQueued, LabServerMsg, LabView,
    LabWaiting, LabYou, PresenterAction, PresenterView,
};
