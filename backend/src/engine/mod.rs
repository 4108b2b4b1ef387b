//! The workload engine: runs a `RunSpec` against a real Redis over one raw connection and
//! measures every request. One module per mode family, each handed a `wire::Job` (the
//! connection halves, the tally and its batch boundaries, the command encoder from `encode`):
//! - `pipeline`: sequential (a batch of one) and pipelined, with the three flush policies;
//! - `multiplexed`: a sliding window of in-flight requests, auto-pipelined;
//! - `transaction`: MULTI/EXEC per batch;
//! - `mset`: one MSET/MGET per batch;
//! - `connections`: a pool of connections, each sending its share one command at a time
//!   (it opens its own connections, so it gets no `Job`);
//! - `cluster`: sequential and pipelined on a Redis Cluster, each batch split per master;
//! - `cluster_multiplexed`: multiplexed on a Redis Cluster, each command to its key's master;
//! - `cluster_pool`: a pool on a Redis Cluster, each caller with a connection per master;
//! - `one_slot`: any other mode on a Redis Cluster whose keys are all in one slot (one hash
//!   tag, or the other client's counter), run on that slot's master as on one server.
//!
//! What the modes share, and what runs around them:
//! - `wire`: the measured connection's two halves, the tally and the `Job`;
//! - `encode`: a run's commands, encoded straight into the write buffer;
//! - `keys`: where a run's keys live and how they are removed;
//! - `lease`: the mark that a run is live, so that another pipescope on the same Redis
//!   leaves its keys alone;
//! - `finished`: a run as every caller needs it (`run_and_clean_up`): its lease held,
//!   Redis's own time read around it, its keys removed whatever happened and counted;
//! - `seed`: the keys a GET run reads, written first, untimed;
//! - `redis_time`: Redis's own time per call and CPU, from `INFO` before and after a run;
//! - `client_memory`: Redis's memory while a run is in flight, polled from a second connection;
//! - `other_client`: with `RunSpec::other_client`, a second connection INCRing the run's
//!   shared counter while the run goes; the run keeps its batches' counter values.
//!
//! The hot path allocates nothing per command: commands are encoded straight into a reused
//! write buffer and replies are scanned in place in a reused read buffer.

pub mod client_memory;
mod cluster;
mod cluster_multiplexed;
mod cluster_pool;
mod connections;
pub mod encode;
mod finished;
pub mod keys;
pub mod lease;
mod mset;
mod multiplexed;
mod one_slot;
mod other_client;
mod pipeline;
pub mod redis_time;
mod seed;
mod transaction;
mod wire;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use shared::{Command, Mode, RunSpec, RunSummary, Timeline, Wait};

pub use finished::{RunError, run_and_clean_up};

use encode::Encoder;
use other_client::OtherClient;
use wire::{Job, Replies, Sent, Tally, Writer};

use crate::recorder::Progress;
use crate::resp;
use crate::target::{RedisTarget, TargetError};

/// A read or write that makes no progress for this long fails the run. It bounds inactivity,
/// not the whole batch, so a batch of 100,000 replies is fine as long as bytes keep coming.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("Redis sent no reply for {0:?} (waiting for request {1}); is it overloaded or paused?")]
    Timeout(Duration, u64),
    #[error("Redis closed the connection after {0} replies")]
    Closed(u64),
    #[error("connection to Redis failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("Redis refused request {index}: {message}{}", moved_hint(.message))]
    Refused { index: u64, message: String },
    #[error("Redis aborted the MULTI/EXEC of requests {first}–{last}: {message}")]
    Transaction {
        first: u64,
        last: u64,
        message: String,
    },
    #[error("{0} has no one-command-many-keys form (MSET mode takes SET or GET)")]
    NoMultiKey(&'static str),
    #[error(
        "busy-polling reads replies straight off the socket, below TLS: over rediss:// a run waits for replies by sleeping (drop --busy-poll-us, or choose sleep on the page)"
    )]
    BusyPollOverTls,
    #[error(transparent)]
    Protocol(#[from] resp::ProtocolError),
    #[error("cancelled")]
    Cancelled,
    #[error("the other client failed: {0}")]
    OtherClient(String),
    #[error("the engine crashed; see the server log")]
    Crashed,
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error("{0} on a Redis Cluster is not supported yet")]
    NotOnCluster(String),
    #[error(transparent)]
    Spec(#[from] shared::SpecError),
    /// A cluster master's connection failed (it died, or closed on us).
    #[error("cluster master {addr}: {source}")]
    Master {
        addr: String,
        source: Box<EngineError>,
    },
}

