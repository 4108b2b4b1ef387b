use super::*;
use crate::testing::test;

fn span(i: u64, issued_us: f64, replied_us: f64) -> Span {
    Span::new(i, issued_us, replied_us)
}

/// Two pipelined batches of three, replies in chunks.
fn pipelined() -> Vec<Span> {
    vec![
        span(0, 0.0, 10.0),
        span(1, 0.0, 10.0),
        span(2, 0.0, 12.0),
        span(3, 12.5, 20.0),
        span(4, 12.5, 21.0),
        span(5, 12.5, 21.0),
    ]
}

fn trace(mode: Option<Mode>, spans: Vec<Span>) -> Trace {
    Trace {
        run: 1,
        mode,
        network: None,
        count: spans.len() as u64,
        spans,
        sampled: vec![],
        stride: 1,
        summary: None,
        observed: None,
        captured: false,
        running: None,
    }
}

#[test]
fn an_observed_connection_s_round_trips_are_its_overlapping_requests() {
    // Two one-at-a-time requests, then a batch of three awaited together.
    let spans = vec![
        span(0, 0.0, 2.0),
        span(1, 3.0, 5.0),
        span(2, 6.0, 9.0),
        span(3, 6.0, 9.5),
        span(4, 6.5, 10.0),
    ];
    let trips: Vec<(usize, usize)> = overlapping(&spans)
        .iter()
        .map(|t| (t.start, t.end))
        .collect();
    assert_eq!(trips, [(0, 1), (1, 2), (2, 5)]);
    let t = Trace {
        observed: Some("connection 1".into()),
        captured: false,
        running: None,
        ..trace(None, spans)
    };
    assert_eq!(round_trips(&t).map(|t| t.len()), Some(3));
}

/// (start, end) of each trip.
fn ranges(mode: Mode, spans: Vec<Span>) -> Vec<(usize, usize)> {
    round_trips(&trace(Some(mode), spans))
        .unwrap()
        .iter()
        .map(|t| (t.start, t.end))
        .collect()
}

/// `n` requests in batches of `batch`, each written `every` commands at a time, each batch's
/// replies read at its end.
fn written(n: u64, batch: u64, every: u64) -> Vec<Span> {
    (0..n)
        .map(|i| {
            let (b, k) = (i / batch, i % batch);
            let issued = b as f64 * 100.0 + (k / every) as f64;
            span(i, issued, b as f64 * 100.0 + 50.0 + k as f64 * 0.1)
        })
        .collect()
}

#[test]
fn sequential_pays_a_round_trip_per_request() {
    let seq = (0..4).map(|i| span(i, i as f64 * 10.0, i as f64 * 10.0 + 5.0));
    assert_eq!(
        ranges(Mode::Sequential, seq.collect()),
        [(0, 1), (1, 2), (2, 3), (3, 4)]
    );
}

#[test]
fn a_pipeline_pays_one_round_trip_per_batch_however_it_was_written() {
    use shared::Flush;
    let expected = [(0, 4), (4, 8), (8, 10)];
    for (flush, every) in [
        (Flush::Batch, 4),
        (Flush::EachCommand, 1),
        (Flush::Buffered { commands: 2 }, 2),
    ] {
        let mode = Mode::Pipelined { batch: 4, flush };
        assert_eq!(ranges(mode, written(10, 4, every)), expected, "{flush:?}");
    }
    // Grouping by issue time would have counted every flushed write as a round trip.
    let each = Mode::Pipelined {
        batch: 4,
        flush: Flush::EachCommand,
    };
    let trips = round_trips(&trace(Some(each), written(10, 4, 1))).unwrap();
    assert_eq!(trips.len(), 3);
    assert_eq!(
        (trips[1].issued_us, trips[1].last_reply_us),
        (100.0, 150.3),
        "a trip runs from its first write to its last reply"
    );
}

#[test]
fn transactions_and_msets_pay_one_round_trip_per_batch() {
    for mode in [Mode::Transaction { batch: 3 }, Mode::Mset { batch: 3 }] {
        assert_eq!(
            ranges(mode, written(7, 3, 3)),
            [(0, 3), (3, 6), (6, 7)],
            "{mode:?}"
        );
    }
}

#[test]
fn a_multiplexed_run_pays_one_round_trip_per_read_that_brought_replies() {
    // Four written together; their replies read as 1, then 2, then 1.
    let spans = vec![
        span(0, 0.0, 5.0),
        span(1, 0.0, 7.0),
        span(2, 0.0, 7.0),
        span(3, 0.0, 9.0),
    ];
    let mode = Mode::Multiplexed { in_flight: 4 };
    assert_eq!(ranges(mode, spans), [(0, 1), (1, 3), (3, 4)]);
    assert_eq!(trip_noun(Some(mode)), "read");
    assert_eq!(trip_noun(Some(Mode::Sequential)), "round trip");
}

