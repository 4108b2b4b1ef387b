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
//! - `{speedup:seq:pipe}`: how many times the throughput of `pipe` beats `seq`'s.
//! - `{seq.round_trips|round trip}`: the number followed by the noun, plural unless it is 1.
//!
//! A sentence whose numbers are not all measured (say, step 4 was skipped) is left out, so the
//! prose never shows a number that was not measured in this session.

use shared::{Flush, Mode, Network, RunSpec, RunSummary};

use crate::format;
use crate::sweep;

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

const fn sweep_run(role: &'static str, batch: u32) -> RunDef {
    RunDef {
        role,
        mode: Mode::pipelined(batch),
    }
}

/// The tour's sweep: batches 1 to 10,000 by decades, the series run `sweep::REPEATS` times in
/// rounds (a repeat's role carries `_2`, `_3`), so each batch has a median and a spread.
const SWEEP_RUNS: &[RunDef] = &[
    sweep_run("b1", 1),
    sweep_run("b10", 10),
    sweep_run("b100", 100),
    sweep_run("b1000", 1000),
    sweep_run("b10000", 10_000),
    sweep_run("b1_2", 1),
    sweep_run("b10_2", 10),
    sweep_run("b100_2", 100),
    sweep_run("b1000_2", 1000),
    sweep_run("b10000_2", 10_000),
    sweep_run("b1_3", 1),
    sweep_run("b10_3", 10),
    sweep_run("b100_3", 100),
    sweep_run("b1000_3", 1000),
    sweep_run("b10000_3", 10_000),
];

