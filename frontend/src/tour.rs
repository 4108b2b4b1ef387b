//! The guided tour for workshops (issue #6): the script, and the text templating that plugs the
//! numbers just measured into its prose. Pure: no signals, no browser; the view lives in
//! `components::tour`.
//!
//! Every step is a sentence or two of what to expect (no numbers: nothing has run yet), a preset
//! plan (its runs, each with a role name such as `seq`), what to look at, and the sentences shown
//! once the plan has finished. Those sentences are templates:
//!
//! - `[seq|sequential]`: the word `sequential` coloured like the diagram's sequential arrows (the
//!   class `hl-seq`; see `tour.css`, which reuses the page's colours).
//! - `{seq.round_trips}`: a number from the summary of the run with role `seq`. Fields: `count`
//!   (commands done), `round_trips`, `writes`, `wall`, `ops`, `rtt` (p50 latency), `per_rt`
//!   (wall time ÷ round trips), `batch` (batch or in-flight requests), `delay` (one-way, as
//!   dialled in) and the wire tap's `out`, `server` and `back` (absent without a network).
//!   `{s4.seq.wall}` reads step 4's run instead. `knee` and `best` are the batch-sweep's runs:
//!   the best throughput, and the smallest batch within `KNEE_SHARE` of it.
//! - `{speedup:seq:pipe}`: how many times the throughput of `pipe` beats `seq`'s.
//! - `{seq.round_trips|round trip}`: the number followed by the noun, plural unless it is 1.
//!
//! A sentence whose numbers are not all measured (say, step 4 was skipped) is left out, so the
//! prose never shows a number that was not measured in this session.

use shared::{Flush, Mode, Network, RunSpec, RunSummary};

use crate::format;

/// The knee of the batch sweep: the smallest batch whose throughput reaches this share of the best.
pub const KNEE_SHARE: f64 = 0.8;

/// The dialled-in one-way delay of the tour's network (the blog's experiment: 0.5 ms).
pub const TOUR_DELAY_US: u32 = 500;

/// A run of a step's plan and the name the prose calls it by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunDef {
    pub role: &'static str,
    pub mode: Mode,
}

/// How many commands a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepCount {
    /// The lesson is the number itself (one SET, ten SETs): never overridden.
    Fixed(u64),
    /// A default the presenter (or `?count=`) may lower or raise.
    Default(u64),
}

/// Which part of the stage a step is about (the view highlights it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The one-round-trip figure.
    OneTrip,
    Timeline,
    /// The RTT diagram and its arithmetic.
    Rtt,
    /// The results table (writes beside times).
    Results,
    Charts,
}

impl Focus {
    pub fn as_str(self) -> &'static str {
        match self {
            Focus::OneTrip => "one-trip",
            Focus::Timeline => "timeline",
            Focus::Rtt => "rtt",
            Focus::Results => "results",
            Focus::Charts => "charts",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub title: &'static str,
    /// What to expect, before the run (templates with colour marks, no numbers).
    pub intro: &'static str,
    /// What to look at once it runs.
    pub look_at: &'static str,
    pub runs: &'static [RunDef],
    pub count: StepCount,
    /// One-way delay each way, µs.
    pub delay_us: u32,
    /// Shown after the run, one template per sentence.
    pub result: &'static [&'static str],
    pub focus: Focus,
}

impl Step {
    /// The commands this step runs, given the presenter's choice (`None`: the default).
    pub fn count(&self, chosen: Option<u64>) -> u64 {
        match self.count {
            StepCount::Fixed(n) => n,
            StepCount::Default(n) => chosen.unwrap_or(n),
        }
    }

    pub fn adjustable(&self) -> bool {
        matches!(self.count, StepCount::Default(_))
    }

    /// The network the step dials in: its own delay, or `?delay=` (µs one way) for every step.
    pub fn network(&self, delay_us: Option<u32>) -> Network {
        Network::symmetric(delay_us.unwrap_or(self.delay_us))
    }

