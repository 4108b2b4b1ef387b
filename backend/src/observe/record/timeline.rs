//! One observed connection's requests as a timeline, drawn like a run's.

use shared::{Span, Timeline};

use super::{Record, Stamps};

impl Record {
    /// Its requests as a timeline: those whose reply was handed back.
    pub fn timeline(&self) -> (Timeline, Vec<f64>) {
        let span = |i: u64, s: &Stamps| {
            s.handed.map(|handed| Span {
                i,
                issued_us: s.arrived,
                replied_us: handed,
                at_server_us: s.at_redis,
                from_server_us: s.from_redis,
                node: None,
                redirect: None,
            })
        };
        let first = self
            .first
            .iter()
            .enumerate()
            .filter_map(|(i, s)| span(i as u64, s))
            .collect();
        let sampled = self
            .sampled
            .iter()
            .filter_map(|(i, s)| span(*i, s))
            .collect();
        (
            Timeline {
                first,
                sampled,
                stride: self.stride,
            },
            self.writes_us.clone(),
        )
    }
}
