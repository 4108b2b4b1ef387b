//! Across the veth network (`support::wire`: Redis behind a relay holding each chunk 5 ms each
//! way and a further 0–5 ms, as a real path varies), from a capture on the client's end of the
//! veth and through the proxy in the client's namespace: the round trip is fifty times a
//! client's own work per command, so a client that does not wait has many commands in flight,
//! and one that waits sends each command a steady moment after its reply however long the
//! reply took; the wire decides, and each pattern must be right. (Over a hold that never
//! varies, a client that waits and one that sends on its own clock of one round trip look
//! alike on the wire, which then says undetermined, rightly; and the more the hold varies,
//! the surer the wire is that the client's next command followed its reply where a busy
//! machine makes the client's own reaction vary, as the phases pattern's 26 waits need.)
//!
//! The clients of one vantage share one capture (or proxy), each found by its SET count: a
//! different one per pattern, the phases pattern's the smallest, so its pipeline of half of
//! them (~45 bytes a SET) fits one segment of the veth's. A pipeline the kernel cut into
//! segments is one write or several to a capture, which it cannot tell apart and says so
//! (network.rs, redis-cli --pipe): undetermined, rightly.

use super::{Client, MODES, Must, Via, check, find, head, pattern};
use crate::support;

use support::oracle::syscalls;
use support::wire::{D_US, DELAY_PORT, Wire};

/// SETs of the first pattern (waits: a round trip each); two fewer for each after.
const N: u64 = 60;
/// How much more the relay may hold a chunk, µs.
const JITTER_US: u64 = 5_000;

fn the_patterns() -> Vec<Client> {
    MODES
        .iter()
        .zip(0..)
        .map(|(&m, i)| pattern(m, N - 2 * i))
        .collect()
}

/// Each pattern across the network, seen `via` the veth's capture or its proxy, right.
fn across(via: Via) {
    let Some(wire) = Wire::varied(&[(DELAY_PORT, D_US)], JITTER_US) else {
        return;
    };
    let clients = the_patterns();
    let mut seen = Vec::new();
    let run = |client: &Client, host: &str, port: u16| {
        let mut cmd = (client.make)(port)?;
        cmd.arg(host);
        syscalls(wire.pair.client.wrap(&cmd), port)
    };
    let conns = match via {
        Via::VethCapture => {
            let Some(mut capture) = wire.capture(DELAY_PORT) else {
                return;
            };
            for client in &clients {
                let Some(s) = run(client, &wire.pair.server_addr, DELAY_PORT) else {
                    return;
                };
                seen.push(s);
            }
            capture.observe(DELAY_PORT)
        }
        Via::VethProxy => {
            let mut observe = wire.observe(DELAY_PORT);
            for client in &clients {
                let Some(s) = run(client, &wire.pair.client_addr, observe.port()) else {
                    return;
                };
                seen.push(s);
            }
            observe.report(super::REPORT_LIMIT)
        }
        _ => unreachable!("on loopback: observed()"),
    };
    head();
    for (client, seen) in clients.iter().zip(seen) {
        check(client, via, &find(&conns, client), seen, Must::Right);
    }
}

#[test]
fn each_pattern_from_a_capture_across_a_real_network_is_right() {
    across(Via::VethCapture);
}

#[test]
fn each_pattern_through_the_proxy_across_a_real_network_is_right() {
    across(Via::VethProxy);
}
