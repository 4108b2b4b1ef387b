//! One HTML file, opened from disk. `bench --record --html` against a real redis-server (one
//! with a password) writes a recording and the page with the runs inside; `replay REC --html`
//! writes the same from the recording, and the replayed page's "Download as one HTML file"
//! too. Headless Chromium opens the file from `file://` with
//! every http(s) and websocket request blocked, and reads what a person sees: the same headline
//! figures, results and RTT diagram as `pipescope replay` of the same recording serves, the
//! timeline drawn (its canvas not blank) and playing, no run controls, and a line saying what
//! the file is. Any request the page makes, any console error and any Content-Security-Policy
//! violation fails it. The password, the engine's keys and its values appear nowhere in the
//! file, nor in the data packed inside it. A tour's recording opens its handout (the chart
//! drawn as a PNG) and its runs again. Firefox ESR opens one too. (An observation as one file:
//! `html_observed`.)
//! Screenshots: target/screenshots/html-file.png, html-file-playing.png,
//! html-file-tour-handout.png, html-file-firefox.png.

use crate::support;

use std::process::{Child, Stdio};
use std::time::Duration;

use shared::{Recording, ServerMsg};
use support::browser::{Browser, cdp, click, console_errors, until_js, until_state};

/// Installed before the page's own scripts: what it requested, threw or was refused.
const PROBE: &str = "window.__probe = { errors: [], violations: [] };
const said = console.error;
console.error = (...a) => { window.__probe.errors.push('console.error: ' + a.join(' ')); said.apply(console, a); };
addEventListener('error', e => window.__probe.errors.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href)))), true);
addEventListener('unhandledrejection', e => window.__probe.errors.push('rejection: ' + e.reason));
document.addEventListener('securitypolicyviolation', e => window.__probe.violations.push(e.violatedDirective + ' ' + e.blockedURI));";

/// Kills `child` when dropped (a failing test must not leave a server behind).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a person reads off the page: the headline, the results table, the RTT diagram.
#[derive(Debug, PartialEq, serde::Deserialize)]
struct Seen {
    speedup: String,
    results: Vec<String>,
    rtt: Vec<Option<String>>,
}

const SEEN: &str = "const s = document.querySelector('#speedup');
const rtt = document.querySelector('#rtt');
return {
  speedup: s ? s.textContent : '',
  results: [...document.querySelectorAll('#results tbody tr')].map(r => r.textContent),
  rtt: rtt ? ['data-rtt-us', 'data-p50-us'].map(a => rtt.getAttribute(a)) : [],
};";

async fn seen(c: &fantoccini::Client) -> Seen {
    until_js(
        c,
        SEEN,
        Duration::from_secs(20),
        "the headline, the results and the RTT diagram",
        |s: &Seen| {
            !s.speedup.is_empty() && s.results.len() >= 2 && s.rtt.iter().all(Option::is_some)
        },
    )
    .await
}

/// A fresh Chromium at `url` with every http(s), websocket and ftp request blocked and the
/// probe installed before the page's own scripts.
pub(crate) async fn open_blocked(url: &str) -> Browser {
    let browser = Browser::start().await;
    let c = &browser.client;
    cdp(c, "Page.enable", serde_json::json!({})).await;
    cdp(
        c,
        "Page.addScriptToEvaluateOnNewDocument",
        serde_json::json!({ "source": PROBE }),
    )
    .await;
    cdp(c, "Network.enable", serde_json::json!({})).await;
    cdp(
        c,
        "Network.setBlockedURLs",
        serde_json::json!({ "urls": ["http://*", "https://*", "ws://*", "wss://*", "ftp://*"] }),
    )
    .await;
    c.goto(url).await.unwrap();
    browser
}

