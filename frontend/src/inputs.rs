//! The controls' fields → the runs to start, with the same validation as the backend. Pure:
//! the fields are kept as typed (strings), so an invalid entry is explained and never lost.

use shared::{Command, Flush, KeyLayout, Limits, Mode, Network, RunSpec, Wait, validate_runs};

use crate::connection::capitalise;
use crate::sweep;
use crate::url_state::UrlState;

/// The mode select's choice (`#mode` option values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModeChoice {
    Sequential,
    #[default]
    Pipelined,
    Multiplexed,
    Transaction,
    Mset,
    Connections,
}

impl ModeChoice {
    pub const ALL: [ModeChoice; 6] = [
        ModeChoice::Sequential,
        ModeChoice::Pipelined,
        ModeChoice::Multiplexed,
        ModeChoice::Transaction,
        ModeChoice::Mset,
        ModeChoice::Connections,
    ];

    /// The mode's `kind` name (`Mode::KINDS`, listed in the same order).
    pub fn value(self) -> &'static str {
        Mode::KINDS[self as usize]
    }

    /// What the select shows.
    pub fn label(self) -> &'static str {
        match self {
            ModeChoice::Sequential => "sequential",
            ModeChoice::Pipelined => "pipelined",
            ModeChoice::Multiplexed => "multiplexed",
            ModeChoice::Transaction => "MULTI/EXEC",
            ModeChoice::Mset => "MSET / MGET",
            ModeChoice::Connections => "connections (a pool)",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.value() == value)
    }

    pub fn from_value(value: &str) -> Self {
        Self::parse(value).unwrap_or_default()
    }

    /// The batch field's name in this mode (`None`: the field does not apply).
    pub fn batch_name(self) -> Option<&'static str> {
        match self {
            ModeChoice::Sequential => None,
            ModeChoice::Multiplexed => Some("in flight"),
            ModeChoice::Connections => Some("connections"),
            _ => Some("batch"),
        }
    }
}

/// How a pipeline is written (`#flush` option values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlushChoice {
    #[default]
    Batch,
    EachCommand,
    Buffered,
}

impl FlushChoice {
    pub const ALL: [FlushChoice; 3] = [
        FlushChoice::Batch,
        FlushChoice::EachCommand,
        FlushChoice::Buffered,
    ];

    pub fn value(self) -> &'static str {
        match self {
            FlushChoice::Batch => "batch",
            FlushChoice::EachCommand => "each",
            FlushChoice::Buffered => "buffered",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            FlushChoice::Batch => "one write per batch",
            FlushChoice::EachCommand => "flush each command",
            FlushChoice::Buffered => "buffered, every n",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.value() == value)
    }
}

/// What a button asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Plan {
    /// The selected mode alone.
    #[default]
    Single,
    /// Sequential, then the selected mode (pipelined if sequential is selected).
    Compare,
    /// Pipelined runs at batch 1, 2, 5, 10, … up to the sweep's max (`sweep::plan`).
    Sweep,
    /// The Compare preset for "why not just use more connections?": a pool of
    /// `POOL_PRESET.0` connections, each one command at a time, then one connection pipelined
    /// at batch `POOL_PRESET.1`.
    Pool,
    /// For a Redis Cluster: the same pipelined run with its keys spread over every slot, then
    /// all under one hash tag (one master).
    Layouts,
}

/// The pool preset's connections (the seed's Lettuce pool of 8) and its pipeline's batch.
pub const POOL_PRESET: (u32, u32) = (8, 1_000);

impl Plan {
    pub fn value(self) -> &'static str {
        match self {
            Plan::Single => "run",
            Plan::Compare => "compare",
            Plan::Sweep => "sweep",
            Plan::Pool => "pool",
            Plan::Layouts => "layouts",
        }
    }

    /// Its button's name.
    pub fn label(self) -> &'static str {
        match self {
            Plan::Single => "Run",
            Plan::Compare => "Compare",
            Plan::Sweep => "Sweep",
            Plan::Pool => "8 connections vs pipelined",
            Plan::Layouts => "Spread vs one hash tag",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        [
            Plan::Single,
            Plan::Compare,
            Plan::Sweep,
            Plan::Pool,
            Plan::Layouts,
        ]
        .into_iter()
        .find(|p| p.value() == value)
    }
}

