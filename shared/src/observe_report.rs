//! Observed connections as Markdown and JSON, and the pipelined-equivalent sentence: here, not
//! in the backend, so `pipescope observe` and the page's export say the same thing.

use crate::observe::{ObservedConnection, PipelinedEquivalent, duration, group};

/// "pipescope's engine, 100,000 SETs pipelined in batches of 1,000 over the same network:
/// 112.9 ms (measured), 416.3× faster than this connection's 47.00 s".
pub fn equivalent_line(c: &ObservedConnection, e: &PipelinedEquivalent) -> String {
    let ratio = match c.times.wall_us / e.wall_us as f64 {
        r if !r.is_finite() || r <= 0.0 => String::new(),
        r if r >= 1.0 => format!(
            ", {r:.1}× faster than this connection's {}",
            duration(c.times.wall_us)
        ),
        // A handful of commands: the engine's run costs more than the client's own.
        r => format!(
            ", {:.1}× slower than this connection's {}",
            1.0 / r,
            duration(c.times.wall_us)
        ),
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
