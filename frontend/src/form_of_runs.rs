//! The form that would start a given list of runs: what the controls show while the stage holds
//! a recording (served by `pipescope replay`, or opened on the page), so its fields say what
//! was run, not the defaults.

use shared::{Flush, Mode, RunSpec, Wait};

use crate::inputs::{FlushChoice, Form, ModeChoice, Plan};

impl Form {
    /// Fills the form from `runs`: the last run's command, count, values, wait, network and
    /// mode, and Compare for two runs the first of them sequential, else Run (a recorded sweep
    /// or pool preset shows its last run). No runs: the form is left as it is.
    pub fn show_runs(&mut self, runs: &[RunSpec]) {
        let Some(last) = runs.last() else { return };
        self.count = last.count.to_string();
        self.command = last.command;
        self.value_bytes = last.value_bytes.map(|b| b.to_string()).unwrap_or_default();
        self.busy_poll_us = match last.wait {
            Wait::BusyPoll { us } => us.to_string(),
            Wait::Sleep => String::new(),
        };
        self.set_network(last.network);
        self.other_client = last.other_client;
        self.keys = last.keys;
        self.show_mode(last.mode);
        self.plan = match runs {
            [first, _] if first.mode == Mode::Sequential => Plan::Compare,
            _ => Plan::Single,
        };
    }

    /// The mode select and its fields set to `mode`.
    fn show_mode(&mut self, mode: Mode) {
        let (choice, batch) = match mode {
            Mode::Sequential => (ModeChoice::Sequential, None),
            Mode::Pipelined { batch, flush } => {
                self.flush = match flush {
                    Flush::Batch => FlushChoice::Batch,
                    Flush::EachCommand => FlushChoice::EachCommand,
                    Flush::Buffered { commands } => {
                        self.flush_every = commands.to_string();
                        FlushChoice::Buffered
                    }
                };
                (ModeChoice::Pipelined, Some(batch))
            }
            Mode::Multiplexed { in_flight } => (ModeChoice::Multiplexed, Some(in_flight)),
            Mode::Transaction { batch } => (ModeChoice::Transaction, Some(batch)),
            Mode::Mset { batch } => (ModeChoice::Mset, Some(batch)),
            Mode::Connections { connections } => (ModeChoice::Connections, Some(connections)),
        };
        self.mode = choice;
        if let Some(batch) = batch {
            self.batch = batch.to_string();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::test;
    use shared::{Command, Limits, Network};

    use super::*;

    /// The runs the form would start again are the ones it was filled from.
    fn round_trip(runs: Vec<RunSpec>, plan: Plan) {
        let mut form = Form::default();
        form.show_runs(&runs);
        assert_eq!(form.plan, plan, "{runs:?}");
        assert_eq!(form.runs(plan, &Limits::DEFAULT), Ok(runs));
    }

    #[test]
    fn a_recorded_compare_fills_the_form_with_its_values() {
        let net = Network::symmetric(250);
        let runs = [Mode::Sequential, Mode::pipelined(50)]
            .map(|m| RunSpec {
                command: Command::Get,
                value_bytes: Some(64),
                ..RunSpec::set(20_000, m).with_network(net)
            })
            .to_vec();
        let mut form = Form::default();
        form.show_runs(&runs);
        assert_eq!(form.count, "20000");
        assert_eq!(form.batch, "50");
        assert_eq!(form.mode, ModeChoice::Pipelined);
        assert_eq!(form.command, Command::Get);
        assert_eq!(form.value_bytes, "64");
        assert_eq!(form.delay_out, "250");
        round_trip(runs, Plan::Compare);
    }

    #[test]
    fn each_plan_and_mode_comes_back_as_recorded() {
        let set = RunSpec::set;
        round_trip(vec![set(3_000, Mode::Mset { batch: 100 })], Plan::Single);
        round_trip(
            vec![set(
                3_000,
                Mode::Pipelined {
                    batch: 100,
                    flush: Flush::Buffered { commands: 10 },
                },
            )],
            Plan::Single,
        );
        round_trip(
            vec![set(8_000, Mode::Connections { connections: 8 })],
            Plan::Single,
        );
        round_trip(
            vec![
                set(1_000, Mode::Sequential),
                set(1_000, Mode::Multiplexed { in_flight: 20 }),
            ],
            Plan::Compare,
        );
    }
}
