//! One named part of a round trip: its time, the colour family it is drawn in, and how it was
//! obtained (measured, derived or assumed), which its label says.

/// How a figure was obtained. Every part the page draws carries one, and its label says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Measured, by what (`"the engine"`, `"the wire tap"`, `"Redis (INFO commandstats)"`).
    Measured(&'static str),
    /// Computed from other figures: the formula, in words.
    Derived(String),
    /// Not measured: a value taken as given (what, and why it is plausible).
    Assumed(String),
}

impl Source {
    /// `measured`, `derived` or `assumed`: the word the page's labels and `data-source` use.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Measured(_) => "measured",
            Source::Derived(_) => "derived",
            Source::Assumed(_) => "assumed",
        }
    }

    /// The source in words, starting with its kind: "measured by the wire tap".
    pub fn describe(&self) -> String {
        match self {
            Source::Measured(by) => format!("measured by {by}"),
            Source::Derived(from) => format!("derived: {from}"),
            Source::Assumed(what) => format!("assumed: {what}"),
        }
    }
}

/// The colour family a part is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tint {
    /// Transmission (t1).
    Wire,
    /// Propagation or a leg through the delay line (t2).
    Trip,
    /// Redis, as Redis or the tap sees it (t3).
    Redis,
    /// The hosts' own time: system calls, the kernel's network stack, waking a sleeper.
    Host,
}

impl Tint {
    pub fn class(self) -> &'static str {
        match self {
            Tint::Wire => "t1",
            Tint::Trip => "t2",
            Tint::Redis => "t3",
            Tint::Host => "host",
        }
    }
}

/// One named part of a round trip, µs, and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Stable name for the page and its tests: `t1`, `host`, `redis`, `out`, `tap`, `back`, `t2`.
    pub key: &'static str,
    pub name: String,
    pub us: f64,
    pub tint: Tint,
    pub source: Source,
    /// What the time is, in a sentence (no numbers the part does not carry).
    pub what: String,
}

/// A stretch of the drawn bar: a part (index into `TripBreakdown::parts`) or a share of one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub part: usize,
    pub us: f64,
    /// Drawn as half of its part (each way).
    pub half: bool,
}
