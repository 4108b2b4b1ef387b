//! An observation as one HTML file: `observe --pcap --html` of a real capture (tcpdump on
//! loopback while redis-cli sends INCRs one at a time and SETs by `--pipe`) opens from disk on
//! the observe view, in Chromium with every request blocked: the CLI's connections, verdicts and
//! commands, nothing requested or thrown. It opens on its point: the costliest connection (the
//! one whose round trips pipelining would win back the most time of: the INCRs) alone ticked,
//! its timeline, time split and what-if drawn; the others drawn once ticked. With `--redact`, no client address is left
//! in the report, the file or the data inside it. The same through the proxy
//! (`observe --redact --html`), from two connections of our own.
//! Screenshots: target/screenshots/html-file-opens.png (as the capture's file opens),
//! html-file-observed.png, html-file-proxy.png.

use crate::support;

use std::time::Duration;

use fantoccini::Client;
use shared::observe::ObservedConnection;

use super::html_file::{nothing_requested_or_thrown, open_blocked, unpacked};
use support::browser::{shown, text_of, tick, until_js, until_state};

/// The connection an observation's file (and a capture the page reads) opens on, by the page's
/// definition (`ObserveState::costliest`): the most waiting its what-if would win back (measured
/// waits less the fewest-waits projection), those with none after, by their time waiting on
/// replies; then the longer wall, then the lower id.
pub(crate) fn costliest(conns: &[ObservedConnection]) -> &ObservedConnection {
    let cost = |c: &ObservedConnection| {
        let win = shared::observe::what_if(c)
            .map(|w| w.waits_us.first().unwrap() - w.waits_us.last().unwrap());
        (
            win.is_some(),
            win.unwrap_or(0.0),
            c.times.waiting_us,
            c.times.wall_us,
        )
    };
    conns
        .iter()
        .fold(None::<&ObservedConnection>, |best, c| match best {
            Some(b) if cost(b) >= cost(c) => Some(b),
            _ => Some(c),
        })
        .expect("connections")
}