#[test]
fn a_pool_s_counters_count_requests_in_any_order_of_time() {
    // Two connections: connection 1 (odd i) runs ahead of connection 0.
    let spans = vec![
        span(0, 0.0, 10.0),
        span(1, 0.0, 2.0),
        span(2, 10.0, 20.0),
        span(3, 2.0, 4.0),
        span(4, 20.0, 30.0),
        span(5, 4.0, 6.0),
    ];
    let mode = Mode::Connections { connections: 2 };
    let t = trace(Some(mode), spans.clone());
    let trips = round_trips(&t).unwrap();
    let c = counters(&spans, Some(&trips), 5.0);
    assert_eq!((c.sent, c.received, c.round_trips), (4, 2, Some(2)));
}

#[test]
fn without_the_mode_no_round_trips_are_counted() {
    let t = trace(None, written(8, 4, 4));
    assert_eq!(round_trips(&t), None);
    assert_eq!(counters(&t.spans, None, 1e9).round_trips, None);
}

#[test]
fn counters_tick_with_the_position() {
    let s = pipelined();
    let t = round_trips(&trace(Some(Mode::pipelined(3)), s.clone())).unwrap();
    let at = |pos| counters(&s, Some(&t), pos);
    let c = |sent, received, trips| Counters {
        sent,
        received,
        round_trips: Some(trips),
        within: None,
    };
    assert_eq!(at(-1.0), c(0, 0, 0));
    assert_eq!(at(0.0), c(3, 0, 0));
    assert_eq!(at(11.0), c(3, 2, 0));
    assert_eq!(at(12.5), c(6, 3, 1));
    assert_eq!(at(100.0), c(6, 6, 2));
}

#[test]
fn counters_past_the_requests_drawn_in_full_count_the_whole_run_from_the_sample() {
    // 100 sequential requests, 10 µs apart; the first 10 drawn, then every 8th.
    let all: Vec<Span> = (0..100)
        .map(|i| span(i, i as f64 * 10.0, i as f64 * 10.0 + 5.0))
        .collect();
    let mut t = trace(Some(Mode::Sequential), all[..10].to_vec());
    t.count = 100;
    t.stride = 8;
    t.sampled = all.iter().filter(|s| s.i % 8 == 0).copied().collect();
    let trips = round_trips(&t).unwrap();
    for position in [3.0, 95.0, 162.0, 500.0, 777.0, 991.0] {
        let c = run_counters(&t, Some(&trips), position);
        let truth = counters(
            &all,
            Some(&round_trips(&trace(Some(Mode::Sequential), all.clone())).unwrap()),
            position,
        );
        let near = |got: usize, want: usize| got <= want && want - got < 8;
        assert!(
            near(c.sent, truth.sent),
            "at {position}: {c:?} against {truth:?}"
        );
        assert!(
            near(c.received, truth.received),
            "at {position}: {c:?} against {truth:?}"
        );
        assert_eq!(
            c.round_trips,
            Some(c.received),
            "sequential: a round trip a reply"
        );
        assert_eq!(c.within.is_some(), position >= 160.0, "at {position}");
    }
    // A pipeline of batches of 4: a round trip per 4 replies beyond the first requests too.
    let piped: Vec<Span> = (0..100)
        .map(|i| span(i, (i / 4) as f64 * 10.0, (i / 4) as f64 * 10.0 + 5.0))
        .collect();
    let mut p = trace(Some(Mode::pipelined(4)), piped[..12].to_vec());
    p.count = 100;
    p.stride = 8;
    p.sampled = piped.iter().filter(|s| s.i % 8 == 0).copied().collect();
    let trips = round_trips(&p).unwrap();
    let c = run_counters(&p, Some(&trips), 126.0);
    assert_eq!((c.sent, c.received, c.round_trips), (49, 49, Some(3 + 9)));
}

#[test]
fn steps_land_on_events_of_either_run() {
    let p = pipelined();
    let q = [span(0, 0.0, 7.0), span(1, 7.0, 15.0)];
    let e = events([&p[..], &q[..]]);
    assert_eq!(e, [0.0, 7.0, 10.0, 12.0, 12.5, 15.0, 20.0, 21.0]);
    assert_eq!(step_forward(&e, 0.0), 7.0);
    assert_eq!(step_forward(&e, 8.0), 10.0);
    assert_eq!(step_forward(&e, 21.0), 21.0);
    assert_eq!(step_back(&e, 10.0), 7.0);
    assert_eq!(step_back(&e, 0.0), 0.0);
    assert_eq!(step_back(&e, 100.0), 21.0);
}