    /// The plan to start: one spec per run, in order.
    pub fn specs(&self, chosen: Option<u64>, delay_us: Option<u32>) -> Vec<RunSpec> {
        let count = self.count(chosen);
        self.runs
            .iter()
            .map(|r| RunSpec::set(count, r.mode).with_network(self.network(delay_us)))
            .collect()
    }
}

const fn pipelined_each(batch: u32) -> Mode {
    Mode::Pipelined {
        batch,
        flush: Flush::EachCommand,
    }
}

pub const STEPS: &[Step] = &[
    Step {
        title: "One SET, one round trip",
        intro: "The client sends one [seq|SET] to Redis and waits. The request crosses the network, Redis does its work, the [seq-reply|+OK] crosses back. That wait is a round trip, and it has three parts: [t1|t1] transmission (putting the bytes on the wire), [t2|t2] propagation (the trip itself, here a dialled-in delay each way) and [t3|t3] queuing and processing inside Redis.",
        look_at: "The round trip below: which part is the biggest?",
        runs: &[RunDef {
            role: "one",
            mode: Mode::Sequential,
        }],
        count: StepCount::Fixed(1),
        delay_us: TOUR_DELAY_US,
        result: &[
            "Measured: one [seq|SET], one round trip of {one.rtt}.",
            "The wire tap cut it at Redis: {one.out} on the way out, {one.server} inside Redis ([t3|t3]), {one.back} on the way back.",
            "[t2|Propagation] was dialled in at {one.delay} each way (the delay line adds a little time of its own); [t1|transmission] of a few dozen bytes is negligible.",
        ],
        focus: Focus::OneTrip,
    },
    Step {
        title: "Ten SETs, one at a time",
        intro: "Now ten SETs, [seq|sequentially]: each waits for the previous reply before it leaves. Expect ten round trips, one after another, and a total of about ten times the round trip.",
        look_at: "The timeline: count the arrows going down and back up.",
        runs: &[RunDef {
            role: "seq",
            mode: Mode::Sequential,
        }],
        count: StepCount::Fixed(10),
        delay_us: TOUR_DELAY_US,
        result: &[
            "[seq|Sequential]: {seq.count|SET} paid {seq.round_trips|round trip} of {seq.per_rt} each, {seq.wall} in all.",
            "Redis was idle almost all that time, waiting for the next request to arrive.",
        ],
        focus: Focus::Timeline,
    },
    Step {
        title: "The same ten, pipelined",
        intro: "The same ten SETs, first [seq|one at a time] again, then [pipe|pipelined]: all ten written at once, then all ten replies read. Expect the pipelined run to pay a single round trip.",
        look_at: "The timeline: the pipelined batch leaves together and its replies come back together.",
        runs: &[
            RunDef {
                role: "seq",
                mode: Mode::Sequential,
            },
            RunDef {
                role: "pipe",
                mode: Mode::pipelined(10),
            },
        ],
        count: StepCount::Fixed(10),
        delay_us: TOUR_DELAY_US,
        result: &[
            "[pipe|Pipelined]: {pipe.count|SET} in {pipe.round_trips|round trip}, {pipe.wall}.",
            "[seq|Sequential]: {seq.round_trips|round trip}, {seq.wall}: pipelining was {speedup:seq:pipe} faster.",
        ],
        focus: Focus::Timeline,
    },
    Step {
        title: "The blog's experiment: 100,000 SETs",
        intro: "A Spring Boot write-up wrote 100,000 keys one at a time and then pipelined, over a real network, and measured 47 s against 13 s. Here is the same experiment over a dialled-in network (0.5 ms each way unless the presenter chose another delay: the line below says which), against real Redis: [seq|sequential], then [pipe|pipelined] in batches of 1,000. The sequential run pays a round trip per SET, so expect it to take a while: lower the count if the room is in a hurry.",
        look_at: "The progress bars, then the arithmetic under the round trip: N × RTT against the measured time.",
        runs: &[
            RunDef {
                role: "seq",
                mode: Mode::Sequential,
            },
            RunDef {
                role: "pipe",
                mode: Mode::pipelined(1000),
            },
        ],
        count: StepCount::Default(100_000),
        delay_us: TOUR_DELAY_US,
        result: &[
            "[seq|Sequential] paid {seq.round_trips|round trip} of {seq.per_rt} = {seq.wall}.",
            "[pipe|Pipelined] paid {pipe.round_trips|round trip} and took {pipe.wall}: {speedup:seq:pipe} faster.",
        ],
        focus: Focus::Rtt,
    },
    Step {
        title: "The blog's 3.6×: a write per command?",
        intro: "Spring Data Redis pipelines with Lettuce, which by default flushes each command: the pipeline still waits once per batch, but every command is its own write to the socket, its own system call and usually its own packet. Here are two pipelines with the same batches: [each|flushing each command], then [pipe|one write per batch]. Expect the same round trips and very different write counts. Does a write per command account for the blog's 3.6×?",
        look_at: "The results: writes beside wall times.",
        runs: &[
            RunDef {
                role: "each",
                mode: pipelined_each(1000),
            },
            RunDef {
                role: "pipe",
                mode: Mode::pipelined(1000),
            },
        ],
        count: StepCount::Default(100_000),
        delay_us: TOUR_DELAY_US,
        result: &[
            "[each|Flush each command]: {each.writes|write}, {each.round_trips|round trip}, {each.wall}.",
            "[pipe|One write per batch]: {pipe.writes|write}, {pipe.round_trips|round trip}, {pipe.wall}: {speedup:each:pipe} faster.",
            "Against step 4's [seq|sequential] run, flushing each command was {speedup:s4.seq:each} faster and one write per batch {speedup:s4.seq:pipe}; the blog measured 3.6×.",
        ],
        focus: Focus::Results,
    },
    Step {
        title: "How big a batch? The sweep and its knee",
        intro: "The same SETs [pipe|pipelined] in batches of 1, 10, 100, 1,000 and 10,000. Throughput should climb steeply while round trips dominate, then flatten once Redis and the wire are the limit: the knee.",
        look_at: "The throughput chart: where does it stop climbing?",
        runs: &[
            RunDef {
                role: "b1",
                mode: Mode::pipelined(1),
            },
            RunDef {
                role: "b10",
                mode: Mode::pipelined(10),
            },
            RunDef {
                role: "b100",
                mode: Mode::pipelined(100),
            },
            RunDef {
                role: "b1000",
                mode: Mode::pipelined(1000),
            },
            RunDef {
                role: "b10000",
                mode: Mode::pipelined(10_000),
            },
        ],
        count: StepCount::Default(10_000),
        delay_us: TOUR_DELAY_US,
        result: &[
            "Batch {b1.batch}: {b1.ops} ops/s. Batch {b10.batch}: {b10.ops}. Batch {b100.batch}: {b100.ops}. Batch {b1000.batch}: {b1000.ops}. Batch {b10000.batch}: {b10000.ops}.",
            "The knee is at batch {knee.batch}: {knee.ops} ops/s, within 80 % of the best ({best.ops} ops/s at batch {best.batch}). Bigger batches buy little more and hold more replies in memory.",
        ],
        focus: Focus::Charts,
    },
    Step {
        title: "Multiplexing: many clients, one connection",
        intro: "No batching code at all: [mux|callers] share one connection, and whenever replies arrive, every waiting caller's command goes out together (what Lettuce and redis-rs's multiplexed connection do). One caller, then 10, then 100 at once. Expect throughput to grow with the callers sharing the connection.",
        look_at: "The throughput chart and the round trips in the results.",
        runs: &[
            RunDef {
                role: "m1",
                mode: Mode::Multiplexed { in_flight: 1 },
            },
            RunDef {
                role: "m10",
                mode: Mode::Multiplexed { in_flight: 10 },
            },
            RunDef {
                role: "m100",
                mode: Mode::Multiplexed { in_flight: 100 },
            },
        ],
        count: StepCount::Default(10_000),
        delay_us: TOUR_DELAY_US,
        result: &[
            "[mux|One caller]: {m1.ops} ops/s over {m1.round_trips|round trip}.",
            "[mux|{m10.batch} callers] on one connection: {m10.ops} ops/s. [mux|{m100.batch} callers]: {m100.ops} ops/s in {m100.round_trips|round trip}, {speedup:m1:m100} the single caller.",
        ],
        focus: Focus::Charts,
    },
];

