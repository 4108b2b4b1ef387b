//! `pipescope observe`'s report: a verdict per connection as a table for a terminal. JSON and
//! Markdown live in `shared::observe_report`, which the page's export uses too.

use shared::observe::{NoEquivalent, ObservedConnection, duration, group, stand_in};
pub use shared::observe_report::{equivalent_line, json, markdown};

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
        match (&c.equivalent, stand_in(c)) {
            (Some(e), _) => out += &format!("      {}\n", equivalent_line(c, e)),
            (None, Err(why @ NoEquivalent::OtherCommands { .. })) => {
                out += &format!("      {why}\n")
            }
            (None, _) => {}
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
