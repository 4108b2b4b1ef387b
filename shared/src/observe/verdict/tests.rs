use super::*;
use crate::observe::*;
use crate::spec::Command;

fn counts(commands: u64, writes: u64, round_trips: u64, max_depth: u64) -> ObservedCounts {
    ObservedCounts {
        commands,
        replies: commands,
        writes,
        round_trips,
        max_depth,
        ..Default::default()
    }
}

#[test]
fn the_issue_s_three_examples() {
    let t = ObservedTimes::default();
    let v = verdict(&counts(100_000, 100_000, 100, 1000), &t);
    assert_eq!(v.kind, VerdictKind::WritePerCommand);
    assert_eq!(
        v.text,
        "pipelined, but a write per command: 100,000 commands in 100,000 writes over 100 round trips (~1,000 per round trip)"
    );
    let v = verdict(&counts(100_000, 100_000, 100_000, 1), &t);
    assert_eq!(v.kind, VerdictKind::OneAtATime);
    assert_eq!(
        v.text,
        "one at a time: 100,000 commands over 100,000 round trips"
    );
    let mut auto = counts(99_840, 312, 3, 2000);
    auto.overlapping_writes = 309;
    let v = verdict(&auto, &t);
    assert_eq!(v.kind, VerdictKind::AutoPipelined);
    assert!(
        v.text
            .starts_with("auto-pipelined: 312 writes of ~320 commands"),
        "{}",
        v.text
    );
}

#[test]
fn a_batch_in_pieces_racing_its_replies_is_timing_dependent() {
    // redis-py's 1,005 commands in 13 pieces through the proxy on a busy machine: most
    // sent while replies were awaited, 5 of its 6 round trips unconfirmed.
    let mut c = counts(1_005, 13, 6, 700);
    c.overlapping_writes = 9;
    c.unconfirmed_trips = 5;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(
        (v.kind, v.candidates.as_slice()),
        (
            VerdictKind::Undetermined,
            [VerdictKind::AutoPipelined, VerdictKind::Pipelined].as_slice()
        )
    );
    let why = v.timing_dependent.expect("marked");
    assert!(why.contains("one batch written in pieces"), "{why}");
    // Every piece sent while replies were awaited, none after: auto-pipelined, unmarked.
    c.unconfirmed_trips = 0;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(
        (v.kind, v.timing_dependent),
        (VerdictKind::AutoPipelined, None)
    );
}

#[test]
fn batches_that_wait_for_each_other_are_pipelined() {
    let v = verdict(&counts(10_000, 10, 10, 1000), &ObservedTimes::default());
    assert_eq!(v.kind, VerdictKind::Pipelined);
    assert_eq!(
        v.text,
        "pipelined: 10,000 commands in 10 writes of ~1,000 over 10 round trips"
    );
}

#[test]
fn a_pipeline_after_set_up_commands_is_told_by_its_depth_not_a_mean_write() {
    // redis-py's pipeline of 1,000 SETs after its handshake, as observed.
    let v = verdict(&counts(1_005, 7, 6, 1000), &ObservedTimes::default());
    assert_eq!(v.kind, VerdictKind::Pipelined);
    assert_eq!(
        v.text,
        "pipelined: 1,005 commands in 7 writes (up to 1,000 in flight at once) over 6 round trips"
    );
}

