//! The tour's script and templating, checked on made-up summaries.

use super::*;
use crate::testing::test;
use shared::{Flush, Mode, Network, RunSpec, RunSummary};

use crate::sweep;
use shared::{Latency, Limits, validate_runs};

fn summary(mode: Mode, count: u64, wall_us: u64) -> RunSummary {
    RunSummary {
        spec: RunSpec::set(count, mode).with_network(Network::symmetric(TOUR_DELAY_US)),
        done: count,
        wall_us,
        ops_per_sec: shared::report::ops_per_sec(count, wall_us),
        round_trips: mode.round_trips(count),
        writes: mode.writes(count).unwrap_or(count),
        wire_commands: count,
        latency: Latency {
            mean_us: 1_040.0,
            p50_us: 1_000.0,
            ..Latency::default()
        },
        split: Some(shared::RoundTripSplit {
            out_us: 510.0,
            server_us: 20.0,
            back_us: 510.0,
            samples: 1,
            ..Default::default()
        }),
        redis_usec_per_call: None,
        redis_load: None,
        interleaving: None,
        redis_memory: None,
        cluster: None,
    }
}

/// What a run with the other client might measure: some INCRs inside a pipeline's batches,
/// none inside a transaction's.
fn interleaving(mode: Mode, count: u64) -> shared::interleave::Interleaving {
    let inside = if mode.is_pipelined() { 40 } else { 0 };
    shared::interleave::Interleaving {
        batches: mode.round_trips(count),
        batches_interleaved: inside.min(mode.round_trips(count)),
        other_commands: 900,
        other_inside: inside,
        final_value: Some(count + 900),
        ..Default::default()
    }
}

#[test]
fn the_atomicity_step_says_only_what_was_measured() {
    let k = STEPS
        .iter()
        .position(|s| s.other_client)
        .expect("a step runs the other client");
    let step = &STEPS[k];
    let specs = step.specs(None, None);
    assert!(
        specs
            .iter()
            .all(|s| s.other_client && s.command == shared::Command::Incr)
    );
    let result = |pipe_inside: u64| {
        let runs = step
            .runs
            .iter()
            .zip(&specs)
            .map(|(r, s)| {
                let mut run = summary(s.mode, s.count, 1_000_000);
                let mut i = interleaving(s.mode, s.count);
                if s.mode.is_pipelined() {
                    i.other_inside = pipe_inside;
                }
                run.interleaving = Some(i);
                (r.role.to_string(), run)
            })
            .collect();
        let r = StepResult {
            step: k,
            runs,
            ids: vec![],
        };
        let all = [r.clone()];
        result_sentences(&r, &all).len()
    };
    assert_eq!(result(40), step.result.len());
    // Had nothing landed inside the pipeline, the claim that some did is left out.
    assert_eq!(result(0), step.result.len() - 1);
}

fn step4() -> StepResult {
    StepResult {
        step: 3,
        runs: vec![
            ("seq".into(), summary(Mode::Sequential, 100_000, 52_000_000)),
            (
                "pipe".into(),
                summary(Mode::pipelined(1000), 100_000, 400_000),
            ),
        ],
        ids: vec![1, 2],
    }
}

#[test]
fn numbers_come_from_the_summary() {
    let r = step4();
    let all = [r.clone()];
    let sentences = result_sentences(&r, &all);
    assert_eq!(
        plain(&sentences[0]),
        "Sequential paid 100,000 round trips of 520 µs = 52.00 s."
    );
    assert_eq!(
        plain(&sentences[1]),
        "Pipelined paid 100 round trips and took 400 ms: 130× faster."
    );
    let nums: Vec<(String, f64)> = sentences[0]
        .iter()
        .filter_map(|p| match p {
            Piece::Num { key, value, .. } => Some((key.clone(), *value)),
            _ => None,
        })
        .collect();
    assert_eq!(
        nums,
        [
            ("seq.round_trips".to_string(), 100_000.0),
            ("seq.per_rt".to_string(), 520.0),
            ("seq.wall".to_string(), 52_000_000.0),
        ]
    );
}

