//! Observed connections as Markdown and JSON, and the pipelined-equivalent sentence: here, not
//! in the backend, so `pipescope observe` and the page's export say the same thing.

use crate::digits::group;
use crate::observe::{ObservedConnection, PipelinedEquivalent, duration};

/// "pipescope's engine, 100,000 SETs of 64 B pipelined in batches of 1,000 through a relay like
/// the observer's: 112.9 ms (measured), 312.4× less than this connection's 35.25 s on round
/// trips (measured at the proxy; its own time and idle gaps left out)".
pub fn equivalent_line(c: &ObservedConnection, e: &PipelinedEquivalent) -> String {
    // Recordings from before `compared_us` compare with the wall, as they said then.
    let (against, what) = if e.compared_us > 0.0 {
        (
            e.compared_us,
            "on round trips (measured at the proxy; its own time and idle gaps left out)",
        )
    } else {
        (c.times.wall_us, "in all")
    };
    let ratio = match against / e.wall_us as f64 {
        r if !r.is_finite() || r <= 0.0 => String::new(),
        r if r >= 1.0 => format!(
            ", {r:.1}× less than this connection's {} {what}",
            duration(against)
        ),
        // A handful of commands: the engine's run costs more than the client's own.
        r => format!(
            ", {:.1}× more than this connection's {} {what}",
            1.0 / r,
            duration(against)
        ),
    };
    let size = e
        .value_bytes
        .map(|b| format!(" of {b} B"))
        .unwrap_or_default();
    let path = if e.through_relay {
        "through a relay like the observer's"
    } else {
        "over the same network"
    };
    format!(
        "pipescope's engine, {} {}s{size} pipelined in batches of {} {path}: {} (measured){ratio}",
        group(e.count),
        e.command,
        group(e.batch as u64),
        duration(e.wall_us as f64),
    )
}

/// The columns every report of connections shows, in order: headings, then one connection's
/// figures (the terminal's table and the Markdown both lay these out).
pub const COLUMNS: [&str; 12] = [
    "id",
    "client",
    "name",
    "commands",
    "writes",
    "round trips",
    "mean depth",
    "wall",
    "waiting",
    "at Redis",
    "observer",
    "own time",
];

/// Connection `c`'s figures under `COLUMNS`.
pub fn cells(c: &ObservedConnection) -> [String; 12] {
    let t = &c.times;
    [
        c.id.to_string(),
        c.client.clone(),
        c.name.clone().unwrap_or_else(|| "-".into()),
        group(c.counts.commands),
        group(c.counts.writes),
        group(c.counts.round_trips),
        format!("{:.1}", t.mean_depth),
        duration(t.wall_us),
        duration(t.waiting_us),
        duration(t.at_redis_us),
        duration(t.observer_us),
        duration(t.client_us),
    ]
}

/// A Markdown table to paste into notes or slides: `COLUMNS` and the verdict.
pub fn markdown(conns: &[ObservedConnection]) -> String {
    let mut out = markdown_head();
    for c in conns {
        out += &markdown_row(c);
    }
    out
}

/// The Markdown table's heading and rule lines.
pub fn markdown_head() -> String {
    let headings = COLUMNS.iter().map(|h| h.to_string());
    markdown_line(&mut headings.clone().chain(["verdict".into()]))
        + &markdown_line(&mut headings.chain(["verdict".into()]).map(|_| "---".into()))
}

/// Connection `c`'s line of the Markdown table (the page gets it worded: `Words`): its
/// figures, then its verdict's headline in bold with the detail after it.
pub fn markdown_row(c: &ObservedConnection) -> String {
    let v = &c.verdict;
    let text = match &c.probe {
        Some(p) => format!("{} ({})", v.text, p.line(c.times.wall_us)),
        None => v.text.clone(),
    };
    let verdict = if v.headline.is_empty() {
        text
    } else {
        format!("**{}**<br>{text}", v.headline)
    };
    markdown_line(&mut cells(c).into_iter().chain([verdict]))
}

fn markdown_line(cells: &mut dyn Iterator<Item = String>) -> String {
    let mut line = String::from("|");
    for cell in cells {
        line += &format!(" {} |", cell.replace('|', "\\|"));
    }
    line + "\n"
}

/// One JSON array of every connection.
pub fn json(conns: &[ObservedConnection]) -> String {
    serde_json::to_string_pretty(conns).expect("connections serialise")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{ObservedCounts, ObservedTimes, Verdict, VerdictKind};

    fn connection(name: Option<&str>, verdict: &str) -> ObservedConnection {
        ObservedConnection {
            id: 7,
            client: "127.0.0.1:50000".into(),
            name: name.map(Into::into),
            open: false,
            ended: Some("closed by the client".into()),
            top_commands: vec![("SET".into(), 3)],
            counts: ObservedCounts {
                commands: 100_000,
                writes: 100,
                round_trips: 100,
                ..Default::default()
            },
            times: ObservedTimes::default(),
            verdict: Verdict {
                kind: VerdictKind::Pipelined,
                headline: String::new(),
                text: verdict.into(),
                timing_dependent: None,
                candidates: Vec::new(),
                decided_by: None,
            },
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
    fn markdown_lays_out_the_columns_and_the_verdict_with_pipes_escaped() {
        let md = markdown(&[connection(Some("loader"), "a | b")]);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 3, "{md}");
        let cells = |l: &str| l.matches(" |").count();
        assert_eq!(cells(lines[0]), COLUMNS.len() + 1, "{md}");
        assert!(lines[1].starts_with("| --- |"), "{md}");
        assert!(
            lines[2].starts_with("| 7 | 127.0.0.1:50000 | loader | 100,000 | 100 | 100 |"),
            "{md}"
        );
        assert!(lines[2].ends_with("| a \\| b |"), "{md}");
        // The headline leads, in bold.
        let mut c = connection(None, "the detail");
        c.verdict.headline = "pipelined: 100,000 commands in 100 writes, 100 waits".into();
        assert!(
            markdown_row(&c).ends_with(
                "| **pipelined: 100,000 commands in 100 writes, 100 waits**<br>the detail |\n"
            ),
            "{}",
            markdown_row(&c)
        );
    }
}
