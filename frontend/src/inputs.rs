//! The controls' text fields → the runs to start, with the same validation as the backend.

use shared::{Limits, Mode, RunSpec, validate_runs};

use crate::connection::capitalise;

/// The mode select's choice (`#mode` option values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModeChoice {
    Sequential,
    #[default]
    Pipelined,
}

impl ModeChoice {
    pub fn value(self) -> &'static str {
        match self {
            ModeChoice::Sequential => "sequential",
            ModeChoice::Pipelined => "pipelined",
        }
    }

    pub fn from_value(value: &str) -> Self {
        match value {
            "sequential" => ModeChoice::Sequential,
            _ => ModeChoice::Pipelined,
        }
    }
}

/// What a button asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// The selected mode alone.
    Single,
    /// Sequential then pipelined, same count and batch.
    Compare,
}

fn parse<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String> {
    let text = text.trim().replace(['_', ',', ' '], "");
    if text.is_empty() {
        return Err(format!("Enter a {name}."));
    }
    text.parse()
        .map_err(|_| format!("The {name} must be a whole number, got “{text}”."))
}

/// The runs a button would start, or why they are refused.
pub fn runs(
    plan: Plan,
    count: &str,
    mode: ModeChoice,
    batch: &str,
    limits: &Limits,
) -> Result<Vec<RunSpec>, String> {
    let count: u64 = parse("count", count)?;
    let needs_batch = plan == Plan::Compare || mode == ModeChoice::Pipelined;
    let batch: u32 = if needs_batch {
        parse("batch", batch)?
    } else {
        1
    };
    let runs = match plan {
        Plan::Compare => RunSpec::comparison(count, batch),
        Plan::Single => {
            let mode = match mode {
                ModeChoice::Sequential => Mode::Sequential,
                ModeChoice::Pipelined => Mode::pipelined(batch),
            };
            vec![RunSpec::set(count, mode)]
        }
    };
    validate_runs(&runs, limits).map_err(|e| format!("{}.", capitalise(&e.to_string())))?;
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits::DEFAULT;

    #[test]
    fn single_runs_follow_the_mode() {
        let r = runs(Plan::Single, "100000", ModeChoice::Pipelined, "1000", &L).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].mode, Mode::pipelined(1000));
        // The (disabled) batch field does not matter for a sequential run.
        let r = runs(Plan::Single, "10", ModeChoice::Sequential, "oops", &L).unwrap();
        assert_eq!(r[0].mode, Mode::Sequential);
    }

    #[test]
    fn compare_is_sequential_then_pipelined() {
        let r = runs(Plan::Compare, "1_000", ModeChoice::Sequential, "100", &L).unwrap();
        assert_eq!(r, RunSpec::comparison(1000, 100));
    }

    #[test]
    fn bad_input_is_explained() {
        assert_eq!(
            runs(Plan::Single, "", ModeChoice::Pipelined, "1", &L),
            Err("Enter a count.".into())
        );
        assert!(
            runs(Plan::Single, "abc", ModeChoice::Pipelined, "1", &L)
                .unwrap_err()
                .contains("whole number")
        );
        assert!(
            runs(Plan::Single, "0", ModeChoice::Pipelined, "1", &L)
                .unwrap_err()
                .starts_with("Count must be between 1 and")
        );
        assert!(
            runs(Plan::Compare, "10", ModeChoice::Sequential, "0", &L)
                .unwrap_err()
                .starts_with("Batch must be")
        );
    }
}
