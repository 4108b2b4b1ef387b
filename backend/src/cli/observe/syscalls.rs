//! `observe --pid PID` and `observe -- COMMAND…`: a client process's own syscalls, beside the
//! proxy or a live capture (each connection given its socket's evidence, matched by the
//! client's address, and judged again with it: `pipescope::observe::traced`), or alone with
//! `--no-proxy` (a report per socket to Redis).
//!
//! Takes what it needs of observe's flags as values (`ObserveArgs::traced`, say), so the
//! vantages that trace alongside call it without it reaching back into them.

use std::time::Duration;

use pipescope::cancel::Stop;
use pipescope::syscalls::{Target, Traced, TracedSocket, Tracer};
use shared::observe::ObservedConnection;

use super::super::output::say;

/// Starts tracing `target` when the flags name one, saying what is traced.
pub(super) fn start(target: Option<Target>) -> anyhow::Result<Option<Tracer>> {
    let Some(target) = target else {
        return Ok(None);
    };
    let what = match &target {
        Target::Pids(p) => format!(
            "process {}",
            p.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        Target::Command(c) => format!("{:?}", c.join(" ")),
    };
    let tracer = Tracer::start(target)?;
    match tracer.child {
        Some(child) => eprintln!("tracing the syscalls of {what} (pid {child}), started now"),
        None => eprintln!("tracing the syscalls of {what}, all its threads"),
    }
    Ok(Some(tracer))
}

/// Ends tracing; what it found, with notes on stderr (records lost, the command's status).
fn finish(tracer: Tracer) -> anyhow::Result<Traced> {
    let traced = tracer.finish()?;
    if traced.lost > 0 {
        eprintln!(
            "syscalls: {} records lost (the ring buffers filled): the counts below are low",
            shared::digits::group(traced.lost)
        );
    }
    if let Some(status) = traced.exit
        && !status.success()
    {
        eprintln!("syscalls: the command ended with {status}");
    }
    Ok(traced)
}

/// Ends tracing and gives each connection the evidence of the traced socket at its client
/// address; the traced sockets to Redis's port that matched none are said on stderr.
pub(super) fn finish_into(
    tracer: Tracer,
    conns: &mut [ObservedConnection],
    redis_ports: &[u16],
) -> anyhow::Result<()> {
    let traced = finish(tracer)?;
    for s in pipescope::observe::traced::give_syscalls(conns, &traced) {
        if redis_ports.contains(&s.peer.port()) {
            eprintln!(
                "syscalls: pid {}'s socket {} → {} went around the observer, so it is in no report row: {} sends, {} receives, {} waits (point the application at the observer's address to observe it)",
                s.pid, s.local, s.peer, s.evidence.sends, s.evidence.receives, s.evidence.waits
            );
        }
    }
    Ok(())
}

/// `observe --pid … --no-proxy` (or `-- COMMAND`): `target`'s syscalls alone, until
/// `duration` (--duration), Ctrl-C or the command's exit; a report per TCP socket to Redis's
/// port, as JSON when `json`.
pub(super) async fn observe_syscalls(
    target: Option<Target>,
    duration: Option<Duration>,
    json: bool,
    ports: &[u16],
    stop: Stop,
) -> anyhow::Result<()> {
    let tracer =
        start(target)?.ok_or_else(|| anyhow::anyhow!("--no-proxy needs --pid or a command"))?;
    let deadline = async {
        match duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = deadline => {},
        _ = stop.passed_over() => eprintln!("tracing: stopped by signal"),
        _ = tracer.command_exited() => {},
    }
    let traced = finish(tracer)?;
    let ports = if ports.is_empty() { &[6379][..] } else { ports };
    let sockets: Vec<&TracedSocket> = traced
        .sockets
        .iter()
        .filter(|s| ports.contains(&s.peer.port()))
        .collect();
    if json {
        return print_json(&sockets);
    }
    if sockets.is_empty() {
        say_no_socket(&traced, ports);
    }
    for s in sockets {
        print_socket(s);
    }
    Ok(())
}

/// The sockets to Redis, one JSON array: each with its evidence and what it reads as.
fn print_json(sockets: &[&TracedSocket]) -> anyhow::Result<()> {
    let rows: Vec<serde_json::Value> = sockets
        .iter()
        .map(|s| {
            let (reading, text) = shared::observe::verdict::read_sends(&s.evidence);
            serde_json::json!({
                "pid": s.pid,
                "client": s.local.to_string(),
                "redis": s.peer.to_string(),
                "syscalls": s.evidence,
                "sends_waited": reading,
                "reading": text,
            })
        })
        .collect();
    say(format_args!("{}", serde_json::to_string_pretty(&rows)?));
    Ok(())
}

/// No socket to Redis's port was used: which ports the traced process's sockets went to.
fn say_no_socket(traced: &Traced, ports: &[u16]) {
    let list = |ports: &mut Vec<u16>| {
        ports.sort_unstable();
        ports.dedup();
        ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut used: Vec<u16> = traced.sockets.iter().map(|s| s.peer.port()).collect();
    let others = match used.is_empty() {
        true => "it used no TCP socket while traced".to_string(),
        false => format!(
            "its TCP sockets went to port {}: name Redis's with --redis-port",
            list(&mut used)
        ),
    };
    say(format_args!(
        "no socket to Redis (port {}) was used by the traced process; {others}",
        list(&mut ports.to_vec())
    ));
}

/// One socket to Redis: what its syscalls read as, then their counts.
fn print_socket(s: &TracedSocket) {
    let n = |count: u64, one: &str, many: &str| {
        format!(
            "{} {}",
            shared::digits::group(count),
            if count == 1 { one } else { many }
        )
    };
    let e = &s.evidence;
    let (_, reading) = shared::observe::verdict::read_sends(e);
    say(format_args!(
        "pid {} {} → {}: {reading}\n  {} ({} bytes), {} ({} non-blocking; {} found nothing), {} ({} woken by another thread; {} undecided), {}",
        s.pid,
        s.local,
        s.peer,
        n(e.sends, "send", "sends"),
        shared::digits::group(e.sent_bytes),
        n(e.receives, "receive", "receives"),
        shared::digits::group(e.nonblocking_receives),
        shared::digits::group(e.empty_receives),
        n(e.waits, "wait", "waits"),
        shared::digits::group(e.woken_waits),
        shared::digits::group(e.undecided_waits),
        n(e.threads, "thread", "threads"),
    ));
}
