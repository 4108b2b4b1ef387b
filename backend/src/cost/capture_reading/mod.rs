//! `pipescope cost capture-reading`: how fast pipescope reads a capture file, beside
//! `tshark -r` with its RESP dissector on the same file, and whether its memory stays flat
//! as the capture grows.
//!
//! - `make`: the capture: real redis-benchmark SETs against our own redis-server on a free
//!   loopback port, captured on `lo` through libpcap into a pcap file, its first packets into
//!   smaller ones (prefixes), to show memory against the capture's size.
//! - `child`: a reader as a child process: its wall time and peak RSS (`wait4`).
//! - here: the readers (`pipescope observe --pcap FILE --json`, tshark), run in rounds that
//!   rotate who goes first, each on both files, and what they read checked against Redis.
//!
//! Each reader is a child process, so its memory is its own and its start-up is counted, as a
//! user running it would see. tshark's start-up (loading its dissectors) is part of its time;
//! the marginal rates, from the two files' difference, leave both readers' start-up out.

mod child;
mod make;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;

use crate::median::Median;

pub use make::{CLIENTS, Made};

/// A read that takes longer than this is stopped (and the bench fails, saying so).
const READ_LIMIT: Duration = Duration::from_secs(900);

#[derive(Debug, thiserror::Error)]
pub enum ReadingError {
    #[error(
        "tshark is not installed: `scripts/setup bench` installs it (Debian: apt-get install tshark); or pass --without-tshark to time pipescope alone"
    )]
    NoTshark,
    #[error(
        "the capture holds {got} packets after {runs} redis-benchmark runs ({secs} s), fewer than the {wanted} asked for: ask for fewer with --packets"
    )]
    ShortCapture {
        got: u64,
        wanted: u64,
        runs: u32,
        secs: u64,
    },
    #[error("{reader} failed reading {file} (exit {code}): {said}")]
    ReaderFailed {
        reader: String,
        file: PathBuf,
        code: String,
        said: String,
    },
    #[error("{reader} did not finish reading {file} within {} s and was stopped", READ_LIMIT.as_secs())]
    TooSlow { reader: String, file: PathBuf },
}

/// What to measure.
pub struct Plan {
    /// This very binary, run as `observe --pcap`.
    pub exe: PathBuf,
    /// Packets in the capture at least, and in each prefix.
    pub packets: u64,
    pub prefix_packets: Vec<u64>,
    pub rounds: usize,
    /// Whether tshark is timed too (`--without-tshark`: not).
    pub tshark: bool,
}

/// The tshark found, and how it is run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Tshark {
    /// Its `--version` first line.
    pub version: String,
    /// Whether `tshark -G protocols` lists a RESP (Redis) dissector.
    pub resp_dissector: bool,
    /// The command line, FILE standing for the capture.
    pub command: String,
}

/// One reader on one file, over the rounds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReadRow {
    /// "pipescope" or "tshark".
    pub reader: &'static str,
    /// "capture" (the whole file) or "prefix" (its first `packets`).
    pub file: &'static str,
    pub packets: u64,
    pub bytes: u64,
    pub rounds: usize,
    /// Wall time from start to exit, s: median with its interval.
    pub wall_secs: Median,
    /// Packets and MB (10^6 bytes of the file) per second at the median wall time.
    pub packets_per_sec: f64,
    pub mb_per_sec: f64,
    /// The largest peak RSS of its runs, kB: its VmHWM read last before it exited (`child`).
    pub peak_rss_kb: u64,
    /// The largest `ru_maxrss` (wait4) of its runs, kB: Linux counts the parent's RSS at the
    /// fork in it, so it is at least what this process held then.
    pub ru_maxrss_kb: u64,
    /// What it read, from its own output (the last round's): packets and SETs.
    pub packets_read: Option<u64>,
    pub sets_read: Option<u64>,
}

