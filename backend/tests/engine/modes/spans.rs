//! Each mode's spans, when each command was issued and its reply came, batch by batch.

use super::*;

fn spans_by_batch(spans: &[Span], batch: usize) -> Vec<&[Span]> {
    spans.chunks(batch).collect()
}

#[tokio::test]
async fn spans_follow_each_mode_s_issue_and_reply_times() {
    let (_redis, target) = support::redis();
    let span_check = |outcome: &RunOutcome| {
        let first = &outcome.timeline.first;
        assert_eq!(first.len(), 95);
        for (k, s) in first.iter().enumerate() {
            assert_eq!(s.i, k as u64);
            assert!(s.issued_us <= s.replied_us, "{s:?}");
        }
        first.clone()
    };

    // Batch: a batch's commands share one write, so one issue time.
    let o = run(&target, 700, RunSpec::set(95, Mode::pipelined(10)))
        .await
        .unwrap();
    for b in spans_by_batch(&span_check(&o), 10) {
        assert!(b.iter().all(|s| s.issued_us == b[0].issued_us), "{b:?}");
    }
    keys::remove_run_keys(&target, 700, o.written)
        .await
        .unwrap();

    // Flush each command: every command its own write, each later than the one before.
    let each = Mode::Pipelined {
        batch: 10,
        flush: Flush::EachCommand,
    };
    let o = run(&target, 701, RunSpec::set(95, each)).await.unwrap();
    for b in spans_by_batch(&span_check(&o), 10) {
        assert!(
            b.windows(2).all(|w| w[0].issued_us < w[1].issued_us),
            "{b:?}"
        );
    }
    keys::remove_run_keys(&target, 701, o.written)
        .await
        .unwrap();

    // Buffered every 3: groups of three share a write.
    let buffered = Mode::Pipelined {
        batch: 10,
        flush: Flush::Buffered { commands: 3 },
    };
    let o = run(&target, 702, RunSpec::set(95, buffered)).await.unwrap();
    for b in spans_by_batch(&span_check(&o), 10) {
        let groups: Vec<&[Span]> = b.chunks(3).collect();
        for g in &groups {
            assert!(g.iter().all(|s| s.issued_us == g[0].issued_us), "{g:?}");
        }
        assert!(
            groups
                .windows(2)
                .all(|w| w[0][0].issued_us < w[1][0].issued_us)
        );
    }
    keys::remove_run_keys(&target, 702, o.written)
        .await
        .unwrap();

    // MULTI/EXEC and MSET: the whole batch is answered by one reply.
    for (run_id, mode) in [
        (703, Mode::Transaction { batch: 10 }),
        (704, Mode::Mset { batch: 10 }),
    ] {
        let o = run(&target, run_id, RunSpec::set(95, mode)).await.unwrap();
        for b in spans_by_batch(&span_check(&o), 10) {
            assert!(
                b.iter()
                    .all(|s| (s.issued_us, s.replied_us) == (b[0].issued_us, b[0].replied_us)),
                "{b:?}"
            );
        }
        keys::remove_run_keys(&target, run_id, o.written)
            .await
            .unwrap();
    }

    // Multiplexed: nothing is issued before an earlier command (the window slides forward).
    let o = run(
        &target,
        705,
        RunSpec::set(95, Mode::Multiplexed { in_flight: 8 }),
    )
    .await
    .unwrap();
    let spans = span_check(&o);
    assert!(spans.windows(2).all(|w| w[0].issued_us <= w[1].issued_us));
    assert!(spans.windows(2).all(|w| w[0].replied_us <= w[1].replied_us));
    // The first window goes out in one write.
    assert!(spans[..8].iter().all(|s| s.issued_us == spans[0].issued_us));
    keys::remove_run_keys(&target, 705, o.written)
        .await
        .unwrap();
    assert!(support::pipescope_keys(&target).await.is_empty());
}
