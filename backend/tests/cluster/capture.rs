//! A cluster observed from a capture: `observe --cluster` is refused (its proxy would see one
//! master while MOVED sends the client around it), and a tcpdump capture of every master's
//! port, read with a --redis-port per master, is one application's connections, each named
//! with its master, whose SETs are what each master counted (INFO commandstats: calls, and
//! the calls it rejected with MOVED).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pipescope::cluster::LocalCluster;
use shared::observe::ObservedConnection;

use crate::support;
use support::tcpdump::Tcpdump;

const KEYS: usize = 60;

/// The SETs master `port` was sent: executed, and refused with a redirection.
fn sets_sent(port: u16) -> u64 {
    let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .unwrap()
        .get_connection()
        .unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut con)
        .unwrap();
    let Some(fields) = info
        .lines()
        .find_map(|l| l.trim().strip_prefix("cmdstat_set:"))
    else {
        return 0;
    };
    let field = |name: &str| -> u64 {
        fields
            .split(',')
            .find_map(|f| f.strip_prefix(name)?.parse().ok())
            .unwrap_or(0)
    };
    field("calls=") + field("rejected_calls=")
}

#[test]
fn a_capture_of_every_master_is_one_applications_connections_per_master() {
    let cluster = LocalCluster::start(3).expect("a local cluster");
    let ports = cluster.ports();
    let filter = ports
        .iter()
        .map(|p| format!("tcp port {p}"))
        .collect::<Vec<_>>()
        .join(" or ");
    let Some(mut tcpdump) = Tcpdump::on(Command::new("tcpdump"), "lo", &filter) else {
        return;
    };
    let before: Vec<u64> = ports.iter().map(|&p| sets_sent(p)).collect();

    // redis-cli -c, through the first master: MOVED sends it to the others.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("sets");
    let lines: String = (0..KEYS).map(|i| format!("SET key:{i} v{i}\n")).collect();
    std::fs::write(&input, lines).unwrap();
    let mut cli = Command::new("redis-cli")
        .args(["-c", "-p", &ports[0].to_string()])
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-cli (scripts/setup test installs redis-tools)");
    let deadline = Instant::now() + Duration::from_secs(60);
    while cli.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "redis-cli -c did not end within 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let sent: Vec<u64> = ports
        .iter()
        .zip(&before)
        .map(|(&p, b)| sets_sent(p) - b)
        .collect();
    assert!(
        sent.iter().all(|&n| n > 0),
        "every master was sent SETs: {sent:?}"
    );
    let summary = tcpdump.stop();

    let mut observe = Command::new(env!("CARGO_BIN_EXE_pipescope"));
    observe
        .args(["observe", "--pcap"])
        .arg(&tcpdump.file)
        .arg("--json");
    for p in &ports {
        observe.args(["--redis-port", &p.to_string()]);
    }
    let out = support::clients::output_within(observe, "pipescope observe --pcap");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tcpdump: {summary}; {stderr}");
    let conns: Vec<ObservedConnection> = serde_json::from_slice(&out.stdout).unwrap();

    // Per master, the SETs of the connections named with it are the SETs it was sent.
    for (port, sent) in ports.iter().zip(&sent) {
        let master = format!("127.0.0.1:{port}");
        let to_it: Vec<&ObservedConnection> = conns
            .iter()
            .filter(|c| c.client.ends_with(&format!(" → {master}")))
            .collect();
        let seen: u64 = to_it
            .iter()
            .map(|c| support::observe::calls(c, "SET"))
            .sum();
        assert_eq!(seen, *sent, "{master}: tcpdump {summary}; {conns:#?}");
        let n = match to_it.len() {
            1 => "1 connection".to_string(),
            n => format!("{n} connections"),
        };
        assert!(stderr.contains(&format!("{master}: {n}, ")), "{stderr}");
    }
    assert!(
        stderr.contains(
            "connections to 3 Redis servers (a cluster's masters?), read as one application's: "
        ),
        "{stderr}"
    );
    drop(cluster);
}
