use super::*;
use crate::keys::KeyLayout;

fn spec(count: u64, mode: Mode) -> RunSpec {
    RunSpec::set(count, mode)
}

#[test]
fn kinds_list_every_mode_once() {
    let modes = [
        Mode::Sequential,
        Mode::pipelined(2),
        Mode::Multiplexed { in_flight: 2 },
        Mode::Transaction { batch: 2 },
        Mode::Mset { batch: 2 },
        Mode::Connections { connections: 2 },
    ];
    let kinds: Vec<&str> = modes.iter().map(|m| m.kind()).collect();
    assert_eq!(kinds, Mode::KINDS);
}

#[test]
fn predicates_name_their_variant() {
    let modes = [
        Mode::Sequential,
        Mode::pipelined(2),
        Mode::Pipelined {
            batch: 2,
            flush: Flush::EachCommand,
        },
        Mode::Multiplexed { in_flight: 2 },
        Mode::Transaction { batch: 2 },
        Mode::Mset { batch: 2 },
    ];
    for m in modes {
        assert_eq!(m.is_sequential(), m.kind() == "sequential", "{m:?}");
        assert_eq!(m.is_pipelined(), m.kind() == "pipelined", "{m:?}");
    }
}

#[test]
fn accepts_the_bounds() {
    let l = Limits::DEFAULT;
    assert!(spec(1, Mode::Sequential).validate(&l).is_ok());
    assert!(
        spec(l.max_count, Mode::pipelined(l.max_batch))
            .validate(&l)
            .is_ok()
    );
    for mode in [
        Mode::Multiplexed { in_flight: 50 },
        Mode::Transaction { batch: 100 },
        Mode::Mset { batch: 100 },
        Mode::Pipelined {
            batch: 100,
            flush: Flush::Buffered { commands: 100 },
        },
    ] {
        assert_eq!(spec(1000, mode).validate(&l), Ok(()), "{mode:?}");
    }
}

#[test]
fn refuses_out_of_range_count_and_batch() {
    let l = Limits::DEFAULT;
    assert_eq!(
        spec(0, Mode::Sequential).validate(&l),
        Err(SpecError::Count {
            got: 0,
            max: l.max_count
        })
    );
    assert!(matches!(
        spec(l.max_count + 1, Mode::Sequential).validate(&l),
        Err(SpecError::Count { .. })
    ));
    assert!(matches!(
        spec(10, Mode::pipelined(0)).validate(&l),
        Err(SpecError::Batch { got: 0, .. })
    ));
    assert!(matches!(
        spec(10, Mode::pipelined(l.max_batch + 1)).validate(&l),
        Err(SpecError::Batch { .. })
    ));
    assert!(matches!(
        spec(10, Mode::Multiplexed { in_flight: 0 }).validate(&l),
        Err(SpecError::Batch {
            what: "in-flight requests",
            ..
        })
    ));
    assert!(matches!(
        spec(
            10,
            Mode::Pipelined {
                batch: 10,
                flush: Flush::Buffered { commands: 11 }
            }
        )
        .validate(&l),
        Err(SpecError::Buffered { .. })
    ));
}

#[test]
fn refuses_bad_values_and_networks() {
    let l = Limits::DEFAULT;
    let base = spec(1000, Mode::pipelined(100));
    let with = |f: &dyn Fn(&mut RunSpec)| {
        let mut s = base;
        f(&mut s);
        s.validate(&l)
    };
    assert!(matches!(
        with(&|s| s.value_bytes = Some(0)),
        Err(SpecError::ValueBytes { .. })
    ));
    assert!(matches!(
        with(&|s| s.value_bytes = Some(l.max_value_bytes + 1)),
        Err(SpecError::ValueBytes { .. })
    ));
    assert!(matches!(
        with(&|s| {
            s.count = 10_000_000;
            s.value_bytes = Some(1024)
        }),
        Err(SpecError::TotalBytes { .. })
    ));
    assert!(matches!(
        with(&|s| s.network.delay_back_us = l.max_delay_us + 1),
        Err(SpecError::Delay {
            what: "one-way delay back",
            ..
        })
    ));
    assert!(matches!(
        with(&|s| s.network.bandwidth = Some(10)),
        Err(SpecError::Bandwidth { .. })
    ));
    assert!(matches!(
        with(&|s| {
            s.command = Command::Incr;
            s.mode = Mode::Mset { batch: 10 }
        }),
        Err(SpecError::NoMultiKey { command: "INCR" })
    ));
    // 1,000,000 sequential round trips of 30 ms each way: 16 hours.
    assert!(matches!(
        with(&|s| {
            s.count = 1_000_000;
            s.mode = Mode::Sequential;
            s.network = Network::symmetric(30_000)
        }),
        Err(SpecError::TooSlow { .. })
    ));
    assert_eq!(
        with(&|s| s.network = Network::symmetric(30_000)),
        Ok(()),
        "10 round trips of 60 ms are fine"
    );
}

