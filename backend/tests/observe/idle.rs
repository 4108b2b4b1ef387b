//! An observer with nothing to observe leaves the user's Redis alone: it measures its own
//! hops (PINGs through a proxy like its own) once at start, and again only while a connection
//! is open, so an idle observer shows up in nobody's monitoring. Redis's own INFO
//! commandstats is the oracle.

use crate::support;

use std::time::Duration;

use support::commandstats::Counted;
use support::observe::Observe;

/// Redis's counters, read on `con` (one connection for every reading: a new one's handshake
/// would count too).
fn counted(con: &mut redis::Connection) -> Counted {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .arg("commandstats")
        .query(con)
        .unwrap();
    Counted::parse(&info)
}

#[test]
fn an_idle_observer_sends_nothing_to_redis() {
    let (redis, _) = support::redis();
    let url = redis.url();
    let mut observe = Observe::start(&url, &["--json", "--no-equivalent"]);
    let mut con = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    // Its start-up measurement is done once it listens.
    let before = counted(&mut con);
    // Past a re-measurement's moment, with nothing connected.
    std::thread::sleep(Duration::from_secs(shared::observe::HOP_REMEASURE_SECS + 3));
    let after = counted(&mut con);
    let conns = observe.report(Duration::from_secs(30));
    assert!(conns.is_empty(), "{conns:#?}");
    // Nothing but our own INFO reached Redis meanwhile (`received_since` leaves it out).
    assert_eq!(
        (after.since(&before, "ping"), after.received_since(&before)),
        (0, 0),
        "an idle observer sent commands to Redis"
    );
}