/// A MOVED or ASK reply means the run went to one node of a cluster as if it were a single
/// server.
fn moved_hint(message: &str) -> &'static str {
    match message.starts_with("MOVED ") || message.starts_with("ASK ") {
        true => ". This is a Redis Cluster node: add --cluster to run against its cluster",
        false => "",
    }
}

/// What the caller hands the engine besides the spec.
pub struct RunContext {
    pub run_id: u64,
    pub progress: Arc<Progress>,
    /// Checked at every batch boundary (multiplexed: after every read of replies).
    pub cancel: Arc<AtomicBool>,
    pub response_timeout: Duration,
    /// Keep per-request timings (the timeline). Off, only the histogram is kept.
    pub record_spans: bool,
    /// Measure at all (histogram, spans, live progress). Off only to measure what measuring
    /// costs: the run then reports wall time and throughput alone.
    pub instrument: bool,
    /// Sample Redis's memory for the run's connection while it is in flight (`client_memory`;
    /// only when instrumented). Off where the caller's own syscalls are being counted: the
    /// sampler polls from the caller's runtime.
    pub sample_memory: bool,
    /// Where the first requests' timings go as they happen, for live streaming.
    pub span_outbox: Option<crate::spans::Outbox>,
    /// Told when the run's set-up is done (a GET run's keys seeded, the other client
    /// connected), just before its own connections open: Redis's counters are read then
    /// (`redis_time::open_window`; `run_and_clean_up` listens).
    pub window: Option<redis_time::WindowOpens>,
}

impl RunContext {
    pub fn new(run_id: u64, progress: Arc<Progress>, cancel: Arc<AtomicBool>) -> Self {
        RunContext {
            run_id,
            progress,
            cancel,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            record_spans: true,
            instrument: true,
            sample_memory: true,
            span_outbox: None,
            window: None,
        }
    }
}

/// A finished run. `written` bounds the keys that may exist (`k0..k{written}`): commands sent,
/// or for GET the keys seeded beforehand.
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: RunSummary,
    pub timeline: Timeline,
    pub written: u64,
    /// The instant span times count from, so stamps taken elsewhere (the wire tap) can be
    /// placed on the same axis.
    pub started: Instant,
}

/// A run that stopped early, with what it measured up to the stop.
#[derive(Debug)]
pub struct RunFailure {
    pub error: EngineError,
    pub partial: RunSummary,
    pub timeline: Timeline,
    pub written: u64,
    pub started: Instant,
}

/// Runs `spec` once, and while it is in flight samples Redis's memory for its connection
/// (`client_memory`, when instrumented) into `RunSummary::redis_memory`. The caller removes the keys afterwards with `keys::remove_run_keys`,
/// whatever the outcome (`run_and_clean_up` does both).
///
/// The run gets a thread and a single-threaded runtime of its own: replies are handled on the
/// thread that sent the requests (no hand-over between worker threads on every round trip),
/// and nothing else scheduled in the server competes with the measurement.
// A failure carries its partial summary and timeline by value: one per run, so its size does
// not matter, and callers take its fields apart directly.
#[allow(clippy::result_large_err)]
pub async fn run(
    target: &RedisTarget,
    spec: RunSpec,
    ctx: RunContext,
) -> Result<RunOutcome, RunFailure> {
    // A pool's connections are many: the sampler follows one run connection only.
    // A cluster's masters are as many.
    let pool = matches!(spec.mode, Mode::Connections { .. }) || target.is_cluster();
    let sampler = match ctx.instrument && ctx.sample_memory && !pool {
        true => client_memory::Sampler::connect(target).await,
        false => None,
    };
    let target = target.clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (id_tx, id_rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("engine-{}", ctx.run_id))
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt.block_on(run_here(&target, spec, ctx, id_tx)),
                Err(e) => Err(not_started(spec, EngineError::Io(e))),
            };
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        return Err(not_started(spec, EngineError::Io(e)));
    }
    let finished = async {
        rx.await
            .unwrap_or_else(|_| Err(not_started(spec, EngineError::Crashed)))
    };
    let Some(sampler) = sampler else {
        // Nobody samples: the run must not wait for a first sample.
        drop(id_rx);
        return finished.await;
    };
    let (mut result, memory) = sampler.sample_while(id_rx, finished).await;
    match &mut result {
        Ok(o) => o.summary.redis_memory = memory,
        Err(f) => f.partial.redis_memory = memory,
    }
    result
}

