//! The capture the reading is timed on: real traffic, not a synthesized file. redis-benchmark
//! sends SETs shaped like pipescope's over `CLIENTS` connections, one at a time each, to a
//! redis-server of our own on a free loopback port; libpcap (the `pcap` crate) captures `lo`
//! meanwhile and writes every packet into a pcap file, as `tcpdump -s 0 -w` would, and the
//! first packets into smaller files as well (prefixes: the same traffic, shorter).
//!
//! The file holds whole redis-benchmark runs (never one cut mid-way), so the SETs in it are
//! exactly those Redis executed meanwhile (`INFO commandstats`), which the readers' counts
//! are checked against. Runs go on until the file holds at least the packets asked for: a
//! first small run measures packets per SET, the next is sized from it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::ReadingError;
use crate::capture::{CaptureError, refused};
use crate::engine::keys;
use crate::local_redis::LocalRedis;
use crate::target::RedisTarget;
use crate::versus::{MAX_KEYSPACE, Shape, parse_csv, redis_benchmark};

/// Connections redis-benchmark opens: an application's small pool, one command at a time each.
pub const CLIENTS: u32 = 16;
/// The interface captured: redis-benchmark reaches our server over it.
const INTERFACE: &str = "lo";
/// Whole packets, as `observe --capture` takes them (tcpdump's `-s 0`).
const SNAPLEN: i32 = 262_144;
/// The kernel's buffer, as `observe --capture`'s: no packet dropped while the writer waits
/// for a CPU beside redis-server and redis-benchmark on a 2-core machine.
const BUFFER: i32 = 256 << 20;
/// libpcap hands over a block of packets at the latest this long after its first one.
const BLOCK_MS: i32 = 50;
/// Once stopped, packets are read until none came for this long (a few block timeouts).
const QUIET: Duration = Duration::from_millis(300);
/// SETs of the first run, which measures packets per SET.
const FIRST_RUN: u64 = 2_000;
/// redis-benchmark runs at most, and the time they may take in all.
const MAX_RUNS: u32 = 20;
const TIME_LIMIT: Duration = Duration::from_secs(900);

/// The capture made, and what went into it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Made {
    #[serde(skip)]
    pub full: PathBuf,
    /// The port our redis-server listened on (the readers are told it).
    pub port: u16,
    pub packets: u64,
    /// The file's size.
    pub bytes: u64,
    /// Its first packets, in files of their own, fewest first.
    pub prefixes: Vec<Prefix>,
    /// SETs Redis executed while it was captured: all of them are in the file.
    pub sets: u64,
    pub runs: u32,
    pub clients: u32,
    /// Packets libpcap (or the interface) dropped: 0, or the file lacks some.
    pub dropped: u64,
    /// redis-benchmark's throughput in its longest run, while captured.
    pub ops_per_sec: Option<f64>,
    pub secs: f64,
}

/// A capture's first packets, in a file of their own.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Prefix {
    #[serde(skip)]
    pub file: PathBuf,
    pub packets: u64,
    pub bytes: u64,
}

/// Captures real traffic on `lo` into `dir`/capture.pcap until it holds at least `packets`
/// packets, its first `prefixes[i]` also into `dir`/prefix-`i`.pcap.
pub async fn make(dir: &Path, packets: u64, prefixes: &[u64]) -> anyhow::Result<Made> {
    let began = Instant::now();
    let local = LocalRedis::start().context("starting a redis-server to capture")?;
    let port = local.port();
    let target = RedisTarget::parse(&local.url())?;
    let mut admin = target.admin_connection().await?;
    let before = set_calls(&mut admin).await?;
    let full = dir.join("capture.pcap");
    let mut prefixes: Vec<(PathBuf, u64)> = prefixes
        .iter()
        .enumerate()
        .map(|(i, &n)| (dir.join(format!("prefix-{i}.pcap")), n))
        .collect();
    prefixes.sort_by_key(|(_, n)| *n);
    let writer = Writer::start(port, &full, &prefixes)?;
    let shape = Shape::like_ours(keys::first_run_id(), FIRST_RUN);
    let (mut runs, mut sent, mut ops_per_sec, mut longest) = (0, 0, None, 0);
    while writer.written() < packets {
        if runs >= MAX_RUNS || began.elapsed() >= TIME_LIMIT {
            let (got, _) = writer.stop()?;
            return Err(ReadingError::ShortCapture {
                got,
                wanted: packets,
                runs,
                secs: began.elapsed().as_secs(),
            }
            .into());
        }
        let n = next_run(runs, sent, writer.written(), packets);
        let out = redis_benchmark(port, CLIENTS, 1, n, MAX_KEYSPACE, &shape)
            .output()
            .await
            .context("running redis-benchmark (Debian: apt-get install redis-tools)")?;
        let csv = String::from_utf8_lossy(&out.stdout);
        anyhow::ensure!(
            out.status.success(),
            "redis-benchmark failed ({}): {csv}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        if n > longest {
            (longest, ops_per_sec) = (n, parse_csv(&csv).map(|(rps, _)| rps));
        }
        runs += 1;
        sent += n;
        // The packets of the run's last moments reach the writer a block timeout later.
        tokio::time::sleep(Duration::from_millis(2 * BLOCK_MS as u64)).await;
    }
    let (written, dropped) = writer.stop()?;
    let sets = set_calls(&mut admin).await? - before;
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len());
    Ok(Made {
        bytes: size(&full).context("the capture file")?,
        prefixes: prefixes
            .into_iter()
            .map(|(file, n)| {
                Ok(Prefix {
                    bytes: size(&file).context("a prefix file")?,
                    file,
                    packets: written.min(n),
                })
            })
            .collect::<anyhow::Result<_>>()?,
        full,
        port,
        packets: written,
        sets,
        runs,
        clients: CLIENTS,
        dropped,
        ops_per_sec,
        secs: began.elapsed().as_secs_f64(),
    })
}

