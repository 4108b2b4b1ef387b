//! The controls' fields against the backend's validation, and the slider's scale.

use super::*;
use crate::testing::test;

const L: Limits = Limits::DEFAULT;

#[test]
fn a_decimal_reads_as_from_str_reads_it() {
    for text in [
        "8",
        "0.5",
        ".5",
        "5.",
        "-3",
        "+2.25",
        "0.1",
        "123.456",
        "1000000",
        "0.0000001",
    ] {
        assert_eq!(decimal(text), text.parse::<f64>().ok(), "{text}");
    }
    for text in [
        "",
        ".",
        "-",
        "fast",
        "1e3",
        "1.2.3",
        "inf",
        "NaN",
        "0x10",
        "99999999999999999999",
    ] {
        assert_eq!(decimal(text), None, "{text}");
    }
}

fn form(f: impl FnOnce(&mut Form)) -> Form {
    let mut form = Form::default();
    f(&mut form);
    form
}

#[test]
fn the_folded_controls_say_what_the_buttons_run() {
    let url = UrlState::parse(
        "?count=100000&mode=pipelined&batch=1000&plan=compare&delay=250&presenter=1",
    );
    assert_eq!(
        Form::from_url(&url).summary(),
        "Compare · 100,000 SET · one at a time vs pipelined (batch 1000) · one-way delay 250 µs"
    );
    let seq = form(|f| {
        f.mode = ModeChoice::Sequential;
        f.plan = Plan::Compare;
        f.count = "50".into();
        f.batch = "10".into();
    });
    assert!(
        seq.summary()
            .contains("50 SET · one at a time vs pipelined (batch 10)"),
        "{}",
        seq.summary()
    );
}

#[test]
fn each_choice_is_named_as_the_mode_it_builds() {
    for choice in ModeChoice::ALL {
        let built = form(|f| {
            f.mode = choice;
            f.batch = "10".into();
        })
        .mode()
        .unwrap();
        assert_eq!(choice.value(), built.kind(), "{choice:?}");
        assert_eq!(ModeChoice::parse(built.kind()), Some(choice));
    }
}

#[test]
fn single_runs_follow_the_mode() {
    let r = Form::default().runs(Plan::Single, &L).unwrap();
    assert_eq!(r, vec![RunSpec::set(100_000, Mode::pipelined(1000))]);
    // The (disabled) batch field does not matter for a sequential run.
    let r = form(|f| {
        f.mode = ModeChoice::Sequential;
        f.batch = "oops".into()
    })
    .runs(Plan::Single, &L)
    .unwrap();
    assert_eq!(r[0].mode, Mode::Sequential);
    let modes = [
        (ModeChoice::Multiplexed, Mode::Multiplexed { in_flight: 50 }),
        (ModeChoice::Transaction, Mode::Transaction { batch: 50 }),
        (ModeChoice::Mset, Mode::Mset { batch: 50 }),
        (
            ModeChoice::Connections,
            Mode::Connections { connections: 50 },
        ),
    ];
    for (choice, mode) in modes {
        let f = form(|f| {
            f.mode = choice;
            f.batch = "50".into()
        });
        assert_eq!(f.runs(Plan::Single, &L).unwrap()[0].mode, mode);
    }
}

#[test]
fn flush_policies_and_the_rest_of_the_spec() {
    let f = form(|f| {
        f.flush = FlushChoice::Buffered;
        f.flush_every = "300".into();
        f.command = Command::Get;
        f.value_bytes = "1024".into();
        f.count = "10_000".into();
    });
    let r = f.runs(Plan::Single, &L).unwrap();
    assert_eq!(
        r[0],
        RunSpec {
            command: Command::Get,
            count: 10_000,
            mode: Mode::Pipelined {
                batch: 1000,
                flush: Flush::Buffered { commands: 300 }
            },
            value_bytes: Some(1024),
            network: Network::LOOPBACK,
            wait: Wait::Sleep,
            other_client: false,
            keys: shared::KeyLayout::Spread,
        }
    );
    let each = form(|f| f.flush = FlushChoice::EachCommand);
    assert_eq!(
        each.mode().unwrap(),
        Mode::Pipelined {
            batch: 1000,
            flush: Flush::EachCommand
        }
    );
}