/// A failure before anything was sent.
fn not_started(spec: RunSpec, error: EngineError) -> RunFailure {
    let partial = crate::recorder::Recorder::new().summary(spec, 0, Duration::ZERO, 0);
    RunFailure {
        error,
        partial,
        timeline: Timeline::default(),
        written: 0,
        started: Instant::now(),
    }
}

/// Runs `spec` on the current thread's runtime, and sums it up whatever happened.
async fn run_here(
    target: &RedisTarget,
    spec: RunSpec,
    mut ctx: RunContext,
    client_id: tokio::sync::oneshot::Sender<(u64, client_memory::Ready)>,
) -> Result<RunOutcome, RunFailure> {
    let sent = Sent::default();
    let mut tally = Tally::new(&ctx, spec.count);
    let handover = Handover {
        window: ctx.window.take(),
        client_id,
    };
    let result = measure(target, spec, &ctx, &sent, &mut tally, handover).await;
    let wall = tally.started.elapsed();
    ctx.progress.update(tally.done, wall);
    let mut summary = tally
        .recorder
        .summary(spec, tally.done, wall, tally.round_trips);
    summary.writes = sent.writes.get();
    summary.wire_commands = sent.commands.get();
    summary.cluster = tally.cluster.take();
    if let (Some(run), Some(other)) = (tally.counter, tally.other) {
        summary.interleaving = Some(other_client::interleaving(run, other, tally.started));
    }
    let timeline = tally
        .spans
        .map(crate::spans::SpanStore::into_timeline)
        .unwrap_or_default();
    let written = sent.keys.get();
    match result {
        Ok(()) => Ok(RunOutcome {
            summary,
            timeline,
            written,
            started: tally.started,
        }),
        Err(error) => Err(RunFailure {
            error,
            partial: summary,
            timeline,
            written,
            started: tally.started,
        }),
    }
}

/// What a run hands over as it goes: the end of its set-up (the measured window opens), then
/// its connection's id for the memory sampler.
struct Handover {
    window: Option<redis_time::WindowOpens>,
    client_id: tokio::sync::oneshot::Sender<(u64, client_memory::Ready)>,
}

async fn measure(
    target: &RedisTarget,
    spec: RunSpec,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
    handover: Handover,
) -> Result<(), EngineError> {
    if let Mode::Mset { .. } = spec.mode
        && spec.command.multi_key().is_none()
    {
        return Err(EngineError::NoMultiKey(spec.command.name()));
    }
    if target.tls_trust().is_some() && matches!(spec.wait, Wait::BusyPoll { .. }) {
        return Err(EngineError::BusyPollOverTls);
    }
    let enc = if spec.other_client {
        Encoder::shared_counter(ctx.run_id, spec.keys)
    } else {
        Encoder::laid_out(spec.command, ctx.run_id, spec.keys, spec.value_bytes)
    };
    if target.is_cluster() {
        return on_cluster(target, spec, &enc, ctx, sent, tally, handover).await;
    }
    on_one_server(target, spec, &enc, ctx, sent, tally, handover).await
}

/// A run on one server (or a cluster's one master): the GET seed, the other client, the
/// window opened, the run's connection, then the mode's batches.
async fn on_one_server(
    target: &RedisTarget,
    spec: RunSpec,
    enc: &Encoder,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
    handover: Handover,
) -> Result<(), EngineError> {
    if spec.command == Command::Get {
        seed::seed(target, enc, spec.count, ctx, sent).await?;
    }
    let pool = matches!(spec.mode, Mode::Connections { .. });
    // Connected first, so it is INCRing before the run's first command. (A pool has none.)
    let other = match spec.other_client && !pool {
        true => {
            tally.counter = Some(Default::default());
            Some(OtherClient::start(target, ctx.run_id, spec.keys, ctx.response_timeout).await?)
        }
        false => None,
    };
    // Set-up done: what Redis counts from here is the run (its own connections included).
    redis_time::open_window(handover.window, ctx.response_timeout).await;
    if pool {
        let mut pool = connections::open(target, &spec).await?;
        tally.started = Instant::now();
        return connections::run(&mut pool, enc, spec, ctx, sent, tally).await;
    }
    let (mut stream, id) = target.connect_identified().await?;
    if let Some(id) = id {
        // The sampler takes its first sample now, before the clock starts (nobody listening,
        // when not instrumented, is fine).
        client_memory::announce(handover.client_id, id, ctx.response_timeout).await;
    }
    tally.started = Instant::now();
    // Borrowed halves: no lock between the writer and the reader of one socket.
    let (r, w) = stream.split();
    let mut writer = Writer::new(w, ctx.response_timeout, sent);
    let mut replies = Replies::new(r, ctx.response_timeout, busy_poll(spec.wait));
    let job = Job {
        writer: &mut writer,
        replies: &mut replies,
        enc,
        spec,
        ctx,
        tally,
    };
    let result = match spec.mode {
        Mode::Sequential | Mode::Pipelined { .. } => pipeline::run(job).await,
        Mode::Multiplexed { .. } => multiplexed::run(job).await,
        Mode::Transaction { .. } => transaction::run(job).await,
        Mode::Mset { .. } => mset::run(job).await,
        Mode::Connections { .. } => unreachable!("runs its own connections, above"),
    };
    // Stopped once the run's last reply is in, so its final GET sees both sides' INCRs.
    // A failed run's own error is the one reported.
    if let Some(other) = other {
        let landed = other.stop().await;
        result?;
        tally.other = Some(landed?);
        return Ok(());
    }
    result
}

