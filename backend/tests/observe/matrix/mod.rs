//! Every pattern × vantage, each run checked against the client's own syscalls: the clients of
//! tests/clients/patterns.py, whose way of waiting is known by construction (one at a time;
//! a send per command and one read at the end; non-blocking reads between sends; a sending and
//! a reading thread; one at a time then one pipeline), with 200 µs of their own work per
//! command (longer than loopback's round trip, so every reply is back before the next command
//! whether or not the client waited for it), and the real libraries installed; each run under
//! strace (`support::oracle`), seen from one vantage:
//!
//! - `lo`: through the proxy and from a tcpdump capture on lo, where the wire cannot always
//!   tell: right or undetermined, never wrong; and beside two busy processes;
//! - `network`: across the veth network with the delay relay, from a capture on the veth and
//!   through the proxy there, where the round trip is longer than the client's gaps: right;
//! - `decided`: through the proxy with `--probe`, and with `--pid` (its own syscalls), on a
//!   quiet machine and beside two busy processes: right (the nonblocking pattern's syscalls
//!   alone: right or undetermined, as `decided` says why).
//!
//! Right is the kind the client's syscalls allow (`oracle::allowed`), or undetermined naming
//! it only where the vantage saw fewer writes than the client made (a proxy late to read, or
//! the kernel, merged them: see `check`); right or undetermined allows an undetermined
//! verdict naming one. Either way the client's waits lie within the
//! range the verdict gives, and where the headline states its waits as one number, strace
//! agrees. Each test prints its rows of the closing note's table (pattern, vantage, headline,
//! waits and writes seen, strace's truth).

mod decided;
mod lo;
mod network;

use crate::support;

use std::process::Command;
use std::time::Duration;

use shared::digits::group;
use shared::observe::{ObservedConnection, VerdictKind};
use support::clients::{Held, patterns};
use support::observe::{Observe, calls, named};
use support::oracle::{
    Strace, Syscalls, allowed, assert_headline_waits, assert_right_or_undetermined,
    assert_waits_within, syscalls,
};
use support::tcpdump::Tcpdump;

const REPORT_LIMIT: Duration = Duration::from_secs(60);
/// SETs per pattern client, and its own work before each, µs.
const N: u64 = 200;
const WORK_US: &str = "200";
const MODES: [&str; 5] = ["waits", "send-all", "nonblocking", "threads", "phases"];

/// Where a client is seen from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    /// `pipescope observe` in front of Redis on loopback.
    Proxy,
    /// tcpdump on lo, read by `observe --pcap`.
    Capture,
    /// The proxy with `--probe`.
    Probe,
    /// The proxy with `--pid`: the client's own syscalls.
    Pid,
    /// tcpdump on the client's end of the veth, Redis behind the delay relay.
    VethCapture,
    /// The proxy in the client's namespace, forwarding across the veth to the delay relay.
    VethProxy,
}

/// What a vantage's verdict must be.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Must {
    /// A kind the syscalls allow, or undetermined naming one.
    RightOrUndetermined,
    /// A kind the syscalls allow.
    Right,
}

/// A client: its label, how to find its connection (its CLIENT SETNAME, or its SETs), and its
/// command given the port to connect to.
struct Client {
    label: String,
    name: Option<&'static str>,
    sets: u64,
    make: Box<dyn Fn(u16) -> Option<Command>>,
}

fn pattern(mode: &'static str, n: u64) -> Client {
    Client {
        label: format!("patterns.py {mode}"),
        name: None,
        sets: n,
        make: Box::new(move |port| {
            let mut c = patterns()?;
            c.args([&port.to_string(), mode, &n.to_string(), WORK_US]);
            Some(c)
        }),
    }
}

/// Each pattern, `n` SETs.
fn the_patterns(n: u64) -> Vec<Client> {
    MODES.iter().map(|&m| pattern(m, n)).collect()
}

/// The client's connection in `conns`: by its name, or (unnamed) by its SETs.
fn find(conns: &[ObservedConnection], client: &Client) -> ObservedConnection {
    match client.name {
        Some(name) => named(conns, name).clone(),
        None => conns
            .iter()
            .find(|c| calls(c, "SET") == client.sets)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no connection sent {} SETs: {conns:#?}",
                    client.label, client.sets
                )
            })
            .clone(),
    }
}