/// SETs for the next run: a small first run, then what the packets still missing need at the
/// packets per SET seen so far (a little over, so one more run is rarely needed).
fn next_run(runs: u32, sent: u64, written: u64, wanted: u64) -> u64 {
    if runs == 0 || sent == 0 || written == 0 {
        return FIRST_RUN;
    }
    let per_set = written as f64 / sent as f64;
    let missing = wanted.saturating_sub(written) as f64;
    ((missing / per_set * 1.02).ceil() as u64 + 100).clamp(100, 10_000_000)
}

/// `cmdstat_set`'s calls now.
async fn set_calls(admin: &mut redis::aio::MultiplexedConnection) -> anyhow::Result<u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(admin)
        .await
        .context("INFO commandstats on our redis-server")?;
    Ok(crate::engine::redis_time::parse_counters(&info, "set")
        .command
        .calls)
}

/// libpcap capturing `lo` into the files on a thread of its own.
struct Writer {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<Result<u64, CaptureError>>,
}

impl Writer {
    /// Opens the capture (from here on every packet is kept) and starts writing it.
    fn start(port: u16, full: &Path, prefixes: &[(PathBuf, u64)]) -> Result<Writer, CaptureError> {
        let filter = format!("tcp port {port}");
        let failed = |e: pcap::Error| refused(INTERFACE, &filter, &Err("not listed".into()), e);
        // Not immediate mode: libpcap's blocks then pack small packets tightly, so the buffer
        // holds seconds of this traffic however long the writer waits for a CPU.
        let mut capture = pcap::Capture::from_device(INTERFACE)
            .map_err(failed)?
            .snaplen(SNAPLEN)
            .buffer_size(BUFFER)
            .timeout(BLOCK_MS)
            .open()
            .and_then(pcap::Capture::setnonblock)
            .map_err(failed)?;
        capture.filter(&filter, true).map_err(failed)?;
        let mut full = capture.savefile(full).map_err(failed)?;
        let mut prefixes = prefixes
            .iter()
            .map(|(file, n)| Ok((capture.savefile(file).map_err(failed)?, *n)))
            .collect::<Result<Vec<_>, CaptureError>>()?;
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let (stopped, count) = (stop.clone(), written.clone());
        let thread = std::thread::Builder::new()
            .name("capture-writer".into())
            .spawn(move || {
                write(&mut capture, &mut full, &mut prefixes, &stopped, &count)
                    .map_err(|e| refused(INTERFACE, &filter, &Err("not listed".into()), e))
            })
            .expect("spawning the capture's writer");
        Ok(Writer {
            stop,
            written,
            thread,
        })
    }

    fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Stops capturing once the traffic has gone quiet; the packets written and dropped.
    fn stop(self) -> Result<(u64, u64), CaptureError> {
        self.stop.store(true, Ordering::SeqCst);
        let dropped = self.thread.join().expect("the capture's writer panicked")?;
        Ok((self.written.load(Ordering::SeqCst), dropped))
    }
}

/// Every packet into the full file, the first ones into each prefix too (as many as it
/// takes), until stopped and quiet for `QUIET`; returns the packets libpcap and the interface
/// dropped.
fn write(
    capture: &mut pcap::Capture<pcap::Active>,
    full: &mut pcap::Savefile,
    prefixes: &mut [(pcap::Savefile, u64)],
    stop: &AtomicBool,
    written: &AtomicU64,
) -> Result<u64, pcap::Error> {
    let mut n = 0;
    let mut last = Instant::now();
    // Bounded by the caller's stop (raised within `TIME_LIMIT` and its last run), then `QUIET`.
    loop {
        match capture.next_packet() {
            Ok(p) => {
                full.write(&p);
                for (prefix, takes) in prefixes.iter_mut() {
                    if n < *takes {
                        prefix.write(&p);
                    }
                }
                n += 1;
                written.store(n, Ordering::Relaxed);
                last = Instant::now();
            }
            Err(pcap::Error::TimeoutExpired) => {
                if stop.load(Ordering::SeqCst) && last.elapsed() >= QUIET {
                    break;
                }
                wait(capture)?;
            }
            Err(pcap::Error::PcapError(e)) if e.contains("Interrupted system call") => {}
            Err(e) => return Err(e),
        }
    }
    full.flush()?;
    for (prefix, _) in prefixes.iter_mut() {
        prefix.flush()?;
    }
    let stats = capture.stats()?;
    Ok(u64::from(stats.dropped) + u64::from(stats.if_dropped))
}

/// Until a packet may be there to read, at most a block timeout.
fn wait(capture: &pcap::Capture<pcap::Active>) -> Result<(), pcap::Error> {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: capture.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd, alive for the call.
    let n = unsafe { libc::poll(&mut fd, 1, BLOCK_MS) };
    let e = std::io::Error::last_os_error();
    match n < 0 && e.kind() != std::io::ErrorKind::Interrupted {
        true => Err(pcap::Error::PcapError(format!("waiting for packets: {e}"))),
        false => Ok(()),
    }
}
