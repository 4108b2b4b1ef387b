//! What leaves the page as a file and what comes back as one: the runs exported
//! (`export_bar`), a session saved, downloaded as one HTML file or opened again
//! (`recording_bar`), and the banner that says the stage shows a recording (`replay_banner`).
//! Three files hold no component: `upload`, the file an input or a drop gives, sent to the
//! server, for both file openers (the recording's here, the capture's in `observe`);
//! `download`, a file offered to save; `clipboard`, text copied; for every view's buttons.

pub mod clipboard;
pub mod download;
pub mod export_bar;
pub mod recording_bar;
pub mod replay_banner;
pub mod upload;

pub use export_bar::ExportBar;
pub use recording_bar::RecordingBar;
pub use replay_banner::ReplayBanner;
