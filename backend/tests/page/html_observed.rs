//! An observation as one HTML file: `observe --pcap --html` of a real capture (tcpdump on
//! loopback while redis-cli sends INCRs one at a time and SETs by `--pipe`) opens from disk on
//! the observe view, in Chromium with every request blocked: the CLI's connections, verdicts and
//! commands, each drawn when chosen, nothing requested or thrown. With `--redact`, no client
//! address is left in the report, the file or the data inside it. The same through the proxy
//! (`observe --redact --html`), from two connections of our own.
//! Screenshots: target/screenshots/html-file-observed.png, html-file-proxy.png.

use crate::support;

use std::time::Duration;

use super::html_file::{nothing_requested_or_thrown, open_blocked, unpacked};
use support::browser::{click, shown, text_of, until_js, until_state};

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

    // The file opens on the observe view: the CLI's connections, each with its verdict, and
    // chosen, each drawn from the requests inside the file.
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
    for row in &rows {
        click(c, &format!("#choose-{}", row.id)).await;
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
    for (id, ..) in &rows {
        click(c, &format!("#choose-{id}")).await;
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