/// No resource was requested, nothing thrown, no CSP violation, no console error.
pub(crate) async fn nothing_requested_or_thrown(c: &fantoccini::Client) {
    let probe: serde_json::Value = c
        .execute(
            "return { probe: window.__probe, resources: performance.getEntriesByType('resource').map(r => r.name) }",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(probe["probe"]["errors"], serde_json::json!([]), "{probe}");
    assert_eq!(
        probe["probe"]["violations"],
        serde_json::json!([]),
        "{probe}"
    );
    assert_eq!(
        probe["resources"],
        serde_json::json!([]),
        "no request: {probe}"
    );
    let errors = console_errors(c).await;
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

pub(crate) use support::html_file::unpacked;

/// The file's text with its two packed parts taken out: what is not base64.
fn outside_packed(html: &str) -> String {
    let mut rest = html.to_string();
    for id in ["pipescope-data", "pipescope-wasm"] {
        let at = rest.find(&format!("id=\"{id}\"")).unwrap();
        let start = at + rest[at..].find('>').unwrap() + 1;
        let end = start + rest[start..].find("</script>").unwrap();
        rest.replace_range(start..end, "");
    }
    rest
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recording_as_one_file_opens_from_disk_with_no_request_and_shows_what_replay_shows() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("talk.pipescope.json");
    let from_bench = dir.path().join("bench.html");
    let from_replay = dir.path().join("talk.html");
    let (redis, target) = support::redis_with_password();
    let url = format!(
        "redis://:{}@127.0.0.1:{}/3",
        support::PASSWORD,
        redis.port()
    );
    let out = support::pipescope("pipescope=info")
        .args([
            "bench", "--mode", "compare", "--count", "300", "--batch", "50",
        ])
        .args(["--redis-url", &url])
        .arg("--record")
        .arg(&rec)
        .arg("--html")
        .arg(&from_bench)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench --html failed: {stderr}");
    let said = format!("wrote {} (", from_bench.display());
    assert!(
        stderr.contains(&said),
        "bench says where it wrote: {stderr}"
    );
    let recording = Recording::from_json(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(recording.runs.len(), 2);
    drop(redis);

    let out = support::pipescope("pipescope=info")
        .arg("replay")
        .arg(&rec)
        .arg("--html")
        .arg(&from_replay)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "replay --html failed: {stderr}");
    let size = std::fs::metadata(&from_replay).unwrap().len();
    assert!(
        stderr.contains(&format!(
            "wrote {} ({} KB)",
            from_replay.display(),
            size.div_ceil(1000)
        )),
        "replay says where it wrote and how large: {stderr}"
    );
    println!("{}: {size} bytes", from_replay.display());

    // The data inside is the replay's Welcome for this recording, and nothing private is in
    // the file or in it: not the password, not a key the engine wrote, not a value.
    let html = std::fs::read_to_string(&from_replay).unwrap();
    let data = String::from_utf8(unpacked(&html, "pipescope-data")).unwrap();
    let ServerMsg::Welcome {
        recent,
        replay,
        can_control,
        ..
    } = ServerMsg::from_json(&data).unwrap()
    else {
        panic!(
            "the file carries a Welcome: {}",
            &data[..200.min(data.len())]
        )
    };
    assert_eq!(recent, recording.runs);
    assert_eq!(replay.unwrap().file, "talk.html");
    assert!(!can_control);
    assert!(unpacked(&html, "pipescope-wasm").starts_with(b"\0asm"));
    let visible = outside_packed(&html);
    for r in &recording.runs {
        for secret in [
            support::PASSWORD.to_string(),
            format!("{}{}:k1", shared::keys::PREFIX, r.run),
            format!("{}{}:k299", shared::keys::PREFIX, r.run),
            // The engine's value for request 287 (`v<i>`).
            "\"v287\"".to_string(),
            "$4\r\nv287".to_string(),
        ] {
            for (what, text) in [("the file", &visible), ("the data inside", &data)] {
                assert!(!text.contains(&secret), "{what} holds {secret:?}");
            }
        }
    }
    assert!(
        !html.contains(support::PASSWORD),
        "the file holds the password"
    );
    assert_eq!(recording.target, target.redacted());

    // What `pipescope replay` of the same recording serves.
    let mut child = support::pipescope("pipescope=info")
        .args(["replay", "--port", "0"])
        .arg(&rec)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let child = Killed(child);
    let served = support::stdout_line(
        stdout,
        Duration::from_secs(30),
        "pipescope replay prints the URL to open",
        |l| l.strip_prefix("open ").map(str::to_string),
    );
    let browser = Browser::open(&served).await;
    let replayed = seen(&browser.client).await;
    println!("replay shows: {replayed:?}");

    // The page's "Download as one HTML file": the server answers its form with the file.
    let downloads = dir.path().join("downloads");
    std::fs::create_dir(&downloads).unwrap();
    cdp(
        &browser.client,
        "Page.setDownloadBehavior",
        serde_json::json!({ "behavior": "allow", "downloadPath": downloads.display().to_string() }),
    )
    .await;
    click(&browser.client, "#save-html").await;
    let from_page = downloaded(&downloads).await;
    assert!(
        browser
            .client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .starts_with(&served),
        "the page stays where it is"
    );
    drop(browser);
    drop(child);

    for file in [&from_replay, &from_bench, &from_page] {
        let browser = open_blocked(&format!("file://{}", file.display())).await;
        let c = &browser.client;
        let shown = seen(c).await;
        assert_eq!(
            shown,
            replayed,
            "{}: the figures replay shows",
            file.display()
        );

        // The timeline: both runs drawn, its canvas painted.
        let state = until_state(c, "both runs drawn", Duration::from_secs(20), |s| {
            s["runs"].as_array().is_some_and(|r| {
                r.len() == 2
                    && r.iter()
                        .all(|r| r["arrows_drawn"].as_u64().unwrap_or(0) > 0)
            })
        })
        .await;
        let painted: f64 = until_js(
            c,
            "const c = document.querySelector('#timeline');
             const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
             let other = 0;
             for (let i = 0; i < d.length; i += 4)
               if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2] || d[i + 3] !== d[3]) other++;
             return other / (d.length / 4);",
            Duration::from_secs(10),
            "the timeline's canvas painted",
            |f: &f64| *f > 0.01,
        )
        .await;
        println!(
            "{}: {:.1} % of the timeline's pixels painted",
            file.display(),
            painted * 100.0
        );

        if file == &from_replay {
            let shot = browser.screenshot("html-file").await;
            println!("screenshot {}", shot.display());
        }

        // Playback moves.
        click(c, "#replay").await;
        let playing = until_state(c, "playback running", Duration::from_secs(10), |s| {
            s["playback"]["playing"] == true && s["playback"]["position_us"].as_f64() > Some(0.0)
        })
        .await;
        let at = playing["playback"]["position_us"].as_f64().unwrap();
        until_state(c, "playback moving on", Duration::from_secs(10), |s| {
            s["playback"]["position_us"].as_f64() > Some(at)
        })
        .await;

        // No run controls; the line says what the file is.
        let absent: Vec<bool> = c
            .execute(
                "return ['#run', '#compare', '#sweep', '#nav-observe', '#recording-banner', 'label[for=open-recording]', '#save-html']
                   .map(s => { const e = document.querySelector(s); return !e || e.offsetParent === null; })",
                vec![],
            )
            .await
            .map(|v| serde_json::from_value(v).unwrap())
            .unwrap();
        assert!(
            absent.iter().all(|&a| a),
            "run controls are absent: {absent:?}"
        );
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
        let name = file.file_name().unwrap().to_str().unwrap();
        println!("{name}: {line}");
        // The page's file is saved when downloaded, as its "Save session" is.
        let saved = if file == &from_page {
            "saved 20"
        } else {
            recording.saved_at.as_str()
        };
        for part in [
            name,
            saved,
            recording.redis_version.as_str(),
            recording.target.as_str(),
            "network: loopback",
            "nothing is fetched",
        ] {
            assert!(line.contains(part), "the line says {part:?}: {line}");
        }

        // Nothing was requested, thrown or refused.
        nothing_requested_or_thrown(c).await;

        // The checks above can fail: a request the page makes is refused, and seen.
        c.execute("fetch('http://127.0.0.1:9/').catch(() => {})", vec![])
            .await
            .unwrap();
        until_js(
            c,
            "return window.__probe.violations.length",
            Duration::from_secs(10),
            "a refused request seen by the probe",
            |n: &usize| *n > 0,
        )
        .await;
        let refused = console_errors(c).await;
        assert!(!refused.is_empty(), "a refused request is a console error");
        assert!(state["runs"].as_array().unwrap().len() == 2);
        if file == &from_replay {
            let shot = browser.screenshot("html-file-playing").await;
            println!("screenshot {}", shot.display());
        }
    }
}