#[test]
fn a_stream_redis_answered_between_writes_is_timing_dependent_not_flipped() {
    // redis-cli --pipe: 8 writes of ~1,250 commands; 3 sent while replies were awaited,
    // 4 after every reply was back, unconfirmed as waits.
    let mut c = counts(10_002, 8, 5, 4000);
    c.overlapping_writes = 3;
    c.unconfirmed_trips = 4;
    c.batch_trips = 5;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(
        (v.kind, v.candidates.as_slice()),
        (
            VerdictKind::Undetermined,
            [VerdictKind::Pipelined, VerdictKind::AutoPipelined].as_slice()
        )
    );
    let why = v.timing_dependent.expect("a race, said");
    assert!(
        why.contains("pipelined or auto-pipelined by turns"),
        "{why}"
    );
    // Most of its writes sent while replies were awaited: auto-pipelined, and as the
    // others followed replies that may not have been waited for, said to be one stream in
    // pieces that reads either way.
    c.overlapping_writes = 7;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(
        (v.kind, v.candidates.as_slice()),
        (
            VerdictKind::Undetermined,
            [VerdictKind::AutoPipelined, VerdictKind::Pipelined].as_slice()
        )
    );
    let why = v.timing_dependent.expect("a race, said");
    assert!(why.contains("one batch written in pieces"), "{why}");
    // redis-py's pipeline: its handshake's single commands unconfirmed, one batch.
    let mut py = counts(1_005, 7, 6, 1000);
    py.overlapping_writes = 1;
    py.unconfirmed_trips = 5;
    py.batch_trips = 1;
    let v = verdict(&py, &ObservedTimes::default());
    assert_eq!((v.kind, v.timing_dependent), (VerdictKind::Pipelined, None));
}

#[test]
fn a_capture_does_not_take_segments_sent_while_replies_were_awaited_for_auto_pipelining() {
    // ioredis's pipeline of 1,000 SETs across a 10 ms link, captured: its batch left in
    // segments, all before the first reply could come back; one round trip for it.
    let mut c = counts(1_007, 10, 4, 1000);
    c.overlapping_writes = 9;
    c.writes_are_segments = true;
    let v = verdict(&c, &ObservedTimes::default());
    // Not auto-pipelined; and as the kernel merges small writes, ~100 commands a segment
    // could be a write per command: undetermined, the capture cannot tell.
    assert_eq!(
        (v.kind, v.candidates.as_slice()),
        (
            VerdictKind::Undetermined,
            [VerdictKind::Pipelined, VerdictKind::WritePerCommand].as_slice()
        ),
        "{}",
        v.text
    );
    assert!(
        v.text.contains("As the wire shows it, pipelined: 1,007 commands in 10 segments (up to 1,000 in flight at once) (9 of them left while replies were awaited: one write the kernel split"),
        "{}",
        v.text
    );
    assert_eq!(
        v.headline,
        "pipelined, or a pipeline written a command at a time: 1,007 commands, 4 waits"
    );
    // Through the proxy, reads are the client's writes: sent while replies were awaited.
    c.writes_are_segments = false;
    assert_eq!(
        verdict(&c, &ObservedTimes::default()).kind,
        VerdictKind::AutoPipelined
    );
}

#[test]
fn transactions_are_named() {
    let mut c = counts(1_007, 7, 7, 691);
    c.transactions = 1;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(
        v.text,
        "pipelined: 1,007 commands in 7 writes (up to 691 in flight at once) over 7 round trips, 1 MULTI/EXEC transaction"
    );
}

#[test]
fn the_breakdown_adds_up_to_the_wall_time() {
    let t = ObservedTimes {
        wall_us: 47_000_000.0,
        waiting_us: 35_250_000.0,
        at_redis_us: 4_700_000.0,
        client_us: 11_750_000.0,
        ..Default::default()
    };
    let v = verdict(&counts(100_000, 100_000, 100_000, 1), &t);
    assert!(
        v.text.ends_with(
            "; of 47.00 s: 75 % waiting on round trips (10 % at Redis), 25 % the client's own time"
        ),
        "{}",
        v.text
    );
    assert_eq!(t.network_us(), 30_550_000.0);
}

#[test]
fn idle_and_subscribers() {
    assert_eq!(
        verdict(&ObservedCounts::default(), &ObservedTimes::default()).kind,
        VerdictKind::Idle
    );
    let mut c = counts(2, 2, 2, 1);
    c.replies = 1;
    c.pushes = 40;
    assert_eq!(
        verdict(&c, &ObservedTimes::default()).kind,
        VerdictKind::Subscriber
    );
}