/// A whole-number query parameter (`?count=1000&delay=100`); `1,000` reads as 1000.
pub fn query_number(search: &str, key: &str) -> Option<u64> {
    search.trim_start_matches('?').split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then(|| v.replace("%2C", "").replace(',', "").parse().ok())?
    })
}

/// The steps plus the closing handout.
pub fn pages() -> usize {
    STEPS.len() + 1
}

/// `/tour` → 0, `/tour/3` → 2 (1-based in the URL), `/tour/handout` or past the end → the
/// handout. `None` for any path outside the tour.
pub fn page_from_path(path: &str) -> Option<usize> {
    let rest = path.trim_end_matches('/').strip_prefix("/tour")?;
    if rest.is_empty() {
        return Some(0);
    }
    let rest = rest.strip_prefix('/')?;
    if rest == "handout" {
        return Some(STEPS.len());
    }
    let n: usize = rest.parse().ok()?;
    Some(n.clamp(1, pages()) - 1)
}

/// The path of a page (inverse of `page_from_path`).
pub fn path_of(page: usize) -> String {
    if page >= STEPS.len() {
        "/tour/handout".to_string()
    } else {
        format!("/tour/{}", page + 1)
    }
}

/// What a step measured: its runs' summaries by role.
#[derive(Debug, Clone, PartialEq)]
pub struct StepResult {
    /// Index into `STEPS`.
    pub step: usize,
    pub runs: Vec<(String, RunSummary)>,
    /// The runs' ids, in the same order (their keys are named after them).
    pub ids: Vec<u64>,
}