/// Every field of the controls, as typed. Empty optional fields mean: classic `v{i}` values,
/// no jitter, no bandwidth cap, the back delay equal to the out delay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub count: String,
    pub command: Command,
    /// Bytes per value; empty is the classic `v{i}`.
    pub value_bytes: String,
    pub mode: ModeChoice,
    /// The batch, or the in-flight window for multiplexed.
    pub batch: String,
    pub flush: FlushChoice,
    pub flush_every: String,
    /// One-way delay out (and back, unless `separate_back`), µs.
    pub delay_out: String,
    pub separate_back: bool,
    pub delay_back: String,
    pub jitter: String,
    /// Mbit/s; empty is unlimited.
    pub bandwidth_mbit: String,
    /// Busy-poll for each reply for up to this many µs; empty sleeps (as client libraries do).
    pub busy_poll_us: String,
    /// The sweep's largest batch.
    pub sweep_max: String,
    /// The button a linked demonstration is about (the last one pressed afterwards).
    pub plan: Plan,
    /// The other client INCRs the run's shared counter (pipelined and MULTI/EXEC runs).
    pub other_client: bool,
    /// How the run's keys are named: spread over a cluster's slots, or under one hash tag.
    pub keys: KeyLayout,
}

impl Default for Form {
    fn default() -> Self {
        Form {
            count: "100000".into(),
            command: Command::Set,
            value_bytes: String::new(),
            mode: ModeChoice::Pipelined,
            batch: "1000".into(),
            flush: FlushChoice::Batch,
            flush_every: "100".into(),
            delay_out: "0".into(),
            separate_back: false,
            delay_back: "0".into(),
            jitter: String::new(),
            bandwidth_mbit: String::new(),
            busy_poll_us: String::new(),
            sweep_max: "1000".into(),
            plan: Plan::Single,
            other_client: false,
            keys: KeyLayout::Spread,
        }
    }
}

fn clean(text: &str) -> String {
    text.trim().replace(['_', ',', ' '], "")
}

/// `text` as a plain decimal (`8`, `0.5`, `.5`, `-3`): what the bandwidth field takes. This
/// instead of `f64::from_str`, whose code and tables are a sizeable part of the page's WASM;
/// `n / 10^k` of two exact integers is the correctly rounded value, as `from_str` gives.
fn decimal(text: &str) -> Option<f64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    if !whole
        .bytes()
        .chain(frac.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let n: u64 = format!("{whole}{frac}").parse().ok()?;
    let x = n as f64 / 10f64.powi(i32::try_from(frac.len()).ok()?);
    Some(if negative { -x } else { x })
}

fn parse<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String> {
    let text = clean(text);
    if text.is_empty() {
        return Err(format!("Enter a {name}."));
    }
    text.parse()
        .map_err(|_| format!("The {name} must be a whole number, got “{text}”."))
}

/// Empty is `None`.
fn parse_opt<T: std::str::FromStr>(name: &str, text: &str) -> Result<Option<T>, String> {
    if clean(text).is_empty() {
        Ok(None)
    } else {
        parse(name, text).map(Some)
    }
}

/// Mbit/s (decimals allowed) → bytes/s.
pub fn mbit_to_bytes(mbit: f64) -> u64 {
    (mbit * 125_000.0).round() as u64
}