#[test]
fn refuses_empty_or_oversized_run_lists() {
    let l = Limits::DEFAULT;
    assert!(validate_runs(&[], &l).is_err());
    let many = vec![spec(1, Mode::Sequential); l.max_runs + 1];
    assert!(matches!(
        validate_runs(&many, &l),
        Err(SpecError::Runs { .. })
    ));
    assert!(validate_runs(&RunSpec::comparison(100, 10), &l).is_ok());
}

#[test]
fn round_trips_and_writes_follow_the_mode() {
    assert_eq!(Mode::Sequential.round_trips(100_000), 100_000);
    assert_eq!(Mode::pipelined(1000).round_trips(100_000), 100);
    assert_eq!(Mode::pipelined(1000).round_trips(100_001), 101);
    assert_eq!(Mode::pipelined(1000).writes(100_001), Some(101));
    let each = Mode::Pipelined {
        batch: 1000,
        flush: Flush::EachCommand,
    };
    assert_eq!(each.writes(100_001), Some(100_001));
    let buffered = Mode::Pipelined {
        batch: 1000,
        flush: Flush::Buffered { commands: 300 },
    };
    // Each full batch: 300+300+300+100 → 4 writes; the last 1 command: 1 write.
    assert_eq!(buffered.writes(2_001), Some(2 * 4 + 1));
    assert_eq!(Mode::Multiplexed { in_flight: 8 }.writes(100), None);
    assert_eq!(Mode::Transaction { batch: 10 }.writes(95), Some(10));
}