pub const STEPS: &[Step] = &[
    Step {
        title: "One SET, one round trip",
        intro: "The client sends one [seq|SET] to Redis and waits. The request crosses the network, Redis does its work, the [seq-reply|+OK] crosses back. That wait is a round trip, and it has three parts: [t1|t1] transmission (putting the bytes on the wire), [t2|t2] propagation (the trip itself, here a dialled-in delay each way) and [t3|t3] queuing and processing inside Redis. A real machine adds a fourth: the hosts' own time (system calls, the kernel's network stack, waking the client and Redis up).",
        look_at: "The round trip below: which part is the biggest?",
        runs: &[RunDef {
            role: "one",
            mode: Mode::Sequential,
        }],
        count: StepCount::Fixed(1),
        delay_us: TOUR_DELAY_US,
        result: &[
            "Measured by the engine: one [seq|SET], one round trip of {one.rtt}.",
            "Measured by the wire tap at the proxy: {one.out} on the way out, {one.server} from the proxy to Redis and back (two loopback hops and two wake-ups around Redis's work), {one.back} on the way back.",
            "Measured by Redis itself (INFO commandstats): {one.redis} of work for the SET ([t3|t3] proper).",
            "[t2|Propagation] was dialled in at {one.delay} each way; the proxy releases each chunk early by what its own forwarding costs ({one.early_out} out, {one.early_back} back), so a leg can read below the dialled delay.",
            "[t1|Transmission] was not measured: a few dozen bytes at an assumed 10 Gbit/s take well under a microsecond.",
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
        runs: SWEEP_RUNS,
        count: StepCount::Default(10_000),
        delay_us: TOUR_DELAY_US,
        result: &[
            "Each batch size ran {b1.runs|time}; each figure is its median run, the runs' spread in brackets.",
            "Batch {b1.batch}: {b1.ops} ops/s ({b1.ops_min}–{b1.ops_max}). Batch {b10.batch}: {b10.ops} ({b10.ops_min}–{b10.ops_max}). Batch {b100.batch}: {b100.ops} ({b100.ops_min}–{b100.ops_max}). Batch {b1000.batch}: {b1000.ops} ({b1000.ops_min}–{b1000.ops_max}). Batch {b10000.batch}: {b10000.ops} ({b10000.ops_min}–{b10000.ops_max}).",
            "The knee is at batch {knee.batch} ({knee.ops} ops/s): the last step that multiplied throughput by at least 1.5× per doubling of the batch led there, and none did beyond it.",
            "There round trips still take about {knee.rt_major} of the time (derived from batch 1's time per round trip): bigger batches still cut them, but each doubling now buys less than 1.5×, and holds more replies in memory.",
            "There round trips take only about {knee.rt_minor} of the time (derived from batch 1's time per round trip): the work per command is now the larger part.",
            "Every step up to batch {beyond.batch} still paid at least 1.5× per doubling: the knee lies beyond this sweep.",
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

    /// The runs of `role` and of its repeats (`b1`, `b1_2`, `b1_3`).
    pub fn runs_of(&self, role: &str) -> Vec<&RunSummary> {
        self.runs
            .iter()
            .filter(|(r, _)| same_role(r, role))
            .map(|(_, s)| s)
            .collect()
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
            "beyond" => beyond(self.current).cloned(),
            role => sweep::median(self.current.runs_of(role)).cloned(),
        }
    }
}

/// True when `run_role` is `role` or one of its repeats (`b1_2` for `b1`).
fn same_role(run_role: &str, role: &str) -> bool {
    run_role == role
        || run_role
            .strip_prefix(role)
            .and_then(|r| r.strip_prefix('_'))
            .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// The step's runs as a sweep (`sweep::group`): its median run at `pick`'s point.
fn sweep_run_at(
    result: &StepResult,
    pick: impl Fn(&[sweep::Point]) -> Option<usize>,
) -> Option<&RunSummary> {
    let runs: Vec<RunSummary> = result.runs.iter().map(|(_, s)| s.clone()).collect();
    let points = sweep::group(&runs)?;
    let batch = points[pick(&points)?].batch;
    sweep::median(
        result
            .runs
            .iter()
            .map(|(_, s)| s)
            .filter(|s| s.spec.mode.batch() == batch)
            .collect(),
    )
}

/// The median run at the batch with the best median throughput.
pub fn best(result: &StepResult) -> Option<&RunSummary> {
    sweep_run_at(result, sweep::best)
}

/// The median run at the knee (`sweep::knee`: the page's sweep's definition).
pub fn knee(result: &StepResult) -> Option<&RunSummary> {
    sweep_run_at(result, sweep::knee)
}

/// The median run at the largest batch, when every step still paid (no knee in the sweep).
pub fn beyond(result: &StepResult) -> Option<&RunSummary> {
    sweep_run_at(result, |p| sweep::knee(p).is_none().then(|| p.len() - 1))
}

/// The round trips' share of the knee's time (`sweep::round_trip_share`).
pub fn knee_round_trip_share(result: &StepResult) -> Option<f64> {
    let runs: Vec<RunSummary> = result.runs.iter().map(|(_, s)| s.clone()).collect();
    let points = sweep::group(&runs)?;
    Some(sweep::round_trip_share(&points, sweep::knee(&points)?))
}

/// A share as shown: `0.667` → `67 %`.
fn percent(share: f64) -> (f64, String) {
    (share, format!("{:.0} %", share * 100.0))
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
                "runs" => return Some((runs.len() as f64, format::count(runs.len() as u64))),
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
        if let (Some(FocusTrip { run, summary }), Focus::OneTrip) =
            (FocusTrip::of(r), STEPS[r.step].focus)
        {
            out += &trip_markdown(run, summary);
        }
    }
    out
}

/// The run a one-trip step takes apart.
struct FocusTrip<'a> {
    run: u64,
    summary: &'a RunSummary,
}

impl FocusTrip<'_> {
    fn of(r: &StepResult) -> Option<FocusTrip<'_>> {
        Some(FocusTrip {
            run: r.ids.first().copied().unwrap_or(0),
            summary: &r.runs.first()?.1,
        })
    }
}