impl Form {
    /// The form a link describes: defaults, overridden by what the query says.
    pub fn from_url(url: &UrlState) -> Form {
        let mut f = Form::default();
        let set = |field: &mut String, v: &Option<String>| {
            if let Some(v) = v {
                *field = v.clone();
            }
        };
        set(&mut f.count, &url.count);
        set(&mut f.value_bytes, &url.value);
        set(&mut f.batch, &url.batch);
        set(&mut f.flush_every, &url.every);
        set(&mut f.delay_out, &url.delay);
        set(&mut f.jitter, &url.jitter);
        set(&mut f.bandwidth_mbit, &url.bw);
        set(&mut f.busy_poll_us, &url.poll);
        set(&mut f.sweep_max, &url.sweep);
        if let Some(back) = &url.back {
            f.separate_back = true;
            f.delay_back = back.clone();
        } else {
            f.delay_back = f.delay_out.clone();
        }
        if let Some(c) = url.command.as_deref().and_then(Command::parse) {
            f.command = c;
        }
        if let Some(m) = url.mode.as_deref().and_then(ModeChoice::parse) {
            f.mode = m;
        }
        if let Some(fl) = url.flush.as_deref().and_then(FlushChoice::parse) {
            f.flush = fl;
        }
        if let Some(p) = url.plan.as_deref().and_then(Plan::parse) {
            f.plan = p;
        }
        f.other_client = url.other;
        if let Some(k) = url.keys.as_deref().and_then(KeyLayout::parse) {
            f.keys = k;
        }
        f
    }

    /// Writes the form into `url` (keeping its presenter, theme and token). Defaults are left
    /// out, so links stay short.
    pub fn write_url(&self, url: &mut UrlState) {
        let d = Form::default();
        let keep = |v: &String, default: &String| (v.trim() != default.trim()).then(|| v.clone());
        url.count = Some(self.count.clone());
        url.mode = Some(self.mode.value().to_string());
        url.batch = Some(self.batch.clone());
        url.command = (self.command != d.command).then(|| self.command.name().to_ascii_lowercase());
        url.other = self.other_client;
        url.keys = (self.keys != d.keys).then(|| self.keys.name().to_string());
        url.value = keep(&self.value_bytes, &d.value_bytes);
        url.flush = (self.flush != d.flush).then(|| self.flush.value().to_string());
        url.every = (self.flush == FlushChoice::Buffered).then(|| self.flush_every.clone());
        url.delay = keep(&self.delay_out, &d.delay_out);
        url.back = self.separate_back.then(|| self.delay_back.clone());
        url.jitter = keep(&self.jitter, &d.jitter);
        url.bw = keep(&self.bandwidth_mbit, &d.bandwidth_mbit);
        url.poll = keep(&self.busy_poll_us, &d.busy_poll_us);
        url.sweep = keep(&self.sweep_max, &d.sweep_max);
        url.plan = (self.plan != Plan::Single).then(|| self.plan.value().to_string());
    }

    /// Fills the network fields (e.g. from the server's default network).
    pub fn set_network(&mut self, n: Network) {
        self.delay_out = n.delay_out_us.to_string();
        self.separate_back = n.delay_back_us != n.delay_out_us;
        self.delay_back = n.delay_back_us.to_string();
        self.jitter = if n.jitter_us == 0 {
            String::new()
        } else {
            n.jitter_us.to_string()
        };
        self.bandwidth_mbit = n
            .bandwidth
            .map(|b| format!("{}", b as f64 / 125_000.0))
            .unwrap_or_default();
    }

    /// Whether the network fields say anything (a link that sets none takes the server's).
    pub fn network_in_url(url: &UrlState) -> bool {
        url.delay.is_some() || url.back.is_some() || url.jitter.is_some() || url.bw.is_some()
    }

    pub fn network(&self) -> Result<Network, String> {
        let out: u32 = parse("one-way delay", &self.delay_out)?;
        let back: u32 = if self.separate_back {
            parse("delay back", &self.delay_back)?
        } else {
            out
        };
        let jitter: u32 = parse_opt("jitter", &self.jitter)?.unwrap_or(0);
        let bandwidth = match clean(&self.bandwidth_mbit) {
            t if t.is_empty() => None,
            t => {
                let mbit = decimal(&t).ok_or_else(|| {
                    format!("The bandwidth must be a number of Mbit/s, got “{t}”.")
                })?;
                if !(mbit.is_finite() && mbit > 0.0) {
                    return Err("The bandwidth must be more than 0 Mbit/s.".into());
                }
                Some(mbit_to_bytes(mbit))
            }
        };
        Ok(Network {
            delay_out_us: out,
            delay_back_us: back,
            jitter_us: jitter,
            bandwidth,
        })
    }

