//! What the page says of an observed connection beyond its numbers: its time taken apart,
//! what would help (and what if it pipelined, to draw), its pipelined equivalent and its row
//! of the Markdown export. Worded here,
//! by the functions `pipescope observe` prints with (`parts`, `advice`,
//! `observe_report::equivalent_line`, `observe_report::markdown_row`), and filled in by the
//! server as it sends a connection to a page (`ObservedConnection::with_words`): the page shows
//! these strings and carries none of the wording in its WASM.

use serde::{Deserialize, Serialize};

use super::numbers::duration;
use super::{Figure, ObservedConnection, Vantage, WhatIf, advice, parts, what_if};
use crate::digits::group;
use crate::observe_report::{equivalent_line, markdown_row};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Words {
    /// Its wall time taken apart, then its counts (`time_split`).
    pub split: Vec<Figure>,
    /// What would help, when it waits on round trips (`advice`).
    pub help: Option<Help>,
    /// Its pipelined equivalent, once measured (`observe_report::equivalent_line`).
    pub equivalent: Option<String>,
    /// Its row of the Markdown table (`observe_report::markdown_row`).
    pub markdown_row: String,
    /// What the probe held and what the client did meanwhile, when it was probed
    /// (`ProbeEvidence::line`).
    #[serde(default)]
    pub probe: Option<String>,
    /// It as measured beside its commands projected in batches, to draw (`what_if`). The page
    /// draws it and leaves it out of its JSON export, which carries the counts and times it is
    /// derived from (its serialiser would cost the page's WASM budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(skip_serializing))]
    pub what_if: Option<WhatIf>,
}

/// What would help a connection that waits on round trips.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Help {
    /// The change for its library (`Advice::change`).
    pub change: String,
    /// "Now 60.0 ms (its own time and its waits); pipelined in batches of 10 ~15.0 ms, of 100
    /// ~10.5 ms (derived from …).", when there were enough round trips to project from.
    pub projection: Option<String>,
}

impl ObservedConnection {
    /// The connection with its `words` worded from its figures as they are now.
    pub fn with_words(mut self) -> ObservedConnection {
        self.words = Some(words(&self));
        self
    }
}

/// `c`'s words (whatever `c.words` already holds is not read).
pub fn words(c: &ObservedConnection) -> Words {
    let help = advice(c).map(|a| Help {
        // The sentence, begun with a capital and ended.
        projection: a.projection_line().map(|line| {
            let mut chars = line.chars();
            let first = chars.next().map(|f| f.to_uppercase().collect::<String>());
            format!("{}{}.", first.unwrap_or_default(), chars.as_str())
        }),
        change: a.change,
    });
    Words {
        split: time_split(c),
        help,
        equivalent: c.equivalent.as_ref().map(|e| equivalent_line(c, e)),
        markdown_row: markdown_row(c),
        probe: c.probe.as_ref().map(|p| p.line(c.times.wall_us)),
        what_if: what_if(c),
    }
}

