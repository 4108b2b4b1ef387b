//! `observe --pid`: a client process's own syscalls on its TCP sockets, read from the kernel's
//! tracepoints by eBPF programs (`trace.bpf.c`: syscall enter/exit of the calls read, the
//! scheduler's switches to sleep and wake-ups, TCP receives with their addresses) that write
//! records for the traced processes only — every thread, and every process they fork, from
//! attaching on — into one ring buffer.
//!
//! - `attach`: what tracing needs (root) and the programs loaded.
//! - `ring`: a record from the ring buffer decoded into events.
//! - `events`: the events a record from the ring carries.
//! - `sockets`: a process's sockets as /proc shows them when tracing begins.
//! - `accounting`: records in time order → per socket: sends, receives, waits (`calls`: the
//!   syscalls read, by what they do to a socket).
//!
//! A thread reads the ring every few milliseconds and accounts records in time order once
//! every CPU's records up to that time are in (a syscall is held in the kernel until it
//! returns, so that most cost one record: see `trace.bpf.c`).

mod accounting;
mod attach;
mod events;
mod ring;
mod sockets;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use accounting::TracedSocket;

use accounting::Accounting;
use attach::Attached;
use events::Record;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(
        "tracing a process's syscalls needs root (eBPF on the kernel's tracepoints: CAP_BPF and CAP_PERFMON): run pipescope with sudo"
    )]
    NotRoot,
    #[error(
        "this pipescope was built without observe --pid's eBPF programs, which are for x86_64 only: use --probe through the proxy instead"
    )]
    NotBuilt,
    #[error("process {0} is not running (or not visible in /proc)")]
    Gone(u32),
    #[error("{what}: {err}")]
    Bpf { what: &'static str, err: String },
    #[error("{what}: {err}")]
    Os {
        what: &'static str,
        err: std::io::Error,
    },
    #[error("could not start {program}: {err}")]
    Spawn {
        program: String,
        err: std::io::Error,
    },
}

/// What to trace.
pub enum Target {
    /// Running processes, all their threads.
    Pids(Vec<u32>),
    /// A command started under observation (its stdout goes to pipescope's stderr, so that
    /// pipescope's own stdout holds the report alone).
    Command(Vec<String>),
}

/// What the trace found: each TCP socket used, and records the rings lost.
#[derive(Debug, Default)]
pub struct Traced {
    pub sockets: Vec<TracedSocket>,
    pub lost: u64,
    /// The command's exit status, when one was started.
    pub exit: Option<std::process::ExitStatus>,
}

/// A trace running on a thread of its own until `finish`.
pub struct Tracer {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Result<Traced, TraceError>>,
    /// The started command's pid.
    pub child: Option<u32>,
    exited: tokio::sync::watch::Receiver<bool>,
}

/// How often the rings are read.
const TICK: Duration = Duration::from_millis(5);

/// How far behind now records are accounted: a syscall is written at its return unless its
/// thread is switched out first, so its entry comes in as late as the thread ran inside it.
const MARGIN: Duration = Duration::from_millis(20);

impl Tracer {
    /// Attaches (or starts the command traced); returns once tracing is on.
    pub fn start(target: Target) -> Result<Tracer, TraceError> {
        Tracer::start_with(target, false)
    }

    /// As `start`, but with only the syscall tracepoints' programs, which return at once:
    /// what their being attached costs, for `cost pid`. It finds nothing.
    pub fn hooks_alone(target: Target) -> Result<Tracer, TraceError> {
        Tracer::start_with(target, true)
    }

    fn start_with(target: Target, hooks_alone: bool) -> Result<Tracer, TraceError> {
        attach::ready()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (started, ready) = std::sync::mpsc::sync_channel(1);
        let (exited_tx, exited) = tokio::sync::watch::channel(false);
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("syscalls".into())
            .spawn(move || {
                let mut accounting = Accounting::default();
                let setup = (|| -> Result<(Attached, Option<std::process::Child>), TraceError> {
                    let attached = Attached::new(hooks_alone)?;
                    match &target {
                        Target::Pids(pids) => {
                            for &pid in pids {
                                attached.trace(pid)?;
                                for known in sockets::of_process(pid) {
                                    accounting.known(known);
                                }
                            }
                            Ok((attached, None))
                        }
                        Target::Command(argv) => {
                            // Traced from its fork by this thread.
                            attached.spawning()?;
                            let child = spawn(argv);
                            attached.spawned()?;
                            Ok((attached, Some(child?)))
                        }
                    }
                })();
                let (attached, mut child) = match setup {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = started.send(Err(e));
                        return Ok(Traced::default());
                    }
                };
                let _ = started.send(Ok(child.as_ref().map(|c| c.id())));
                let out = run(attached, accounting, &flag, &mut child, &exited_tx);
                Ok(out)
            })
            .map_err(|err| TraceError::Os {
                what: "starting the tracing thread",
                err,
            })?;
        match ready.recv() {
            Ok(Ok(child)) => Ok(Tracer {
                stop,
                handle,
                child,
                exited,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(match handle.join() {
                Ok(Err(e)) => e,
                _ => TraceError::Os {
                    what: "tracing",
                    err: std::io::Error::other("the tracing thread ended"),
                },
            }),
        }
    }

    /// Resolves when the started command has exited (never without one).
    pub async fn command_exited(&self) {
        let mut rx = self.exited.clone();
        if self.child.is_none() {
            return std::future::pending().await;
        }
        let _ = rx.wait_for(|&done| done).await;
    }

    /// Stops tracing (a started command still running is left running), reads what is left
    /// in the rings, and returns the sockets.
    pub fn finish(self) -> Result<Traced, TraceError> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap_or_else(|_| {
            Err(TraceError::Os {
                what: "tracing",
                err: std::io::Error::other("the tracing thread panicked"),
            })
        })
    }
}

fn spawn(argv: &[String]) -> Result<std::process::Child, TraceError> {
    use std::os::fd::AsFd;
    let program = argv.first().cloned().unwrap_or_default();
    let stdout = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|err| TraceError::Spawn {
            program: program.clone(),
            err,
        })?;
    std::process::Command::new(&program)
        .args(&argv[1..])
        .stdout(stdout)
        .spawn()
        .map_err(|err| TraceError::Spawn { program, err })
}

/// Reads the ring buffer every tick until stopped; records are accounted in time order once
/// every CPU has written past them.
fn run(
    attached: Attached,
    mut accounting: Accounting,
    stop: &AtomicBool,
    child: &mut Option<std::process::Child>,
    exited: &tokio::sync::watch::Sender<bool>,
) -> Traced {
    let mut pending: Vec<Record> = Vec::new();
    let mut exit = None;
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        if exit.is_none()
            && let Some(c) = child.as_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            exit = Some(status);
        }
        let now = monotonic_ns();
        attached.read(&mut pending);
        pending.sort_by_key(|r| r.time);
        // Everything written before `now` is in: account for it, keep the rest.
        let ready = if stopping || exit.is_some() {
            pending.len()
        } else {
            pending.partition_point(|r| r.time < now.saturating_sub(MARGIN.as_nanos() as u64))
        };
        for r in pending.drain(..ready) {
            accounting.record(&r);
        }
        if exit.is_some() {
            let _ = exited.send(true);
        }
        if stopping {
            break;
        }
        std::thread::sleep(TICK);
    }
    let lost = attached.lost();
    let mut sockets = accounting.finish();
    for s in &mut sockets {
        s.evidence.lost = lost;
    }
    Traced {
        sockets,
        lost,
        exit,
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