    /// The selected mode with its parameters.
    pub fn mode(&self) -> Result<Mode, String> {
        let Some(name) = self.mode.batch_name() else {
            return Ok(Mode::Sequential);
        };
        let batch: u32 = parse(name, &self.batch)?;
        Ok(match self.mode {
            ModeChoice::Sequential => Mode::Sequential,
            ModeChoice::Pipelined => Mode::Pipelined {
                batch,
                flush: match self.flush {
                    FlushChoice::Batch => Flush::Batch,
                    FlushChoice::EachCommand => Flush::EachCommand,
                    FlushChoice::Buffered => Flush::Buffered {
                        commands: parse("flush interval", &self.flush_every)?,
                    },
                },
            },
            ModeChoice::Multiplexed => Mode::Multiplexed { in_flight: batch },
            ModeChoice::Transaction => Mode::Transaction { batch },
            ModeChoice::Mset => Mode::Mset { batch },
            ModeChoice::Connections => Mode::Connections { connections: batch },
        })
    }

    /// A run of `mode` with the form's command, count, values and network.
    fn spec(&self, mode: Mode) -> Result<RunSpec, String> {
        Ok(RunSpec {
            command: self.command,
            count: parse("count", &self.count)?,
            mode,
            value_bytes: parse_opt("value size", &self.value_bytes)?,
            network: self.network()?,
            wait: match parse_opt("busy-poll time", &self.busy_poll_us)? {
                Some(us) => Wait::BusyPoll { us },
                None => Wait::Sleep,
            },
            other_client: self.other_client
                && matches!(mode, Mode::Pipelined { .. } | Mode::Transaction { .. }),
            keys: self.keys,
        })
    }

    /// The form in one line, for folded controls: "Compare · 10,000 SET · one at a time vs
    /// pipelined (batch 1000) · one-way delay 250 µs". Whatever does not parse says so.
    pub fn summary(&self) -> String {
        let count = match self.count.trim().parse::<u64>() {
            Ok(n) => crate::format::count(n),
            Err(_) => format!("{:?}", self.count),
        };
        let mode = self
            .mode()
            .map(|m| m.label())
            .unwrap_or_else(|e| format!("mode: {e}"));
        let modes = match self.plan {
            Plan::Single => mode,
            Plan::Compare if self.mode == ModeChoice::Sequential => {
                format!("one at a time vs pipelined (batch {})", self.batch.trim())
            }
            Plan::Compare => format!("one at a time vs {mode}"),
            Plan::Sweep => format!("pipelined, batch 1 to {}", self.sweep_max.trim()),
            Plan::Pool => format!(
                "{} connections one at a time vs pipelined (batch {})",
                POOL_PRESET.0, POOL_PRESET.1
            ),
            Plan::Layouts => format!("{} · keys spread vs one hash tag", self.layouts_mode()),
        };
        let network = self
            .network()
            .map(|n| n.label())
            .unwrap_or_else(|e| format!("network: {e}"));
        format!(
            "{} · {count} {} · {modes} · {network}",
            self.plan.label(),
            self.command.name()
        )
    }

    /// The mode `Plan::Layouts` compares the key layouts in: the chosen mode when pipelined,
    /// else pipelined at the batch field (what a layout changes is a batch's round trips).
    fn layouts_mode_spec(&self) -> Result<Mode, String> {
        match self.mode {
            ModeChoice::Pipelined => self.mode(),
            _ => Ok(Mode::pipelined(parse("batch", &self.batch)?)),
        }
    }

    fn layouts_mode(&self) -> String {
        self.layouts_mode_spec()
            .map(|m| m.label())
            .unwrap_or_else(|e| e)
    }