#[test]
fn step_1_says_who_measured_each_figure() {
    let mut one = summary(Mode::Sequential, 1, 1_040);
    let tapped = StepResult {
        step: 0,
        runs: vec![("one".into(), one.clone())],
        ids: vec![1],
    };
    let s: Vec<String> = result_sentences(&tapped, &[])
        .iter()
        .map(|p| plain(p))
        .collect();
    assert_eq!(s.len(), 4, "Redis did not report its time: {s:?}");
    assert_eq!(
        s[0],
        "Measured by the engine: one SET, one round trip of 1.04 ms."
    );
    assert_eq!(
        s[1],
        "Measured by the wire tap at the proxy: 510 µs on the way out, 20 µs from the proxy to Redis and back (two loopback hops and two wake-ups around Redis's work), 510 µs on the way back."
    );
    assert!(s[2].contains("releases each chunk early"), "{}", s[2]);
    assert!(
        s[3].contains("not measured") && s[3].contains("assumed"),
        "{}",
        s[3]
    );
    one.redis_usec_per_call = Some(1.2);
    let with_redis = StepResult {
        runs: vec![("one".into(), one.clone())],
        ..tapped.clone()
    };
    let s = result_sentences(&with_redis, &[]);
    assert_eq!(
        plain(&s[2]),
        "Measured by Redis itself (INFO commandstats): 1.2 µs of work for the SET (t3 proper)."
    );
    one.split = None;
    let untapped = StepResult {
        runs: vec![("one".into(), one)],
        ..tapped
    };
    assert_eq!(result_sentences(&untapped, &[]).len(), 3, "no tap, no legs");
}

#[test]
fn the_handout_lists_the_trips_parts_with_their_sources() {
    let one = StepResult {
        step: 0,
        runs: vec![("one".into(), summary(Mode::Sequential, 1, 1_040))],
        ids: vec![1],
    };
    let md = handout_markdown(&[one]);
    assert!(
        md.contains("- RTT 1.04 ms (mean, measured by the engine)"),
        "{md}"
    );
    assert!(
        md.contains("- out 510 µs (measured by the wire tap (median))"),
        "{md}"
    );
    assert!(md.contains("- t1 transmission"), "{md}");
    assert!(md.contains("(assumed: "), "{md}");
}

#[test]
fn nouns_agree_with_their_numbers() {
    let r = StepResult {
        step: 2,
        runs: vec![
            ("pipe".into(), summary(Mode::pipelined(10), 10, 300)),
            ("seq".into(), summary(Mode::Sequential, 10, 3000)),
        ],
        ids: vec![1, 2],
    };
    let all = [r.clone()];
    let s = result_sentences(&r, &all);
    assert_eq!(plain(&s[0]), "Pipelined: 10 SETs in 1 round trip, 0.30 ms.");
    assert!(plain(&s[1]).starts_with("Sequential: 10 round trips, 3.00 ms"));
    assert!(
        s[0].iter()
            .any(|p| matches!(p, Piece::Num { key, .. } if key == "pipe.round_trips"))
    );
}

#[test]
fn marks_colour_words_and_numbers() {
    let r = StepResult {
        step: 6,
        runs: vec![(
            "m10".into(),
            summary(Mode::Multiplexed { in_flight: 10 }, 100, 1000),
        )],
        ids: vec![1],
    };
    let ctx = Context {
        current: &r,
        all: &[],
    };
    let pieces = render("[mux|{m10.batch} callers] share [seq|one]", Some(&ctx)).unwrap();
    assert_eq!(
        pieces,
        [
            Piece::Num {
                key: "m10.batch".into(),
                value: 10.0,
                text: "10".into(),
                class: Some("hl-mux".into())
            },
            Piece::Mark {
                class: "hl-mux".into(),
                text: " callers".into()
            },
            Piece::Text(" share ".into()),
            Piece::Mark {
                class: "hl-seq".into(),
                text: "one".into()
            },
        ]
    );
    assert_eq!(
        render("a [plain] bracket and a lone {", None).map(|p| plain(&p)),
        Some("a [plain] bracket and a lone {".into())
    );
}

#[test]
fn before_the_run_there_are_no_numbers() {
    for (k, step) in STEPS.iter().enumerate() {
        let intro = render(step.intro, None)
            .unwrap_or_else(|| panic!("step {} intro has a placeholder", k + 1));
        assert!(
            intro.iter().all(|p| !matches!(p, Piece::Num { .. })),
            "step {}",
            k + 1
        );
        assert!(render(step.look_at, None).is_some());
        // The result reports measurements: without them its sentences say nothing.
        assert!(
            step.result.iter().any(|t| render(t, None).is_none()),
            "step {}",
            k + 1
        );
    }
}

#[test]
fn every_result_sentence_resolves_once_its_plan_ran() {
    let mut all: Vec<StepResult> = Vec::new();
    for (k, step) in STEPS.iter().enumerate() {
        let specs = step.specs(None, None);
        assert!(
            validate_runs(&specs, &Limits::DEFAULT).is_ok(),
            "step {}",
            k + 1
        );
        let runs = step
            .runs
            .iter()
            .zip(&specs)
            .map(|(r, s)| {
                let mut run = summary(s.mode, s.count, 1_000_000);
                run.redis_usec_per_call = Some(1.0);
                if s.other_client {
                    run.interleaving = Some(interleaving(s.mode, s.count));
                }
                (r.role.to_string(), run)
            })
            .collect();
        all.push(StepResult {
            step: k,
            runs,
            ids: vec![],
        });
    }
    for r in &all {
        // The sweep's alternatives: the share is either a major or a minor part, and a
        // knee inside the sweep leaves the "beyond" sentence out.
        let alternatives = if r.step == 5 { 2 } else { 0 };
        let sentences = result_sentences(r, &all);
        assert_eq!(
            sentences.len(),
            STEPS[r.step].result.len() - alternatives,
            "step {}",
            r.step + 1
        );
    }
}