impl StepResult {
    pub fn get(&self, role: &str) -> Option<&RunSummary> {
        self.runs.iter().find(|(r, _)| r == role).map(|(_, s)| s)
    }
}

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
            role => self.current.get(role).cloned(),
        }
    }
}

/// The run with the highest throughput.
pub fn best(result: &StepResult) -> Option<&RunSummary> {
    result
        .runs
        .iter()
        .map(|(_, s)| s)
        .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))
}

/// The smallest batch whose throughput reaches `KNEE_SHARE` of the best.
pub fn knee(result: &StepResult) -> Option<&RunSummary> {
    let top = best(result)?.ops_per_sec;
    result
        .runs
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.ops_per_sec >= KNEE_SHARE * top)
        .min_by_key(|s| s.spec.mode.batch())
}

/// One field of a summary: raw value and as shown.
pub fn field(s: &RunSummary, name: &str) -> Option<(f64, String)> {
    let n = |v: u64| Some((v as f64, format::count(v)));
    match name {
        "count" => n(s.done),
        "round_trips" => n(s.round_trips),
        "writes" => n(s.writes),
        "batch" => n(s.spec.mode.batch() as u64),
        "wall" => Some((s.wall_us as f64, format::wall(s.wall_us))),
        "ops" => Some((s.ops_per_sec, format::rate(s.ops_per_sec))),
        "rtt" => Some((s.latency.p50_us, format::latency(s.latency.p50_us))),
        "per_rt" => {
            let v = s.wall_us as f64 / s.round_trips.max(1) as f64;
            Some((v, format::latency(v)))
        }
        "delay" => {
            let v = s.spec.network.delay_out_us as f64;
            Some((v, format::latency(v)))
        }
        // The wire tap's medians, when a network was dialled in.
        "out" | "server" | "back" => {
            let split = s.split.filter(|t| t.samples > 0)?;
            let v = match name {
                "out" => split.out_us,
                "server" => split.server_us,
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
    field(&ctx.run(run)?, name)
}

/// Parses a template into pieces; `ctx: None` (nothing measured yet) leaves no placeholder
/// resolvable. `None` if a placeholder does not resolve.
pub fn render(template: &str, ctx: Option<&Context>) -> Option<Vec<Piece>> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    let flush = |text: &mut String, out: &mut Vec<Piece>| {
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(text)));
        }
    };
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
            // `{seq.round_trips|round trip}`: the number, then the noun in agreement with it.
            let (key, noun) = match inner.split_once('|') {
                Some((key, noun)) => (key, Some(noun)),
                None => (inner, None),
            };
            let (value, shown) = placeholder(key, ctx?)?;
            flush(&mut text, &mut out);
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
            continue;
        }
        let Some((name, words)) = inner.split_once('|') else {
            text.push('[');
            text.push_str(inner);
            text.push(']');
            continue;
        };
        flush(&mut text, &mut out);
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
    }
    text.push_str(rest);
    flush(&mut text, &mut out);
    Some(out)
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

