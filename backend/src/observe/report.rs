//! `pipescope observe`'s report: a verdict per connection as a table, JSON or Markdown.

use shared::observe::{ObservedConnection, duration, group};

/// One line per connection for a terminal.
pub fn table(conns: &[ObservedConnection]) -> String {
    if conns.is_empty() {
        return "no connections were observed\n".into();
    }
    let mut out = format!(
        "{:>4}  {:<21}  {:<14}  {:>10}  {:>10}  {:>11}  {:>6}  {:>10}  {:>10}\n",
        "id", "client", "name", "commands", "writes", "round trips", "depth", "wall", "own time"
    );
    for c in conns {
        out += &format!(
            "{:>4}  {:<21}  {:<14}  {:>10}  {:>10}  {:>11}  {:>6.1}  {:>10}  {:>10}\n",
            c.id,
            c.client,
            c.name.as_deref().unwrap_or("-"),
            group(c.counts.commands),
            group(c.counts.writes),
            group(c.counts.round_trips),
            c.times.mean_depth,
            duration(c.times.wall_us),
            duration(c.times.client_us),
        );
        out += &format!("      {}\n", c.verdict.text);
        if let Some(e) = &c.equivalent {
            out += &format!("      {}\n", equivalent_line(c, e));
        }
        match &c.ended {
            Some(end) => out += &format!("      ended: {end}\n"),
            None => {
                out += "      still open when observation stopped (closing pipescope closed it)\n"
            }
        }
    }
    out
}

/// "pipescope's engine, 100,000 SETs pipelined in batches of 1,000 over the same network:
/// 112.9 ms (measured), 416× this connection's 47.00 s".
pub fn equivalent_line(c: &ObservedConnection, e: &shared::observe::PipelinedEquivalent) -> String {
    let ratio = if e.wall_us > 0 {
        format!(
            ", {:.1}× faster than this connection's {}",
            c.times.wall_us / e.wall_us as f64,
            duration(c.times.wall_us)
        )
    } else {
        String::new()
    };
    format!(
        "pipescope's engine, {} {}s pipelined in batches of {} over the same network: {} (measured){ratio}",
        group(e.count),
        e.command,
        group(e.batch as u64),
        duration(e.wall_us as f64),
    )
}

/// A Markdown table to paste into notes or slides.
pub fn markdown(conns: &[ObservedConnection]) -> String {
    let mut out = String::from(
        "| id | client | name | commands | writes | round trips | mean depth | wall | waiting | at Redis | own time | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for c in conns {
        let t = &c.times;
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} |\n",
            c.id,
            c.client,
            c.name.as_deref().unwrap_or("-"),
            group(c.counts.commands),
            group(c.counts.writes),
            group(c.counts.round_trips),
            t.mean_depth,
            duration(t.wall_us),
            duration(t.waiting_us),
            duration(t.at_redis_us),
            duration(t.client_us),
            c.verdict.text.replace('|', "\\|"),
        );
    }
    out
}

/// One JSON array of every connection.
pub fn json(conns: &[ObservedConnection]) -> String {
    serde_json::to_string_pretty(conns).expect("connections serialise")
}
