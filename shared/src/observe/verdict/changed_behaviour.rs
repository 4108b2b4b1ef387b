//! A connection read as phases (`Phase`): which of them matter, which cost the most, and the
//! headline that names it before the others ("one at a time for 89 % of its time: 200
//! commands, 200 waits; then one pipeline of 200").

use crate::digits::group;
use crate::observe::numbers::{count, percent};
use crate::observe::{ObservedCounts, Phase, VerdictKind};

/// The phases that matter, in order: a tenth of the commands at least (a handshake's few
/// round trips can take more time than a pipeline of 1,000 across a network, and are not
/// what the connection did); `None` unless two of them behaved differently.
pub fn phases_that_matter(c: &ObservedCounts) -> Option<Vec<&Phase>> {
    let total: f64 = c.phases.iter().map(|p| p.us).sum();
    let big: Vec<&Phase> = c
        .phases
        .iter()
        .filter(|p| p.commands >= 2 && p.commands * 10 >= c.commands)
        .collect();
    (total > 0.0 && big.len() >= 2 && big.iter().any(|p| p.kind != big[0].kind)).then_some(big)
}

/// The phase that cost the most time, of those that matter.
pub fn costliest_phase(c: &ObservedCounts) -> Option<&Phase> {
    phases_that_matter(c)?
        .into_iter()
        .max_by(|a, b| a.us.total_cmp(&b.us))
}

/// How long a phased headline may be, with what follows it (who decided): one line.
const ROOM: usize = 100;

/// The headline of a connection that changed behaviour, `then` after it: its costliest phase
/// with its share of the time, then the others in order. Kept within one line by saying less
/// where it would be longer: without "of its time", then the other phases only counted.
pub fn phased_headline(c: &ObservedCounts, then: &str) -> Option<String> {
    let big = phases_that_matter(c)?;
    let total: f64 = c.phases.iter().map(|p| p.us).sum();
    let (i, top) = big
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.us.total_cmp(&b.1.us))?;
    // Single commands' round trips are waits only where the wire confirmed them.
    let sure = c.unconfirmed_trips == 0;
    let lead = |of_its_time: &str| {
        format!(
            "{} for {} %{of_its_time}: {}",
            words(top, sure),
            percent(top.us, total),
            figures(top, sure)
        )
    };
    let listed = |phases: &[&Phase]| -> String {
        let briefs: Vec<String> = phases.iter().map(|p| brief(p, sure)).collect();
        briefs.join(", then ")
    };
    let others = {
        let mut line = String::new();
        if i > 0 {
            line += &format!("; after {}", listed(&big[..i]));
        }
        if i + 1 < big.len() {
            line += &format!("; then {}", listed(&big[i + 1..]));
        }
        line
    };
    let counted = match big.len() - 1 {
        1 => " (and one other phase)".to_string(),
        n => format!(" (and {n} other phases)"),
    };
    let tries = [
        lead(" of its time") + &others,
        lead("") + &others,
        lead("") + &counted,
    ];
    let fits = |line: &String| line.chars().count() + then.chars().count() <= ROOM;
    let line = tries.iter().find(|l| fits(l)).unwrap_or(&tries[2]).clone();
    Some(line + then)
}

fn words(p: &Phase, sure: bool) -> &'static str {
    match p.kind {
        VerdictKind::OneAtATime if sure => "one at a time",
        // Each reply back before the next command, not shown to be waited for.
        VerdictKind::OneAtATime => "a command at a time",
        VerdictKind::WritePerCommand => "a write per command",
        _ => "pipelined",
    }
}

fn figures(p: &Phase, sure: bool) -> String {
    match p.kind {
        VerdictKind::OneAtATime => {
            let waits = count(p.round_trips, "wait");
            let waits = if sure {
                waits
            } else {
                format!("up to {waits}")
            };
            format!("{}, {waits}", count(p.commands, "command"))
        }
        VerdictKind::WritePerCommand => format!(
            "{} in {}",
            count(p.commands, "command"),
            count(p.writes, "write")
        ),
        _ => format!(
            "{} of ~{}",
            count(p.round_trips, "batch"),
            group(p.commands / p.round_trips.max(1))
        ),
    }
    .replace("batchs", "batches")
}