#[test]
fn a_sentence_about_a_skipped_step_is_left_out() {
    let r = StepResult {
        step: 4,
        runs: vec![
            (
                "each".into(),
                summary(
                    Mode::Pipelined {
                        batch: 1000,
                        flush: Flush::EachCommand,
                    },
                    100_000,
                    3_000_000,
                ),
            ),
            (
                "pipe".into(),
                summary(Mode::pipelined(1000), 100_000, 400_000),
            ),
        ],
        ids: vec![3, 4],
    };
    let all = [r.clone()];
    let s = result_sentences(&r, &all);
    // The two runs, and the pointer to observe mode (no figures); step 4's line is left out.
    assert_eq!(s.len(), 3, "step 4 was not measured");
    assert_eq!(
        plain(&s[0]),
        "Flush each command: 100,000 writes, 100 round trips, 3.00 s."
    );
    let with4 = [step4(), r.clone()];
    assert_eq!(result_sentences(&r, &with4).len(), 4);
}

/// Step 6's runs, in the plan's order, from wall times per round (batch 1 … 10,000).
fn sweep_step(rounds: &[[u64; 5]]) -> StepResult {
    let batches = [1, 10, 100, 1000, 10_000];
    let runs = STEPS[5]
        .runs
        .iter()
        .enumerate()
        .map(|(k, def)| {
            let (round, b) = (k / 5, k % 5);
            assert_eq!(def.mode.batch(), batches[b], "rounds of 1 … 10,000");
            let wall = rounds[round % rounds.len()][b];
            (def.role.to_string(), summary(def.mode, 10_000, wall))
        })
        .collect();
    StepResult {
        step: 5,
        runs,
        ids: vec![],
    }
}

#[test]
fn the_tours_knee_is_the_sweeps_knee_on_medians() {
    // Per decade, a doubling pays 1.5× when the decade pays 1.5^3.32 ≈ 3.8×.
    let r = sweep_step(&[
        [20_000_000, 2_100_000, 300_000, 200_000, 190_000],
        [21_000_000, 2_000_000, 320_000, 210_000, 185_000],
        [19_000_000, 2_300_000, 310_000, 205_000, 200_000],
    ]);
    assert_eq!(STEPS[5].runs.len(), 5 * sweep::REPEATS);
    // 2.1 s → 310 ms is 6.8× a decade: paid; 310 → 205 ms is 1.5×: not.
    assert_eq!(knee(&r).unwrap().spec.mode.batch(), 100);
    assert_eq!(knee(&r).unwrap().wall_us, 310_000, "the median run");
    assert_eq!(best(&r).unwrap().wall_us, 190_000);
    assert_eq!(beyond(&r), None);
    let runs: Vec<RunSummary> = r.runs.iter().map(|(_, s)| s.clone()).collect();
    let points = sweep::group(&runs).unwrap();
    assert_eq!(sweep::knee(&points), Some(2), "one definition");
    // Batch 1: 2,000 µs a round trip; batch 100: 100 round trips in 310 ms → 65 %.
    let share = knee_round_trip_share(&r).unwrap();
    assert!((share - 100.0 * 2_000.0 / 310_000.0).abs() < 1e-12);
    let all = [r.clone()];
    let s: Vec<String> = result_sentences(&r, &all)
        .iter()
        .map(|p| plain(p))
        .collect();
    assert_eq!(
        s[0],
        "Each batch size ran 3 times; each figure is its median run, the runs' spread in brackets."
    );
    assert!(
        s[1].starts_with("Batch 1: 500 ops/s (476–526). Batch 10: 4,762"),
        "{}",
        s[1]
    );
    assert!(
        s[2].starts_with("The knee is at batch 100 (32,258 ops/s)"),
        "{}",
        s[2]
    );
    assert!(
        s[3].starts_with("There round trips still take about 65 % of the time"),
        "{}",
        s[3]
    );
    assert_eq!(s.len(), 4, "no minor-share or beyond sentence: {s:?}");
    assert!(STEPS[5].result[2].contains(&format!("{}×", sweep::KNEE_GAIN)));
}