    /// The runs a button would start, or why they are refused (in words).
    pub fn runs(&self, plan: Plan, limits: &Limits) -> Result<Vec<RunSpec>, String> {
        let runs = match plan {
            Plan::Single => vec![self.spec(self.mode()?)?],
            Plan::Compare => {
                let other = match self.mode {
                    ModeChoice::Sequential => Mode::pipelined(parse("batch", &self.batch)?),
                    _ => self.mode()?,
                };
                vec![self.spec(Mode::Sequential)?, self.spec(other)?]
            }
            Plan::Pool => {
                let (connections, batch) = POOL_PRESET;
                vec![
                    self.spec(Mode::Connections { connections })?,
                    self.spec(Mode::pipelined(batch))?,
                ]
            }
            Plan::Layouts => {
                let spread = RunSpec {
                    keys: KeyLayout::Spread,
                    ..self.spec(self.layouts_mode_spec()?)?
                };
                vec![
                    spread,
                    RunSpec {
                        keys: KeyLayout::OneTag,
                        ..spread
                    },
                ]
            }
            Plan::Sweep => {
                let max: u32 = parse("sweep's largest batch", &self.sweep_max)?;
                let base = self.spec(Mode::Sequential)?;
                let batches = sweep::plan(max, base.count, limits)?;
                batches
                    .into_iter()
                    .map(|b| RunSpec {
                        mode: Mode::pipelined(b),
                        ..base
                    })
                    .collect()
            }
        };
        validate_runs(&runs, limits).map_err(|e| format!("{}.", capitalise(&e.to_string())))?;
        Ok(runs)
    }
}

/// The delay slider's last position: 0 is no delay, then ten steps a decade from 1 µs to 1 s.
pub const SLIDER_MAX: u32 = 61;

/// Two significant digits: 31,623 → 32,000.
fn round2(x: f64) -> u32 {
    if x < 10.0 {
        return x.round() as u32;
    }
    let unit = 10f64.powf(x.log10().floor() - 1.0);
    ((x / unit).round() * unit).round() as u32
}

/// The delay slider (log scale): position → one-way delay, µs.
pub fn slider_us(pos: u32) -> u32 {
    match pos.min(SLIDER_MAX) {
        0 => 0,
        p => round2(10f64.powf((p - 1) as f64 / 10.0)),
    }
}