fn with_commands(top: &[(&str, u64)]) -> ObservedConnection {
    let commands = top.iter().map(|(_, n)| n).sum();
    let times = ObservedTimes::default();
    let counts = counts(commands, commands, commands, 1);
    ObservedConnection {
        id: 1,
        client: "127.0.0.1:1".into(),
        name: None,
        open: false,
        ended: None,
        top_commands: top.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
        verdict: verdict(&counts, &times),
        counts,
        times,
        equivalent: None,
        vantage: Default::default(),
        library: None,
        mean_set_value: None,
        words: None,
        probe: None,
        syscalls: None,
        window: None,
    }
}

#[test]
fn the_engine_stands_in_only_for_its_own_commands() {
    assert_eq!(
        stand_in(&with_commands(&[("GET", 700), ("SET", 300)])),
        Ok((Command::Get, 1000))
    );
    // Half SET/GET/INCR is enough; the count stays the connection's.
    assert_eq!(
        stand_in(&with_commands(&[("HSET", 50), ("INCR", 30), ("SET", 20)])),
        Ok((Command::Incr, 100))
    );
    // redis-benchmark's first connection: two CONFIG GETs, no SETs.
    let why = stand_in(&with_commands(&[("CONFIG", 2)])).unwrap_err();
    assert_eq!(
        why.to_string(),
        "no pipelined equivalent: 0 of its 2 commands are SET, GET or INCR (most common: CONFIG), the only ones pipescope's engine runs"
    );
    assert_eq!(stand_in(&with_commands(&[])), Err(NoEquivalent::NoCommands));
}

#[test]
fn unconfirmed_round_trips_that_decide_the_kind_make_it_timing_dependent() {
    // A client writing each command, slowed to a round trip's pace: the wire shows every
    // reply back before the next command, but 999 of those cannot be confirmed as waits.
    let mut c = counts(1_000, 1_000, 1_000, 2);
    c.unconfirmed_trips = 999;
    c.overlapping_writes = 10;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(
        (v.kind, v.candidates.as_slice()),
        (
            VerdictKind::Undetermined,
            [VerdictKind::OneAtATime, VerdictKind::WritePerCommand].as_slice()
        )
    );
    // The issue's words: the candidates, the range of waits (the last round trip confirmed
    // by nothing after it), and what would decide.
    assert_eq!(
        v.headline,
        "one at a time, or a pipeline written a command at a time: 1,000 commands, up to 1,000 waits"
    );
    assert!(
        v.text.starts_with("undetermined: each reply was back before the next command, and the wire cannot show whether the client waited for it; run with --probe, or --pid on this host. As the wire shows it, one at a time: "),
        "{}",
        v.text
    );
    assert_eq!(
        v.timing_dependent.as_deref(),
        Some(
            "timing-dependent: 999 of its 1,000 round trips could be the client's own pauses rather than waits; without them it reads as pipelined, a write per command"
        )
    );
    assert!(
        v.text.contains("(999 unconfirmed: every reply was back"),
        "{}",
        v.text
    );
    // Unconfirmed ones that would not change the kind are said, not marked.
    let mut c = counts(10_000, 10, 10, 1000);
    c.unconfirmed_trips = 9;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!((v.kind, v.timing_dependent), (VerdictKind::Pipelined, None));
}

#[test]
fn a_client_on_its_own_clock_is_no_one_at_a_time() {
    // Never two in flight, yet its commands kept their cadence whatever the replies did.
    let mut c = counts(1_000, 1_000, 1, 1);
    c.cadence_gaps = 999;
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(v.kind, VerdictKind::WritePerCommand, "{}", v.text);
    assert!(
        v.text
            .contains("999 times when every reply happened to be back"),
        "{}",
        v.text
    );
}

