//! `pipescope bench`: runs only. Every flag shapes the one workload, as redis-benchmark's do.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::ValueEnum;

use pipescope::bench::{BenchOptions, Format};
use shared::{Command, Flush, KeyLayout, Mode, RunSpec, Wait};

use anyhow::Context;

use super::args::{LIMITS, NetworkArgs, TargetArgs, number_in};

/// `--batch` when it is not given and the count is at least this.
const DEFAULT_BATCH: u32 = 1000;
use super::output::say;
use super::record_to::{RecordTo, write_html};

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Commands per run.
    #[arg(long, default_value_t = 100_000, value_parser = number_in(1, LIMITS.max_count))]
    pub count: u64,
    /// What to run (see the values below).
    #[arg(long, value_enum, default_value_t = BenchMode::Compare)]
    pub mode: BenchMode,
    /// Commands per pipeline batch (per MULTI/EXEC, per MSET; in flight for multiplexed):
    /// 1000, or the count when that is smaller. One larger than the count is refused.
    #[arg(long, value_parser = number_in(1, LIMITS.max_batch))]
    pub batch: Option<u32>,
    /// How a pipeline's batch reaches the socket: one write per batch, a write per command
    /// (Spring Data Redis + Lettuce's default inside executePipelined), or a write every
    /// --flush-every commands.
    #[arg(long, value_enum, default_value_t = FlushArg::Batch)]
    pub flush: FlushArg,
    /// With --flush every: commands per write.
    #[arg(long, default_value_t = 16, value_parser = number_in(1, LIMITS.max_batch))]
    pub flush_every: u32,
    /// The command: SET (the default), GET (of keys written beforehand, untimed) or INCR.
    #[arg(long, value_parser = parse_command)]
    pub command: Option<Command>,
    /// Bytes per value (default: the classic `v{i}`).
    #[arg(long, value_parser = number_in(1, LIMITS.max_value_bytes))]
    pub value_bytes: Option<u32>,
    /// Key names: spread (`pipescope:<run>:k<i>`, over every cluster slot) or one-tag
    /// (`pipescope:{<run>}:k<i>`: one hash tag, so every key is in one slot on one master, as
    /// MULTI/EXEC and MSET need on a cluster).
    #[arg(long, default_value = "spread", value_parser = parse_keys)]
    pub keys: KeyLayout,
    /// Connections in the pool for --mode connections (default 8). Each connection sends its
    /// share of the commands one at a time.
    #[arg(long, value_parser = number_in(1, shared::Mode::MAX_CONNECTIONS))]
    pub connections: Option<u32>,
    /// With --mode sweep: the largest batch (batches 1, 2, 5, 10, 20, 50, … up to it).
    #[arg(long, default_value_t = 1000, value_parser = number_in(2, LIMITS.max_batch))]
    pub max_batch: u32,
    /// Busy-poll for replies for up to this many µs before sleeping (default: sleep, as client
    /// libraries do). Takes the client's own wake-up out of every round trip, for a CPU.
    #[arg(long, value_name = "US", value_parser = number_in(1, shared::Wait::MAX_BUSY_POLL_US))]
    pub busy_poll_us: Option<u32>,
    /// Atomicity, measured: the pipelined and MULTI/EXEC runs INCR one shared counter while a
    /// second client INCRs it too (straight to Redis, one at a time); the counter's values say
    /// how many of its INCRs Redis ran inside the runs' batches. The command is INCR; a mode
    /// with no pipelined or MULTI/EXEC run is refused.
    #[arg(long)]
    pub other_client: bool,
    /// Output: table, json (one object per run), csv, or markdown (paste into slides).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Also write the runs, with their timelines, to this recording file (one versioned JSON
    /// file; `pipescope replay FILE` or the page shows it later with no Redis).
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,
    /// Also write the runs as one HTML file: the page with the runs inside, which opens from
    /// disk in a browser with no server and no network (as `pipescope replay` shows them).
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// After the runs, print this process's peak resident memory (VmHWM in /proc/self/status)
    /// and its resident memory before them: what the engine needed for the runs.
    #[arg(long)]
    pub rss: bool,
    /// Don't keep per-request timings (only the latency histogram), e.g. to measure their cost.
    #[arg(long)]
    pub no_spans: bool,
    /// Don't measure at all (only wall time and throughput), e.g. to count what measuring
    /// costs under `valgrind --tool=callgrind`.
    #[arg(long)]
    pub no_instrument: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BenchMode {
    Sequential,
    /// Pipelined at --batch, written as --flush says.
    Pipelined,
    /// Sequential, then pipelined (same count).
    Compare,
    /// Pipelined at batch 1, 2, 5, 10, 20, 50, … up to --max-batch: where the round trip stops
    /// dominating.
    Sweep,
    /// --batch concurrent callers auto-pipelined on one connection.
    Multiplexed,
    /// MULTI, --batch commands, EXEC.
    Transaction,
    /// One MSET (MGET for GET) of --batch keys.
    Mset,
    /// Sequential, pipelined with a write per command, pipelined with one write per batch:
    /// which write policy explains which speed-up.
    Flush,
    /// A pool of --connections connections (default 8), each sending its share one command at
    /// a time, then one connection pipelined at --batch: what C connections buy and cost.
    Connections,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FlushArg {
    Batch,
    Each,
    Every,
}

fn parse_keys(s: &str) -> Result<KeyLayout, String> {
    KeyLayout::parse(s).ok_or_else(|| format!("unknown key layout {s:?}: spread or one-tag"))
}

fn parse_command(s: &str) -> Result<Command, String> {
    Command::parse(s).ok_or_else(|| format!("unknown command {s:?}: SET, GET or INCR"))
}

impl BenchArgs {
    /// `--batch`, or its default: 1000, or the count when that is smaller (a run of 100
    /// commands is not refused for a batch nobody asked for).
    pub fn batch(&self) -> u32 {
        self.batch
            .unwrap_or_else(|| DEFAULT_BATCH.min(u32::try_from(self.count).unwrap_or(u32::MAX)))
    }

    /// The runs the flags ask for, in order.
    fn specs(&self) -> anyhow::Result<Vec<RunSpec>> {
        let command = self.command()?;
        let flush = match self.flush {
            FlushArg::Batch => Flush::Batch,
            FlushArg::Each => Flush::EachCommand,
            FlushArg::Every => Flush::Buffered {
                commands: self.flush_every,
            },
        };
        let pipelined = |batch, flush| Mode::Pipelined { batch, flush };
        let batch = self.batch();
        let modes = match self.mode {
            BenchMode::Sequential => vec![Mode::Sequential],
            BenchMode::Pipelined => vec![pipelined(batch, flush)],
            BenchMode::Compare => vec![Mode::Sequential, pipelined(batch, flush)],
            BenchMode::Sweep => shared::sweep::plan(self.max_batch, self.count, 1, &LIMITS)
                .with_context(|| {
                    format!(
                        "--mode sweep --max-batch {} --count {}",
                        self.max_batch, self.count
                    )
                })?
                .into_iter()
                .map(Mode::pipelined)
                .collect(),
            BenchMode::Multiplexed => vec![Mode::Multiplexed { in_flight: batch }],
            BenchMode::Transaction => vec![Mode::Transaction { batch }],
            BenchMode::Mset => vec![Mode::Mset { batch }],
            BenchMode::Flush => vec![
                Mode::Sequential,
                pipelined(batch, Flush::EachCommand),
                Mode::pipelined(batch),
            ],
            BenchMode::Connections => vec![
                Mode::Connections {
                    connections: self.connections.unwrap_or(8),
                },
                pipelined(batch, flush),
            ],
        };
        let network = self.network.network();
        Ok(modes
            .into_iter()
            .map(|mode| RunSpec {
                command,
                other_client: self.other_client
                    && matches!(mode, Mode::Pipelined { .. } | Mode::Transaction { .. }),
                value_bytes: self.value_bytes,
                keys: self.keys,
                wait: match self.busy_poll_us {
                    Some(us) => Wait::BusyPoll { us },
                    None => Wait::Sleep,
                },
                ..RunSpec::set(self.count, mode).with_network(network)
            })
            .collect())
    }

    /// The runs' command: INCR with --other-client, which refuses another command and a mode
    /// with no pipelined or MULTI/EXEC run for it to share its counter with; else --command
    /// (SET).
    fn command(&self) -> anyhow::Result<Command> {
        if !self.other_client {
            return Ok(self.command.unwrap_or(Command::Set));
        }
        if let Some(command) = self.command.filter(|c| *c != Command::Incr) {
            anyhow::bail!(
                "--other-client INCRs one shared counter, so the runs INCR it too, not {}: drop --command {}",
                command.name(),
                command.name().to_lowercase()
            );
        }
        let mode = match self.mode {
            BenchMode::Sequential => "sequential",
            BenchMode::Multiplexed => "multiplexed",
            BenchMode::Mset => "mset",
            BenchMode::Connections => "connections",
            BenchMode::Pipelined
            | BenchMode::Compare
            | BenchMode::Sweep
            | BenchMode::Transaction
            | BenchMode::Flush => return Ok(Command::Incr),
        };
        anyhow::bail!(
            "--other-client shares its counter with a pipelined or MULTI/EXEC run, and --mode {mode} has none: use --mode pipelined, transaction or compare"
        )
    }
}

pub async fn bench(args: BenchArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<()> {
    if args.connections.is_some() && !matches!(args.mode, BenchMode::Connections) {
        anyhow::bail!(
            "--connections sizes the pool of --mode connections; add --mode connections, or drop --connections"
        );
    }
    let specs = args.specs()?;
    let redis = args.target.connect().await?;
    redis.target.refuse_cluster_node().await?;
    let target = &redis.target;
    let options = BenchOptions {
        format: if args.json { Format::Json } else { args.format },
        no_spans: args.no_spans,
        no_instrument: args.no_instrument,
    };
    let before = args
        .rss
        .then(|| pipescope::cost::observer_memory::memory(std::process::id()))
        .transpose()?;
    let record = args
        .record
        .as_deref()
        .map(|p| RecordTo::prepare(p, "--record"))
        .transpose()?;
    let html = match &args.html {
        // The page is taken apart before the runs, so a pipescope without it says so first.
        Some(path) => Some((
            RecordTo::prepare(path, "--html")?,
            pipescope::html_file::Page::built().context("--html")?,
        )),
        None => None,
    };
    let runs = pipescope::bench::run(target, specs, options, cancel).await?;
    if record.is_some() || html.is_some() {
        let saved_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let n = runs.len();
        let recording = shared::Recording::new(
            shared::recording::rfc3339_utc(saved_at),
            env!("CARGO_PKG_VERSION").to_string(),
            redis.redis_version.clone(),
            target.redacted(),
            args.network.network(),
            runs,
        );
        if let Some(record) = record {
            record.write(&recording)?;
            eprintln!(
                "recorded {n} runs to {} (pipescope replay {} shows them)",
                record.path.display(),
                record.path.display()
            );
        }
        if let Some((to, page)) = html {
            write_html(&to, &page, recording)?;
        }
    }
    if let Some(before) = before {
        use pipescope::cost::observer_memory::mb;
        let after = pipescope::cost::observer_memory::memory(std::process::id())?;
        say(format_args!(
            "this process's memory (/proc/self/status): {} resident before the runs, peak {} (VmHWM), {} resident after",
            mb(before.rss_kb),
            mb(after.hwm_kb),
            mb(after.rss_kb)
        ));
    }
    Ok(())
}