#[test]
fn busy_poll_is_bounded_and_sleeping_is_the_default() {
    let l = Limits::DEFAULT;
    let with = |wait| {
        RunSpec {
            wait,
            ..spec(10, Mode::Sequential)
        }
        .validate(&l)
    };
    assert_eq!(with(Wait::Sleep), Ok(()));
    assert_eq!(with(Wait::BusyPoll { us: 1 }), Ok(()));
    assert_eq!(
        with(Wait::BusyPoll {
            us: Wait::MAX_BUSY_POLL_US
        }),
        Ok(())
    );
    for us in [0, Wait::MAX_BUSY_POLL_US + 1] {
        let err = with(Wait::BusyPoll { us }).unwrap_err();
        assert!(err.to_string().starts_with("busy-poll must be"), "{err}");
    }
    // A spec without the field (an older page, a hand-written request) sleeps.
    let parsed: RunSpec =
        serde_json::from_str(r#"{"count":5,"mode":{"kind":"sequential"}}"#).unwrap();
    assert_eq!(parsed.wait, Wait::Sleep);
    let json = serde_json::to_string(&Wait::BusyPoll { us: 2000 }).unwrap();
    assert_eq!(json, r#"{"kind":"busy_poll","us":2000}"#);
}

#[test]
fn connections_are_bounded_and_share_the_requests_round_robin() {
    let l = Limits::DEFAULT;
    let with = |connections| spec(1000, Mode::Connections { connections }).validate(&l);
    assert_eq!(with(1), Ok(()));
    assert_eq!(with(Mode::MAX_CONNECTIONS), Ok(()));
    for got in [0, Mode::MAX_CONNECTIONS + 1] {
        let err = with(got).unwrap_err();
        assert_eq!(
            err,
            SpecError::Connections {
                got,
                max: Mode::MAX_CONNECTIONS
            }
        );
        assert!(
            err.to_string()
                .starts_with("connections must be between 1 and 256")
        );
    }
    let pool = Mode::Connections { connections: 8 };
    assert_eq!(pool.connections(), 8);
    assert_eq!(Mode::pipelined(1000).connections(), 1);
    let on: Vec<u32> = (0..10).map(|i| pool.connection_of(i)).collect();
    assert_eq!(on, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
    // One round trip per command, eight of them at a time.
    assert_eq!(pool.round_trips(1_000_000), 1_000_000);
    assert_eq!(pool.round_trips_in_series(1_000_000), 125_000);
    assert_eq!(pool.writes(1_000), Some(1_000));
    assert_eq!(pool.label(), "sequential on 8 connections");
    // The delay limit counts the round trips the run waits for one after another: 100,000
    // commands at 60 ms a round trip are 100 minutes on one connection, 12.5 on eight.
    let far = |mode| {
        spec(100_000, mode)
            .with_network(Network::symmetric(30_000))
            .validate(&l)
    };
    assert!(matches!(
        far(Mode::Sequential),
        Err(SpecError::TooSlow { .. })
    ));
    assert_eq!(far(pool), Ok(()));
}

#[test]
fn a_connections_spec_round_trips_through_json() {
    let s = spec(1_000_000, Mode::Connections { connections: 8 });
    let json = serde_json::to_string(&s).unwrap();
    assert!(
        json.contains(r#""mode":{"kind":"connections","connections":8}"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<RunSpec>(&json).unwrap(), s);
}

#[test]
fn the_other_client_needs_incr_and_a_pipeline_or_transaction() {
    let l = Limits::DEFAULT;
    for mode in [Mode::pipelined(100), Mode::Transaction { batch: 100 }] {
        assert_eq!(RunSpec::with_other_client(1000, mode).validate(&l), Ok(()));
    }
    for mode in [
        Mode::Sequential,
        Mode::Multiplexed { in_flight: 8 },
        Mode::Mset { batch: 100 },
    ] {
        let err = RunSpec::with_other_client(1000, mode)
            .validate(&l)
            .unwrap_err();
        assert!(matches!(err, SpecError::OtherClient { .. }), "{mode:?}");
    }
    let set = RunSpec {
        command: Command::Set,
        ..RunSpec::with_other_client(1000, Mode::pipelined(100))
    };
    assert_eq!(
        set.validate(&l),
        Err(SpecError::OtherClient {
            command: "SET",
            mode: "pipelined"
        })
    );
}

#[test]
fn the_other_client_is_off_unless_asked_and_round_trips() {
    // Absent (an older page), it is off, and off it is not written at all.
    let parsed: RunSpec =
        serde_json::from_str(r#"{"count":5,"mode":{"kind":"sequential"}}"#).unwrap();
    assert!(!parsed.other_client);
    let plain = serde_json::to_string(&RunSpec::set(5, Mode::Sequential)).unwrap();
    assert!(!plain.contains("other_client"), "{plain}");
    let on = RunSpec::with_other_client(5, Mode::Transaction { batch: 5 });
    let json = serde_json::to_string(&on).unwrap();
    assert!(json.contains(r#""other_client":true"#), "{json}");
    assert_eq!(serde_json::from_str::<RunSpec>(&json).unwrap(), on);
}

#[test]
fn commands_parse_by_name() {
    assert_eq!(Command::parse("get"), Some(Command::Get));
    assert_eq!(Command::parse("INCR"), Some(Command::Incr));
    assert_eq!(Command::parse("DEL"), None);
}

#[test]
fn the_key_layout_is_spread_unless_asked_and_round_trips() {
    let parsed: RunSpec =
        serde_json::from_str(r#"{"count":5,"mode":{"kind":"sequential"}}"#).unwrap();
    assert_eq!(parsed.keys, KeyLayout::Spread);
    let plain = serde_json::to_string(&RunSpec::set(5, Mode::Sequential)).unwrap();
    assert!(!plain.contains("keys"), "{plain}");
    let tagged = RunSpec {
        keys: KeyLayout::OneTag,
        ..RunSpec::set(5, Mode::pipelined(5))
    };
    let json = serde_json::to_string(&tagged).unwrap();
    assert!(json.contains(r#""keys":"one-tag""#), "{json}");
    assert!(serde_json::from_str::<KeyLayout>(r#""tagged""#).is_err());
    assert_eq!(serde_json::from_str::<RunSpec>(&json).unwrap(), tagged);
    assert_eq!(tagged.validate(&Limits::DEFAULT), Ok(()));
}

#[test]
fn a_cluster_refuses_multi_key_modes_over_spread_keys_and_names_the_fix() {
    for (mode, command, what) in [
        (Mode::Transaction { batch: 10 }, Command::Set, "MULTI/EXEC"),
        (Mode::Mset { batch: 10 }, Command::Set, "MSET"),
        (Mode::Mset { batch: 10 }, Command::Get, "MGET"),
    ] {
        let spread = RunSpec {
            command,
            ..RunSpec::set(100, mode)
        };
        let err = spread.validate_on_cluster().unwrap_err();
        assert_eq!(err, SpecError::OneSlot { what });
        assert!(err.to_string().contains("one hash tag {run}"), "{err}");
        let tagged = RunSpec {
            keys: KeyLayout::OneTag,
            ..spread
        };
        assert_eq!(tagged.validate_on_cluster(), Ok(()));
    }
    // The other client's one counter is one slot whatever the layout.
    let other = RunSpec::with_other_client(100, Mode::Transaction { batch: 10 });
    assert_eq!(other.validate_on_cluster(), Ok(()));
    for mode in [
        Mode::Sequential,
        Mode::pipelined(10),
        Mode::Multiplexed { in_flight: 4 },
    ] {
        assert_eq!(RunSpec::set(100, mode).validate_on_cluster(), Ok(()));
    }
}

#[test]
fn a_batch_larger_than_the_count_is_refused_in_one_sentence() {
    let limits = Limits::default();
    for mode in [
        Mode::pipelined(100),
        Mode::Transaction { batch: 100 },
        Mode::Mset { batch: 100 },
    ] {
        let err = RunSpec::set(10, mode).validate(&limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a batch of 100 needs at least 100 commands (one whole batch), got 10: raise the count or lower the batch"
        );
    }
    assert!(
        RunSpec::set(100, Mode::pipelined(100))
            .validate(&limits)
            .is_ok()
    );
    assert!(
        RunSpec::set(10, Mode::Multiplexed { in_flight: 100 })
            .validate(&limits)
            .is_ok()
    );
}