/// What `measure` found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub capture: Made,
    /// `None` with `--without-tshark`.
    pub tshark: Option<Tshark>,
    pub rows: Vec<ReadRow>,
    /// Per round, tshark's wall / pipescope's on the whole capture: how many times faster
    /// pipescope read it (packets/s and MB/s alike: the same file). `None` without tshark.
    pub speedup: Option<Median>,
    /// The same from the difference between the whole capture's times and the smallest
    /// prefix's: start-up left out (rounds where a reader was not slower on the whole capture
    /// than on that prefix are left out).
    pub marginal_speedup: Option<Median>,
}

/// Makes the capture in a directory of its own, then times each reader on it.
pub async fn measure(plan: Plan) -> anyhow::Result<Report> {
    // Before anything is made: a bench that cannot compare says so at once.
    let tshark = match plan.tshark {
        true => Some(tshark()?),
        false => None,
    };
    let dir = tempfile::tempdir().context("a directory for the capture")?;
    eprintln!(
        "capture-reading: capturing at least {} packets of redis-benchmark SETs on lo",
        shared::digits::group(plan.packets)
    );
    let made = make::make(dir.path(), plan.packets, &plan.prefix_packets).await?;
    eprintln!(
        "capture-reading: {} packets ({:.1} MB, {} SETs) in {:.1} s; reading it",
        shared::digits::group(made.packets),
        made.bytes as f64 / 1e6,
        shared::digits::group(made.sets),
        made.secs
    );
    let mut readers = vec![Reader::Pipescope(plan.exe.clone())];
    if let Some(t) = &tshark {
        readers.push(Reader::Tshark {
            resp: t.resp_dissector,
        });
    }
    // The whole capture first, then its prefixes, fewest packets first.
    let files: Vec<(&'static str, PathBuf, u64, u64)> =
        std::iter::once(("capture", made.full.clone(), made.packets, made.bytes))
            .chain(
                made.prefixes
                    .iter()
                    .map(|p| ("prefix", p.file.clone(), p.packets, p.bytes)),
            )
            .collect();
    let out = dir.path().join("out");
    // runs[reader][file]: each round's (wall s, peak RSS kB, what it read).
    let mut runs = vec![vec![Vec::new(); files.len()]; readers.len()];
    for round in 0..plan.rounds.max(1) {
        for j in 0..readers.len() {
            let i = (round + j) % readers.len();
            for (f, (_, path, _, _)) in files.iter().enumerate() {
                let (reader, path, out, port) =
                    (readers[i].clone(), path.clone(), out.clone(), made.port);
                let read = tokio::task::spawn_blocking(move || reader.read(&path, port, &out))
                    .await
                    .context("a reader's thread")??;
                runs[i][f].push(read);
            }
        }
        let said: Vec<String> = readers
            .iter()
            .zip(&runs)
            .map(|(r, by_file)| {
                let last = by_file[0].last().expect("this round's read");
                format!("{} {:.2} s", r.name(), last.wall.as_secs_f64())
            })
            .collect();
        eprintln!("capture-reading round {}: {}", round + 1, said.join(", "));
    }
    let mut rows = Vec::new();
    for (reader, by_file) in readers.iter().zip(&runs) {
        for ((file, _, packets, bytes), reads) in files.iter().zip(by_file) {
            rows.push(row(reader.name(), file, *packets, *bytes, reads));
        }
    }
    let (speedup, marginal_speedup) = match tshark {
        None => (None, None),
        Some(_) => speedups(&runs, files.len()),
    };
    Ok(Report {
        capture: made,
        tshark,
        rows,
        speedup,
        marginal_speedup,
    })
}

/// tshark's wall over pipescope's on the whole capture, per round; and the same from the
/// difference between the whole capture and its smallest prefix (start-up left out).
/// `runs[reader][file]`: pipescope is reader 0, tshark 1; file 0 the whole capture.
fn speedups(runs: &[Vec<Vec<Read>>], files: usize) -> (Option<Median>, Option<Median>) {
    let secs = |i: usize, f: usize| -> Vec<f64> {
        runs[i][f].iter().map(|r| r.wall.as_secs_f64()).collect()
    };
    if files < 2 {
        let whole = secs(1, 0)
            .iter()
            .zip(secs(0, 0))
            .map(|(t, p)| t / p)
            .collect();
        return (Some(Median::of(whole)), None);
    }
    let (p, t) = ((secs(0, 0), secs(0, 1)), (secs(1, 0), secs(1, 1)));
    let whole = t.0.iter().zip(&p.0).map(|(t, p)| t / p).collect();
    // Only where both took longer on the whole capture than on its prefix: on tiny
    // files start-up noise is all there is.
    let marginal: Vec<f64> = (0..p.0.len())
        .map(|r| (t.0[r] - t.1[r], p.0[r] - p.1[r]))
        .filter(|(t, p)| *t > 0.0 && *p > 0.0)
        .map(|(t, p)| t / p)
        .collect();
    let marginal = (!marginal.is_empty()).then(|| Median::of(marginal));
    (Some(Median::of(whole)), marginal)
}

/// A reader's runs on one file, summed up.
fn row(
    reader: &'static str,
    file: &'static str,
    packets: u64,
    bytes: u64,
    reads: &[Read],
) -> ReadRow {
    let wall = Median::of(reads.iter().map(|r| r.wall.as_secs_f64()).collect());
    let last = reads.last();
    ReadRow {
        reader,
        file,
        packets,
        bytes,
        rounds: reads.len(),
        wall_secs: wall,
        packets_per_sec: packets as f64 / wall.median,
        mb_per_sec: bytes as f64 / 1e6 / wall.median,
        peak_rss_kb: reads
            .iter()
            .map(|r| r.hwm_kb.unwrap_or(r.max_rss_kb))
            .max()
            .unwrap_or(0),
        ru_maxrss_kb: reads.iter().map(|r| r.max_rss_kb).max().unwrap_or(0),
        packets_read: last.and_then(|r| r.packets),
        sets_read: last.and_then(|r| r.sets),
    }
}

/// The tshark on PATH: its version, and whether it has a RESP dissector.
fn tshark() -> anyhow::Result<Tshark> {
    let version = match Command::new("tshark").arg("--version").output() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReadingError::NoTshark.into());
        }
        r => r.context("running tshark --version")?,
    };
    let version = String::from_utf8_lossy(&version.stdout)
        .lines()
        .next()
        .unwrap_or("tshark (no version said)")
        .trim()
        .trim_end_matches('.')
        .to_string();
    let protocols = Command::new("tshark")
        .args(["-G", "protocols"])
        .stderr(Stdio::null())
        .output()
        .context("running tshark -G protocols")?;
    // "REdis Serialization Protocol\tRESP\tresp": its filter name is the last field.
    let resp_dissector = String::from_utf8_lossy(&protocols.stdout)
        .lines()
        .any(|l| l.rsplit('\t').next() == Some("resp"));
    let command = Reader::Tshark {
        resp: resp_dissector,
    }
    .command_line(Path::new("FILE"), 6379)
    .replace("6379", "PORT");
    Ok(Tshark {
        version,
        resp_dissector,
        command,
    })
}

