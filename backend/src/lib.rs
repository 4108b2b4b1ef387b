//! pipescope's backend: runs real Redis workloads, measures every request, and streams each
//! run to every page watching (the `pipescope` binary serves it, or runs it headless).
//!
//! # Layout
//!
//! How a run flows:
//!
//! ```text
//! page ──Start──▶ ws ──▶ hub ──spec──▶ net (route) ──▶ engine ══ raw connections ══▶ Redis
//! page ◀── ws ◀── hub event stream ◀── progress, spans, summary ◀── engine
//! ```
//!
//! A page's `Start` arrives on its websocket (`server::ws`); the hub (`server::hub`) validates
//! it and runs its specs one at a time. For each, `net` gives the route to Redis (straight, or
//! through a delay-line proxy for the spec's network) and the `engine` runs the spec over raw
//! connections, keeping what it measures in `recorder` and `spans`. The hub turns the run's
//! start, progress, streamed spans and summary into one event stream, serialised once for
//! every page; each page's websocket task sends it on. `bench` drives the same engine and
//! routes from the command line instead of the hub; the command line itself is the binary's
//! (`src/cli/`), a file or a directory per job, each calling its room here.
//!
//! The rooms named for the command line's jobs:
//!
//! - `server` (`pipescope`, `serve`, `replay`): what serves the page: the routes (`/ws`,
//!   `/tour`, `/healthz`, the page) and shutdown; `assets`, the page (Trunk's `dist/`,
//!   embedded in release builds); `ws`, one page's websocket; `hub`, one run at a time, its
//!   events broadcast to every page, a late page caught up (`hub::plan` runs the specs,
//!   `hub::state` remembers what a late page needs); `capture_upload` and `recording_upload`,
//!   a capture or a recording a page opened, read for it; `replay`, the page served from a
//!   recording, no Redis at all; `lab`, a room's participants and their runs on one lane (its
//!   rules so far: who is in, the fair queue, the presenter's ceilings; not yet served).
//! - `bench` (`bench`): the engine headless.
//! - `versus` (`versus redis-benchmark`): our engine beside redis-benchmark, and the rounds
//!   that `cost` runs in too.
//! - `cost` (`cost …`): what TLS, a cluster, observe mode's proxy and its memory cost, how fast
//!   a capture file is read (beside tshark), how close the delay line comes to its promise,
//!   and what tracing a client's syscalls costs it.
//! - `observe` (`observe`): an application's own connections through an observing proxy (the
//!   delay line, framed and recorded per connection), and their verdicts.
//! - `clean` (`clean`): what runs left in Redis, removed.
//!
//! The parts they are built from:
//!
//! - `engine`: runs a `RunSpec` over raw connections (one, a pool, or one per cluster master)
//!   and measures every request, a module per mode family; `engine::run_and_clean_up` is the
//!   one way to run a spec (Redis's own time read around it, its keys removed after it),
//!   `engine::keys` the key namespace.
//! - `recorder`, `spans`: what the engine measures: the latency histogram and live progress;
//!   per-request timings within a fixed budget.
//! - `net`: the network dialled in between the engine and Redis: the delay-line proxy, its
//!   calibration and wire tap, and the route a run takes.
//! - `capture`: a capture file (pcap, pcapng) or an interface captured live (libpcap) read
//!   back into each Redis connection's byte streams through one packet loop, our own TCP
//!   reassembly; `observe --pcap` and `observe --capture` feed them to observe mode's record.
//! - `syscalls`: `observe --pid`: a client process's own syscalls on its sockets (eBPF
//!   programs on the kernel's tracepoints), per socket its sends, receives and waits.
//! - `target`: the Redis a run talks to (URL, the engine's raw connection, admin connections).
//! - `cluster`: Redis Cluster: key slots, the slot map read from a node, a local cluster.
//! - `tls`: TLS to Redis (rustls), trust from the system, a CA file, or none (said loudly);
//!   a throwaway CA for pipescope's own TLS servers.
//! - `resp`: RESP in one home: the type, the one encoder, reply scanning in place (the engine,
//!   the connection handshake, the probe, the local server) and the streaming framer (the wire
//!   tap, observe mode).
//! - `cancel`: Ctrl-C and SIGTERM: the runs in flight stopped, their keys removed, said, and
//!   the exit code a shell expects.
//! - `round_trip_probe`: one-at-a-time SETs, each round trip timed to the microsecond.
//! - `median`: the one median, and a median with its 95 % interval.
//! - `child_line`: waiting, with a deadline, for a child process to say a line (tcpdump,
//!   `pipescope observe` as a child).
//! - `local_redis`: the one launcher of a local redis-server (plain, TLS, cluster node): the
//!   embedded server used when no Redis URL is given, the cluster's nodes, the TLS server.
//! - `assets`: the page, Trunk's `dist/` (embedded in release builds): served by `server`,
//!   packed into one file by `html_file`.
//! - `html_file`: a recording or an observation as one self-contained HTML file (the page,
//!   its WASM and the data inside) that opens from disk with no server and no network.
//! - `redact`: an observation's client addresses and connection names replaced by numbers.
//!
//! What the page and the server both speak (specs, the protocol, validation, reports) is in
//! the `shared` crate.

pub mod assets;
pub mod bench;
pub mod cancel;
pub mod capture;
pub mod child_line;
pub mod clean;
pub mod cluster;
pub mod cost;
pub mod engine;
pub mod html_file;
pub mod local_redis;
pub mod median;
pub mod net;
pub mod observe;
pub mod recorder;
pub mod redact;
pub mod resp;
pub mod round_trip_probe;
pub mod server;
pub mod spans;
pub mod syscalls;
pub mod target;
pub mod tls;
pub mod versus;
