//! pipescope's page: Leptos (client-side rendered) in WASM. The websocket feeds signals
//! (`connection`), a pure reducer folds server messages into the page's state (`state`), and
//! the components under `components/` render it.

pub mod app;
pub mod components;
pub mod connection;
pub mod export;
pub mod format;
pub mod inputs;
pub mod keyboard;
pub mod look;
pub mod paint;
pub mod playback;
pub mod rtt_model;
pub mod state;
pub mod sweep;
pub mod timeaxis;
pub mod tour;
pub mod trace;
pub mod url_state;

pub use app::App;