/// Waits until the page shows what it opens on, untouched: `conns`' costliest connection alone
/// ticked and drawn on the timeline, its time split, and its what-if drawn when it has one
/// (it waits on round trips); returns its id.
pub(crate) async fn opens_on_the_costliest(c: &Client, conns: &[ObservedConnection]) -> u64 {
    let costliest = costliest(conns);
    let id = costliest.id;
    let ticked: Vec<u64> = until_js(
        c,
        "return [...document.querySelectorAll('#observed-table input[type=checkbox]')]
           .filter(b => b.checked).map(b => Number(b.id.replace('choose-', '')))",
        Duration::from_secs(30),
        "a connection ticked as the page opens",
        |t: &Vec<u64>| !t.is_empty(),
    )
    .await;
    assert_eq!(ticked, [id], "opens on the costliest: {costliest:?}");
    until_state(
        c,
        "the costliest connection drawn",
        Duration::from_secs(30),
        |s| {
            s["runs"].as_array().is_some_and(|runs| {
                runs.len() == 1
                    && runs[0]["run"].as_u64() == Some(id)
                    && runs[0]["arrows_drawn"].as_f64() > Some(0.0)
            })
        },
    )
    .await;
    let split: u64 = until_js(
        c,
        &format!(
            "return document.querySelectorAll('#figures-{id} table.time-split:not(.what-if-lanes) tr').length"
        ),
        Duration::from_secs(30),
        "its time split",
        |rows: &u64| *rows > 0,
    )
    .await;
    assert!(split >= 2, "its time split: {split} rows");
    let what_if = shared::observe::what_if(costliest);
    assert!(
        what_if.is_some(),
        "the costliest waits on round trips: {costliest:?}"
    );
    let lanes: u64 = until_js(
        c,
        &format!("return document.querySelectorAll('#what-if-{id} svg.what-if-svg g.lane').length"),
        Duration::from_secs(30),
        "its what-if drawn",
        |lanes: &u64| *lanes > 0,
    )
    .await;
    assert_eq!(lanes as usize, what_if.unwrap().lanes.len());
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn a_capture_observed_as_one_file_opens_on_its_verdicts_from_disk() {
    // INCRs one at a time, then SETs by `redis-cli --pipe`, captured by tcpdump on loopback.
    let Some(demo) = support::capture_demo::Demo::take(50, 2_000) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("observed.html");
    let mut observe = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"));
    observe
        .args(["observe", "--pcap"])
        .arg(&demo.capture.file)
        .args(["--redis-port", &demo.port.to_string(), "--html"])
        .arg(&file);
    let out = support::clients::output_within(observe, "pipescope observe --pcap --html");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("wrote {} (", file.display())),
        "{stderr}"
    );

    // The file opens on the observe view: the CLI's connections, each with its verdict, the
    // costliest shown; each other ticked is drawn from the requests inside the file too.
    let browser = open_blocked(&format!("file://{}", file.display())).await;
    let c = &browser.client;
    #[derive(Debug, serde::Deserialize)]
    struct Row {
        id: u64,
        verdict: String,
        headline: String,
        commands: u64,
    }
    let rows: Vec<Row> = until_js(
        c,
        "return [...document.querySelectorAll('#observed-table tr.observed-row')].map(r => ({
           id: Number(r.id.replace('observed-', '')), verdict: r.dataset.verdict,
           headline: r.querySelector('.verdict-word').textContent,
           commands: Number(r.dataset.commands) }))",
        Duration::from_secs(30),
        "the capture's connections in the file's table",
        |rows: &Vec<Row>| rows.len() == demo.cli.len(),
    )
    .await;
    for (row, cli) in rows.iter().zip(&demo.cli) {
        assert_eq!(row.id, cli.id, "{rows:?}");
        assert_eq!(row.commands, cli.counts.commands, "{row:?}");
        assert_eq!(row.verdict, format!("{:?}", cli.verdict.kind), "{row:?}");
        assert_eq!(row.headline, cli.verdict.kind.words(), "{row:?}");
    }
    let opened = opens_on_the_costliest(c, &demo.cli).await;
    assert_eq!(
        demo.cli
            .iter()
            .find(|k| k.id == opened)
            .unwrap()
            .top_commands[0]
            .0,
        "INCR",
        "the INCRs, one at a time, waited longest"
    );
    c.set_window_size(1400, 2400).await.unwrap();
    c.execute("window.scrollTo(0, 0)", vec![]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let shot = browser.screenshot("html-file-opens").await;
    println!("screenshot {}", shot.display());
    for row in &rows {
        tick(c, &format!("#choose-{}", row.id)).await;
    }
    until_state(c, "the connections drawn", Duration::from_secs(30), |s| {
        s["runs"].as_array().is_some_and(|runs| {
            runs.len() == rows.len() && runs.iter().all(|r| r["arrows_drawn"].as_f64() > Some(0.0))
        })
    })
    .await;
    let line: String = c
        .execute(
            "return document.querySelector('#file-line').textContent",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        line.contains("observed.html") && line.contains(&format!("{} connections", rows.len())),
        "{line}"
    );
    assert!(
        line.contains(&demo.cli_label),
        "the line names what the figures are: {line}"
    );
    nothing_requested_or_thrown(c).await;
    let shot = browser.screenshot("html-file-observed").await;
    println!("screenshot {}", shot.display());
    drop(browser);

    // --redact: no client address in the file or the data inside, each a number instead.
    let redacted = dir.path().join("redacted.html");
    let mut observe = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"));
    observe
        .args(["observe", "--pcap"])
        .arg(&demo.capture.file)
        .args(["--redis-port", &demo.port.to_string(), "--redact", "--html"])
        .arg(&redacted);
    let out = support::clients::output_within(observe, "pipescope observe --pcap --redact --html");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8_lossy(&out.stdout);
    let html = std::fs::read_to_string(&redacted).unwrap();
    let data = String::from_utf8(unpacked(&html, "pipescope-data")).unwrap();
    for cli in &demo.cli {
        assert!(
            cli.client.contains(':'),
            "an address to look for: {}",
            cli.client
        );
        for (what, text) in [
            ("the report", report.as_ref()),
            ("the file", html.as_str()),
            ("the data inside", data.as_str()),
        ] {
            assert!(!text.contains(&cli.client), "{what} holds {}", cli.client);
        }
        assert!(data.contains(&format!("\"client {}\"", cli.id)), "{data}");
    }
    let browser = open_blocked(&format!("file://{}", redacted.display())).await;
    let shown: String = until_js(
        &browser.client,
        "const t = document.querySelector('#observed-table tbody'); return t ? t.textContent : ''",
        Duration::from_secs(30),
        "the redacted connections in the table",
        |t: &String| t.contains("client 1"),
    )
    .await;
    assert!(!shown.contains("127.0.0.1"), "{shown}");
    nothing_requested_or_thrown(&browser.client).await;
}

