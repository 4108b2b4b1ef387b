//! The tour's templating: the numbers just measured plugged into its prose.
//!
//! Every step is a sentence or two of what to expect (no numbers: nothing has run yet), a preset
//! plan (its runs, each with a role name such as `seq`), what to look at, and the sentences shown
//! once the plan has finished. Those sentences are templates:
//!
//! - `[seq|sequential]`: the word `sequential` coloured like the diagram's sequential arrows (the
//!   class `hl-seq`; see `tour.css`, which reuses the page's colours).
//! - `{seq.round_trips}`: a number from the summary of the run with role `seq`. Fields: `count`
//!   (commands done), `round_trips`, `writes`, `wall`, `ops`, `rtt` (mean latency), `per_rt`
//!   (wall time ÷ round trips), `batch` (batch or in-flight requests), `delay` (one-way, as
//!   dialled in), the wire tap's `out`, `server` and `back` and the proxy's compensation
//!   `early_out`/`early_back` (absent without a network), and `redis` (Redis's own time per
//!   call, absent when Redis did not say). `{s4.seq.wall}` reads step 4's run instead.
//! - A role run more than once (`b1`, `b1_2`, `b1_3`) reads as its median run by throughput;
//!   `runs`, `ops_min` and `ops_max` give how many runs and their spread.
//! - `knee`, `best` and `beyond` are the batch sweep's median runs (`sweep::knee`, the page's
//!   sweep's definition): the knee, the best throughput, and the largest batch when the knee lies
//!   beyond the sweep. `knee.rt_major` / `knee.rt_minor`: the round trips' share of the knee's
//!   time, resolving only when it is at least / under half, so the sentence says what the
//!   number says.
//! - With the other client (`RunSpec::other_client`): `other` (its INCRs), `inside` (those Redis
//!   ran inside the run's batches), `interleaved` (batches with any inside), `batches`, `final`
//!   (the counter at the end); `inside_some` / `inside_none` resolve only when some / none ran
//!   inside, so a sentence claiming either says what was measured.
//! - `{speedup:seq:pipe}`: how many times the throughput of `pipe` beats `seq`'s.
//! - `{seq.round_trips|round trip}`: the number followed by the noun, plural unless it is 1.
//!
//! A sentence whose numbers are not all measured (say, step 4 was skipped) is left out, so the
//! prose never shows a number that was not measured in this session.

use shared::RunSummary;

use super::result::{StepResult, best, beyond, knee, knee_round_trip_share};
use super::script::STEPS;
use crate::format;
use crate::sweep;

/// A rendered piece of prose.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    /// Words coloured like a diagram part: `class` is `hl-<name>`.
    Mark {
        class: String,
        text: String,
    },
    /// A measured number: `key` is the placeholder (`seq.round_trips`), `value` the raw value,
    /// `text` as shown.
    Num {
        key: String,
        value: f64,
        text: String,
        class: Option<String>,
    },
}

/// The measurements a template can read: the current step's runs and every earlier result.
pub struct Context<'a> {
    pub current: &'a StepResult,
    pub all: &'a [StepResult],
}

impl Context<'_> {
    fn run(&self, name: &str) -> Option<RunSummary> {
        // `s4.seq`: step 4's run.
        if let Some((step, role)) = name.strip_prefix('s').and_then(|r| r.split_once('.'))
            && let Ok(n) = step.parse::<usize>()
        {
            return self
                .all
                .iter()
                .find(|r| r.step + 1 == n)?
                .get(role)
                .cloned();
        }
        match name {
            "best" => best(self.current).cloned(),
            "knee" => knee(self.current).cloned(),
            "beyond" => beyond(self.current).cloned(),
            role => sweep::median(self.current.runs_of(role)).cloned(),
        }
    }
}

/// A share as shown: `0.667` → `67 %`.
fn percent(share: f64) -> (f64, String) {
    (share, format!("{:.0} %", share * 100.0))
}

/// One field of a summary: raw value and as shown.
pub fn field(s: &RunSummary, name: &str) -> Option<(f64, String)> {
    let n = |v: u64| Some((v as f64, format::group(v)));
    match name {
        "count" => n(s.done),
        "round_trips" => n(s.round_trips),
        "writes" => n(s.writes),
        "batch" => n(s.spec.mode.batch() as u64),
        "wall" => Some((s.wall_us as f64, format::wall(s.wall_us))),
        "ops" => Some((s.ops_per_sec, format::rate(s.ops_per_sec))),
        "rtt" => Some((s.latency.mean_us, format::latency(s.latency.mean_us))),
        "redis" => {
            let v = s.redis_usec_per_call?;
            Some((v, crate::timeaxis::duration(v)))
        }
        "per_rt" => {
            let v = s.wall_us as f64 / s.round_trips.max(1) as f64;
            Some((v, format::latency(v)))
        }
        "delay" => {
            let v = s.spec.network.delay_out_us as f64;
            Some((v, format::latency(v)))
        }
        "other" | "inside" | "interleaved" | "batches" | "final" | "inside_some"
        | "inside_none" => {
            let i = s.interleaving.as_ref()?;
            let v = match name {
                "other" => i.other_commands,
                "interleaved" => i.batches_interleaved,
                "batches" => i.batches,
                "final" => i.final_value?,
                "inside_some" if i.other_inside == 0 => return None,
                "inside_none" if i.other_inside > 0 => return None,
                _ => i.other_inside,
            };
            n(v)
        }
        // The wire tap's medians, when a network was dialled in.
        "out" | "server" | "back" | "early_out" | "early_back" => {
            let split = s.split.filter(|t| t.samples > 0)?;
            let v = match name {
                "out" => split.out_us,
                "server" => split.server_us,
                "early_out" => split.early_out_us,
                "early_back" => split.early_back_us,
                _ => split.back_us,
            };
            Some((v, format::latency(v)))
        }
        _ => None,
    }
}

