//! Argument groups that several jobs share, each defined once and flattened into the jobs
//! that use it: where Redis is (`TargetArgs`), the network dialled in (`NetworkArgs`), how many
//! rounds a comparison takes (`RoundsArgs`), and `--json` for jobs that print tables.

use std::time::Duration;

use shared::Network;

/// The Redis a job runs against.
#[derive(clap::Args, Clone, Default)]
pub struct TargetArgs {
    /// Redis to run against, e.g. redis://:password@host:6379/0. Without it pipescope starts
    /// its own redis-server on a free loopback port and stops it on exit.
    #[arg(long, env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// For a rediss:// URL: trust only the CA certificates in this PEM file (a private CA)
    /// instead of the system's roots.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<std::path::PathBuf>,
    /// For a rediss:// URL: accept any server certificate, without verifying it. Anyone in
    /// between can then read and change the traffic; pipescope says so loudly.
    #[arg(long)]
    pub tls_insecure: bool,
    /// Run against a Redis Cluster: with --redis-url, the cluster that node belongs to; without
    /// it, three masters of pipescope's own on free loopback ports, stopped on exit. Each batch
    /// is split per master; MULTI/EXEC and MSET need --keys one-tag (every key in one slot).
    #[arg(long)]
    pub cluster: bool,
}

impl TargetArgs {
    /// `pipescope clean` against this Redis, spelled out for a person (never the password).
    pub fn clean_command(&self) -> pipescope::clean::Command {
        let tls = pipescope::target::TlsOptions {
            ca: self.tls_ca.clone(),
            insecure: self.tls_insecure,
        };
        pipescope::clean::Command::new(self.redis_url.as_deref(), tls, self.cluster)
    }
}

/// A network dialled in between pipescope and Redis (a delay-line proxy in pipescope).
#[derive(clap::Args, Clone, Copy, Default)]
pub struct NetworkArgs {
    /// One-way delay each way, in µs (e.g. 250 for a 0.5 ms round trip on top of loopback).
    #[arg(long, default_value_t = 0, value_parser = number_in(0, LIMITS.max_delay_us))]
    pub delay_us: u32,
    /// Jitter on that delay, ± µs (bytes are never reordered).
    #[arg(long, default_value_t = 0, value_parser = number_in(0, LIMITS.max_delay_us))]
    pub jitter_us: u32,
    /// Bandwidth cap on each direction, bytes per second (makes transmission time real).
    #[arg(long, value_parser = number_in(LIMITS.min_bandwidth, LIMITS.max_bandwidth))]
    pub bandwidth: Option<u64>,
}

impl NetworkArgs {
    pub fn network(self) -> Network {
        Network {
            jitter_us: self.jitter_us,
            bandwidth: self.bandwidth,
            ..Network::symmetric(self.delay_us)
        }
    }
}

/// How long a comparison measures: rounds that rotate who goes first, within a time budget.
#[derive(clap::Args, Clone, Copy)]
pub struct RoundsArgs {
    /// Rounds per comparison at least (more while the time budget lasts, at most 101).
    /// Medians are reported.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// No new round starts after this many seconds (each comparison gets its share).
    #[arg(long, default_value_t = pipescope::versus::DEFAULT_TIME_BUDGET.as_secs())]
    pub time_budget_secs: u64,
}

impl RoundsArgs {
    pub fn rounds(self) -> usize {
        self.rounds.clamp(1, pipescope::versus::MAX_ROUNDS)
    }

    pub fn budget(self) -> Duration {
        Duration::from_secs(self.time_budget_secs)
    }
}

/// For jobs that print a Markdown table: JSON lines instead.
#[derive(clap::Args, Clone, Copy)]
pub struct JsonArg {
    /// Print one JSON object a line instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The limits the page and the server enforce, for flags too.
pub const LIMITS: shared::Limits = shared::Limits::DEFAULT;

/// A whole number from `lo` to `hi`, for a flag: clap names the flag and echoes what was typed
/// beside these words.
pub fn number_in<T>(
    lo: T,
    hi: T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s: &str| match s.trim().parse::<T>() {
        Ok(n) if lo <= n && n <= hi => Ok(n),
        _ => Err(format!("must be a whole number from {lo} to {hi}")),
    }
}
