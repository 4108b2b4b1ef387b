//! An observation through the proxy as one file: its connections worded as the hub words them
//! for a page, their requests, under a line saying where they were observed. `observe --html`
//! and the observe view's "Download as one HTML file" (`server::html_download::observed`)
//! write it the same way.

use shared::Network;
use shared::observe::{ObservedConnection, ObservedTimeline};

use super::{Page, of_observation};

/// What the proxy observed, as the file shows it.
pub struct Observed {
    /// Its connections (redacted already, if they are to be: they are worded here).
    pub conns: Vec<ObservedConnection>,
    /// The requests kept of them.
    pub timelines: Vec<ObservedTimeline>,
    pub redis_version: String,
    /// The Redis the proxy forwarded to, its password removed.
    pub target: String,
    /// The network dialled in between the proxy and Redis.
    pub network: Network,
}

/// The file for `o`, said to be `file` (a name, no directory); it opens on the observe view.
pub fn of_proxy(page: &Page, o: Observed, file: &str) -> String {
    let what = format!(
        "{} connections through the observing proxy in front of Redis {} at {}{}",
        o.conns.len(),
        o.redis_version,
        o.target,
        if o.network.is_loopback() {
            String::new()
        } else {
            format!(", over {}", o.network.label())
        },
    );
    let welcome = shared::ServerMsg::Welcome {
        protocol: shared::PROTOCOL_VERSION,
        server_version: env!("CARGO_PKG_VERSION").to_string(),
        redis_version: o.redis_version,
        target: o.target,
        limits: shared::Limits::DEFAULT,
        network: o.network,
        can_control: false,
        busy: false,
        recent: Vec::new(),
        observing: None,
        // Worded for the page, as the hub words them.
        observed: o.conns.into_iter().map(|c| c.with_words()).collect(),
        replay: None,
    };
    let timelines: Vec<_> = o
        .timelines
        .into_iter()
        .map(shared::ServerMsg::ObservedTimeline)
        .collect();
    let messages: Vec<_> = std::iter::once(&welcome).chain(&timelines).collect();
    of_observation(page, &messages, file, &what)
}