/// The one `.html` file a download put in `dir`, once complete (at most 30 s).
pub(crate) async fn downloaded(dir: &std::path::Path) -> std::path::PathBuf {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let done: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "html"))
            .collect();
        if let [one] = done.as_slice() {
            return one.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no download of one .html file in {}: {done:?}",
            dir.display()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn firefox_opens_the_file_from_disk_and_draws_the_runs() {
    let Some(mut firefox) = support::firefox::Firefox::start().await else {
        support::cannot_check("firefox-esr is not installed (scripts/setup test installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("firefox.html");
    let (redis, _target) = support::redis();
    let out = support::pipescope("pipescope=info")
        .args([
            "bench", "--mode", "compare", "--count", "300", "--batch", "50",
        ])
        .args(["--redis-url", &redis.url()])
        .arg("--html")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(redis);
    firefox.goto(&format!("file://{}", file.display())).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let seen = loop {
        let seen = firefox
            .execute(
                "const p = window.__pipescope;
                 return p ? { runs: p.runs.map(r => [r.mode, r.arrows_drawn, r.done]),
                              resources: performance.getEntriesByType('resource').map(r => r.name),
                              speedup: document.querySelector('#speedup').textContent,
                              line: document.querySelector('#file-line').textContent } : null",
            )
            .await;
        if !seen.is_null() {
            break seen;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Firefox never drew the file's timeline: {}",
            firefox
                .execute("return document.body.innerText.slice(0, 500)")
                .await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    println!("firefox: {seen}");
    let runs = seen["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{seen}");
    for r in runs {
        assert!(r[1].as_u64() > Some(0) && r[2] == 300, "{seen}");
    }
    assert_eq!(
        seen["resources"],
        serde_json::json!([]),
        "no request: {seen}"
    );
    // The headline's words depend on the timings; that it is drawn, from these runs, does not.
    assert!(
        seen["speedup"].as_str().unwrap().contains("300 SETs"),
        "{seen}"
    );
    assert!(
        seen["line"].as_str().unwrap().contains("firefox.html"),
        "{seen}"
    );
    let shot = firefox.screenshot("html-file-firefox").await;
    println!("screenshot {}", shot.display());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tours_recording_as_one_file_opens_its_handout_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("tour.pipescope.json");
    let file = dir.path().join("tour.html");
    let (redis, _target) = support::redis();
    let out = support::pipescope("pipescope=info")
        .args([
            "bench", "--mode", "compare", "--count", "100", "--batch", "10",
        ])
        .args(["--redis-url", &redis.url()])
        .arg("--record")
        .arg(&rec)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(redis);
    // As the tour's handout saves it: step 2 (0-based 1) ran one SET at a time, step 3 both.
    let mut recording = Recording::from_json(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    let ids: Vec<u64> = recording.runs.iter().map(|r| r.run).collect();
    recording.tour = vec![
        shared::recording::TourStepRecord {
            step: 1,
            roles: vec!["seq".into()],
            ids: vec![ids[0]],
        },
        shared::recording::TourStepRecord {
            step: 2,
            roles: vec!["seq".into(), "pipe".into()],
            ids: ids.clone(),
        },
    ];
    std::fs::write(&rec, recording.to_json()).unwrap();
    let out = support::pipescope("pipescope=info")
        .arg("replay")
        .arg(&rec)
        .arg("--html")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The file's line links to the tour; its handout has the steps and the chart's PNG.
    let browser = open_blocked(&format!("file://{}", file.display())).await;
    let c = &browser.client;
    click(c, "#file-tour").await;
    let handout: (String, String) = until_js(
        c,
        "const m = document.querySelector('#handout-md');
         const png = document.querySelector('#handout-png');
         return [m ? m.textContent : '', png ? (png.getAttribute('href') || '') : ''];",
        Duration::from_secs(20),
        "the tour's handout, with its chart as a PNG",
        |(md, png): &(String, String)| !md.is_empty() && png.starts_with("data:image/png"),
    )
    .await;
    assert!(
        handout.0.contains("## Step 2") && handout.0.contains("## Step 3"),
        "{}",
        handout.0
    );
    nothing_requested_or_thrown(c).await;
    let shot = browser.screenshot("html-file-tour-handout").await;
    println!("screenshot {}", shot.display());
    click(c, "#file-runs").await;
    until_state(c, "the runs again", Duration::from_secs(20), |s| {
        s["runs"].as_array().is_some_and(|r| r.len() == 2)
    })
    .await;
    nothing_requested_or_thrown(c).await;
}
