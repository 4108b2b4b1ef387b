//! Atomicity, measured: where a second client's commands landed among a run's. Both sides INCR
//! one counter (`keys::counter`), so every reply is the counter's value just after that
//! command: Redis's own order of execution. A batch whose first and last commands got `first`
//! and `last` had `last - first + 1 - n` of the other client's INCRs executed strictly inside
//! it (one connection's replies come in order, so the run's own values rise through a batch).

use serde::{Deserialize, Serialize};

/// Batches whose counter values are kept for drawing (the first ones of the run).
pub const DRAWN_BATCHES: usize = 200;
/// The other client's INCRs kept for drawing (its first ones).
pub const DRAWN_OTHER: usize = 4_000;

/// One batch of the run (a pipeline's batch or one MULTI/EXEC) as the counter saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchValues {
    /// The counter's value after the batch's first command, and after its last.
    pub first: u64,
    pub last: u64,
    /// Commands in the batch.
    pub n: u64,
}

impl BatchValues {
    /// The other client's INCRs Redis executed between the batch's first and last command.
    pub fn others_inside(&self) -> u64 {
        (self.last + 1)
            .saturating_sub(self.first)
            .saturating_sub(self.n)
    }

    /// Whether the counter value `v` (another client's INCR) fell inside this batch.
    pub fn holds(&self, v: u64) -> bool {
        self.first < v && v < self.last
    }
}

/// One INCR of the other client: the value Redis gave it, and when it was sent and answered
/// (µs from the run's start, the run's own time axis).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OtherIncr {
    pub value: u64,
    pub issued_us: f64,
    pub replied_us: f64,
}

/// What a run with the other client measured (`RunSpec::other_client`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Interleaving {
    /// The run's batches (pipelines or MULTI/EXECs) answered.
    pub batches: u64,
    /// Batches with at least one of the other client's INCRs inside.
    pub batches_interleaved: u64,
    /// The other client's INCRs answered while the run went (one at a time, on its own
    /// connection straight to Redis).
    pub other_commands: u64,
    /// Of those, executed strictly inside one of the run's batches: the sum of
    /// `BatchValues::others_inside` over every batch.
    pub other_inside: u64,
    /// The counter read with GET once both sides stopped: the run's commands plus the other
    /// client's, when nothing was lost.
    pub final_value: Option<u64>,
    /// The first `DRAWN_BATCHES` batches.
    pub first_batches: Vec<BatchValues>,
    /// The other client's first INCRs, up to `DRAWN_OTHER`, none past the last kept batch, so
    /// each one is known to be inside a batch or between batches.
    pub other_first: Vec<OtherIncr>,
}

impl Interleaving {
    /// The batch of `first_batches` the counter value `v` landed inside, if any.
    pub fn batch_holding(&self, v: u64) -> Option<usize> {
        // Batches' values rise through the run: the last batch starting below `v`.
        let k = self.first_batches.partition_point(|b| b.first < v);
        let b = self.first_batches.get(k.checked_sub(1)?)?;
        b.holds(v).then_some(k - 1)
    }

    /// The measured result in words, numbers written by `n`, e.g. "the other client's 812
    /// INCRs: 640 landed inside the run's 100 pipelines (interleaved in 97 of 100 pipelines)".
    pub fn sentence(&self, batch_word: &str, n: impl Fn(u64) -> String) -> String {
        let verdict = if self.other_inside > 0 {
            format!(
                "interleaved in {} of {} {batch_word}",
                n(self.batches_interleaved),
                n(self.batches)
            )
        } else {
            "none interleaved".to_string()
        };
        format!(
            "the other client's {} INCRs: {} landed inside the run's {} {batch_word} ({verdict})",
            n(self.other_commands),
            n(self.other_inside),
            n(self.batches)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_counts_the_values_it_skipped() {
        // 5 commands got 10, 11, 13, 14, 16: the other client had 12 and 15.
        let b = BatchValues {
            first: 10,
            last: 16,
            n: 5,
        };
        assert_eq!(b.others_inside(), 2);
        assert!(b.holds(12) && b.holds(15));
        assert!(!b.holds(10) && !b.holds(16) && !b.holds(9));
        let whole = BatchValues {
            first: 20,
            last: 24,
            n: 5,
        };
        assert_eq!(whole.others_inside(), 0);
    }

    #[test]
    fn values_are_placed_in_their_batch() {
        let i = Interleaving {
            first_batches: vec![
                BatchValues {
                    first: 1,
                    last: 4,
                    n: 3,
                },
                BatchValues {
                    first: 6,
                    last: 8,
                    n: 3,
                },
            ],
            ..Interleaving::default()
        };
        assert_eq!(i.batch_holding(2), Some(0));
        assert_eq!(i.batch_holding(5), None, "between batches");
        assert_eq!(i.batch_holding(9), None, "after them");
        assert_eq!(i.batch_holding(0), None, "before them");
    }

    #[test]
    fn the_sentence_says_what_was_measured() {
        let i = Interleaving {
            batches: 100,
            batches_interleaved: 97,
            other_commands: 812,
            other_inside: 640,
            ..Interleaving::default()
        };
        assert_eq!(
            i.sentence("pipelines", |n| n.to_string()),
            "the other client's 812 INCRs: 640 landed inside the run's 100 pipelines (interleaved in 97 of 100 pipelines)"
        );
        let none = Interleaving {
            other_inside: 0,
            batches_interleaved: 0,
            ..i
        };
        assert!(
            none.sentence("transactions", |n| n.to_string())
                .ends_with("(none interleaved)")
        );
    }
}
