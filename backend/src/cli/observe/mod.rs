//! `pipescope observe`: your application's own connections, and per connection whether, and
//! how, it pipelines: its arguments, and the vantage they choose.
//!
//! # Layout
//!
//! A file per vantage, each calling its room in the library (`pipescope::observe`,
//! `pipescope::capture`, `pipescope::syscalls`) and printing what it returns:
//!
//! - `proxy`: the observing proxy in front of Redis (the default), its probe and the
//!   connections' pipelined equivalents.
//! - `capture`: `--pcap FILE` and `--capture IFACE`, a capture file's or a live capture's
//!   connections, no proxy.
//! - `syscalls`: `--pid PID` and `-- COMMAND`, a client process's own syscalls: beside the
//!   proxy or a live capture, or alone (`--no-proxy`), a report per socket to Redis.
//! - `html`: where `--html` writes, for the proxy and a capture.
//! - `args`: the flags, and what they say (which vantage; the report's format).

mod args;
mod capture;
mod html;
mod proxy;
mod syscalls;

use pipescope::cancel::Stop;

pub use args::{ObserveArgs, ObserveFormat};

/// `observe` from the vantage the flags choose: a capture file, a live capture, a process's
/// syscalls alone, or (the default) the proxy.
pub async fn observe(args: ObserveArgs, stop: Stop) -> anyhow::Result<()> {
    match (&args.pcap, &args.capture) {
        (Some(path), _) => capture::observe_pcap(&args, path, stop).await,
        (None, Some(interface)) => capture::observe_live(&args, interface, stop).await,
        (None, None) if args.syscalls_alone() => {
            syscalls::observe_syscalls(
                args.traced(),
                args.duration,
                args.chosen_format() == ObserveFormat::Json,
                args.redis_ports(),
                stop,
            )
            .await
        }
        (None, None) => proxy::observe(args, stop).await,
    }
}