/// One read: how it ran, and what the reader said it read.
#[derive(Debug, Clone, Copy)]
struct Read {
    wall: Duration,
    hwm_kb: Option<u64>,
    max_rss_kb: u64,
    packets: Option<u64>,
    sets: Option<u64>,
}

#[derive(Debug, Clone)]
enum Reader {
    /// `pipescope observe --pcap FILE --json`, this binary.
    Pipescope(PathBuf),
    /// `tshark -r FILE`, decoding the port as RESP where it has the dissector.
    Tshark { resp: bool },
}

impl Reader {
    fn name(&self) -> &'static str {
        match self {
            Reader::Pipescope(_) => "pipescope",
            Reader::Tshark { .. } => "tshark",
        }
    }

    fn command(&self, file: &Path, port: u16) -> Command {
        match self {
            Reader::Pipescope(exe) => {
                let mut cmd = Command::new(exe);
                cmd.args(["observe", "--pcap"])
                    .arg(file)
                    .args(["--redis-port", &port.to_string(), "--json"])
                    .env("RUST_LOG", "pipescope=warn");
                cmd
            }
            Reader::Tshark { resp } => {
                // -n: no name resolution (pipescope resolves none either).
                let mut cmd = Command::new("tshark");
                cmd.args(["-n", "-r"]).arg(file);
                if *resp {
                    cmd.args(["-d", &format!("tcp.port=={port},resp")]);
                }
                cmd
            }
        }
    }

    /// The command line, as said in the report.
    fn command_line(&self, file: &Path, port: u16) -> String {
        let cmd = self.command(file, port);
        let program = match self {
            Reader::Pipescope(_) => "pipescope".to_string(),
            Reader::Tshark { .. } => "tshark".to_string(),
        };
        std::iter::once(program)
            .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Reads `file` as a child process, its stdout and stderr into `out`.stdout/.stderr,
    /// then what it read from them.
    fn read(&self, file: &Path, port: u16, out: &Path) -> anyhow::Result<Read> {
        let (stdout, stderr) = (out.with_extension("stdout"), out.with_extension("stderr"));
        let mut cmd = self.command(file, port);
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout)?)
            .stderr(std::fs::File::create(&stderr)?);
        let ran =
            child::run(&mut cmd, READ_LIMIT).with_context(|| format!("running {}", self.name()))?;
        if ran.killed {
            return Err(ReadingError::TooSlow {
                reader: self.name().into(),
                file: file.into(),
            }
            .into());
        }
        if ran.code != Some(0) {
            let said = std::fs::read_to_string(&stderr).unwrap_or_default();
            return Err(ReadingError::ReaderFailed {
                reader: self.name().into(),
                file: file.into(),
                code: ran.code.map_or("by a signal".into(), |c| c.to_string()),
                said: said.trim().chars().take(2000).collect(),
            }
            .into());
        }
        let (packets, sets) = match self {
            Reader::Pipescope(_) => pipescope_read(&stdout, &stderr)?,
            Reader::Tshark { resp } => tshark_read(&stdout, *resp)?,
        };
        Ok(Read {
            wall: ran.wall,
            hwm_kb: ran.hwm_kb,
            max_rss_kb: ran.max_rss_kb,
            packets,
            sets,
        })
    }
}

