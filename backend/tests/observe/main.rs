//! `pipescope observe`: the observing proxy with real clients and at its bounds, and
//! observation from a capture file or a live capture.

#[path = "../support/mod.rs"]
mod support;

mod binary;
mod capture;
mod clients;
mod limits;
mod live_capture;
mod protocol_states;
mod proxy;
mod robustness;
mod waits;