#[test]
fn a_sweep_still_climbing_says_the_knee_lies_beyond() {
    let r = sweep_step(&[[10_000_000, 1_000_000, 100_000, 10_000, 1_000]]);
    assert_eq!(knee(&r), None);
    assert_eq!(beyond(&r).unwrap().spec.mode.batch(), 10_000);
    let all = [r.clone()];
    let s: Vec<String> = result_sentences(&r, &all)
        .iter()
        .map(|p| plain(p))
        .collect();
    assert_eq!(s.len(), 3, "{s:?}");
    assert!(
        s[2].starts_with("The last step, to batch 10,000, still paid"),
        "{}",
        s[2]
    );
}

#[test]
fn a_minor_share_is_called_minor() {
    // Batch 1: 2,000 µs a round trip; batch 100's 100 round trips are 200 ms of 1 s: 20 %.
    let r = sweep_step(&[[20_000_000, 2_000_000, 1_000_000, 1_000_000, 1_000_000]]);
    assert_eq!(knee(&r).unwrap().spec.mode.batch(), 10);
    let all = [r.clone()];
    let s: Vec<String> = result_sentences(&r, &all)
        .iter()
        .map(|p| plain(p))
        .collect();
    assert!(
        s[3].starts_with("There round trips still take about 100 %"),
        "{s:?}"
    );
    let r = sweep_step(&[[20_000_000, 10_000_000, 10_000_000, 10_000_000, 10_000_000]]);
    assert_eq!(knee(&r).unwrap().spec.mode.batch(), 1, "no step paid");
    let r = sweep_step(&[[2_000_000, 500_000, 480_000, 470_000, 460_000]]);
    let share = knee_round_trip_share(&r).unwrap();
    assert!(share < 0.5, "{share}");
    let all = [r.clone()];
    let s: Vec<String> = result_sentences(&r, &all)
        .iter()
        .map(|p| plain(p))
        .collect();
    assert!(
        s[3].starts_with("There round trips take only about"),
        "{s:?}"
    );
}

#[test]
fn counts_paths_and_specs() {
    assert_eq!(STEPS[0].count(Some(50)), 1, "one SET stays one SET");
    // Never below its pipelined run's batch of 1,000.
    assert_eq!(STEPS[3].count(Some(50)), 1_000);
    assert_eq!(STEPS[3].count(Some(5_000)), 5_000);
    assert_eq!(STEPS[3].count(None), 100_000);
    assert!(STEPS.len() >= 7);
    assert_eq!(page_from_path("/tour"), Some(0));
    assert_eq!(page_from_path("/tour/"), Some(0));
    assert_eq!(page_from_path("/tour/3"), Some(2));
    assert_eq!(page_from_path("/tour/99"), Some(STEPS.len()));
    assert_eq!(page_from_path("/tour/handout"), Some(STEPS.len()));
    assert_eq!(page_from_path("/"), None);
    assert_eq!(page_from_path("/tourist"), None);
    for page in 0..pages() {
        assert_eq!(page_from_path(&path_of(page)), Some(page));
    }
    let specs = STEPS[3].specs(Some(2_000), None);
    assert_eq!(specs.len(), 2);
    assert!(
        specs
            .iter()
            .all(|s| s.count == 2_000 && s.network.delay_out_us == 500)
    );
    let fast = STEPS[3].specs(None, Some(50));
    assert!(
        fast.iter()
            .all(|s| s.count == 100_000 && s.network.delay_back_us == 50)
    );
    assert_eq!(query_number("?count=40&delay=100", "count"), Some(40));
    assert_eq!(query_number("?count=1%2C000", "count"), Some(1000));
    assert_eq!(query_number("count=1,000&delay=x", "delay"), None);
    assert_eq!(query_number("", "count"), None);
}

#[test]
fn the_handout_is_a_markdown_table_per_step() {
    let md = handout_markdown(&[step4()]);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "# pipescope tour: what we measured");
    assert_eq!(lines[2], "## Step 4: The blog's experiment: 100,000 SETs");
    assert!(lines[4].starts_with("| mode | commands |"), "{md}");
    assert!(
        lines[6].starts_with("| SET · sequential | 100,000 |"),
        "{md}"
    );
    assert!(lines[7].contains("| 130× |"), "{md}");
    assert_eq!(lines.len(), 8);
}

#[test]
fn a_step_never_runs_fewer_commands_than_its_largest_batch() {
    let sweep = STEPS
        .iter()
        .find(|s| s.title.starts_with("How big a batch"))
        .unwrap();
    assert_eq!(sweep.fewest(), 10_000);
    assert_eq!(sweep.count(Some(5_000)), 10_000);
    assert_eq!(sweep.count(Some(20_000)), 20_000);
    assert!(
        sweep
            .specs(Some(5_000), None)
            .iter()
            .all(|s| s.count >= u64::from(s.mode.batch()))
    );
    let atomic = STEPS.iter().find(|s| s.other_client).unwrap();
    assert_eq!(atomic.command(), "INCR");
}
