//! The observer's own cost, measured at start and shown as its own part: the hops between a
//! client and the proxy are not the client's time. Checked against the client's own clock: a
//! raw client that stamps each send and each reply knows its own time between them.

use std::io::Write;
use std::time::Instant;

use shared::observe::{Vantage, parts};

use super::proxy::{cmd, replies, setup};

const SETS: u64 = 300;

#[test]
fn the_observer_s_hops_are_their_own_part_not_the_client_s_time() {
    let s = setup();
    let hop = s
        .observer
        .hop_us()
        .expect("the observer measured its hops at start");
    assert!(hop > 0.0, "a hop pair costs something: {hop} µs");

    // A tight loop: its own time is the gap between a reply read and the next send.
    let mut conn = s.through_proxy();
    let (mut own_us, mut last_reply): (f64, Option<Instant>) = (0.0, None);
    for i in 0..SETS {
        let sent = Instant::now();
        if let Some(r) = last_reply {
            own_us += (sent - r).as_secs_f64() * 1e6;
        }
        conn.write_all(&cmd(&[b"SET", format!("acct:{i}").as_bytes(), b"v"]))
            .unwrap();
        replies(&mut conn, 1);
        last_reply = Some(Instant::now());
    }
    drop(conn);
    let c = s.until(1, "closed with every reply back", |c| {
        !c.open && c.counts.replies == SETS
    });

    assert_eq!(c.counts.round_trips, SETS, "{:?}", c.counts);
    let Vantage::Proxy {
        hop_us: Some(seen_hop),
        remote_redis: false,
        hop_spread: Some(spread),
    } = c.vantage.clone()
    else {
        panic!("seen through the proxy, its hops measured: {:?}", c.vantage)
    };
    assert_eq!(seen_hop, hop, "measured again only after 10 s");
    assert!(
        spread.low_us <= hop && hop <= spread.high_us && spread.pings >= 5,
        "{spread:?}"
    );
    let t = &c.times;
    let idle_at_proxy = t.client_us + t.observer_us;
    let mean_wait = t.waiting_us / c.counts.round_trips as f64;
    if t.observer_uncharged {
        // Hops that vary more than the waits are not taken out, and the parts say why.
        assert!(
            spread.high_us - spread.low_us > mean_wait,
            "{spread:?} {t:?}"
        );
        assert_eq!(t.observer_us, 0.0);
        let p = parts(&c);
        let own = p
            .iter()
            .find(|p| p.label == "the client's own time, the observer's hops in it")
            .unwrap_or_else(|| panic!("{p:?}"));
        assert!(own.how.contains("not taken out"), "{}", own.how);
        eprintln!(
            "FIGURE hops {spread:?} vary more than the mean wait {mean_wait:.1} µs: not charged"
        );
        return;
    }
    assert!(
        spread.high_us - spread.low_us <= mean_wait,
        "{spread:?} {t:?}"
    );
    // Charged per round trip, at most the time nothing was awaited at the proxy.
    let charged = (SETS as f64 * hop).min(idle_at_proxy);
    assert!((t.observer_us - charged).abs() < 1e-6, "{t:?}, hop {hop}");
    // The parts add up to the wall time, and their shares to exactly 100 %.
    let p = parts(&c);
    let sum: f64 = p.iter().map(|p| p.us).sum();
    assert!((sum - t.wall_us).abs() < 1e-3 * t.wall_us, "{p:?} vs {t:?}");
    assert_eq!(p.iter().map(|p| p.percent).sum::<u32>(), 100, "{p:?}");
    assert!(
        p.iter()
            .all(|p| p.how.starts_with("measured") || p.how.starts_with("derived")),
        "{p:?}"
    );
    assert!(
        c.verdict.text.contains("% the observer's two hops"),
        "{}",
        c.verdict.text
    );
    // The client's own clock: taking the hops out brings the proxy's "own time" nearer to
    // what the client itself spent between a reply and its next send.
    eprintln!(
        "FIGURE hop {hop:.1} µs a round trip; client's own time by its clock {own_us:.0} µs; at the proxy, nothing awaited {idle_at_proxy:.0} µs, of which the observer's hops {:.0} µs and the client's own {:.0} µs",
        t.observer_us, t.client_us
    );
    assert!(
        (t.client_us - own_us).abs() < (idle_at_proxy - own_us).abs(),
        "own time {:.0} µs should be nearer the client's {own_us:.0} µs than {idle_at_proxy:.0} µs was",
        t.client_us
    );
    // The CLI's report carries the same figures in its columns.
    let table = pipescope::observe::report::table(std::slice::from_ref(&c));
    let header = table.lines().next().unwrap();
    assert!(
        header.contains("observer") && header.contains("own time"),
        "{table}"
    );
}