/// A run on a Redis Cluster: the slot map from the target node, then either every key in one
/// slot on its master (`one_slot`), or a connection to each master and each batch split
/// between them (`cluster`), after seeding a GET run's keys on their masters.
async fn on_cluster(
    target: &RedisTarget,
    spec: RunSpec,
    enc: &Encoder,
    ctx: &RunContext,
    sent: &Sent,
    tally: &mut Tally,
    handover: Handover,
) -> Result<(), EngineError> {
    let unsupported = match spec.mode {
        // A dialled network reaches a cluster through a proxy per master (`net::route`); one
        // proxy in front of the seed node alone would be missing for the other masters.
        _ if target.is_proxied() => Some("one proxy in front of the seed node".to_string()),
        Mode::Multiplexed { .. } if !spec.keys_in_one_slot() && spec.wait != Wait::Sleep => Some(
            "busy-polling a multiplexed run over keys spread across masters (it waits on \
                 every master's socket at once; choose sleep, or keys: one hash tag {run})"
                .to_string(),
        ),
        _ => None,
    };
    if let Some(what) = unsupported {
        return Err(EngineError::NotOnCluster(what));
    }
    spec.validate_on_cluster()?;
    let mut admin = target.admin_connection().await?;
    let map = crate::cluster::SlotMap::discover(&mut admin, &target.addr()).await?;
    // Split between masters: spread keys (or sequential and pipelined runs of one-tag keys,
    // which `cluster` sends to their one master, following a resharded slot).
    let split = match spec.mode {
        Mode::Sequential | Mode::Pipelined { .. } => !spec.other_client,
        Mode::Multiplexed { .. } | Mode::Connections { .. } => !spec.keys_in_one_slot(),
        _ => false,
    };
    if !split {
        let m = one_slot::master(&map, ctx.run_id, spec);
        let node = one_slot::node(target, &map, m)?;
        tally.node = u16::try_from(m).ok();
        let result = on_one_server(&node, spec, enc, ctx, sent, tally, handover).await;
        one_slot::record(tally, &map, m);
        return result.map_err(|e| one_slot::named(e, &node));
    }
    if spec.command == Command::Get {
        seed::seed_cluster(target, &map, enc, spec, ctx, sent).await?;
    }
    redis_time::open_window(handover.window, ctx.response_timeout).await;
    if let Mode::Connections { .. } = spec.mode {
        let mut pool = cluster_pool::open(target, &map, &spec).await?;
        tally.started = Instant::now();
        return cluster_pool::run(&mut pool, &map, enc, spec, ctx, sent, tally).await;
    }
    let mut conns = cluster::open(target, &map).await?;
    tally.started = Instant::now();
    if let Mode::Multiplexed { .. } = spec.mode {
        return cluster_multiplexed::run(&mut conns, &map, enc, spec, ctx, sent, tally).await;
    }
    let seed = cluster::Seed {
        admin,
        addr: target.addr(),
    };
    cluster::run(&mut conns, map, seed, enc, spec, ctx, sent, tally).await
}

/// How long to busy-poll for each reply before sleeping, if at all.
fn busy_poll(wait: Wait) -> Option<Duration> {
    match wait {
        Wait::Sleep => None,
        Wait::BusyPoll { us } => Some(Duration::from_micros(us as u64)),
    }
}
