//! `pipescope observe`: the observing proxy with real clients and at its bounds (a slow
//! reader behind a dialled delay included), observation from a capture file or a live
//! capture, and whether a client waited, checked against its own syscalls (a proxy made
//! late to read included).

#[path = "../support/mod.rs"]
mod support;

mod accounting;
mod binary;
mod both_vantages;
mod capture;
mod capture_interrupt;
mod capture_upload;
mod clients;
mod discovery;
mod forwarding;
mod idle;
mod libraries;
mod libraries_probed;
mod libraries_vantages;
mod limits;
mod live_capture;
mod matrix;
mod network;
mod not_what_they_seem;
mod phases;
mod pid_filter;
mod probe;
mod protocol_states;
mod proxy;
mod read_late;
mod robustness;
mod slow_reader;
mod syscalls;
mod three_vantages;
mod waits;
mod window;