#[test]
fn small_writes_sent_while_replies_were_awaited_cannot_be_told_from_a_write_per_command() {
    // 1,000 commands written one by one, read by the proxy as 157 merged reads.
    let mut c = counts(1_000, 157, 95, 202);
    c.overlapping_writes = 60;
    let v = verdict(&c, &ObservedTimes::default());
    assert!(
        v.timing_dependent
            .as_deref()
            .is_some_and(|t| t.contains("~6.4 commands a write")),
        "{}",
        v.text
    );
    // redis-py's pipeline, 1,000 in 7 pieces, is plainly batched.
    let mut c = counts(1_005, 7, 6, 1000);
    c.overlapping_writes = 4;
    assert_eq!(
        verdict(&c, &ObservedTimes::default()).timing_dependent,
        None
    );
}

#[test]
fn a_verdict_recorded_before_headlines_still_loads_and_leads_with_its_sentence() {
    let old = r#"{"kind":"pipelined","text":"pipelined: 10 commands in 1 write over 1 round trip","timing_dependent":null}"#;
    let v: Verdict = serde_json::from_str(old).unwrap();
    assert_eq!(
        (
            v.kind,
            v.headline.as_str(),
            v.candidates.len(),
            v.decided_by
        ),
        (VerdictKind::Pipelined, "", 0, None)
    );
    assert_eq!(v.lead(), v.text);
    // And an undetermined one goes and comes back with its candidates.
    let mut c = counts(1_000, 1_000, 1_000, 1);
    c.unconfirmed_trips = 999;
    let v = verdict(&c, &ObservedTimes::default());
    let back: Verdict = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
    assert_eq!(back, v);
    assert_eq!(v.lead(), v.headline);
}

#[test]
fn a_connection_that_changed_behaviour_is_named_by_its_costliest_phase() {
    // 100 SETs one at a time (confirmed), then one pipeline of 100.
    let mut c = counts(200, 101, 101, 100);
    c.phases = vec![
        Phase {
            kind: VerdictKind::OneAtATime,
            round_trips: 100,
            commands: 100,
            writes: 100,
            us: 9_000.0,
            waiting_us: 8_000.0,
        },
        Phase {
            kind: VerdictKind::Pipelined,
            round_trips: 1,
            commands: 100,
            writes: 1,
            us: 1_000.0,
            waiting_us: 1_000.0,
        },
    ];
    let v = verdict(&c, &ObservedTimes::default());
    assert_eq!(
        v.headline,
        "one at a time for 90 % of its time: 100 commands, 100 waits; then one pipeline of 100"
    );
    // Read as a write per command throughout, a batch-like phase is merged reads: not said.
    let mut each = c.clone();
    each.writes = 200;
    each.overlapping_writes = 150;
    let v = verdict(&each, &ObservedTimes::default());
    assert_eq!(v.kind, VerdictKind::WritePerCommand, "{}", v.text);
    assert!(
        v.headline.starts_with("pipelined, a write per command: "),
        "{}",
        v.headline
    );
}

/// patterns.py send-all at loopback's pace, through the proxy: every reply back before
/// the next command, none of it confirmed as a wait.
pub(super) fn send_all() -> ObservedCounts {
    ObservedCounts {
        commands: 1_000,
        replies: 1_000,
        writes: 1_000,
        round_trips: 1_000,
        unconfirmed_trips: 999,
        max_depth: 1,
        ..Default::default()
    }
}

pub(super) fn syscalls(sends: u64, waits: u64) -> SyscallEvidence {
    SyscallEvidence {
        pid: 4242,
        sends,
        sent_bytes: sends * 40,
        receives: 3,
        nonblocking_receives: 0,
        waits,
        threads: 1,
        ..Default::default()
    }
}

/// The verdict on `c` given its syscalls `s`.
pub(super) fn with_syscalls(c: &ObservedCounts, s: &SyscallEvidence) -> Verdict {
    judge(&Evidence {
        syscalls: Some(s),
        ..Evidence::wire(c, &ObservedTimes::default())
    })
}

