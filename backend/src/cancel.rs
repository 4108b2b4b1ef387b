//! Ctrl-C (SIGINT) and SIGTERM for the jobs that write keys into the user's Redis (`bench`'s
//! runs, `serve`'s, observe's pipelined equivalents). The first signal raises `Stop::flag`,
//! every run's `RunContext::cancel`: the run stops sending at its next batch boundary and
//! `engine::run_and_clean_up` removes its keys; the job then says what was removed
//! (`report`) and exits 130 (SIGINT) or 143 (SIGTERM). A second signal exits at once and
//! prints the command that removes what is left (`clean::Command`). A first signal with no
//! run in flight exits at once too: nothing of pipescope's is in Redis then.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::clean;
use crate::engine::{EngineError, RunError, keys};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    /// 128 + the signal's number, as a shell reports a process the signal killed.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        }
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Signal::Interrupt => "Ctrl-C",
            Signal::Terminate => "SIGTERM",
        })
    }
}

/// What a first signal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSignal {
    /// Passed to the job (`Stop::passed_over`), which handles it itself (observe stops
    /// observing); nothing else happens.
    Ignore,
    /// Cancels the runs in flight (the job waits for their cleanup); with none, exits at once.
    CancelRuns,
    /// The server shuts down (`Stop::signalled`), cancelling its run.
    ShutDown,
}

/// The process's handlers for SIGINT and SIGTERM, and what they have seen.
#[derive(Clone)]
pub struct Stop {
    shared: Arc<Shared>,
}

struct Shared {
    on_signal: Mutex<OnSignal>,
    cancel: Arc<AtomicBool>,
    first: watch::Sender<Option<Signal>>,
    /// Signals passed over while `Ignore`, and the latest of them.
    passed: watch::Sender<u64>,
    passed_signal: Mutex<Option<Signal>>,
    clean: clean::Command,
}

impl Stop {
    /// Installs the handlers now, before anything is written: from here on a signal never
    /// kills the process outright. `clean` is the command a second signal prints.
    pub fn install(on_signal: OnSignal, clean: clean::Command) -> std::io::Result<Stop> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let shared = Arc::new(Shared {
            on_signal: Mutex::new(on_signal),
            cancel: Arc::default(),
            first: watch::channel(None).0,
            passed: watch::channel(0).0,
            passed_signal: Mutex::new(None),
            clean,
        });
        let handler = shared.clone();
        tokio::spawn(async move {
            loop {
                let signal = tokio::select! {
                    Some(()) = int.recv() => Signal::Interrupt,
                    Some(()) = term.recv() => Signal::Terminate,
                    else => return,
                };
                handler.on(signal);
            }
        });
        Ok(Stop { shared })
    }

    /// Changes what a first signal does from now on.
    pub fn set(&self, on_signal: OnSignal) {
        *self.shared.on_signal.lock().expect("on signal") = on_signal;
    }

    /// Raised by the first signal: every run's `RunContext::cancel`.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.shared.cancel.clone()
    }

    /// Waits for a signal passed over while `OnSignal::Ignore`. These handlers are the
    /// process's only listener: a job with a listener of its own could be told of a signal
    /// after it had changed what a signal does here, and this one would then act on it too.
    pub async fn passed_over(&self) {
        let mut passed = self.shared.passed.subscribe();
        // The sender lives in `self`: the wait ends only with a signal.
        let _ = passed.wait_for(|n| *n > 0).await;
    }

    /// The latest signal passed over to the job (`OnSignal::Ignore`), once one came.
    pub fn passed_signal(&self) -> Option<Signal> {
        *self.shared.passed_signal.lock().expect("passed signal")
    }

    /// The first signal, once one came.
    pub fn signal(&self) -> Option<Signal> {
        *self.shared.first.borrow()
    }

    /// Waits for the first signal.
    pub async fn signalled(&self) -> Signal {
        let mut first = self.shared.first.subscribe();
        let seen = first.wait_for(Option::is_some).await;
        // The sender lives in `self`: the wait ends only with a signal.
        seen.ok().and_then(|s| *s).expect("a signal")
    }

    /// The command that removes what `runs` left (every pipescope key without any).
    pub fn clean_command(&self, runs: &[u64]) -> String {
        self.shared.clean.sentence(runs)
    }

    /// When the cleanup after a signal took longer than `DEADLINE`: out now, saying which
    /// runs may have left keys and how to remove them.
    pub fn exit_leaving(&self, runs: &[u64]) -> ! {
        let signal = self.signal().unwrap_or(Signal::Interrupt);
        eprintln!(
            "pipescope: the cleanup did not finish within {} s: exiting now; {}",
            DEADLINE.as_secs(),
            self.shared.left_by(runs)
        );
        std::process::exit(signal.exit_code().into());
    }
}

/// How long a server stopped by a signal waits for its run's cleanup.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