/// Runs `client` against a fresh redis-server on loopback, observed `via`, under strace: its
/// connection as pipescope reported it, and its syscalls. `None`: a visible skip.
fn observed(via: Via, client: &Client) -> Option<(ObservedConnection, Syscalls)> {
    let (redis, _) = support::redis();
    let proxy = |extra: &[&str]| {
        let args = [&["--json", "--no-equivalent"], extra].concat();
        Observe::start(&redis.url(), &args)
    };
    let (conns, seen) = match via {
        Via::Proxy | Via::Probe => {
            let mut observe = proxy(if via == Via::Probe { &["--probe"] } else { &[] });
            let seen = syscalls((client.make)(observe.port())?, observe.port())?;
            (observe.report(REPORT_LIMIT), seen)
        }
        Via::Pid => {
            // The client's pid is given before it starts, so the proxy's port is chosen first.
            let port = pipescope::local_redis::free_port().unwrap();
            let strace = Strace::of(&(client.make)(port)?)?;
            let held = Held::start(&strace.command());
            let pid = held.pid().to_string();
            let args = ["--json", "--no-equivalent", "--pid", &pid];
            let listen = format!("127.0.0.1:{port}");
            let mut observe = Observe::spawn(Observe::command(&redis.url(), &listen, &args));
            observe.note("tracing the syscalls of", Duration::from_secs(30));
            strace.ended(&held.release("the client under strace"))?;
            (observe.report(REPORT_LIMIT), strace.read(port))
        }
        Via::Capture => {
            let mut tcpdump = Tcpdump::start(redis.port())?;
            let seen = syscalls((client.make)(redis.port())?, redis.port())?;
            (tcpdump.observe(redis.port()), seen)
        }
        Via::VethCapture | Via::VethProxy => unreachable!("across the veth: network.rs"),
    };
    Some((find(&conns, client), seen))
}

/// The table's head, before a test's rows.
fn head() {
    eprintln!(
        "\n| client | vantage | headline | pipescope | truth |\n| --- | --- | --- | --- | --- |"
    );
}

/// The verdict `must` be right (or may be undetermined), the waits within its range, its
/// stated waits strace's; printed as a row of the closing note's table.
fn check(client: &Client, via: Via, c: &ObservedConnection, seen: Syscalls, must: Must) {
    let k = &c.counts;
    let what = format!("{} via {via:?}", client.label);
    let beyond = match (&c.probe, &c.syscalls) {
        (_, Some(s)) => format!(
            "; its syscalls: {} sends, {} waits ({} woken)",
            s.sends, s.waits, s.woken_waits
        ),
        (Some(p), None) => format!(
            "; probe: {} held, {} sent while held, {} waited",
            p.held, p.sent_while_held, p.waited_for_release
        ),
        (None, None) => String::new(),
    };
    eprintln!(
        "| {} | {via:?} | {} | {} round trips ({} unconfirmed), {} writes, evidence {:?}{beyond} | strace: {} writes, {} waits |",
        client.label,
        c.verdict.headline,
        k.round_trips,
        k.unconfirmed_trips,
        k.writes,
        k.wait_evidence
            .as_ref()
            .map(|e| (e.reading, (e.follows * 100.0).round() / 100.0)),
        seen.writes,
        seen.waits,
    );
    assert_eq!(calls(c, "SET"), client.sets, "{what}: {:?}", c.top_commands);
    assert_eq!(k.replies, k.commands, "{what}: {k:?}");
    // Right; undetermined only where this vantage saw the client's writes merged (fewer than
    // strace counted): a proxy kept off the CPU reads several sends as one, and where the
    // kernel merged them too (as it does with small sends when the last one has not left yet),
    // nothing it sees tells a write per command from small batches, and it says so.
    let merged = k.writes < seen.writes;
    if must == Must::Right && c.verdict.kind == VerdictKind::Undetermined {
        assert!(
            merged,
            "{what}: decided, by strace {seen:?}: {} — {}",
            c.verdict.headline, c.verdict.text
        );
        eprintln!(
            "  (undetermined: {} writes seen of strace's {})",
            k.writes, seen.writes
        );
    }
    assert_right_or_undetermined(&what, c, allowed(seen, k.commands));
    assert_waits_within(&what, c, seen);
    assert_headline_waits(&what, c, seen);
    // A connection that changed behaviour is read as its phases, the costliest first: its
    // commands one by one took most of its time, then one pipeline. (A pipeline of thousands
    // of SETs, ~100 KB, may reach the proxy in pieces with replies back between them: then
    // it reads as a few.)
    if client.label == "patterns.py phases" {
        let h = &c.verdict.headline;
        let one = format!("; then one pipeline of {}", group(client.sets / 2));
        let pieces = client.sets > 1_000 && h.contains("; then ") && h.contains(" pipelines of ~");
        assert!(
            h.contains("at a time for ") && (h.contains(&one) || pieces),
            "{what}: {h}"
        );
    }
    assert!(
        c.verdict.headline.chars().count() <= 100,
        "{what}: a headline of one line: {}",
        c.verdict.headline
    );
}

/// Each of `clients` on loopback, observed `via`, checked.
fn each(via: Via, clients: &[Client], must: Must) {
    head();
    for client in clients {
        let Some((c, seen)) = observed(via, client) else {
            return;
        };
        check(client, via, &c, seen, must);
    }
}