/// The probe held 20 replies and the client sent while each was held.
pub(super) fn kept_sending() -> ProbeEvidence {
    ProbeEvidence {
        held: 20,
        sent_while_held: 20,
        waited_for_release: 0,
        held_us: 8_000.0,
        late_us: 0.0,
    }
}

/// What was tried is not asked for again: a probe that held nothing leaves the verdict
/// undetermined, naming only --pid as what could decide; a verdict the probe decided
/// quotes the wire without asking for more.
#[test]
fn evidence_already_gathered_is_not_asked_for_again() {
    let c = send_all();
    let t = ObservedTimes::default();
    let wire = verdict(&c, &t);
    assert!(
        wire.text.contains("run with --probe, or --pid"),
        "{}",
        wire.text
    );
    let nothing = ProbeEvidence::default();
    let v = judge(&Evidence {
        probe: Some(&nothing),
        ..Evidence::wire(&c, &t)
    });
    assert_eq!(v.kind, VerdictKind::Undetermined);
    assert!(!v.text.contains("--probe"), "{}", v.text);
    assert!(
        v.text.contains(
            "the probe decided nothing (0 of 0 held decided), and --pid on the client's host could"
        ),
        "{}",
        v.text
    );
    let decided = judge(&Evidence {
        probe: Some(&kept_sending()),
        ..Evidence::wire(&c, &t)
    });
    assert_eq!(decided.decided_by, Some(DecidedBy::Probe));
    assert!(!decided.text.contains("--probe"), "{}", decided.text);
    assert!(!decided.text.contains("--pid"), "{}", decided.text);
    let s = syscalls(1_000, 1);
    let by_pid = judge(&Evidence {
        syscalls: Some(&s),
        ..Evidence::wire(&c, &t)
    });
    assert_eq!(by_pid.decided_by, Some(DecidedBy::Syscalls));
    assert!(!by_pid.text.contains("--pid"), "{}", by_pid.text);
}

/// Its syscalls count a wait per command (one at a time), the probe saw it send while
/// replies were held (it does not wait): neither is taken over the other.
#[test]
fn two_vantages_that_disagree_leave_it_undetermined_naming_both() {
    let c = send_all();
    let t = ObservedTimes::default();
    let s = syscalls(1_000, 1_000);
    let agree = judge(&Evidence {
        syscalls: Some(&s),
        ..Evidence::wire(&c, &t)
    });
    assert_eq!(agree.kind, VerdictKind::OneAtATime);
    let v = judge(&Evidence {
        syscalls: Some(&s),
        probe: Some(&kept_sending()),
        ..Evidence::wire(&c, &t)
    });
    assert_eq!(v.kind, VerdictKind::Undetermined, "{}", v.text);
    assert_eq!(
        v.candidates,
        [VerdictKind::OneAtATime, VerdictKind::WritePerCommand]
    );
    assert_eq!(
        v.headline,
        "its syscalls: one at a time; the probe: pipelined, a write per command — they disagree"
    );
    assert!(v.text.contains("decided differently"), "{}", v.text);
    // Agreeing, the first decides and says so.
    let waited = ProbeEvidence {
        held: 4,
        sent_while_held: 0,
        waited_for_release: 4,
        held_us: 2_000.0,
        late_us: 0.0,
    };
    let v = judge(&Evidence {
        syscalls: Some(&s),
        probe: Some(&waited),
        ..Evidence::wire(&c, &t)
    });
    assert_eq!(
        (v.kind, v.decided_by),
        (VerdictKind::OneAtATime, Some(DecidedBy::Syscalls))
    );
}

#[test]
fn the_wire_alone_leaves_it_undetermined() {
    let v = verdict(&send_all(), &ObservedTimes::default());
    assert_eq!(v.kind, VerdictKind::Undetermined);
    assert!(v.allows(VerdictKind::WritePerCommand) && v.allows(VerdictKind::OneAtATime));
    assert!(v.headline.chars().count() <= 92, "{}", v.headline);
}