impl Shared {
    fn on(&self, signal: Signal) {
        let on_signal = *self.on_signal.lock().expect("on signal");
        if on_signal == OnSignal::Ignore {
            *self.passed_signal.lock().expect("passed signal") = Some(signal);
            self.passed.send_modify(|n| *n += 1);
            return;
        }
        if self.first.borrow().is_some() {
            self.exit_now(signal);
        }
        // Raised before the runs are looked at: a run registered after this sees it.
        self.cancel.store(true, Ordering::SeqCst);
        self.first.send_replace(Some(signal));
        let runs = keys::in_flight();
        let again = format!("{signal} again exits at once and leaves them");
        match (on_signal, &runs[..]) {
            (OnSignal::CancelRuns, []) => {
                eprintln!(
                    "pipescope: stopped by {signal}; no run was in flight, so nothing of pipescope's is in Redis"
                );
                std::process::exit(signal.exit_code().into());
            }
            (_, []) => eprintln!("pipescope: {signal}: shutting down"),
            (_, runs) => eprintln!(
                "pipescope: {signal}: stopping {} and removing its keys ({again})",
                runs_named(runs)
            ),
        }
    }

    /// A second signal: out now, saying what may be left and how to remove it.
    fn exit_now(&self, signal: Signal) -> ! {
        eprintln!(
            "pipescope: {signal} again: exiting now; {}",
            self.left_by(&keys::in_flight())
        );
        std::process::exit(signal.exit_code().into());
    }

    /// What `runs`, still in flight, may leave in Redis, and the command that removes it.
    fn left_by(&self, runs: &[u64]) -> String {
        match runs {
            [] => "no run was in flight".to_string(),
            runs if self.clean.url.is_none() => format!(
                "{} leaves nothing: pipescope's own redis-server stops with it",
                runs_named(runs)
            ),
            runs => format!(
                "{} may have left keys in Redis; {}",
                runs_named(runs),
                self.clean.sentence(runs)
            ),
        }
    }
}

fn runs_named(runs: &[u64]) -> String {
    match runs {
        [run] => format!("run {run}"),
        _ => format!(
            "runs {}",
            runs.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A cancelled run's cleanup: how many keys it removed, or why it could not remove them all.
#[derive(Debug, Clone)]
pub struct Removed {
    pub run: u64,
    pub keys: u64,
    pub failed: Option<String>,
}

impl Removed {
    /// The cleanup of run `run` if `e` says it was cancelled; `None` if it failed otherwise.
    pub fn of(run: u64, e: &RunError) -> Option<Removed> {
        match e {
            RunError::Stopped {
                error,
                removed,
                cleanup,
                ..
            } if is_cancel(error) => Some(Removed {
                run,
                keys: *removed,
                failed: cleanup.as_ref().map(ToString::to_string),
            }),
            _ => None,
        }
    }
}

/// Whether the run stopped because it was cancelled (on a cluster, maybe said by a master).
fn is_cancel(e: &EngineError) -> bool {
    match e {
        EngineError::Cancelled => true,
        EngineError::Master { source, .. } => is_cancel(source),
        _ => false,
    }
}

/// Runs stopped by a signal, as the job's error: `exit` reports them.
#[derive(Debug, thiserror::Error)]
#[error("stopped by a signal")]
pub struct Interrupted(pub Vec<Removed>);

/// A job's result after its runs stopped: `Interrupted` if a signal cancelled any.
pub fn interrupted(removed: Vec<Removed>) -> anyhow::Result<()> {
    match removed.is_empty() {
        true => Ok(()),
        false => Err(Interrupted(removed).into()),
    }
}

/// The job's last word after `signal` stopped it: what each cancelled run's cleanup removed,
/// or the command that removes what it could not.
pub fn report(signal: Signal, removed: &[Removed], stop: &Stop) -> String {
    let group = shared::digits::group;
    let parts: Vec<String> = removed
        .iter()
        .map(|r| {
            let keys = match r.keys {
                1 => "1 key".to_string(),
                n => format!("{} keys", group(n)),
            };
            match &r.failed {
                None => format!(
                    "removed {keys} of run {}; no key of that run is left in Redis",
                    r.run
                ),
                Some(why) => format!(
                    "removed {keys} of run {}, but not all of them ({why}); {}",
                    r.run,
                    stop.clean_command(&[r.run])
                ),
            }
        })
        .collect();
    match parts.is_empty() {
        true => format!("stopped by {signal}; no run was in flight"),
        false => format!("stopped by {signal}: {}", parts.join("; ")),
    }
}

/// The process's exit after `result`: success, or the error said once; with a signal's own
/// code (130, 143) once one came, and the report of the runs it interrupted.
pub fn exit(
    result: anyhow::Result<()>,
    stop: Option<&Stop>,
    said: impl Fn(&anyhow::Error) -> String,
) -> std::process::ExitCode {
    let Err(e) = result else {
        return std::process::ExitCode::SUCCESS;
    };
    let signal = stop.and_then(|s| s.signal().map(|signal| (signal, s)));
    match (e.downcast_ref::<Interrupted>(), signal) {
        (Some(Interrupted(removed)), Some((signal, stop))) => {
            eprintln!("pipescope: {}", report(signal, removed, stop))
        }
        _ => eprintln!("pipescope: {}", said(&e)),
    }
    match signal {
        Some((signal, _)) => std::process::ExitCode::from(signal.exit_code()),
        None => std::process::ExitCode::FAILURE,
    }
}
