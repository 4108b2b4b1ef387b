//! What a job prints on stdout: lines for people, or one JSON object a line. Notes and
//! progress go to stderr, so `--json` output holds JSON only.

/// A line on stdout for the person who started us. Unlike println!, a closed stdout (e.g. the
/// reader went away) is not a reason to crash while shutting down cleanly.
pub fn say(line: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// One JSON object a line.
pub fn say_json_lines<T: serde::Serialize>(items: &[T]) -> anyhow::Result<()> {
    for item in items {
        say(format_args!("{}", serde_json::to_string(item)?));
    }
    Ok(())
}

/// "met" or "missed", beside a target.
pub fn met(yes: bool) -> &'static str {
    if yes { "met" } else { "missed" }
}

/// The error and its causes on one line, each said once: a typed error that shows its source
/// in its own words is not followed by that source again.
pub fn said_once(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