#[test]
fn the_server_is_reached_at_the_midpoint_unless_measured() {
    assert_eq!(at_server_us(&span(0, 10.0, 30.0)), 20.0);
    assert_eq!(from_server_us(&span(0, 10.0, 30.0)), 20.0);
    let tapped = Span {
        at_server_us: Some(12.0),
        from_server_us: Some(25.0),
        ..span(0, 10.0, 30.0)
    };
    assert_eq!(at_server_us(&tapped), 12.0);
    assert_eq!(from_server_us(&tapped), 25.0);
    // Stamps outside the round trip (clock noise) are kept inside it, in order.
    let odd = Span {
        at_server_us: Some(5.0),
        from_server_us: Some(40.0),
        ..span(0, 10.0, 30.0)
    };
    assert_eq!((at_server_us(&odd), from_server_us(&odd)), (10.0, 30.0));
    let mut t = trace(None, vec![tapped, span(1, 30.0, 50.0)]);
    assert!(t.measured_at_server());
    assert_eq!(
        t.unstamped(),
        1,
        "the second request is drawn at its midpoint"
    );
    t.spans.truncate(1);
    assert_eq!(t.unstamped(), 0);
    assert_eq!(
        trace(None, vec![span(0, 0.0, 1.0)]).unstamped(),
        0,
        "no tap at all"
    );
}

#[test]
fn a_cluster_run_gets_a_redis_lane_per_master() {
    let on = |i, node| Span {
        node: Some(node),
        ..span(i, i as f64, i as f64 + 5.0)
    };
    let mut t = trace(Some(Mode::pipelined(3)), vec![on(0, 1), on(1, 0), on(2, 1)]);
    assert!(t.on_cluster());
    // While it runs: as many lanes as its spans name, named by number.
    assert_eq!(t.redis_lanes(), 2);
    assert_eq!(t.master_label(1), "master 2");
    // Finished: every master the engine listed, by address.
    let share = |addr: &str| shared::MasterShare {
        addr: addr.to_string(),
        commands: 1,
        round_trips: 1,
    };
    t.summary = Some(RunSummary {
        spec: shared::RunSpec::set(3, Mode::pipelined(3)),
        done: 3,
        wall_us: 8,
        ops_per_sec: 0.0,
        round_trips: 2,
        writes: 2,
        wire_commands: 3,
        latency: shared::Latency::default(),
        split: None,
        redis_usec_per_call: None,
        redis_load: None,
        interleaving: None,
        redis_memory: None,
        cluster: Some(shared::ClusterRun {
            masters: vec![
                share("127.0.0.1:7001"),
                share("127.0.0.1:7002"),
                share("127.0.0.1:7003"),
            ],
            ..Default::default()
        }),
    });
    assert_eq!(t.redis_lanes(), 3);
    assert_eq!(t.master_label(2), "127.0.0.1:7003");
    let single = trace(Some(Mode::pipelined(3)), pipelined());
    assert!(!single.on_cluster());
    assert_eq!(single.redis_lanes(), 1);
}

#[test]
fn the_sample_beyond_the_first_requests_extends_the_picture() {
    let first: Vec<Span> = (0..4)
        .map(|i| Span::new(i, i as f64, i as f64 + 1.0))
        .collect();
    let sampled: Vec<Span> = (0..5)
        .map(|k| Span::new(k * 2, k as f64 * 2.0, k as f64 * 2.0 + 1.0))
        .collect();
    let t = Trace {
        run: 1,
        mode: Some(Mode::Sequential),
        network: None,
        spans: first,
        sampled,
        stride: 2,
        count: 10,
        summary: None,
        observed: None,
        captured: false,
        running: None,
    };
    let beyond: Vec<u64> = t.sampled_beyond().iter().map(|s| s.i).collect();
    assert_eq!(beyond, [4, 6, 8]);
    assert_eq!(t.extent_us(), 9.0);
    assert_eq!(
        drawn_note(&t).as_deref(),
        Some("first 4 of 10 requests drawn, then every 2nd (sampled, lighter)")
    );
    let whole = Trace {
        count: 4,
        ..t.clone()
    };
    assert_eq!(drawn_note(&whole), None);
    let running = Trace {
        sampled: vec![],
        ..t
    };
    assert_eq!(
        drawn_note(&running).as_deref(),
        Some("first 4 of 10 requests drawn")
    );
    assert_eq!(
        [1, 2, 3, 4, 11, 12, 13, 21, 32, 64, 1024].map(ordinal),
        [
            "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "32nd", "64th", "1024th"
        ]
    );
}