/// `SET k<i> v` as RESP.
fn set(i: usize) -> Vec<u8> {
    let key = format!("html-file-k{i}");
    format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$1\r\nv\r\n", key.len()).into_bytes()
}

/// Reads `n` `+OK` replies from `s`.
fn read_oks(s: &mut std::net::TcpStream, n: usize) {
    use std::io::Read;
    let want = n * 5;
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    while got.len() < want {
        let k = s
            .read(&mut buf)
            .expect("replies through the proxy within 10 s");
        assert!(k > 0, "the proxy closed the connection");
        got.extend_from_slice(&buf[..k]);
    }
    assert_eq!(got, b"+OK\r\n".repeat(n));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_observation_through_the_proxy_as_one_redacted_file_opens_from_disk() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("proxy.html");
    let (redis, _target) = support::redis();
    let path = file.display().to_string();
    let mut observe = support::observe::Observe::start(
        &redis.url(),
        &["--json", "--no-equivalent", "--redact", "--html", &path],
    );
    // One connection waits for each reply; the other writes all its commands at once.
    let mut one = std::net::TcpStream::connect(&observe.addr).unwrap();
    for i in 0..50 {
        one.write_all(&set(i)).unwrap();
        read_oks(&mut one, 1);
    }
    let mut all = std::net::TcpStream::connect(&observe.addr).unwrap();
    all.write_all(&(0..200).flat_map(set).collect::<Vec<u8>>())
        .unwrap();
    read_oks(&mut all, 200);
    let addresses = [one.local_addr().unwrap(), all.local_addr().unwrap()].map(|a| a.to_string());
    drop((one, all));
    let report = observe.report(Duration::from_secs(30));
    assert_eq!(report.len(), 2, "{report:?}");
    assert!(
        report.iter().all(|c| c.client.starts_with("client ")),
        "{report:?}"
    );

    let html = std::fs::read_to_string(&file).unwrap();
    let data = String::from_utf8(unpacked(&html, "pipescope-data")).unwrap();
    for a in &addresses {
        assert!(
            !html.contains(a.as_str()) && !data.contains(a.as_str()),
            "{a} is in the file"
        );
    }
    let browser = open_blocked(&format!("file://{path}")).await;
    let c = &browser.client;
    let rows: Vec<(u64, String, u64)> = until_js(
        c,
        "return [...document.querySelectorAll('#observed-table tr.observed-row')].map(r =>
           [Number(r.id.replace('observed-', '')), r.dataset.verdict, Number(r.dataset.commands)])",
        Duration::from_secs(30),
        "the proxy's connections in the file's table",
        |rows: &Vec<(u64, String, u64)>| rows.len() == report.len(),
    )
    .await;
    for ((id, verdict, commands), cli) in rows.iter().zip(&report) {
        assert_eq!(*id, cli.id);
        assert_eq!(*verdict, format!("{:?}", cli.verdict.kind));
        assert_eq!(*commands, cli.counts.commands);
    }
    // It opens on the connection that waited for each reply.
    let opened = opens_on_the_costliest(c, &report).await;
    assert_eq!(
        report
            .iter()
            .find(|k| k.id == opened)
            .unwrap()
            .counts
            .commands,
        50
    );
    for (id, ..) in &rows {
        tick(c, &format!("#choose-{id}")).await;
    }
    until_state(
        c,
        "the connections drawn from the file",
        Duration::from_secs(30),
        |s| {
            s["runs"].as_array().is_some_and(|runs| {
                runs.len() == rows.len()
                    && runs.iter().all(|r| r["arrows_drawn"].as_f64() > Some(0.0))
            })
        },
    )
    .await;
    let table: String = text_of(c, "#observed-table")
        .await
        .expect("the file's table");
    assert!(
        table.contains("client 1") && !table.contains("127.0.0.1"),
        "{table}"
    );
    assert!(
        !shown(c, "#timeline-refresh").await,
        "a file has no proxy to ask for a newer picture"
    );
    nothing_requested_or_thrown(c).await;
    let shot = browser.screenshot("html-file-proxy").await;
    println!("screenshot {}", shot.display());
}
