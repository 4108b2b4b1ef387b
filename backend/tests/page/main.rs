//! The real page in headless Chromium against the real backend and real redis-servers (one
//! node or a cluster): every view, its figures against the engine's, its size and its fit.

#[path = "../support/mod.rs"]
mod support;

mod atomicity;
mod cluster;
mod cluster_modes;
mod compare;
mod connections;
mod controls;
mod html_file;
mod html_observed;
mod live;
mod load;
mod observe;
mod observe_capture;
mod observe_probe;
mod observe_texts;
mod observe_what_if;
mod presenter;
mod results_table;
mod round_trips;
mod rtt;
mod sweep_cost;
mod teaching;
mod tls;
mod tour;
