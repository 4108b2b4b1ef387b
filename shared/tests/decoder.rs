//! The message decoder and `validate` against generated input: they answer every input with a
//! value or an error, never a panic. The suite runs a few thousand cases; for the full fuzz run:
//! `PIPESCOPE_FUZZ_CASES=1000000 cargo test --release -p pipescope-shared --test decoder`.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use shared::{ClientMsg, Command, Flush, Limits, Mode, Network, RunSpec, Wait, validate_runs};

fn cases() -> u32 {
    std::env::var("PIPESCOPE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
}

/// JSON values built from the protocol's own words, so the decoder gets deep into its shapes.
fn protocol_json() -> impl Strategy<Value = Value> {
    let words = prop::sample::select(vec![
        "type",
        "Start",
        "Cancel",
        "runs",
        "count",
        "mode",
        "kind",
        "sequential",
        "pipelined",
        "batch",
        "command",
        "SET",
        "GET",
        "INCR",
        "multiplexed",
        "in_flight",
        "transaction",
        "mset",
        "flush",
        "policy",
        "each_command",
        "buffered",
        "commands",
        "value_bytes",
        "network",
        "delay_out_us",
        "delay_back_us",
        "jitter_us",
        "bandwidth",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        words.clone().prop_map(|w| json!(w)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((words.clone(), inner), 0..6).prop_map(|kv| Value::Object(
                kv.into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect::<Map<_, _>>()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_text_decodes_or_errs(text in ".{0,256}") {
        let _ = ClientMsg::from_json(&text);
    }

    #[test]
    fn any_protocol_shaped_json_decodes_and_validates_or_errs(value in protocol_json()) {
        if let Ok(ClientMsg::Start { runs }) = ClientMsg::from_json(&value.to_string()) {
            let _ = validate_runs(&runs, &Limits::DEFAULT);
        }
    }

    #[test]
    fn validate_accepts_exactly_the_limits(count in any::<u64>(), batch in any::<u32>(), sequential in any::<bool>()) {
        let mode = if sequential { Mode::Sequential } else { Mode::pipelined(batch) };
        let spec = RunSpec::set(count, mode);
        let l = Limits::DEFAULT;
        let ok = (1..=l.max_count).contains(&count) && (1..=l.max_batch).contains(&mode.batch());
        prop_assert_eq!(spec.validate(&l).is_ok(), ok);
        // And what validates survives the wire unchanged.
        let back = ClientMsg::from_json(&ClientMsg::Start { runs: vec![spec] }.to_json()).unwrap();
        prop_assert_eq!(back, ClientMsg::Start { runs: vec![spec] });
    }

    #[test]
    fn any_spec_validates_only_within_every_limit(spec in any_spec()) {
        let l = Limits::DEFAULT;
        if spec.validate(&l).is_ok() {
            prop_assert!((1..=l.max_count).contains(&spec.count));
            prop_assert!((1..=l.max_batch).contains(&spec.mode.batch()));
            if let Some(bytes) = spec.value_bytes {
                prop_assert!((1..=l.max_value_bytes).contains(&bytes));
                prop_assert!(spec.count * bytes as u64 <= l.max_total_bytes);
            }
            let n = spec.network;
            prop_assert!(n.delay_out_us.max(n.delay_back_us).max(n.jitter_us) <= l.max_delay_us);
            prop_assert!(n.bandwidth.is_none_or(|b| (l.min_bandwidth..=l.max_bandwidth).contains(&b)));
            prop_assert!(spec.mode.round_trips_in_series(spec.count) * n.round_trip_us() <= (l.max_network_secs + 1) * 1_000_000);
            if let Mode::Connections { connections } = spec.mode {
                prop_assert!((1..=Mode::MAX_CONNECTIONS).contains(&connections));
            }
            if let Mode::Mset { .. } = spec.mode {
                prop_assert!(spec.command != Command::Incr);
            }
            if spec.other_client {
                prop_assert!(spec.command == Command::Incr);
                let batched = matches!(spec.mode, Mode::Pipelined { .. } | Mode::Transaction { .. });
                prop_assert!(batched);
            }
            if let Wait::BusyPoll { us } = spec.wait {
                prop_assert!((1..=Wait::MAX_BUSY_POLL_US).contains(&us));
            }
            if let Mode::Pipelined { flush: Flush::Buffered { commands }, batch } = spec.mode {
                prop_assert!((1..=batch).contains(&commands));
            }
        }
        let back = ClientMsg::from_json(&ClientMsg::Start { runs: vec![spec] }.to_json()).unwrap();
        prop_assert_eq!(back, ClientMsg::Start { runs: vec![spec] });
    }
}

/// Any `RunSpec` at all, most of them out of range somewhere.
fn any_spec() -> impl Strategy<Value = RunSpec> {
    let small = prop_oneof![0u32..4, 0u32..200_000, any::<u32>()];
    let flush = prop_oneof![
        Just(Flush::Batch),
        Just(Flush::EachCommand),
        small
            .clone()
            .prop_map(|commands| Flush::Buffered { commands }),
    ];
    let mode = prop_oneof![
        Just(Mode::Sequential),
        (small.clone(), flush).prop_map(|(batch, flush)| Mode::Pipelined { batch, flush }),
        small
            .clone()
            .prop_map(|in_flight| Mode::Multiplexed { in_flight }),
        small.clone().prop_map(|batch| Mode::Transaction { batch }),
        small.clone().prop_map(|batch| Mode::Mset { batch }),
        small
            .clone()
            .prop_map(|connections| Mode::Connections { connections }),
    ];
    let command = prop::sample::select(Command::ALL.to_vec());
    let count = prop_oneof![0u64..100, 0u64..20_000_000, any::<u64>()];
    let delay = prop_oneof![Just(0u32), 0u32..2_000_000, any::<u32>()];
    let network = (
        delay.clone(),
        delay.clone(),
        delay,
        prop::option::of(any::<u64>()),
    )
        .prop_map(
            |(delay_out_us, delay_back_us, jitter_us, bandwidth)| Network {
                delay_out_us,
                delay_back_us,
                jitter_us,
                bandwidth,
            },
        );
    let wait = prop_oneof![
        Just(Wait::Sleep),
        small.clone().prop_map(|us| Wait::BusyPoll { us }),
    ];
    (
        command,
        count,
        mode,
        prop::option::of(small),
        network,
        wait,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(command, count, mode, value_bytes, network, wait, other_client, one_tag)| RunSpec {
                command,
                count,
                mode,
                value_bytes,
                network,
                wait,
                other_client,
                keys: if one_tag {
                    shared::KeyLayout::OneTag
                } else {
                    shared::KeyLayout::Spread
                },
            },
        )
}
