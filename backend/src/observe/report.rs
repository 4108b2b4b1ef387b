//! `pipescope observe`'s report: a verdict per connection as a table for a terminal. JSON and
//! Markdown live in `shared::observe_report`, which the page's export uses too.

use shared::observe::{NoEquivalent, ObservedConnection, advice, stand_in};
use shared::observe_report::{COLUMNS, cells};
pub use shared::observe_report::{equivalent_line, json, markdown};

/// One line of figures per connection for a terminal (`COLUMNS`, each as wide as its widest
/// cell), then its verdict's headline and detail, its pipelined equivalent and how it ended,
/// indented.
pub fn table(conns: &[ObservedConnection]) -> String {
    if conns.is_empty() {
        return "no connections were observed\n".into();
    }
    let rows: Vec<[String; 12]> = conns.iter().map(cells).collect();
    let widths: Vec<usize> = (0..COLUMNS.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([COLUMNS[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Text columns (client, name) to the left, figures to the right.
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, cell) in cells.enumerate() {
            let w = widths[i];
            out += &match i {
                1 | 2 => format!("{cell:<w$}  "),
                _ => format!("{cell:>w$}  "),
            };
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(&mut COLUMNS.iter().copied());
    for (c, row) in conns.iter().zip(&rows) {
        out += &line(&mut row.iter().map(String::as_str));
        // The headline first, the detail beneath it.
        out += &format!("      {}\n", c.verdict.lead());
        if !c.verdict.headline.is_empty() {
            out += &format!("        {}\n", c.verdict.text);
        }
        if let Some(w) = c.window.as_ref().and_then(|w| w.line()) {
            out += &format!("      {w}\n");
        }
        if let Some(p) = &c.probe {
            out += &format!("      {}\n", p.line(c.times.wall_us));
        }
        if let Some(a) = advice(c) {
            out += &format!("      what would help: {}\n", a.change);
            if let Some(line) = a.projection_line() {
                out += &format!("      {line}\n");
            }
        }
        // A capture never gets an equivalent (nothing ran beside it): why it has none is
        // said only where one could have been measured.
        let could = !matches!(c.vantage, shared::observe::Vantage::Capture);
        match (&c.equivalent, stand_in(c)) {
            (Some(e), _) => out += &format!("      {}\n", equivalent_line(c, e)),
            (None, Err(why @ NoEquivalent::OtherCommands { .. })) if could => {
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