#[test]
fn the_network_fields() {
    let f = form(|f| f.delay_out = "500".into());
    assert_eq!(f.network().unwrap(), Network::symmetric(500));
    let f = form(|f| {
        f.delay_out = "500".into();
        f.separate_back = true;
        f.delay_back = "2000".into();
        f.jitter = "50".into();
        f.bandwidth_mbit = "8".into();
    });
    assert_eq!(
        f.network().unwrap(),
        Network {
            delay_out_us: 500,
            delay_back_us: 2000,
            jitter_us: 50,
            bandwidth: Some(1_000_000),
        }
    );
    let mut g = Form::default();
    g.set_network(f.network().unwrap());
    assert_eq!(g.network(), f.network());
    assert!(
        form(|f| f.bandwidth_mbit = "fast".into())
            .network()
            .unwrap_err()
            .contains("Mbit/s")
    );
}

#[test]
fn compare_is_sequential_then_the_mode() {
    let r = form(|f| {
        f.mode = ModeChoice::Sequential;
        f.count = "1_000".into();
        f.batch = "100".into()
    })
    .runs(Plan::Compare, &L)
    .unwrap();
    assert_eq!(r, RunSpec::comparison(1000, 100));
    let r = form(|f| f.mode = ModeChoice::Transaction)
        .runs(Plan::Compare, &L)
        .unwrap();
    assert_eq!(r[1].mode, Mode::Transaction { batch: 1000 });
}

#[test]
fn the_layouts_preset_is_one_pipelined_run_spread_then_under_one_tag() {
    // A pipelined choice is kept (its batch and flush); any other mode becomes pipelined
    // at the batch field.
    for (mode, batch) in [
        (ModeChoice::Pipelined, "500"),
        (ModeChoice::Transaction, "200"),
    ] {
        let r = form(|f| {
            f.mode = mode;
            f.batch = batch.into();
            f.count = "3000".into();
        })
        .runs(Plan::Layouts, &L)
        .unwrap();
        let want = Mode::pipelined(batch.parse().unwrap());
        assert_eq!(r.iter().map(|s| s.mode).collect::<Vec<_>>(), [want, want]);
        assert_eq!(
            r.iter().map(|s| s.keys).collect::<Vec<_>>(),
            [KeyLayout::Spread, KeyLayout::OneTag]
        );
        assert!(r.iter().all(|s| s.count == 3_000));
    }
    assert_eq!(Plan::parse("layouts"), Some(Plan::Layouts));
}

#[test]
fn the_pool_preset_is_eight_connections_then_one_pipeline() {
    // Whatever mode is selected, with the form's count and network.
    let r = form(|f| {
        f.mode = ModeChoice::Multiplexed;
        f.count = "20000".into();
        f.delay_out = "100".into();
    })
    .runs(Plan::Pool, &L)
    .unwrap();
    let modes: Vec<Mode> = r.iter().map(|s| s.mode).collect();
    assert_eq!(
        modes,
        [Mode::Connections { connections: 8 }, Mode::pipelined(1000)]
    );
    assert!(r.iter().all(|s| s.count == 20_000));
    assert!(r.iter().all(|s| s.network == Network::symmetric(100)));
    assert_eq!(Plan::parse("pool"), Some(Plan::Pool));
    // Too many connections are refused in words.
    let err = form(|f| {
        f.mode = ModeChoice::Connections;
        f.batch = "1000".into()
    })
    .runs(Plan::Single, &L)
    .unwrap_err();
    assert_eq!(err, "Connections must be between 1 and 256, got 1000.");
}

#[test]
fn a_sweep_steps_the_batch_one_two_five() {
    let r = form(|f| {
        f.sweep_max = "20".into();
        f.delay_out = "100".into()
    })
    .runs(Plan::Sweep, &L)
    .unwrap();
    let batches: Vec<u32> = r.iter().map(|s| s.mode.batch()).collect();
    assert_eq!(batches, [1, 2, 5, 10, 20].repeat(crate::sweep::REPEATS));
    assert!(r.iter().all(|s| s.network == Network::symmetric(100)));
    assert!(
        form(|f| f.sweep_max = "1000000".into())
            .runs(Plan::Sweep, &L)
            .is_err()
    );
    let short = form(|f| {
        f.sweep_max = "100000".into();
        f.count = "50000".into()
    })
    .runs(Plan::Sweep, &L)
    .unwrap_err();
    assert!(
        short.contains("at least 100000 commands per run"),
        "{short}"
    );
    let full = form(|f| f.sweep_max = "100000".into())
        .runs(Plan::Sweep, &L)
        .unwrap();
    assert_eq!(full.len(), L.max_runs, "16 batch sizes, 3 times each");
}

