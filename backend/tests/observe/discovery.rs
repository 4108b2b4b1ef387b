//! `pipescope observe --pcap` with no `--redis-port`: Redis found in a real capture as the side
//! answering RESP replies to RESP commands, beside TCP traffic that is not Redis's: an HTTP
//! server, and a server that speaks first (as SSH does). tcpdump captures all three ports on
//! loopback; redis-cli talks to a real redis-server on a free port.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};

use shared::observe::{ObservedConnection, VerdictKind};

use crate::support;

/// A server on a free loopback port that answers one connection in its own protocol: an
/// HTTP response to a request, or a banner said first (then it reads what it is sent).
fn other_server(speaks_first: bool) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        if speaks_first {
            s.write_all(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n").unwrap();
            let mut line = String::new();
            BufReader::new(&s).read_line(&mut line).unwrap();
        } else {
            let mut line = String::new();
            BufReader::new(&s).read_line(&mut line).unwrap();
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
        }
    });
    (port, serve)
}

/// The other servers' clients: an HTTP GET, and a client that answers a banner.
fn talk(port: u16, speaks_first: bool) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    if speaks_first {
        let mut line = String::new();
        BufReader::new(&s).read_line(&mut line).unwrap();
        s.write_all(b"SSH-2.0-client\r\n").unwrap();
    } else {
        s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        let mut reply = Vec::new();
        s.read_to_end(&mut reply).unwrap();
    }
}

/// `observe --pcap FILE --json` with no port: the connections, and stderr.
fn observe(file: &std::path::Path) -> (Vec<ObservedConnection>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["observe", "--pcap"])
        .arg(file)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "observe --pcap failed: {stderr}");
    let conns = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not the JSON report ({e}): {stderr}"));
    (conns, stderr)
}

#[test]
fn redis_is_found_on_its_port_and_http_and_a_server_that_speaks_first_are_left_out() {
    const INCRS: usize = 50;
    let (redis, _) = support::redis();
    let (http, http_served) = other_server(false);
    let (banner, banner_served) = other_server(true);
    let filter = format!(
        "tcp port {} or tcp port {http} or tcp port {banner}",
        redis.port()
    );
    let Some(mut tcpdump) = support::tcpdump::Tcpdump::on(Command::new("tcpdump"), "lo", &filter)
    else {
        return;
    };
    talk(http, false);
    talk(banner, true);
    let mut cli = Command::new("redis-cli")
        .args(["-p", &redis.port().to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-cli (scripts/setup test installs redis-tools)");
    cli.stdin
        .take()
        .unwrap()
        .write_all("INCR found\n".repeat(INCRS).as_bytes())
        .unwrap();
    assert!(cli.wait().unwrap().success(), "redis-cli failed");
    let summary = tcpdump.stop();
    http_served.join().unwrap();
    banner_served.join().unwrap();

    let (conns, stderr) = observe(&tcpdump.file);
    let context = format!("tcpdump: {summary}; pipescope: {stderr}");
    assert!(
        stderr.contains(&format!("Redis found on port {}:", redis.port())),
        "{context}"
    );
    assert_eq!(conns.len(), 1, "redis-cli's connection alone; {context}");
    assert_eq!(
        support::observe::calls_in(&conns, "INCR"),
        INCRS as u64,
        "{context}"
    );
    // Right or undetermined: on loopback the wire may not show that redis-cli waited.
    assert!(
        conns[0].verdict.allows(VerdictKind::OneAtATime),
        "{:?}; {context}",
        conns[0].verdict
    );
}

#[test]
fn a_capture_with_no_redis_in_it_says_so_and_how_to_name_a_port() {
    let (http, served) = other_server(false);
    let Some(mut tcpdump) =
        support::tcpdump::Tcpdump::on(Command::new("tcpdump"), "lo", &format!("tcp port {http}"))
    else {
        return;
    };
    talk(http, false);
    let summary = tcpdump.stop();
    served.join().unwrap();
    let (conns, stderr) = observe(&tcpdump.file);
    assert!(conns.is_empty(), "tcpdump: {summary}; {conns:?}");
    assert!(
        stderr.contains("no Redis connection found in")
            && stderr.contains("name its port with --redis-port"),
        "{stderr}"
    );
}