/// What `observe --pcap --json` read: the packets its label names (on stderr: "…; 1,000,000
/// packets, 17 connections)…") and the SETs in its report's connections.
fn pipescope_read(stdout: &Path, stderr: &Path) -> anyhow::Result<(Option<u64>, Option<u64>)> {
    let report: Vec<shared::observe::ObservedConnection> =
        serde_json::from_reader(std::io::BufReader::new(std::fs::File::open(stdout)?))
            .context("pipescope observe --json's report")?;
    let sets = report
        .iter()
        .flat_map(|c| &c.top_commands)
        .filter(|(name, _)| name == "SET")
        .map(|(_, n)| n)
        .sum();
    let said = std::fs::read_to_string(stderr)?;
    let packets = said.lines().find_map(|l| {
        let counted = l
            .strip_prefix("from the capture ")?
            .split(" packets, ")
            .next()?;
        counted.rsplit("; ").next()?.replace(',', "").parse().ok()
    });
    Ok((packets, Some(sets)))
}

/// What tshark read: a line per packet; with the RESP dissector, the SETs its requests' lines
/// name ("… RESP 143 Request: SET k v SET k v").
fn tshark_read(stdout: &Path, resp: bool) -> anyhow::Result<(Option<u64>, Option<u64>)> {
    use std::io::BufRead;
    let (mut packets, mut sets) = (0, 0);
    for line in std::io::BufReader::new(std::fs::File::open(stdout)?).lines() {
        let line = line?;
        packets += 1;
        if let Some((_, request)) = line.split_once(" Request: ") {
            sets += request.split(' ').filter(|w| *w == "SET").count() as u64;
        }
    }
    Ok((Some(packets), resp.then_some(sets)))
}
