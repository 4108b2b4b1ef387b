//! `pipescope cost capture-reading`: how fast `observe --pcap` reads a capture, beside
//! `tshark -r` with its RESP dissector, and its peak memory at two sizes of the capture.

use anyhow::Context;

use pipescope::cost::capture_reading::{CLIENTS, Plan, ReadRow, Report};

use super::super::args::{JsonArg, number_in};
use super::super::output::{met, say, say_json_lines};

#[derive(clap::Args)]
pub struct CaptureReadingArgs {
    /// Packets in the capture made and read, at least (it holds whole redis-benchmark runs).
    #[arg(long, default_value_t = 1_000_000, value_parser = number_in(1_000u64, 100_000_000))]
    pub packets: u64,
    /// Also read its first this many packets (several: comma-separated), to show memory
    /// against the capture's size.
    #[arg(long, value_delimiter = ',', default_values_t = [100_000u64, 500_000], value_parser = number_in(100u64, 100_000_000))]
    pub prefix_packets: Vec<u64>,
    /// Rounds: each reader reads both files once a round, who goes first rotating.
    #[arg(long, default_value_t = 3, value_parser = number_in(1usize, 101))]
    pub rounds: usize,
    /// Time pipescope alone (tshark is then not needed, nor compared).
    #[arg(long)]
    pub without_tshark: bool,
    #[command(flatten)]
    pub output: JsonArg,
}

/// pipescope is held to reading a capture this many times faster than tshark.
const TARGET_SPEEDUP: f64 = 5.0;
/// Peak RSS at the whole capture within this factor of the largest prefix's: "flat".
const FLAT: f64 = 1.25;

pub(super) async fn capture_reading(args: CaptureReadingArgs) -> anyhow::Result<()> {
    for &n in &args.prefix_packets {
        anyhow::ensure!(
            n < args.packets,
            "--prefix-packets {n} must be fewer than --packets ({}): a prefix shows memory at a smaller size of the same capture",
            args.packets
        );
    }
    let report = pipescope::cost::capture_reading::measure(Plan {
        exe: std::env::current_exe().context("finding pipescope's own binary")?,
        packets: args.packets,
        prefix_packets: args.prefix_packets.clone(),
        rounds: args.rounds,
        tshark: !args.without_tshark,
    })
    .await?;
    if args.output.json {
        return say_json_lines(&[&report]);
    }
    print_report(&report);
    Ok(())
}

fn print_report(r: &Report) {
    print_readers(r);
    print_rows(r);
    print_memory(r);
}

/// The capture and how each reader is run and timed.
fn print_readers(r: &Report) {
    use shared::digits::group;
    let c = &r.capture;
    say(format_args!(
        "The capture: {} packets, {:.1} MB, pcap (Ethernet, whole packets): real traffic, \
         redis-benchmark -c {CLIENTS} -P 1 SETs shaped like pipescope's against our own \
         redis-server on 127.0.0.1:{}, captured on lo by pipescope through libpcap (the pcap \
         crate) in {} redis-benchmark run{}, {} packets dropped; {} SETs in it (Redis's INFO commandstats). \
         Its prefixes (its first packets, in files of their own): {}.",
        group(c.packets),
        c.bytes as f64 / 1e6,
        c.port,
        c.runs,
        if c.runs == 1 { "" } else { "s" },
        group(c.dropped),
        group(c.sets),
        c.prefixes
            .iter()
            .map(|p| format!(
                "{} packets, {:.1} MB",
                group(p.packets),
                p.bytes as f64 / 1e6
            ))
            .collect::<Vec<_>>()
            .join("; "),
    ));
    say(format_args!(
        "pipescope: `pipescope observe --pcap FILE --redis-port {} --json` (its report to a file)",
        c.port
    ));
    match &r.tshark {
        None => say(format_args!(
            "tshark: not compared (--without-tshark): pipescope alone is timed"
        )),
        Some(t) if t.resp_dissector => say(format_args!(
            "tshark: {}, with a RESP dissector (`tshark -G protocols` lists resp): `{}` (a summary line a packet, to a file)",
            t.version,
            t.command.replace("PORT", &c.port.to_string())
        )),
        Some(t) => say(format_args!(
            "tshark: {}, WITHOUT a RESP dissector (`tshark -G protocols` lists no resp), so it is compared as the nearest equivalent, tshark dissecting TCP with its reassembly but not RESP: `{}`",
            t.version,
            t.command.replace("PORT", &c.port.to_string())
        )),
    }
    say(format_args!(
        "Each reader a child process; wall time from its start to its exit (start-up included); \
         medians of {} (rounds that rotate who goes first), 95 % intervals in brackets; peak \
         RSS: the child's VmHWM (/proc/<pid>/status, read every 5 ms), the largest of its runs",
        match r.rows.first().map_or(0, |row| row.rounds) {
            1 => "1 round".to_string(),
            n => format!("{n} rounds"),
        }
    ));
}

