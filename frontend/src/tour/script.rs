//! The tour's script: each step's words, its preset plan (runs with role names), the count and
//! delay it dials in, and which part of the stage it is about.

use shared::{Flush, Mode, Network, RunSpec};

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
    /// Its runs INCR one shared counter while the other client INCRs it too
    /// (`RunSpec::other_client`).
    pub other_client: bool,
}

impl Step {
    /// The commands this step runs, given the presenter's choice (`None`: the default): never
    /// fewer than its largest batch, so that every run fills the batch it is labelled with.
    pub fn count(&self, chosen: Option<u64>) -> u64 {
        match self.count {
            StepCount::Fixed(n) => n,
            StepCount::Default(n) => chosen.unwrap_or(n).max(self.fewest()),
        }
    }

    /// The fewest commands a run of this step may have: one whole batch of its largest.
    pub fn fewest(&self) -> u64 {
        self.runs
            .iter()
            .filter(|r| r.mode.sends_batches())
            .map(|r| u64::from(r.mode.batch()))
            .max()
            .unwrap_or(1)
    }

    /// The command its runs send.
    pub fn command(&self) -> &'static str {
        if self.other_client { "INCR" } else { "SET" }
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
            .map(|r| match self.other_client {
                true => RunSpec::with_other_client(count, r.mode),
                false => RunSpec::set(count, r.mode),
            })
            .map(|spec| spec.with_network(self.network(delay_us)))
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
        other_client: false,
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
        other_client: false,
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
        other_client: false,
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
        other_client: false,
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
            "What the blog's own client did on the wire only that client can show: point it at pipescope's Observe view (or `pipescope observe`) and it counts that client's writes and round trips and times its own work between them.",
        ],
        focus: Focus::Results,
        other_client: false,
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
            "The last step, to batch {beyond.batch}, still paid at least 1.5× per doubling: the knee lies beyond this sweep.",
        ],
        focus: Focus::Charts,
        other_client: false,
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
        other_client: false,
    },
    Step {
        title: "Is a pipeline atomic?",
        intro: "A pipeline saves round trips, but does it keep other clients out? Two runs INCR one shared counter while [other|another client] INCRs it too, one command at a time: first [pipe|pipelined], then [tx|MULTI/EXEC], both in batches of 10,000. Every reply is the counter's value just after that command, so the replies give Redis's own order: a batch whose values skip numbers had the other client's commands run in the middle of it.",
        look_at: "The Other client lane under each run: red marks are its INCRs that Redis ran inside a batch.",
        runs: &[
            RunDef {
                role: "pipe",
                mode: Mode::pipelined(10_000),
            },
            RunDef {
                role: "tx",
                mode: Mode::Transaction { batch: 10_000 },
            },
        ],
        count: StepCount::Fixed(100_000),
        delay_us: TOUR_DELAY_US,
        result: &[
            "[pipe|Pipelined]: of the [other|other client's] {pipe.other|INCR}, {pipe.inside} ran inside the run's {pipe.batches|pipeline}, between its own commands ({pipe.interleaved} of the pipelines were interleaved).",
            "[tx|MULTI/EXEC]: of the [other|other client's] {tx.other|INCR}, {tx.inside} ran inside the run's {tx.batches|transaction}.",
            "Measured, not assumed: the INCR replies give Redis's order, and the counter ended at {pipe.final} and {tx.final}, every INCR of both sides counted.",
            "So a pipeline is not atomic: {pipe.inside_some|command} of another client ran in the middle of its batches. A MULTI/EXEC batch is: {tx.inside_none} did.",
        ],
        focus: Focus::Timeline,
        other_client: true,
    },
];
