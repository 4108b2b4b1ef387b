//! The real backend's websocket: streaming, rejections and a room of viewers under load, over
//! a real socket and over in-memory channels.

#[path = "../support/mod.rs"]
mod support;

mod soak;
mod ws;
mod ws_channels;
