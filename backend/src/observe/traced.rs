//! A client process's own syscalls (`crate::syscalls`) given to the connections the proxy or a
//! capture saw: each traced socket to the connection whose client address is its own, and
//! that connection judged again with them (`ObservedConnection::add_syscalls`).

use shared::observe::ObservedConnection;

use crate::syscalls::{Traced, TracedSocket};

/// Gives each connection the evidence of the traced socket at its client address; returns the
/// traced sockets that matched none, in the order traced.
pub fn give_syscalls<'a>(
    conns: &mut [ObservedConnection],
    traced: &'a Traced,
) -> Vec<&'a TracedSocket> {
    let mut unmatched = Vec::new();
    for s in &traced.sockets {
        let local = s.local.to_string();
        match conns.iter_mut().find(|c| c.client == local) {
            Some(c) => c.add_syscalls(s.evidence.clone()),
            None => unmatched.push(s),
        }
    }
    unmatched
}
