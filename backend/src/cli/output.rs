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