/// A connection's wall time taken apart (`parts`: the parts add up to the wall, their
/// percentages to 100), then its counts, every figure with its provenance.
pub fn time_split(c: &ObservedConnection) -> Vec<Figure> {
    let t = &c.times;
    let capture = c.vantage == Vantage::Capture;
    let by = if capture {
        "measured by the capture on its host"
    } else {
        "measured by the proxy"
    };
    let fig = |label: &str, value: String, how: String| Figure {
        label: label.to_string(),
        value,
        how,
    };
    let mut out = vec![fig(
        "wall time",
        duration(t.wall_us),
        format!(
            "{by}: the first command to the last reply (or to now), its idle end left out; the parts below add up to it, their shares to 100 %"
        ),
    )];
    out.extend(parts(c).into_iter().map(|p| Figure {
        value: format!("{} ({} %)", duration(p.us), p.percent),
        label: p.label,
        how: p.how,
    }));
    out.push(fig(
        "round trips",
        group(c.counts.round_trips),
        format!(
            "{by}: waits for replies with nothing more to send (unconfirmed ones: see the verdict)"
        ),
    ));
    let writes = if capture {
        format!("{by}: TCP segments that start a command (the kernel merges and splits writes)")
    } else {
        format!("{by}: its reads that start a command; small writes may arrive merged")
    };
    out.push(fig(
        if capture { "segments" } else { "writes" },
        group(c.counts.writes),
        writes,
    ));
    out.push(fig(
        "mean depth",
        format!("{:.1}", t.mean_depth),
        "derived: commands in flight, averaged over the time any were".into(),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::verdict::verdict;
    use crate::observe::{ObservedCounts, ObservedTimes, PipelinedEquivalent};

    fn conn(commands: u64, round_trips: u64) -> ObservedConnection {
        let counts = ObservedCounts {
            commands,
            replies: commands,
            writes: commands,
            round_trips,
            max_depth: 1,
            ..Default::default()
        };
        let times = ObservedTimes {
            wall_us: 1_000.0,
            waiting_us: 800.0,
            at_redis_us: 100.0,
            client_us: 200.0,
            ..Default::default()
        };
        ObservedConnection {
            id: 1,
            client: "127.0.0.1:50000".into(),
            name: Some("loop".into()),
            open: true,
            ended: None,
            top_commands: vec![("SET".into(), commands)],
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
    fn every_figure_says_how_it_was_obtained() {
        let figures = time_split(&conn(10, 10));
        for f in &figures {
            assert!(
                ["measured", "derived", "assumed"]
                    .iter()
                    .any(|w| f.how.starts_with(w)),
                "{f:?}"
            );
        }
        let network = figures
            .iter()
            .find(|f| f.label == "in the proxy and the dialled network")
            .unwrap();
        assert_eq!(network.value, "700 µs (70 %)");
        assert!(
            figures
                .iter()
                .any(|f| f.how.contains("small writes may arrive merged"))
        );
    }

    #[test]
    fn the_observer_s_hops_are_a_part_of_their_own_and_the_shares_add_up() {
        let mut c = conn(10, 10);
        c.vantage = Vantage::Proxy {
            hop_us: Some(10.0),
            remote_redis: false,
            hop_spread: None,
        };
        c.times.observer_us = 100.0;
        c.times.client_us = 100.0;
        c.times.wall_us = 1_000.0;
        let figures = time_split(&c);
        let value = |label: &str| {
            figures
                .iter()
                .find(|f| f.label == label)
                .map(|f| f.value.clone())
        };
        assert_eq!(
            value("the observer's two hops").as_deref(),
            Some("100 µs (10 %)")
        );
        assert_eq!(
            value("the client's own time").as_deref(),
            Some("100 µs (10 %)")
        );
        let hops = figures
            .iter()
            .find(|f| f.label == "the observer's two hops")
            .unwrap();
        assert!(hops.how.contains("10 µs a round trip"), "{}", hops.how);
        let shares: u32 = parts(&c).iter().map(|p| p.percent).sum();
        assert_eq!(shares, 100);
    }

    #[test]
    fn from_a_capture_the_writes_are_segments_and_the_times_the_capture_host_s() {
        let mut c = conn(10, 10);
        c.vantage = Vantage::Capture;
        let figures = time_split(&c);
        assert!(figures.iter().any(|f| f.label == "segments"));
        assert!(
            figures.iter().all(|f| !f.how.contains("by the proxy")),
            "{figures:?}"
        );
        assert!(figures.iter().all(|f| f.label != "the observer's two hops"));
    }

    #[test]
    fn a_loop_is_told_what_would_help_and_a_measured_equivalent_is_said() {
        let mut c = conn(1_000, 1_000);
        c.equivalent = Some(PipelinedEquivalent {
            command: "SET".into(),
            count: 1_000,
            batch: 1_000,
            wall_us: 50,
            compared_us: 1_000.0,
            value_bytes: None,
            through_relay: true,
        });
        let w = c.with_words().words.unwrap();
        let help = w.help.unwrap();
        assert!(help.change.starts_with("pipeline the commands"), "{help:?}");
        let projection = help.projection.unwrap();
        assert!(projection.starts_with("Now "), "{projection}");
        assert!(projection.contains("(derived from its 1,000 commands"));
        assert!(
            w.equivalent
                .unwrap()
                .starts_with("pipescope's engine, 1,000 SETs pipelined in batches of 1,000")
        );
        assert!(
            w.markdown_row
                .starts_with("| 1 | 127.0.0.1:50000 | loop | 1,000 |")
        );
    }
}
