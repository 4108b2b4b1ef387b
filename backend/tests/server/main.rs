//! The real backend's websocket: streaming, rejections and a room of viewers under load, over
//! a real socket and over in-memory channels; and the lab's (`lab`).

#[path = "../support/mod.rs"]
mod support;

mod lab;
mod soak;
mod ws;
mod ws_channels;