/// One row per reader and file, then the speed-up.
fn print_rows(r: &Report) {
    use shared::digits::group;
    let c = &r.capture;
    say(format_args!(
        "| reader | file | packets | MB | wall | packets/s | MB/s | peak RSS | packets it read | SETs it read |"
    ));
    say(format_args!(
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    ));
    for row in &r.rows {
        let sets = match (row.sets_read, row.file) {
            (None, _) => "–".to_string(),
            (Some(n), "capture") if n == c.sets => format!("{} (all)", group(n)),
            (Some(n), "capture") => format!("{} (NOT all {})", group(n), group(c.sets)),
            (Some(n), _) => group(n),
        };
        say(format_args!(
            "| {} | {} | {} | {:.1} | {} | {} | {:.1} | {} | {} | {} |",
            row.reader,
            match row.file {
                "capture" => "whole capture",
                _ => "prefix",
            },
            group(row.packets),
            row.bytes as f64 / 1e6,
            row.wall_secs.with_interval(2, " s"),
            group(row.packets_per_sec.round() as u64),
            row.mb_per_sec,
            mb(row.peak_rss_kb),
            row.packets_read.map_or("–".into(), group),
            sets,
        ));
    }
    if let Some(s) = &r.speedup {
        say(format_args!(
            "pipescope / tshark: {} as fast on the whole capture (packets/s and MB/s alike: the same file; the median of the rounds' tshark wall / pipescope wall); target ≥ {TARGET_SPEEDUP}×: {}",
            s.with_interval(1, "×"),
            met(s.median >= TARGET_SPEEDUP)
        ));
        say(format_args!(
            "start-up left out (each reader's time for the whole capture less its time for the smallest prefix): {}",
            r.marginal_speedup
                .map_or("– (the files are too small to tell)".into(), |m| m
                    .with_interval(1, "×"))
        ));
    }
}

/// Each reader's peak RSS by the size of what it read.
fn print_memory(r: &Report) {
    use shared::digits::group;
    for reader in ["pipescope", "tshark"] {
        // Fewest packets first: the prefixes, then the whole capture.
        let mut sizes: Vec<&ReadRow> = r.rows.iter().filter(|row| row.reader == reader).collect();
        sizes.sort_by_key(|row| row.packets);
        let [.., before, whole] = &sizes[..] else {
            continue;
        };
        let growth = whole.peak_rss_kb as f64 / before.peak_rss_kb.max(1) as f64;
        let at: Vec<String> = sizes
            .iter()
            .map(|row| format!("{} at {} packets", mb(row.peak_rss_kb), group(row.packets)))
            .collect();
        say(format_args!(
            "memory, {reader}: peak RSS {} (×{growth:.2} from {} packets to {}: {})",
            at.join(", "),
            group(before.packets),
            group(whole.packets),
            match growth <= FLAT {
                true => "flat in the capture's size",
                false => "grows with the capture",
            }
        ));
        if reader == "pipescope" {
            say(format_args!(
                "(a connection's record keeps its first {} requests' stamps in full and a bounded sample beyond them, so pipescope's memory rises with each connection's first requests, then stays; here {CLIENTS} connections)",
                group(pipescope::spans::FULL_SPANS)
            ));
        }
    }
}

fn mb(kb: u64) -> String {
    pipescope::cost::observer_memory::mb(kb)
}
