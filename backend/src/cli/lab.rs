//! `serve --lab`: the lab beside the page, and the links it prints: the presenter's (with its
//! token) and the room's join link, at each address the room can reach this machine on.

use std::net::IpAddr;

use pipescope::server::hub::Hub;
use pipescope::server::lab::lane::{LabServer, new_join_code};
use pipescope::server::lab::queue::Bounds;
use shared::lab::Ceilings;

use super::output::say;

/// Starts the lab on `hub`, its presenter's actions needing `token`, and prints its links for
/// a server on `listen` at `port` (`shown`: the address this machine opens it on).
pub fn start(
    hub: Hub,
    token: String,
    listen: IpAddr,
    port: u16,
    shown: std::net::SocketAddr,
) -> LabServer {
    let hosts = room_addresses(listen);
    let bases: Vec<String> = if hosts.is_empty() {
        vec![format!("http://{shown}")]
    } else {
        hosts
            .iter()
            .map(|&host| format!("http://{}", std::net::SocketAddr::new(host, port)))
            .collect()
    };
    let lab = LabServer::start(
        hub,
        token.clone(),
        bases,
        new_join_code(),
        Ceilings::default(),
        Bounds::default(),
    );
    say(format_args!(
        "presenter (keep this link to yourself): http://{shown}/lab?token={token}"
    ));
    for url in lab.join_urls() {
        say(format_args!("join (for the room): {url}"));
    }
    if hosts.is_empty() {
        say(format_args!(
            "(only this machine can reach that join link: listen on the network with --listen 0.0.0.0)"
        ));
    }
    lab
}

/// The addresses the room can reach a server listening on `listen` at: that address, or
/// where it listens on every interface, each interface's IPv4 address but loopback's.
fn room_addresses(listen: IpAddr) -> Vec<IpAddr> {
    if listen.is_loopback() {
        return Vec::new();
    }
    if !listen.is_unspecified() {
        return vec![listen];
    }
    let mut found = Vec::new();
    // SAFETY: getifaddrs fills a list this function frees before returning; each entry's
    // address is read only where the entry says it is IPv4.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut at = list;
        while !at.is_null() {
            let a = (*at).ifa_addr;
            if !a.is_null() && i32::from((*a).sa_family) == libc::AF_INET {
                let v4 = &*(a as *const libc::sockaddr_in);
                let ip = std::net::Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
                if !ip.is_loopback() && !found.contains(&IpAddr::V4(ip)) {
                    found.push(IpAddr::V4(ip));
                }
            }
            at = (*at).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found
}
