//! Ctrl-C while `pipescope observe --pcap` reads a large capture: it stops, prints the report
//! of what it read marked partial, and exits 130; a second Ctrl-C ends it at once.

use std::io::{BufRead, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::capture::write::{Conv, ETHERNET, pcap};
use crate::support;

/// Connections in the capture, each opened, `SETS` SETs one at a time, closed: 406,000
/// packets, 36 MB, seconds of reading for a debug build.
const CONNECTIONS: usize = 1_000;
const SETS: usize = 200;

/// Writes the capture to `file`; returns how many packets it holds.
fn write_capture(file: &std::path::Path) -> u64 {
    let mut out = std::io::BufWriter::new(std::fs::File::create(file).unwrap());
    let mut packets = 0;
    for i in 0..CONNECTIONS {
        let client = format!("10.0.{}.{}:{}", i / 250, i % 250 + 1, 40_000 + i % 20_000);
        let mut c = Conv::new(&client, "10.0.0.250:6379", ETHERNET);
        // One after another: the capture's clock goes forwards.
        c.ns += (i as u64) * 20_000 * (2 * SETS as u64 + 10);
        c.open();
        c.one_at_a_time(SETS);
        c.close(true);
        packets += c.frames.len() as u64;
        let bytes = pcap(ETHERNET, 262_144, &c.frames);
        // The file's header once, then every connection's packets.
        out.write_all(if i == 0 { &bytes } else { &bytes[24..] })
            .unwrap();
    }
    out.flush().unwrap();
    packets
}

/// `observe --pcap FILE` (the table), its stderr lines on a channel.
fn start(file: &std::path::Path) -> (Child, Receiver<String>) {
    let mut child = support::pipescope("pipescope=warn")
        .args(["observe", "--pcap"])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pipescope runs");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            eprintln!("{line}");
            let _ = tx.send(line);
        }
    });
    // Waits until the reading has begun (the handlers are installed before it).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.starts_with("reading ") => return (child, rx),
            Ok(_) => {}
            Err(e) => panic!("observe --pcap did not say it is reading within 30 s: {e}"),
        }
    }
}

fn sigint(child: &Child) {
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

/// stdout and the exit code, within `limit`.
fn finish(child: Child, limit: Duration) -> (String, Option<i32>) {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => {
            let out = out.unwrap();
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                out.status.code(),
            )
        }
        Err(_) => {
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("observe --pcap did not end within {limit:?} of Ctrl-C")
        }
    }
}

/// The packet count in the report's label ("… after N packets" / "(pcap, …; N packets").
fn packets_read(label: &str) -> u64 {
    let after = label
        .split_once("after ")
        .unwrap_or_else(|| panic!("no packet count: {label}"))
        .1;
    after
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

#[test]
fn ctrl_c_while_reading_a_capture_prints_the_partial_report_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.pcap");
    let total = write_capture(&file);
    let (child, _notes) = start(&file);
    sigint(&child);
    let (stdout, code) = finish(child, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{stdout}");
    let label = stdout.lines().next().unwrap_or_default();
    assert!(
        label.starts_with("PARTIAL: reading was stopped (Ctrl-C) after "),
        "{label}"
    );
    let read = packets_read(label);
    assert!(read < total, "it read all {total} packets: {label}");
    // The report lists what was read: connections ended, and the one cut off mid-way.
    assert!(stdout.lines().count() > 1, "{stdout}");
}

#[test]
fn a_second_ctrl_c_ends_the_reading_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.pcap");
    let total = write_capture(&file);
    let (child, notes) = start(&file);
    sigint(&child);
    // The first was seen ("stopped reading"), then the second.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match notes.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.starts_with("pipescope: stopped reading") => break,
            Ok(_) => {}
            Err(e) => panic!("observe --pcap did not say it stopped reading within 30 s: {e}"),
        }
    }
    sigint(&child);
    let (stdout, code) = finish(child, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{stdout}");
    // Either ended before the report, or after the partial one: never the whole file's.
    if let Some(label) = stdout.lines().next() {
        assert!(label.starts_with("PARTIAL: "), "{label}");
        assert!(packets_read(label) < total, "{label}");
    }
}
