//! Recordings, end to end: `pipescope bench --record` against a real redis-server writes the
//! runs with their timelines; `pipescope replay` serves them to the real page in headless
//! Chromium with no Redis at all (none started, the one recorded stopped); a broken or newer
//! file is refused with its reason before listening; and the page opens a recording by its
//! file input and by a drop, refuses a bad one keeping what it showed, and saves what it shows.
//! Screenshots: target/screenshots/replay.png, replay-timeline.png, recording-opened.png,
//! recording-bad-file.png, replay-tour-handout.png, replay-tour-step3.png.

use crate::support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use shared::{ClientMsg, Recording, ServerMsg};
use support::browser::{Browser, click, until_js, until_state};

/// `pipescope bench --record` of a comparison of `count` SETs against `url`; the recording.
fn record(url: &str, path: &std::path::Path, count: u64) -> Recording {
    let out = support::pipescope("pipescope=info")
        .args(["bench", "--mode", "compare", "--batch", "50", "--json"])
        .args([
            "--count",
            &count.to_string(),
            "--redis-url",
            url,
            "--record",
        ])
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench --record failed: {stderr}");
    assert!(stderr.contains("recorded 2 runs to"), "{stderr}");
    Recording::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Kills `child` when dropped (a failing test must not leave a server behind).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bench_records_and_replay_serves_it_with_no_redis() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("talk.pipescope.json");
    let (redis, target) = support::redis();
    let url = redis.url();
    let recording = record(&url, &file, 300);
    assert_eq!(recording.runs.len(), 2);
    let [seq, pipe] = [&recording.runs[0], &recording.runs[1]];
    assert_eq!(seq.summary.spec.mode, shared::Mode::Sequential);
    assert_eq!(pipe.summary.spec.mode, shared::Mode::pipelined(50));
    for r in &recording.runs {
        assert_eq!(r.summary.done, 300);
        assert!(!r.timeline.first.is_empty(), "a timeline was recorded");
    }
    assert_eq!(seq.summary.round_trips, 300);
    assert_eq!(pipe.summary.round_trips, 6);
    assert_eq!(recording.target, target.redacted());
    // The Redis it measured is gone: the replay takes no Redis, and starts none.
    drop(redis);

    let mut child = support::pipescope("pipescope=info")
        .args(["replay", "--port", "0"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let child = Killed(child);
    let page = support::stdout_line(
        stdout,
        Duration::from_secs(30),
        "pipescope replay prints the URL to open",
        |l| l.strip_prefix("open ").map(str::to_string),
    );
    assert!(support::children_named(child.0.id(), "redis-server").is_empty());

    // The websocket: its runs in Welcome, marked as a replay; a start is refused with why.
    let ws_url = format!("{}ws", page.replacen("http://", "ws://", 1));
    let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
    let next = async |ws: &mut tokio_tungstenite::WebSocketStream<_>| loop {
        let frame = support::within(Duration::from_secs(10), "a frame", ws.next())
            .await
            .unwrap()
            .unwrap();
        if let tokio_tungstenite::tungstenite::Message::Text(t) = frame {
            return ServerMsg::from_json(&t).unwrap();
        }
    };
    let ServerMsg::Welcome {
        recent,
        replay,
        can_control,
        busy,
        ..
    } = next(&mut ws).await
    else {
        panic!("Welcome first")
    };
    assert_eq!(recent, recording.runs);
    assert_eq!(replay.unwrap().file, "talk.pipescope.json");
    assert!(!can_control && !busy);
    let start = ClientMsg::Start {
        runs: shared::RunSpec::comparison(100, 10),
    };
    ws.send(start.to_json().into()).await.unwrap();
    let ServerMsg::Rejected { reason } = next(&mut ws).await else {
        panic!("a start is refused")
    };
    assert!(
        reason.contains("recording") && reason.contains("no Redis"),
        "{reason}"
    );

    // The page: the banner, the runs' timelines drawn, the RTT diagram, nothing to run.
    let browser = Browser::open(&page).await;
    let c = &browser.client;
    let banner: String = until_js(
        c,
        "const b = document.querySelector('#recording-banner'); return b ? b.textContent : ''",
        Duration::from_secs(10),
        "the recording banner",
        |t: &String| !t.is_empty(),
    )
    .await;
    assert!(banner.contains("talk.pipescope.json"), "{banner}");
    assert!(banner.contains(&recording.saved_at), "{banner}");
    assert!(banner.contains("measured when it was recorded"), "{banner}");
    assert!(banner.contains(&target.redacted()), "{banner}");
    let state = until_state(
        c,
        "both recorded runs drawn",
        Duration::from_secs(20),
        |s| s["runs"].as_array().is_some_and(|r| r.len() == 2),
    )
    .await;
    let spans: Vec<u64> = state["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["spans"].as_u64().unwrap_or(0))
        .collect();
    assert!(spans.iter().all(|&n| n > 0), "{state}");
    let rtt: usize = until_js(
        c,
        "return document.querySelectorAll('#rtt g.part').length",
        Duration::from_secs(10),
        "the RTT diagram from the recording",
        |n: &usize| *n > 0,
    )
    .await;
    assert!(rtt > 0);
    let rows: usize = c
        .execute(
            "return document.querySelectorAll('#results tbody tr').length",
            vec![],
        )
        .await
        .unwrap()
        .as_u64()
        .unwrap() as usize;
    assert!(
        rows >= 2,
        "the results table shows the recorded runs: {rows}"
    );
    assert!(
        c.find(fantoccini::Locator::Css("#replay-only"))
            .await
            .is_ok(),
        "the controls say why nothing can run"
    );
    let disabled: bool = c
        .execute("return document.querySelector('#compare').disabled", vec![])
        .await
        .unwrap()
        .as_bool()
        .unwrap();
    assert!(disabled, "Compare cannot run a replay");
    // The form shows what was recorded (300 commands, batch 50), not the defaults.
    let fields: Vec<String> = until_js(
        c,
        "return ['#count', '#mode', '#batch'].map((s) => document.querySelector(s).value)",
        Duration::from_secs(10),
        "the form showing the recording's values",
        |f: &Vec<String>| f[0] == "300",
    )
    .await;
    assert_eq!(fields, ["300", "pipelined", "50"]);
    let shot = browser.screenshot("replay").await;
    eprintln!("screenshot: {}", shot.display());
    let header: String = c
        .execute(
            "return document.querySelector('#target').textContent",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(header.starts_with("recorded at "), "{header}");
    c.execute(
        "document.querySelector('#rtt').scrollIntoView({ block: 'end' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("replay-timeline").await;
    eprintln!("screenshot: {}", shot.display());
    drop(child);
}

#[test]
fn replay_refuses_a_broken_or_newer_file_before_listening() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "slides.json",
            "not json at all",
            "not a pipescope recording: the file is not JSON",
        ),
        (
            "other.json",
            r#"{"format":"har","version":1}"#,
            r#"not a pipescope recording: it has no "format": "pipescope-recording" field (found "format": "har")"#,
        ),
        (
            "future.pipescope.json",
            r#"{"format":"pipescope-recording","version":9,"everything":"new"}"#,
            "this recording was made by a newer pipescope (recording version 9; this pipescope reads up to version 1): open it with a newer pipescope",
        ),
        (
            "cut.pipescope.json",
            r#"{"format":"pipescope-recording","version":1,"saved_at":"x","server_version":"0.1.0","redis_version":"7","target":"redis://h:1/0","runs":[{"run":1}]}"#,
            "a broken pipescope recording (version 1): missing field `summary` at line 1 column",
        ),
    ];
    for (name, text, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let mut child = support::pipescope("pipescope=info")
            .args(["replay", "--port", "0"])
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "{name}: replay kept running");
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(
            stderr.contains(name),
            "{name}: the message names the file: {stderr}"
        );
        assert!(
            !stdout.contains("open http"),
            "{name}: listened anyway: {stdout}"
        );
    }
    let missing = support::pipescope("pipescope=info")
        .args(["replay", "--port", "0", "/nonexistent/talk.pipescope.json"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("cannot read /nonexistent/talk.pipescope.json")
    );
}

/// Opens `text` as the file `name` through the page's file input (a `DataTransfer` built in
/// the page sets its files; then `change`), or drops it on the page.
async fn give_file(c: &fantoccini::Client, name: &str, text: &str, by_drop: bool) {
    c.execute(
        "const [name, text, byDrop] = arguments;
         const dt = new DataTransfer();
         dt.items.add(new File([text], name, { type: 'application/json' }));
         if (byDrop) {
           document.querySelector('main').dispatchEvent(
             new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
         } else {
           const input = document.querySelector('#open-recording');
           input.files = dt.files;
           input.dispatchEvent(new Event('change', { bubbles: true }));
         }",
        vec![name.into(), text.into(), by_drop.into()],
    )
    .await
    .unwrap();
}

async fn banner_file(c: &fantoccini::Client, expect: &str) {
    until_js(
        c,
        "const f = document.querySelector('#recording-file'); return f ? f.textContent : ''",
        Duration::from_secs(10),
        "the banner names the opened file",
        |t: &String| t == expect,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_opens_a_recording_by_input_and_drop_keeps_its_runs_on_a_bad_file_and_saves_it() {
    let dir = tempfile::tempdir().unwrap();
    let (redis, target) = support::redis();
    let recording = record(&redis.url(), &dir.path().join("r.pipescope.json"), 200);
    let text = recording.to_json();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&server.http_url()).await;
    // The bad files are refused by the server (422), which Chromium logs.
    browser.expect_console("status of 422");
    let c = &browser.client;

    give_file(c, "talk.pipescope.json", &text, false).await;
    banner_file(c, "talk.pipescope.json").await;
    let state = until_state(c, "the opened runs drawn", Duration::from_secs(20), |s| {
        s["runs"].as_array().is_some_and(|r| r.len() == 2)
    })
    .await;
    let ids: Vec<u64> = state["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        recording.runs.iter().map(|r| r.run).collect::<Vec<_>>()
    );
    until_js(
        c,
        "return document.querySelectorAll('#rtt g.part').length",
        Duration::from_secs(10),
        "the RTT diagram from the opened recording",
        |n: &usize| *n > 0,
    )
    .await;
    let shot = browser.screenshot("recording-opened").await;
    eprintln!("screenshot: {}", shot.display());

    // A newer file, dropped: its message in the page, the recording still shown.
    let newer = text.replacen(r#""version":1"#, r#""version":2"#, 1);
    give_file(c, "newer.pipescope.json", &newer, true).await;
    let error: String = until_js(
        c,
        "const e = document.querySelector('#error'); return e ? e.textContent : ''",
        Duration::from_secs(10),
        "the newer file's message",
        |t: &String| !t.is_empty(),
    )
    .await;
    assert_eq!(
        error,
        "Could not open newer.pipescope.json: this recording was made by a newer pipescope (recording version 2; this pipescope reads up to version 1): open it with a newer pipescope. The page still shows what it showed before."
    );
    banner_file(c, "talk.pipescope.json").await;
    let runs = support::browser::page_state(c).await["runs"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(runs, 2, "nothing lost");

    // Not JSON, through the input: the same.
    give_file(c, "notes.txt", "my talk notes", false).await;
    until_js(
        c,
        "const e = document.querySelector('#error'); return e ? e.textContent : ''",
        Duration::from_secs(10),
        "the bad file's message",
        |t: &String| {
            t.starts_with(
                "Could not open notes.txt: not a pipescope recording: the file is not JSON",
            )
        },
    )
    .await;
    banner_file(c, "talk.pipescope.json").await;
    let shot = browser.screenshot("recording-bad-file").await;
    eprintln!("screenshot: {}", shot.display());

    // A good file dropped replaces it.
    give_file(c, "dropped.pipescope.json", &text, true).await;
    banner_file(c, "dropped.pipescope.json").await;

    // Save session writes what the page shows: caught at the Blob the download is made of.
    c.execute(
        "window.__saved = null;
         const make = URL.createObjectURL;
         URL.createObjectURL = b => { b.text().then(t => window.__saved = t); return make(b); };",
        vec![],
    )
    .await
    .unwrap();
    click(c, "#save-session").await;
    let saved: String = until_js(
        c,
        "return window.__saved || ''",
        Duration::from_secs(10),
        "the saved recording",
        |t: &String| !t.is_empty(),
    )
    .await;
    let saved = Recording::from_json(&saved).unwrap();
    assert_eq!(saved.runs, recording.runs);
    assert_eq!(saved.redis_version, recording.redis_version);
    assert_eq!(saved.target, recording.target);
    drop(browser);
    server.shutdown().await.unwrap();
}

/// `window.__pipescope_tour` once `check` holds (at most `secs`).
async fn until_tour(
    c: &fantoccini::Client,
    what: &str,
    secs: u64,
    check: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    until_js(
        c,
        "return window.__pipescope_tour || null",
        Duration::from_secs(secs),
        what,
        |s: &serde_json::Value| check(s),
    )
    .await
}

async fn text_of(c: &fantoccini::Client, selector: &str) -> String {
    c.find(fantoccini::Locator::Css(selector))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tour_saved_from_its_handout_replays_its_steps_and_handout_with_no_redis() {
    let dir = tempfile::tempdir().unwrap();
    let (redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let browser = Browser::open(&format!("{}tour/2", server.http_url())).await;
    let c = &browser.client;
    for step in [2, 3] {
        support::browser::wait_enabled(c, "#tour-run", Duration::from_secs(10)).await;
        click(c, "#tour-run").await;
        until_tour(c, &format!("step {step}'s run"), 60, |s| {
            s["step"] == step && s["state"] == "done"
        })
        .await;
        click(c, "#tour-next").await;
    }
    for _ in 0..6 {
        if until_tour(c, "a page", 10, |s| !s.is_null()).await["page"] == "handout" {
            break;
        }
        click(c, "#tour-next").await;
    }
    until_tour(c, "the handout", 10, |s| s["page"] == "handout").await;
    let live = text_of(c, "#handout-md").await;
    assert!(
        live.contains("## Step 2") && live.contains("## Step 3"),
        "{live}"
    );
    c.execute(
        "window.__saved = null;
         const make = URL.createObjectURL;
         URL.createObjectURL = b => { b.text().then(t => window.__saved = t); return make(b); };",
        vec![],
    )
    .await
    .unwrap();
    click(c, "#tour-save-session").await;
    let saved: String = until_js(
        c,
        "return window.__saved || ''",
        Duration::from_secs(10),
        "the saved tour",
        |t: &String| !t.is_empty(),
    )
    .await;
    let recording = Recording::from_json(&saved).unwrap();
    let steps: Vec<(usize, Vec<String>)> = recording
        .tour
        .iter()
        .map(|t| (t.step, t.roles.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            (1, vec!["seq".to_string()]),
            (2, vec!["seq".to_string(), "pipe".to_string()])
        ]
    );
    assert_eq!(recording.runs.len(), 3);
    assert!(recording.runs.iter().all(|r| r.summary.done == 10));
    drop(browser);
    server.shutdown().await.unwrap();
    drop(redis);

    let file = dir.path().join("tour.pipescope.json");
    std::fs::write(&file, &saved).unwrap();
    let mut child = support::pipescope("pipescope=info")
        .args(["replay", "--port", "0"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let child = Killed(child);
    let page = support::stdout_line(
        stdout,
        Duration::from_secs(30),
        "pipescope replay prints the URL to open",
        |l| l.strip_prefix("open ").map(str::to_string),
    );
    // A tour's recording opens where it was recorded: on the tour.
    let page = page
        .strip_suffix("tour")
        .unwrap_or_else(|| panic!("the link opens the tour: {page}"))
        .to_string();
    assert!(support::children_named(child.0.id(), "redis-server").is_empty());

    // The handout, as it was: the same Markdown from the recording.
    let browser = Browser::open(&format!("{page}tour/handout")).await;
    let c = &browser.client;
    until_js(
        c,
        "const m = document.querySelector('#handout-md'); return m ? m.textContent : ''",
        Duration::from_secs(10),
        "the handout from the recording",
        |t: &String| t.trim() == live.trim(),
    )
    .await;
    let shot = browser.screenshot("replay-tour-handout").await;
    eprintln!("screenshot: {}", shot.display());
    drop(browser);

    // Step 3 from the recording: measured, its two runs on the stage.
    let browser = Browser::open(&format!("{page}tour/3")).await;
    let c = &browser.client;
    until_tour(c, "step 3 measured, from the recording", 10, |s| {
        s["step"] == 3 && s["state"] == "done"
    })
    .await;
    until_state(c, "step 3's runs drawn", Duration::from_secs(10), |s| {
        s["runs"].as_array().is_some_and(|r| r.len() == 2)
    })
    .await;
    let shot = browser.screenshot("replay-tour-step3").await;
    eprintln!("screenshot: {}", shot.display());
    drop(child);
}
