//! The controls' fields → the runs to start, with the same validation as the backend. Pure:
//! the fields are kept as typed (strings), so an invalid entry is explained and never lost.

use shared::{Command, Flush, KeyLayout, Limits, Mode, Network, RunSpec, Wait, validate_runs};

use crate::connection::capitalise;
use crate::sweep;
use crate::url_state::UrlState;

mod choices;
pub use choices::{FlushChoice, ModeChoice};

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
            Ok(n) => crate::format::group(n),
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
mod tests;