/// The session's measurements for the handout: a section per step with its runs as the page's
/// Markdown export shows them (`export::markdown`: the speed-up column is over the step's own
/// sequential run, when it has one).
pub fn handout_markdown(results: &[StepResult]) -> String {
    let mut out = String::from("# pipescope tour: what we measured\n");
    let mut sorted: Vec<&StepResult> = results.iter().collect();
    sorted.sort_by_key(|r| r.step);
    for r in sorted {
        let runs: Vec<RunSummary> = r.runs.iter().map(|(_, s)| s.clone()).collect();
        out += &format!(
            "\n## Step {}: {}\n\n{}",
            r.step + 1,
            STEPS[r.step].title,
            crate::export::markdown(&runs)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{Latency, Limits, validate_runs};

    fn summary(mode: Mode, count: u64, wall_us: u64) -> RunSummary {
        RunSummary {
            spec: RunSpec::set(count, mode).with_network(Network::symmetric(TOUR_DELAY_US)),
            done: count,
            wall_us,
            ops_per_sec: shared::report::ops_per_sec(count, wall_us),
            round_trips: mode.round_trips(count),
            writes: mode.writes(count).unwrap_or(count),
            wire_commands: count,
            latency: Latency {
                p50_us: 1_040.0,
                ..Latency::default()
            },
            split: Some(shared::RoundTripSplit {
                out_us: 510.0,
                server_us: 20.0,
                back_us: 510.0,
                samples: 1,
                ..Default::default()
            }),
            redis_usec_per_call: None,
        }
    }

    fn step4() -> StepResult {
        StepResult {
            step: 3,
            runs: vec![
                ("seq".into(), summary(Mode::Sequential, 100_000, 52_000_000)),
                (
                    "pipe".into(),
                    summary(Mode::pipelined(1000), 100_000, 400_000),
                ),
            ],
            ids: vec![1, 2],
        }
    }

    #[test]
    fn numbers_come_from_the_summary() {
        let r = step4();
        let all = [r.clone()];
        let sentences = result_sentences(&r, &all);
        assert_eq!(
            plain(&sentences[0]),
            "Sequential paid 100,000 round trips of 520 µs = 52.00 s."
        );
        assert_eq!(
            plain(&sentences[1]),
            "Pipelined paid 100 round trips and took 400 ms: 130× faster."
        );
        let nums: Vec<(String, f64)> = sentences[0]
            .iter()
            .filter_map(|p| match p {
                Piece::Num { key, value, .. } => Some((key.clone(), *value)),
                _ => None,
            })
            .collect();
        assert_eq!(
            nums,
            [
                ("seq.round_trips".to_string(), 100_000.0),
                ("seq.per_rt".to_string(), 520.0),
                ("seq.wall".to_string(), 52_000_000.0),
            ]
        );
    }

    #[test]
    fn without_the_wire_tap_its_sentence_is_left_out() {
        let mut one = summary(Mode::Sequential, 1, 1_040);
        let tapped = StepResult {
            step: 0,
            runs: vec![("one".into(), one.clone())],
            ids: vec![1],
        };
        let s = result_sentences(&tapped, &[]);
        assert_eq!(s.len(), 3);
        assert_eq!(
            plain(&s[1]),
            "The wire tap cut it at Redis: 510 µs on the way out, 20 µs inside Redis (t3), 510 µs on the way back."
        );
        one.split = None;
        let untapped = StepResult {
            runs: vec![("one".into(), one)],
            ..tapped
        };
        assert_eq!(result_sentences(&untapped, &[]).len(), 2);
    }

    #[test]
    fn nouns_agree_with_their_numbers() {
        let r = StepResult {
            step: 2,
            runs: vec![
                ("pipe".into(), summary(Mode::pipelined(10), 10, 300)),
                ("seq".into(), summary(Mode::Sequential, 10, 3000)),
            ],
            ids: vec![1, 2],
        };
        let all = [r.clone()];
        let s = result_sentences(&r, &all);
        assert_eq!(plain(&s[0]), "Pipelined: 10 SETs in 1 round trip, 0.30 ms.");
        assert!(plain(&s[1]).starts_with("Sequential: 10 round trips, 3.00 ms"));
        assert!(
            s[0].iter()
                .any(|p| matches!(p, Piece::Num { key, .. } if key == "pipe.round_trips"))
        );
    }

    #[test]
    fn marks_colour_words_and_numbers() {
        let r = StepResult {
            step: 6,
            runs: vec![(
                "m10".into(),
                summary(Mode::Multiplexed { in_flight: 10 }, 100, 1000),
            )],
            ids: vec![1],
        };
        let ctx = Context {
            current: &r,
            all: &[],
        };
        let pieces = render("[mux|{m10.batch} callers] share [seq|one]", Some(&ctx)).unwrap();
        assert_eq!(
            pieces,
            [
                Piece::Num {
                    key: "m10.batch".into(),
                    value: 10.0,
                    text: "10".into(),
                    class: Some("hl-mux".into())
                },
                Piece::Mark {
                    class: "hl-mux".into(),
                    text: " callers".into()
                },
                Piece::Text(" share ".into()),
                Piece::Mark {
                    class: "hl-seq".into(),
                    text: "one".into()
                },
            ]
        );
        assert_eq!(
            render("a [plain] bracket and a lone {", None).map(|p| plain(&p)),
            Some("a [plain] bracket and a lone {".into())
        );
    }

    #[test]
    fn before_the_run_there_are_no_numbers() {
        for (k, step) in STEPS.iter().enumerate() {
            let intro = render(step.intro, None)
                .unwrap_or_else(|| panic!("step {} intro has a placeholder", k + 1));
            assert!(
                intro.iter().all(|p| !matches!(p, Piece::Num { .. })),
                "step {}",
                k + 1
            );
            assert!(render(step.look_at, None).is_some());
            // The result reports measurements: without them its sentences say nothing.
            assert!(
                step.result.iter().any(|t| render(t, None).is_none()),
                "step {}",
                k + 1
            );
        }
    }

    #[test]
    fn every_result_sentence_resolves_once_its_plan_ran() {
        let mut all: Vec<StepResult> = Vec::new();
        for (k, step) in STEPS.iter().enumerate() {
            let specs = step.specs(None, None);
            assert!(
                validate_runs(&specs, &Limits::DEFAULT).is_ok(),
                "step {}",
                k + 1
            );
            let runs = step
                .runs
                .iter()
                .zip(&specs)
                .map(|(r, s)| (r.role.to_string(), summary(s.mode, s.count, 1_000_000)))
                .collect();
            all.push(StepResult {
                step: k,
                runs,
                ids: vec![],
            });
        }
        for r in &all {
            let sentences = result_sentences(r, &all);
            assert_eq!(
                sentences.len(),
                STEPS[r.step].result.len(),
                "step {}",
                r.step + 1
            );
        }
    }

    #[test]
    fn a_sentence_about_a_skipped_step_is_left_out() {
        let r = StepResult {
            step: 4,
            runs: vec![
                (
                    "each".into(),
                    summary(
                        Mode::Pipelined {
                            batch: 1000,
                            flush: Flush::EachCommand,
                        },
                        100_000,
                        3_000_000,
                    ),
                ),
                (
                    "pipe".into(),
                    summary(Mode::pipelined(1000), 100_000, 400_000),
                ),
            ],
            ids: vec![3, 4],
        };
        let all = [r.clone()];
        let s = result_sentences(&r, &all);
        assert_eq!(s.len(), 2, "step 4 was not measured");
        assert_eq!(
            plain(&s[0]),
            "Flush each command: 100,000 writes, 100 round trips, 3.00 s."
        );
        let with4 = [step4(), r.clone()];
        assert_eq!(result_sentences(&r, &with4).len(), 3);
    }

    #[test]
    fn the_knee_is_the_smallest_batch_near_the_best() {
        let runs = [
            (1, 20_000_000),
            (10, 2_100_000),
            (100, 300_000),
            (1000, 200_000),
            (10_000, 190_000),
        ]
        .into_iter()
        .map(|(b, wall)| (format!("b{b}"), summary(Mode::pipelined(b), 10_000, wall)))
        .collect();
        let r = StepResult {
            step: 5,
            runs,
            ids: vec![],
        };
        assert_eq!(best(&r).unwrap().spec.mode.batch(), 10_000);
        // 190 ms best; 200 ms is 95 % of it, 300 ms only 63 %.
        assert_eq!(knee(&r).unwrap().spec.mode.batch(), 1000);
    }

    #[test]
    fn counts_paths_and_specs() {
        assert_eq!(STEPS[0].count(Some(50)), 1, "one SET stays one SET");
        assert_eq!(STEPS[3].count(Some(50)), 50);
        assert_eq!(STEPS[3].count(None), 100_000);
        assert!(STEPS.len() >= 7);
        assert_eq!(page_from_path("/tour"), Some(0));
        assert_eq!(page_from_path("/tour/"), Some(0));
        assert_eq!(page_from_path("/tour/3"), Some(2));
        assert_eq!(page_from_path("/tour/99"), Some(STEPS.len()));
        assert_eq!(page_from_path("/tour/handout"), Some(STEPS.len()));
        assert_eq!(page_from_path("/"), None);
        assert_eq!(page_from_path("/tourist"), None);
        for page in 0..pages() {
            assert_eq!(page_from_path(&path_of(page)), Some(page));
        }
        let specs = STEPS[3].specs(Some(20), None);
        assert_eq!(specs.len(), 2);
        assert!(
            specs
                .iter()
                .all(|s| s.count == 20 && s.network.delay_out_us == 500)
        );
        let fast = STEPS[3].specs(None, Some(50));
        assert!(
            fast.iter()
                .all(|s| s.count == 100_000 && s.network.delay_back_us == 50)
        );
        assert_eq!(query_number("?count=40&delay=100", "count"), Some(40));
        assert_eq!(query_number("?count=1%2C000", "count"), Some(1000));
        assert_eq!(query_number("count=1,000&delay=x", "delay"), None);
        assert_eq!(query_number("", "count"), None);
    }

    #[test]
    fn the_handout_is_a_markdown_table_per_step() {
        let md = handout_markdown(&[step4()]);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines[0], "# pipescope tour: what we measured");
        assert_eq!(lines[2], "## Step 4: The blog's experiment: 100,000 SETs");
        assert!(lines[4].starts_with("| mode | commands |"), "{md}");
        assert!(
            lines[6].starts_with("| SET · sequential | 100,000 |"),
            "{md}"
        );
        assert!(lines[7].contains("| 130× |"), "{md}");
        assert_eq!(lines.len(), 8);
    }
}