fn brief(p: &Phase, sure: bool) -> String {
    match p.kind {
        VerdictKind::Pipelined if p.round_trips == 1 => {
            format!("one pipeline of {}", group(p.commands))
        }
        VerdictKind::Pipelined => format!(
            "{} pipelines of ~{}",
            group(p.round_trips),
            group(p.commands / p.round_trips.max(1))
        ),
        _ => format!("{} {}", group(p.commands), words(p, sure)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(kind: VerdictKind, round_trips: u64, commands: u64, us: f64) -> Phase {
        Phase {
            kind,
            round_trips,
            commands,
            writes: round_trips,
            us,
            waiting_us: us * 0.9,
        }
    }

    #[test]
    fn the_costliest_phase_leads_and_the_others_follow_in_order() {
        // redis-py: 200 single SETs, then a pipeline of 200 (its handshake's few trips are
        // too small to matter).
        let c = ObservedCounts {
            commands: 404,
            round_trips: 205,
            phases: vec![
                phase(VerdictKind::OneAtATime, 4, 4, 400.0),
                phase(VerdictKind::OneAtATime, 200, 200, 89_000.0),
                phase(VerdictKind::Pipelined, 1, 200, 11_000.0),
            ],
            ..Default::default()
        };
        // The handshake's 4 commands are too few to matter.
        assert_eq!(
            phased_headline(&c, "").as_deref(),
            Some(
                "one at a time for 89 % of its time: 200 commands, 200 waits; then one pipeline of 200"
            )
        );
        assert_eq!(costliest_phase(&c).map(|p| p.commands), Some(200));
        // Unconfirmed waits are not said to be waits.
        let unsure = ObservedCounts {
            unconfirmed_trips: 199,
            ..c.clone()
        };
        assert!(phased_headline(&unsure, "").unwrap().starts_with(
            "a command at a time for 89 % of its time: 200 commands, up to 200 waits"
        ),);
        // One kind throughout: no phases to tell.
        let alike = ObservedCounts {
            phases: vec![phase(VerdictKind::Pipelined, 5, 5_000, 1_000.0)],
            ..c
        };
        assert_eq!(phased_headline(&alike, ""), None);
    }

    #[test]
    fn a_handshake_that_took_longer_than_the_pipeline_is_no_phase() {
        // redis-py's pipeline across a 10 ms round trip: its 5 handshake commands took 83 %.
        let c = ObservedCounts {
            commands: 1_005,
            round_trips: 6,
            phases: vec![
                phase(VerdictKind::OneAtATime, 5, 5, 50_000.0),
                phase(VerdictKind::Pipelined, 1, 1_000, 10_000.0),
            ],
            ..Default::default()
        };
        assert_eq!(phased_headline(&c, ""), None);
    }

    #[test]
    fn many_phases_are_counted_rather_than_listed_past_one_line() {
        // patterns.py send-all probed beside busy processes: its writes bunched into pieces.
        let c = ObservedCounts {
            commands: 5_000,
            round_trips: 30,
            phases: vec![
                phase(VerdictKind::Pipelined, 4, 768, 900_000.0),
                phase(VerdictKind::WritePerCommand, 10, 3_316, 3_000_000.0),
                phase(VerdictKind::Pipelined, 6, 900, 700_000.0),
            ],
            ..Default::default()
        };
        let by = " — by the probe";
        let line = phased_headline(&c, by).unwrap();
        assert!(line.chars().count() <= ROOM, "{line}");
        assert!(line.starts_with("a write per command for 65 %"), "{line}");
        assert!(line.ends_with(by), "{line}");
        assert!(line.contains("(and 2 other phases)"), "{line}");
        // Room enough: the other listed, with "of its time".
        let two = ObservedCounts {
            phases: c.phases[..2].to_vec(),
            ..c.clone()
        };
        let short = phased_headline(&two, "").unwrap();
        assert!(
            short.contains("of its time") && short.contains("; after 4 pipelines of ~192"),
            "{short}"
        );
    }
}