/// A round trip's parts as a list, each with its source (as the figure labels them).
pub fn trip_markdown(run: u64, s: &RunSummary) -> String {
    let trip = crate::rtt_model::Trip::of(run, s);
    let mut out = format!(
        "\nThe round trip, taken apart:\n\n- RTT {} (mean, measured by the engine)\n",
        format::latency(trip.rtt_us)
    );
    for p in &trip.parts {
        out += &format!(
            "- {} {} ({})\n",
            p.name,
            crate::timeaxis::duration(p.us),
            p.source.describe()
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
                mean_us: 1_040.0,
                p50_us: 1_000.0,
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
    fn step_1_says_who_measured_each_figure() {
        let mut one = summary(Mode::Sequential, 1, 1_040);
        let tapped = StepResult {
            step: 0,
            runs: vec![("one".into(), one.clone())],
            ids: vec![1],
        };
        let s: Vec<String> = result_sentences(&tapped, &[])
            .iter()
            .map(|p| plain(p))
            .collect();
        assert_eq!(s.len(), 4, "Redis did not report its time: {s:?}");
        assert_eq!(
            s[0],
            "Measured by the engine: one SET, one round trip of 1.04 ms."
        );
        assert_eq!(
            s[1],
            "Measured by the wire tap at the proxy: 510 µs on the way out, 20 µs from the proxy to Redis and back (two loopback hops and two wake-ups around Redis's work), 510 µs on the way back."
        );
        assert!(s[2].contains("releases each chunk early"), "{}", s[2]);
        assert!(
            s[3].contains("not measured") && s[3].contains("assumed"),
            "{}",
            s[3]
        );
        one.redis_usec_per_call = Some(1.2);
        let with_redis = StepResult {
            runs: vec![("one".into(), one.clone())],
            ..tapped.clone()
        };
        let s = result_sentences(&with_redis, &[]);
        assert_eq!(
            plain(&s[2]),
            "Measured by Redis itself (INFO commandstats): 1.2 µs of work for the SET (t3 proper)."
        );
        one.split = None;
        let untapped = StepResult {
            runs: vec![("one".into(), one)],
            ..tapped
        };
        assert_eq!(result_sentences(&untapped, &[]).len(), 3, "no tap, no legs");
    }

    #[test]
    fn the_handout_lists_the_trips_parts_with_their_sources() {
        let one = StepResult {
            step: 0,
            runs: vec![("one".into(), summary(Mode::Sequential, 1, 1_040))],
            ids: vec![1],
        };
        let md = handout_markdown(&[one]);
        assert!(
            md.contains("- RTT 1.04 ms (mean, measured by the engine)"),
            "{md}"
        );
        assert!(
            md.contains("- out 510 µs (measured by the wire tap (median))"),
            "{md}"
        );
        assert!(md.contains("- t1 transmission"), "{md}");
        assert!(md.contains("(assumed: "), "{md}");
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
                .map(|(r, s)| {
                    let mut run = summary(s.mode, s.count, 1_000_000);
                    run.redis_usec_per_call = Some(1.0);
                    (r.role.to_string(), run)
                })
                .collect();
            all.push(StepResult {
                step: k,
                runs,
                ids: vec![],
            });
        }
        for r in &all {
            // The sweep's alternatives: the share is either a major or a minor part, and a
            // knee inside the sweep leaves the "beyond" sentence out.
            let alternatives = if r.step == 5 { 2 } else { 0 };
            let sentences = result_sentences(r, &all);
            assert_eq!(
                sentences.len(),
                STEPS[r.step].result.len() - alternatives,
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

    /// Step 6's runs, in the plan's order, from wall times per round (batch 1 … 10,000).
    fn sweep_step(rounds: &[[u64; 5]]) -> StepResult {
        let batches = [1, 10, 100, 1000, 10_000];
        let runs = STEPS[5]
            .runs
            .iter()
            .enumerate()
            .map(|(k, def)| {
                let (round, b) = (k / 5, k % 5);
                assert_eq!(def.mode.batch(), batches[b], "rounds of 1 … 10,000");
                let wall = rounds[round % rounds.len()][b];
                (def.role.to_string(), summary(def.mode, 10_000, wall))
            })
            .collect();
        StepResult {
            step: 5,
            runs,
            ids: vec![],
        }
    }

    #[test]
    fn the_tours_knee_is_the_sweeps_knee_on_medians() {
        // Per decade, a doubling pays 1.5× when the decade pays 1.5^3.32 ≈ 3.8×.
        let r = sweep_step(&[
            [20_000_000, 2_100_000, 300_000, 200_000, 190_000],
            [21_000_000, 2_000_000, 320_000, 210_000, 185_000],
            [19_000_000, 2_300_000, 310_000, 205_000, 200_000],
        ]);
        assert_eq!(STEPS[5].runs.len(), 5 * sweep::REPEATS);
        // 2.1 s → 310 ms is 6.8× a decade: paid; 310 → 205 ms is 1.5×: not.
        assert_eq!(knee(&r).unwrap().spec.mode.batch(), 100);
        assert_eq!(knee(&r).unwrap().wall_us, 310_000, "the median run");
        assert_eq!(best(&r).unwrap().wall_us, 190_000);
        assert_eq!(beyond(&r), None);
        let runs: Vec<RunSummary> = r.runs.iter().map(|(_, s)| s.clone()).collect();
        let points = sweep::group(&runs).unwrap();
        assert_eq!(sweep::knee(&points), Some(2), "one definition");
        // Batch 1: 2,000 µs a round trip; batch 100: 100 round trips in 310 ms → 65 %.
        let share = knee_round_trip_share(&r).unwrap();
        assert!((share - 100.0 * 2_000.0 / 310_000.0).abs() < 1e-12);
        let all = [r.clone()];
        let s: Vec<String> = result_sentences(&r, &all)
            .iter()
            .map(|p| plain(p))
            .collect();
        assert_eq!(
            s[0],
            "Each batch size ran 3 times; each figure is its median run, the runs' spread in brackets."
        );
        assert!(
            s[1].starts_with("Batch 1: 500 ops/s (476–526). Batch 10: 4,762"),
            "{}",
            s[1]
        );
        assert!(
            s[2].starts_with("The knee is at batch 100 (32,258 ops/s)"),
            "{}",
            s[2]
        );
        assert!(
            s[3].starts_with("There round trips still take about 65 % of the time"),
            "{}",
            s[3]
        );
        assert_eq!(s.len(), 4, "no minor-share or beyond sentence: {s:?}");
        assert!(STEPS[5].result[2].contains(&format!("{}×", sweep::KNEE_GAIN)));
    }

    #[test]
    fn a_sweep_still_climbing_says_the_knee_lies_beyond() {
        let r = sweep_step(&[[10_000_000, 1_000_000, 100_000, 10_000, 1_000]]);
        assert_eq!(knee(&r), None);
        assert_eq!(beyond(&r).unwrap().spec.mode.batch(), 10_000);
        let all = [r.clone()];
        let s: Vec<String> = result_sentences(&r, &all)
            .iter()
            .map(|p| plain(p))
            .collect();
        assert_eq!(s.len(), 3, "{s:?}");
        assert!(
            s[2].starts_with("Every step up to batch 10,000 still paid"),
            "{}",
            s[2]
        );
    }

    #[test]
    fn a_minor_share_is_called_minor() {
        // Batch 1: 2,000 µs a round trip; batch 100's 100 round trips are 200 ms of 1 s: 20 %.
        let r = sweep_step(&[[20_000_000, 2_000_000, 1_000_000, 1_000_000, 1_000_000]]);
        assert_eq!(knee(&r).unwrap().spec.mode.batch(), 10);
        let all = [r.clone()];
        let s: Vec<String> = result_sentences(&r, &all)
            .iter()
            .map(|p| plain(p))
            .collect();
        assert!(
            s[3].starts_with("There round trips still take about 100 %"),
            "{s:?}"
        );
        let r = sweep_step(&[[20_000_000, 10_000_000, 10_000_000, 10_000_000, 10_000_000]]);
        assert_eq!(knee(&r).unwrap().spec.mode.batch(), 1, "no step paid");
        let r = sweep_step(&[[2_000_000, 500_000, 480_000, 470_000, 460_000]]);
        let share = knee_round_trip_share(&r).unwrap();
        assert!(share < 0.5, "{share}");
        let all = [r.clone()];
        let s: Vec<String> = result_sentences(&r, &all)
            .iter()
            .map(|p| plain(p))
            .collect();
        assert!(
            s[3].starts_with("There round trips take only about"),
            "{s:?}"
        );
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
