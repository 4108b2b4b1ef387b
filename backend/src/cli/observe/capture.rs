//! `pipescope observe --pcap FILE` and `--capture IFACE`: observe mode from a capture, a
//! file's or a live one's, with no proxy; its report printed as the proxy's is.

use std::sync::atomic::{AtomicBool, Ordering};

use pipescope::cancel::{OnSignal, Stop};
use pipescope::capture::{Live, Source};
use pipescope::observe::captured::{self, FromCapture};
use pipescope::observe::report;
use pipescope::syscalls::Tracer;

use super::super::output::say;
use super::super::record_to::RecordTo;
use super::args::{ObserveArgs, ObserveFormat, refuse_probe};
use super::html::{html_to, wrote_html};

/// `observe --pcap FILE`: the report from a capture; notes (resynchronisations, gaps) on
/// stderr, and what the figures are on the report's first line (stderr with --json).
/// Ctrl-C stops the reading: the report of what was read, marked partial, and the signal's
/// exit code; a second Ctrl-C ends at once.
pub(super) async fn observe_pcap(
    args: &ObserveArgs,
    path: &std::path::Path,
    stop: Stop,
) -> anyhow::Result<()> {
    refuse_probe(args)?;
    let html = html_to(args)?;
    let ports = args.redis_ports().to_vec();
    // A file that cannot be opened is said alone, before any word of reading it.
    std::fs::File::open(path).map_err(|cause| pipescope::capture::CaptureError::Open {
        path: path.to_path_buf(),
        cause,
    })?;
    let stopper = std::sync::Arc::new(AtomicBool::new(false));
    let mut reading = tokio::task::spawn_blocking({
        let (path, stopper) = (path.to_path_buf(), stopper.clone());
        move || {
            let source = Source::FileUntil {
                path: &path,
                stop: &stopper,
            };
            captured::observe(source, &ports)
        }
    });
    // Machine-readable too: tests wait for it before sending Ctrl-C.
    eprintln!(
        "reading {}; Ctrl-C stops and reports what was read",
        path.display()
    );
    let mut seen = tokio::select! {
        seen = &mut reading => seen,
        _ = stop.passed_over() => {
            stopper.store(true, Ordering::SeqCst);
            // A second Ctrl-C exits at once: a capture's reading leaves nothing in Redis.
            stop.set(OnSignal::CancelRuns);
            eprintln!("pipescope: stopped reading; the report of what was read follows (Ctrl-C again ends at once)");
            reading.await
        }
    }??;
    if args.redact {
        pipescope::redact::redact(&mut seen.connections, &mut seen.notes);
    }
    print_captured(args, &seen);
    let stopped = seen.facts.stopped;
    write_html(html, seen)?;
    match stop.passed_signal() {
        Some(signal) if stopped => {
            use std::io::Write;
            let _ = std::io::stdout().flush();
            std::process::exit(signal.exit_code().into())
        }
        _ => Ok(()),
    }
}

/// `observe --capture IFACE`: a live capture until --duration or Ctrl-C, progress on stderr
/// every few seconds, then the report as `observe_pcap` prints it.
pub(super) async fn observe_live(
    args: &ObserveArgs,
    interface: &str,
    stop: Stop,
) -> anyhow::Result<()> {
    refuse_probe(args)?;
    let html = html_to(args)?;
    let ports = args.redis_ports().to_vec();
    let mut live = Live::open(interface, &ports)?;
    let (stopper, tally) = (live.stopper(), live.tally());
    // Machine-readable: scripts and tests wait for "capturing on" before sending traffic.
    eprintln!(
        "capturing on {interface} ({}); {}",
        live.filter(),
        match args.duration {
            Some(d) => format!("for {}", shared::observe::duration(d.as_secs_f64() * 1e6)),
            None => "until Ctrl-C".into(),
        }
    );
    let tracer = super::syscalls::start(args.traced())?;
    let mut capture =
        tokio::task::spawn_blocking(move || captured::observe(Source::Live(&mut live), &ports));
    let progress = async {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
        tick.tick().await;
        loop {
            tick.tick().await;
            eprintln!(
                "capturing: {} packets, {} connections",
                shared::digits::group(tally.packets.load(Ordering::Relaxed)),
                shared::digits::group(tally.connections.load(Ordering::Relaxed)),
            );
        }
    };
    let ended = tokio::select! {
        ended = &mut capture => Some(ended),
        _ = until_stopped(args, tracer.as_ref(), &stop, progress) => None,
    };
    stopper.store(true, Ordering::SeqCst);
    // A second Ctrl-C while the buffer is read exits at once: nothing is in Redis.
    stop.set(OnSignal::CancelRuns);
    let mut seen = match ended {
        Some(ended) => ended,
        None => capture.await,
    }??;
    if let Some(t) = tracer {
        super::syscalls::finish_into(t, &mut seen.connections, args.redis_ports())?;
    }
    if args.redact {
        pipescope::redact::redact(&mut seen.connections, &mut seen.notes);
    }
    print_captured(args, &seen);
    write_html(html, seen)
}

/// Waits until --duration passes, a signal comes (`Stop` passes Ctrl-C over to here:
/// `Cli::on_signal`) or the traced command exits, meanwhile driving `progress`.
async fn until_stopped(
    args: &ObserveArgs,
    tracer: Option<&Tracer>,
    stop: &Stop,
    progress: impl std::future::Future<Output = ()>,
) {
    let deadline = async {
        match args.duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = deadline => {},
        _ = stop.passed_over() => eprintln!("capturing: stopped by signal"),
        _ = progress => {},
        _ = async {
            match tracer {
                Some(t) => t.command_exited().await,
                None => std::future::pending().await,
            }
        } => {},
    }
}

/// A capture's report: notes on stderr, the report on stdout headed by what its figures are
/// (that line on stderr with --json, so stdout holds JSON only).
fn print_captured(args: &ObserveArgs, seen: &FromCapture) {
    let label = captured::label(&seen.facts);
    for note in &seen.notes {
        eprintln!("pipescope: {note}");
    }
    let conns = &seen.connections;
    let out = match args.chosen_format() {
        ObserveFormat::Table => format!("{label}\n{}", report::table(conns)),
        ObserveFormat::Json => {
            eprintln!("{label}");
            report::json(conns)
        }
        ObserveFormat::Markdown => format!("{label}\n\n{}", report::markdown(conns)),
    };
    say(format_args!("{}", out.trim_end()));
}

/// The capture as one HTML file, when `--html` asked for one.
fn write_html(
    html: Option<(RecordTo, pipescope::html_file::Page)>,
    seen: FromCapture,
) -> anyhow::Result<()> {
    if let Some((to, page)) = html {
        let read = pipescope::server::capture_upload::capture_read(seen);
        let text = pipescope::html_file::of_capture(&page, &read, &to.file_name());
        to.write_text(&text)?;
        wrote_html(&to, text.len());
    }
    Ok(())
}