/// One-way delay, µs → the nearest slider position.
pub fn slider_pos(us: u32) -> u32 {
    if us == 0 {
        0
    } else {
        ((us as f64).log10() * 10.0).round().clamp(0.0, 60.0) as u32 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits::DEFAULT;

    #[test]
    fn a_decimal_reads_as_from_str_reads_it() {
        for text in [
            "8",
            "0.5",
            ".5",
            "5.",
            "-3",
            "+2.25",
            "0.1",
            "123.456",
            "1000000",
            "0.0000001",
        ] {
            assert_eq!(decimal(text), text.parse::<f64>().ok(), "{text}");
        }
        for text in [
            "",
            ".",
            "-",
            "fast",
            "1e3",
            "1.2.3",
            "inf",
            "NaN",
            "0x10",
            "99999999999999999999",
        ] {
            assert_eq!(decimal(text), None, "{text}");
        }
    }

    fn form(f: impl FnOnce(&mut Form)) -> Form {
        let mut form = Form::default();
        f(&mut form);
        form
    }

    #[test]
    fn the_folded_controls_say_what_the_buttons_run() {
        let url = UrlState::parse(
            "?count=100000&mode=pipelined&batch=1000&plan=compare&delay=250&presenter=1",
        );
        assert_eq!(
            Form::from_url(&url).summary(),
            "Compare · 100,000 SET · one at a time vs pipelined (batch 1000) · one-way delay 250 µs"
        );
        let seq = form(|f| {
            f.mode = ModeChoice::Sequential;
            f.plan = Plan::Compare;
            f.count = "50".into();
            f.batch = "10".into();
        });
        assert!(
            seq.summary()
                .contains("50 SET · one at a time vs pipelined (batch 10)"),
            "{}",
            seq.summary()
        );
    }

    #[test]
    fn each_choice_is_named_as_the_mode_it_builds() {
        for choice in ModeChoice::ALL {
            let built = form(|f| {
                f.mode = choice;
                f.batch = "10".into();
            })
            .mode()
            .unwrap();
            assert_eq!(choice.value(), built.kind(), "{choice:?}");
            assert_eq!(ModeChoice::parse(built.kind()), Some(choice));
        }
    }

    #[test]
    fn single_runs_follow_the_mode() {
        let r = Form::default().runs(Plan::Single, &L).unwrap();
        assert_eq!(r, vec![RunSpec::set(100_000, Mode::pipelined(1000))]);
        // The (disabled) batch field does not matter for a sequential run.
        let r = form(|f| {
            f.mode = ModeChoice::Sequential;
            f.batch = "oops".into()
        })
        .runs(Plan::Single, &L)
        .unwrap();
        assert_eq!(r[0].mode, Mode::Sequential);
        let modes = [
            (ModeChoice::Multiplexed, Mode::Multiplexed { in_flight: 50 }),
            (ModeChoice::Transaction, Mode::Transaction { batch: 50 }),
            (ModeChoice::Mset, Mode::Mset { batch: 50 }),
            (
                ModeChoice::Connections,
                Mode::Connections { connections: 50 },
            ),
        ];
        for (choice, mode) in modes {
            let f = form(|f| {
                f.mode = choice;
                f.batch = "50".into()
            });
            assert_eq!(f.runs(Plan::Single, &L).unwrap()[0].mode, mode);
        }
    }

    #[test]
    fn flush_policies_and_the_rest_of_the_spec() {
        let f = form(|f| {
            f.flush = FlushChoice::Buffered;
            f.flush_every = "300".into();
            f.command = Command::Get;
            f.value_bytes = "1024".into();
            f.count = "10_000".into();
        });
        let r = f.runs(Plan::Single, &L).unwrap();
        assert_eq!(
            r[0],
            RunSpec {
                command: Command::Get,
                count: 10_000,
                mode: Mode::Pipelined {
                    batch: 1000,
                    flush: Flush::Buffered { commands: 300 }
                },
                value_bytes: Some(1024),
                network: Network::LOOPBACK,
                wait: Wait::Sleep,
                other_client: false,
                keys: shared::KeyLayout::Spread,
            }
        );
        let each = form(|f| f.flush = FlushChoice::EachCommand);
        assert_eq!(
            each.mode().unwrap(),
            Mode::Pipelined {
                batch: 1000,
                flush: Flush::EachCommand
            }
        );
    }

    #[test]
    fn the_network_fields() {
        let f = form(|f| f.delay_out = "500".into());
        assert_eq!(f.network().unwrap(), Network::symmetric(500));
        let f = form(|f| {
            f.delay_out = "500".into();
            f.separate_back = true;
            f.delay_back = "2000".into();
            f.jitter = "50".into();
            f.bandwidth_mbit = "8".into();
        });
        assert_eq!(
            f.network().unwrap(),
            Network {
                delay_out_us: 500,
                delay_back_us: 2000,
                jitter_us: 50,
                bandwidth: Some(1_000_000),
            }
        );
        let mut g = Form::default();
        g.set_network(f.network().unwrap());
        assert_eq!(g.network(), f.network());
        assert!(
            form(|f| f.bandwidth_mbit = "fast".into())
                .network()
                .unwrap_err()
                .contains("Mbit/s")
        );
    }

    #[test]
    fn compare_is_sequential_then_the_mode() {
        let r = form(|f| {
            f.mode = ModeChoice::Sequential;
            f.count = "1_000".into();
            f.batch = "100".into()
        })
        .runs(Plan::Compare, &L)
        .unwrap();
        assert_eq!(r, RunSpec::comparison(1000, 100));
        let r = form(|f| f.mode = ModeChoice::Transaction)
            .runs(Plan::Compare, &L)
            .unwrap();
        assert_eq!(r[1].mode, Mode::Transaction { batch: 1000 });
    }

    #[test]
    fn the_layouts_preset_is_one_pipelined_run_spread_then_under_one_tag() {
        // A pipelined choice is kept (its batch and flush); any other mode becomes pipelined
        // at the batch field.
        for (mode, batch) in [
            (ModeChoice::Pipelined, "500"),
            (ModeChoice::Transaction, "200"),
        ] {
            let r = form(|f| {
                f.mode = mode;
                f.batch = batch.into();
                f.count = "3000".into();
            })
            .runs(Plan::Layouts, &L)
            .unwrap();
            let want = Mode::pipelined(batch.parse().unwrap());
            assert_eq!(r.iter().map(|s| s.mode).collect::<Vec<_>>(), [want, want]);
            assert_eq!(
                r.iter().map(|s| s.keys).collect::<Vec<_>>(),
                [KeyLayout::Spread, KeyLayout::OneTag]
            );
            assert!(r.iter().all(|s| s.count == 3_000));
        }
        assert_eq!(Plan::parse("layouts"), Some(Plan::Layouts));
    }

    #[test]
    fn the_pool_preset_is_eight_connections_then_one_pipeline() {
        // Whatever mode is selected, with the form's count and network.
        let r = form(|f| {
            f.mode = ModeChoice::Multiplexed;
            f.count = "20000".into();
            f.delay_out = "100".into();
        })
        .runs(Plan::Pool, &L)
        .unwrap();
        let modes: Vec<Mode> = r.iter().map(|s| s.mode).collect();
        assert_eq!(
            modes,
            [Mode::Connections { connections: 8 }, Mode::pipelined(1000)]
        );
        assert!(r.iter().all(|s| s.count == 20_000));
        assert!(r.iter().all(|s| s.network == Network::symmetric(100)));
        assert_eq!(Plan::parse("pool"), Some(Plan::Pool));
        // Too many connections are refused in words.
        let err = form(|f| {
            f.mode = ModeChoice::Connections;
            f.batch = "1000".into()
        })
        .runs(Plan::Single, &L)
        .unwrap_err();
        assert_eq!(err, "Connections must be between 1 and 256, got 1000.");
    }

    #[test]
    fn a_sweep_steps_the_batch_one_two_five() {
        let r = form(|f| {
            f.sweep_max = "20".into();
            f.delay_out = "100".into()
        })
        .runs(Plan::Sweep, &L)
        .unwrap();
        let batches: Vec<u32> = r.iter().map(|s| s.mode.batch()).collect();
        assert_eq!(batches, [1, 2, 5, 10, 20].repeat(crate::sweep::REPEATS));
        assert!(r.iter().all(|s| s.network == Network::symmetric(100)));
        assert!(
            form(|f| f.sweep_max = "1000000".into())
                .runs(Plan::Sweep, &L)
                .is_err()
        );
        let short = form(|f| {
            f.sweep_max = "100000".into();
            f.count = "50000".into()
        })
        .runs(Plan::Sweep, &L)
        .unwrap_err();
        assert!(
            short.contains("at least 100000 commands per run"),
            "{short}"
        );
        let full = form(|f| f.sweep_max = "100000".into())
            .runs(Plan::Sweep, &L)
            .unwrap();
        assert_eq!(full.len(), L.max_runs, "16 batch sizes, 3 times each");
    }

    #[test]
    fn bad_input_is_explained() {
        assert_eq!(
            form(|f| f.count.clear()).runs(Plan::Single, &L),
            Err("Enter a count.".into())
        );
        assert!(
            form(|f| f.count = "abc".into())
                .runs(Plan::Single, &L)
                .unwrap_err()
                .contains("whole number")
        );
        assert!(
            form(|f| f.count = "0".into())
                .runs(Plan::Single, &L)
                .unwrap_err()
                .starts_with("Count must be between 1 and")
        );
        assert!(
            form(|f| {
                f.mode = ModeChoice::Sequential;
                f.batch = "0".into()
            })
            .runs(Plan::Compare, &L)
            .unwrap_err()
            .starts_with("Batch must be")
        );
        assert!(
            form(|f| {
                f.mode = ModeChoice::Mset;
                f.command = Command::Incr
            })
            .runs(Plan::Single, &L)
            .unwrap_err()
            .contains("INCR has no one-command-many-keys form")
        );
        assert!(
            form(|f| {
                f.mode = ModeChoice::Sequential;
                f.delay_out = "30000".into()
            })
            .runs(Plan::Single, &L)
            .unwrap_err()
            .contains("waiting on the injected delay")
        );
    }

    #[test]
    fn busy_polling_is_a_wait_on_every_run_of_the_plan() {
        let f = form(|f| f.busy_poll_us = "2000".into());
        let runs = f.runs(Plan::Compare, &L).unwrap();
        assert_eq!(runs.len(), 2);
        assert!(runs.iter().all(|r| r.wait == Wait::BusyPoll { us: 2000 }));
        assert_eq!(
            Form::default().runs(Plan::Single, &L).unwrap()[0].wait,
            Wait::Sleep
        );
        let err = form(|f| f.busy_poll_us = "50000".into())
            .runs(Plan::Single, &L)
            .unwrap_err();
        assert!(
            err.starts_with("Busy-poll must be between 1 and 10000"),
            "{err}"
        );
        let err = form(|f| f.busy_poll_us = "soon".into())
            .runs(Plan::Single, &L)
            .unwrap_err();
        assert!(err.contains("busy-poll time"), "{err}");
    }

    #[test]
    fn the_form_survives_the_url() {
        let f = form(|f| {
            f.count = "3000".into();
            f.command = Command::Incr;
            f.value_bytes = "64".into();
            f.mode = ModeChoice::Pipelined;
            f.batch = "100".into();
            f.flush = FlushChoice::Buffered;
            f.flush_every = "10".into();
            f.delay_out = "500".into();
            f.separate_back = true;
            f.delay_back = "30000".into();
            f.jitter = "20".into();
            f.bandwidth_mbit = "0.5".into();
            f.busy_poll_us = "2000".into();
            f.sweep_max = "256".into();
            f.plan = Plan::Sweep;
        });
        let mut url = UrlState {
            presenter: true,
            token: Some("T".into()),
            ..UrlState::default()
        };
        f.write_url(&mut url);
        let back = UrlState::parse(&url.to_query());
        assert_eq!(back, url);
        assert_eq!(Form::from_url(&back), f);
        assert!(Form::network_in_url(&back));
        // Defaults stay out of the link.
        let mut plain = UrlState::default();
        Form::default().write_url(&mut plain);
        assert_eq!(plain.to_query(), "?count=100000&mode=pipelined&batch=1000");
        assert_eq!(Form::from_url(&plain), Form::default());
        assert!(!Form::network_in_url(&plain));
    }

    #[test]
    fn the_delay_slider_is_logarithmic() {
        assert_eq!(slider_us(0), 0);
        assert_eq!(slider_us(1), 1);
        assert_eq!(slider_us(21), 100);
        assert_eq!(slider_us(28), 500);
        assert_eq!(slider_us(46), 32_000);
        assert_eq!(slider_us(SLIDER_MAX), 1_000_000);
        assert_eq!(slider_us(SLIDER_MAX + 5), 1_000_000);
        for (_, us) in Network::PRESETS {
            let back = slider_us(slider_pos(us));
            assert!(
                (back as f64 - us as f64).abs() <= us as f64 * 0.13,
                "{us} → {back}"
            );
        }
        // From 10 µs on, every position is its own whole number of µs (below, steps collapse).
        for p in (11..=SLIDER_MAX).chain([0, 1]) {
            assert_eq!(slider_pos(slider_us(p)), p);
        }
    }

    #[test]
    fn old_links_still_work() {
        let u = UrlState::parse("?count=3000&mode=compare&batch=100");
        let f = Form::from_url(&u);
        assert_eq!(f.plan, Plan::Compare);
        assert_eq!(f.mode, ModeChoice::Pipelined);
        assert_eq!(f.count, "3000");
    }
}