/// The value of a placeholder's inside (`seq.wall`, `s4.seq.wall`, `speedup:seq:pipe`).
fn placeholder(key: &str, ctx: &Context) -> Option<(f64, String)> {
    if let Some(rest) = key.strip_prefix("speedup:") {
        let (a, b) = rest.split_once(':')?;
        let (a, b) = (ctx.run(a)?, ctx.run(b)?);
        let x = b.speedup_over(&a);
        return x.is_finite().then(|| (x, format::factor(x)));
    }
    let (run, name) = key.rsplit_once('.')?;
    match (run, name) {
        ("knee", "rt_major" | "rt_minor") => {
            let share = knee_round_trip_share(ctx.current)?;
            ((share >= 0.5) == (name == "rt_major")).then(|| percent(share))
        }
        (role, "runs" | "ops_min" | "ops_max") => {
            let runs = ctx.current.runs_of(role);
            if runs.is_empty() {
                return None;
            }
            let ops = runs.iter().map(|s| s.ops_per_sec);
            let v = match name {
                "runs" => return Some((runs.len() as f64, format::group(runs.len() as u64))),
                "ops_min" => ops.reduce(f64::min)?,
                _ => ops.reduce(f64::max)?,
            };
            Some((v, format::rate(v)))
        }
        _ => field(&ctx.run(run)?, name),
    }
}

/// Parses a template into pieces; `ctx: None` (nothing measured yet) leaves no placeholder
/// resolvable. `None` if a placeholder does not resolve.
pub fn render(template: &str, ctx: Option<&Context>) -> Option<Vec<Piece>> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    while let Some(k) = rest.find(['[', '{']) {
        text.push_str(&rest[..k]);
        let open = rest.as_bytes()[k];
        let close = if open == b'[' { ']' } else { '}' };
        let Some(end) = rest[k..].find(close).map(|e| k + e) else {
            // A lone bracket is just text.
            text.push_str(&rest[k..]);
            rest = "";
            break;
        };
        let inner = &rest[k + 1..end];
        rest = &rest[end + 1..];
        if open == b'{' {
            push_number(inner, ctx?, &mut text, &mut out)?;
            continue;
        }
        let Some((name, words)) = inner.split_once('|') else {
            text.push('[');
            text.push_str(inner);
            text.push(']');
            continue;
        };
        flush(&mut text, &mut out);
        push_mark(name, words, ctx, &mut out)?;
    }
    text.push_str(rest);
    flush(&mut text, &mut out);
    Some(out)
}

/// Moves the text gathered so far into `out` as one piece.
fn flush(text: &mut String, out: &mut Vec<Piece>) {
    if !text.is_empty() {
        out.push(Piece::Text(std::mem::take(text)));
    }
}

/// `{seq.round_trips|round trip}`: the number, then the noun in agreement with it (the noun
/// stays in `text`, to run on with what follows).
fn push_number(inner: &str, ctx: &Context, text: &mut String, out: &mut Vec<Piece>) -> Option<()> {
    let (key, noun) = match inner.split_once('|') {
        Some((key, noun)) => (key, Some(noun)),
        None => (inner, None),
    };
    let (value, shown) = placeholder(key, ctx)?;
    flush(text, out);
    out.push(Piece::Num {
        key: key.to_string(),
        value,
        text: shown,
        class: None,
    });
    if let Some(noun) = noun {
        text.push(' ');
        text.push_str(noun);
        if value != 1.0 {
            text.push('s');
        }
    }
    Some(())
}

/// `[name|words]`: the words marked with class `hl-name`, numbers inside them too.
fn push_mark(name: &str, words: &str, ctx: Option<&Context>, out: &mut Vec<Piece>) -> Option<()> {
    let class = format!("hl-{name}");
    // A number inside a mark: `[mux|{m10.batch} callers]`.
    match render(words, ctx)?.as_slice() {
        [Piece::Text(t)] => out.push(Piece::Mark {
            class,
            text: t.clone(),
        }),
        pieces => out.extend(pieces.iter().cloned().map(|p| match p {
            Piece::Text(text) => Piece::Mark {
                class: class.clone(),
                text,
            },
            Piece::Num {
                key, value, text, ..
            } => Piece::Num {
                key,
                value,
                text,
                class: Some(class.clone()),
            },
            other => other,
        })),
    }
    Some(())
}

/// The plain text of rendered pieces.
pub fn plain(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) | Piece::Mark { text: t, .. } | Piece::Num { text: t, .. } => t.as_str(),
        })
        .collect()
}

/// The result sentences of `result`'s step whose numbers were all measured.
pub fn result_sentences(result: &StepResult, all: &[StepResult]) -> Vec<Vec<Piece>> {
    let ctx = Context {
        current: result,
        all,
    };
    STEPS[result.step]
        .result
        .iter()
        .filter_map(|t| render(t, Some(&ctx)))
        .collect()
}