#[test]
fn bad_input_is_explained() {
    assert_eq!(
        form(|f| f.count.clear()).runs(Plan::Single, &L),
        Err("Enter a count.".into())
    );
    assert!(
        form(|f| f.count = "abc".into())
            .runs(Plan::Single, &L)
            .unwrap_err()
            .contains("whole number")
    );
    assert!(
        form(|f| f.count = "0".into())
            .runs(Plan::Single, &L)
            .unwrap_err()
            .starts_with("Count must be between 1 and")
    );
    assert!(
        form(|f| {
            f.mode = ModeChoice::Sequential;
            f.batch = "0".into()
        })
        .runs(Plan::Compare, &L)
        .unwrap_err()
        .starts_with("Batch must be")
    );
    assert!(
        form(|f| {
            f.mode = ModeChoice::Mset;
            f.command = Command::Incr
        })
        .runs(Plan::Single, &L)
        .unwrap_err()
        .contains("INCR has no one-command-many-keys form")
    );
    assert!(
        form(|f| {
            f.mode = ModeChoice::Sequential;
            f.delay_out = "30000".into()
        })
        .runs(Plan::Single, &L)
        .unwrap_err()
        .contains("waiting on the injected delay")
    );
}

#[test]
fn busy_polling_is_a_wait_on_every_run_of_the_plan() {
    let f = form(|f| f.busy_poll_us = "2000".into());
    let runs = f.runs(Plan::Compare, &L).unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.wait == Wait::BusyPoll { us: 2000 }));
    assert_eq!(
        Form::default().runs(Plan::Single, &L).unwrap()[0].wait,
        Wait::Sleep
    );
    let err = form(|f| f.busy_poll_us = "50000".into())
        .runs(Plan::Single, &L)
        .unwrap_err();
    assert!(
        err.starts_with("Busy-poll must be between 1 and 10000"),
        "{err}"
    );
    let err = form(|f| f.busy_poll_us = "soon".into())
        .runs(Plan::Single, &L)
        .unwrap_err();
    assert!(err.contains("busy-poll time"), "{err}");
}

#[test]
fn the_form_survives_the_url() {
    let f = form(|f| {
        f.count = "3000".into();
        f.command = Command::Incr;
        f.value_bytes = "64".into();
        f.mode = ModeChoice::Pipelined;
        f.batch = "100".into();
        f.flush = FlushChoice::Buffered;
        f.flush_every = "10".into();
        f.delay_out = "500".into();
        f.separate_back = true;
        f.delay_back = "30000".into();
        f.jitter = "20".into();
        f.bandwidth_mbit = "0.5".into();
        f.busy_poll_us = "2000".into();
        f.sweep_max = "256".into();
        f.plan = Plan::Sweep;
    });
    let mut url = UrlState {
        presenter: true,
        token: Some("T".into()),
        ..UrlState::default()
    };
    f.write_url(&mut url);
    let back = UrlState::parse(&url.to_query());
    assert_eq!(back, url);
    assert_eq!(Form::from_url(&back), f);
    assert!(Form::network_in_url(&back));
    // Defaults stay out of the link.
    let mut plain = UrlState::default();
    Form::default().write_url(&mut plain);
    assert_eq!(plain.to_query(), "?count=100000&mode=pipelined&batch=1000");
    assert_eq!(Form::from_url(&plain), Form::default());
    assert!(!Form::network_in_url(&plain));
}

#[test]
fn the_delay_slider_is_logarithmic() {
    assert_eq!(slider_us(0), 0);
    assert_eq!(slider_us(1), 1);
    assert_eq!(slider_us(21), 100);
    assert_eq!(slider_us(28), 500);
    assert_eq!(slider_us(46), 32_000);
    assert_eq!(slider_us(SLIDER_MAX), 1_000_000);
    assert_eq!(slider_us(SLIDER_MAX + 5), 1_000_000);
    for (_, us) in Network::PRESETS {
        let back = slider_us(slider_pos(us));
        assert!(
            (back as f64 - us as f64).abs() <= us as f64 * 0.13,
            "{us} → {back}"
        );
    }
    // From 10 µs on, every position is its own whole number of µs (below, steps collapse).
    for p in (11..=SLIDER_MAX).chain([0, 1]) {
        assert_eq!(slider_pos(slider_us(p)), p);
    }
}

#[test]
fn old_links_still_work() {
    let u = UrlState::parse("?count=3000&mode=compare&batch=100");
    let f = Form::from_url(&u);
    assert_eq!(f.plan, Plan::Compare);
    assert_eq!(f.mode, ModeChoice::Pipelined);
    assert_eq!(f.count, "3000");
}
