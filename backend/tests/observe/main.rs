//! `pipescope observe`: the observing proxy with real clients and at its bounds (a slow
//! reader behind a dialled delay included), and observation from a capture file.

#[path = "../support/mod.rs"]
mod support;

mod binary;
mod capture;
mod clients;
mod limits;
mod protocol_states;
mod proxy;
mod robustness;
mod slow_reader;
