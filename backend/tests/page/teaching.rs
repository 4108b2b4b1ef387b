//! The teaching view in headless Chromium against the real backend and a real redis-server:
//! the timeline draws measured arrows, playback moves, the RTT diagram's numbers follow the
//! run's summary, a second page follows a run it did not start, and playback with over 10,000
//! arrows on screen drawing every frame it must (what a frame costs is printed).

use crate::support;

use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::Value;
use support::browser::{Browser, click, until_js};

fn page_is_built() {
    let index = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/index.html");
    assert!(
        index.exists(),
        "dist/ is missing: build the page first (scripts/test does: trunk build --release)"
    );
}

/// `window.__pipescope` (null until the timeline's first draw).
async fn state(c: &Client) -> Value {
    c.execute("return window.__pipescope || null", vec![])
        .await
        .unwrap()
}

/// Polls `check` on the page state until it holds (no fixed sleeps).
async fn until(c: &Client, what: &str, secs: u64, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = state(c).await;
        if check(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn runs(s: &Value) -> Vec<Value> {
    s["runs"].as_array().cloned().unwrap_or_default()
}

fn run_of<'a>(s: &'a Value, mode: &str) -> &'a Value {
    s["runs"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["mode"] == mode))
        .unwrap_or(&Value::Null)
}

fn position(s: &Value) -> f64 {
    s["playback"]["position_us"].as_f64().unwrap()
}

async fn open(c: &Client, url: &str) {
    c.goto(url).await.unwrap();
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("#status[data-state='open']"))
        .await
        .expect("the page connects to /ws");
}

async fn data_value(c: &Client, css: &str, attr: &str) -> f64 {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .attr(attr)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{css} has no {attr}"))
        .parse()
        .unwrap()
}

/// Sets a range input as a user dragging it would.
async fn set_range(c: &Client, id: &str, value: u32) {
    c.execute(
        "const el = document.getElementById(arguments[0]); el.value = arguments[1]; \
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![id.into(), value.to_string().into()],
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn the_timeline_plays_back_a_comparison_and_a_second_page_follows_it() {
    page_is_built();
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let viewer = Browser::start().await;
    let presenter = Browser::start().await;
    let (v, c) = (&viewer.client, &presenter.client);
    const N: u64 = 3_000;

    // The viewer is connected before the run starts; it never touches the controls.
    open(v, &server.http_url()).await;
    // A slide's link: prefilled, the Compare button focused so Enter starts it.
    open(
        c,
        &format!("{}?count={N}&mode=compare&batch=100", server.http_url()),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let id = c
            .execute(
                "return document.activeElement && document.activeElement.id",
                vec![],
            )
            .await
            .unwrap();
        if id == "compare" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "#compare never got the focus ({id})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.active_element()
        .await
        .unwrap()
        .send_keys("\u{E007}")
        .await
        .unwrap();

    c.wait()
        .at_most(Duration::from_secs(120))
        .for_element(Locator::Css("#speedup[data-speedup]"))
        .await
        .expect("the comparison finishes");
    let s = until(c, "both runs drawn", 30, |s| {
        let r = runs(s);
        r.len() == 2
            && r.iter().all(|r| {
                r["spans"].as_u64() == Some(N)
                    && r["arrows_drawn"].as_u64().unwrap_or(0) > 0
                    && r["p50_us"].is_number()
            })
    })
    .await;
    println!("presenter page: {}", s["runs"]);

    // The other page saw it too, live, without starting it.
    let sv = until(v, "the following page's arrows", 30, |s| {
        let r = runs(s);
        r.len() == 2
            && r.iter()
                .all(|r| r["arrows_drawn"].as_u64().unwrap_or(0) > 0)
    })
    .await;
    println!("following page: {}", sv["runs"]);

    // Playback: play moves the position, pause holds it, steps move it one event.
    click(c, "#replay").await;
    let s = until(c, "playback running", 10, |s| {
        s["playback"]["playing"] == true && position(s) > 0.0
    })
    .await;
    let extent = s["playback"]["extent_us"].as_f64().unwrap();
    let play = c.find(Locator::Css("#play")).await.unwrap();
    assert_eq!(
        play.attr("aria-pressed").await.unwrap().as_deref(),
        Some("true")
    );
    // Mid-playback picture: scrub to the middle of the opening window and play on from there.
    let window = s["playback"]["window_us"].as_f64().unwrap();
    let mid = ((0.5 * window / extent) * 10_000.0).round() as u32;
    set_range(c, "scrub", mid.max(1)).await;
    click(c, "#play").await;
    until(c, "playing from the middle", 10, |s| {
        s["playback"]["playing"] == true && position(s) > 0.4 * window
    })
    .await;
    c.execute(
        "document.getElementById('timeline').scrollIntoView({ block: 'center' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = presenter.screenshot("timeline-mid-playback").await;
    println!("screenshot {}", shot.display());
    click(c, "#play").await;
    let paused = until(c, "paused", 10, |s| s["playback"]["playing"] == false).await;
    let at = position(&paused);
    assert!(
        at > 0.0 && at < extent,
        "paused mid-run at {at} of {extent}"
    );
    assert_eq!(
        play.attr("aria-pressed").await.unwrap().as_deref(),
        Some("false")
    );
    assert_eq!(position(&state(c).await), at, "pause holds the position");
    click(c, "#step-forward").await;
    let fwd = until(c, "a step forward", 10, |s| position(s) > at).await;
    click(c, "#step-back").await;
    let back = until(c, "a step back", 10, |s| position(s) < position(&fwd)).await;
    println!(
        "position: paused {at:.1} µs, step → {:.1} µs, step ← {:.1} µs (of {extent:.1})",
        position(&fwd),
        position(&back)
    );

    // The RTT diagram is made of this run's numbers.
    let seq = run_of(&s, "sequential");
    let p50 = seq["p50_us"].as_f64().unwrap();
    let done = seq["done"].as_f64().unwrap();
    // The diagram's RTT is the mean (N × mean is the summed latency); its median is beside it.
    let rtt = data_value(c, "#rtt", "data-rtt-us").await;
    let median = data_value(c, "#rtt", "data-p50-us").await;
    assert!(
        (median - p50).abs() < 0.01,
        "median {median} = sequential p50 {p50}"
    );
    for part in ["data-t1-us", "data-t2-us", "data-t3-us"] {
        let v = data_value(c, &format!("#rtt[{part}]"), part).await;
        assert!(v >= 0.0 && v.is_finite(), "{part} = {v}");
    }
    let predicted = data_value(c, "#rtt-predicted-seq-ms", "data-value").await;
    assert!(
        (predicted - done * rtt / 1000.0).abs() < 1e-6 * predicted.max(1.0),
        "predicted {predicted} ms = N × RTT = {done} × {rtt} µs"
    );
    let measured = data_value(c, "#rtt-measured-seq-ms", "data-value").await;
    assert!((measured - seq["wall_us"].as_f64().unwrap() / 1000.0).abs() < 1e-9);
    let pipe_predicted = data_value(c, "#rtt-predicted-pipe-ms", "data-value").await;
    let pipe_measured = data_value(c, "#rtt-measured-pipe-ms", "data-value").await;
    println!(
        "RTT {rtt:.1} µs; sequential predicted {predicted:.2} ms, measured {measured:.2} ms; \
         pipelined predicted {pipe_predicted:.2} ms, measured {pipe_measured:.2} ms"
    );

    // Presenter mode on a projector-sized window.
    c.set_window_size(1920, 1080).await.unwrap();
    click(c, "#presenter-toggle").await;
    c.wait()
        .at_most(Duration::from_secs(5))
        .for_element(Locator::Css("body.presenter"))
        .await
        .expect("presenter mode sets body.presenter");
    // Play on from where the steps left off (mid-run, arrows on screen).
    // The switch re-lays the page out: a click that lands while the controls are being
    // replaced can be lost, as a person's would be; like a person, click again if nothing
    // started.
    let mut attempts = 0;
    loop {
        attempts += 1;
        click(c, "#play").await;
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline && state(c).await["playback"]["playing"] != true {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if state(c).await["playback"]["playing"] == true {
            break;
        }
        assert!(
            attempts < 3,
            "Play did not start playback: {}",
            state(c).await
        );
    }
    let url: String = c.current_url().await.unwrap().to_string();
    assert!(
        url.contains("presenter=1") && url.contains("count=3000"),
        "{url}"
    );
    c.execute("window.scrollTo(0, 0)", vec![]).await.unwrap();
    let shot = presenter.screenshot("presenter").await;
    println!("screenshot {}", shot.display());
    // The dark high-contrast theme, for dim rooms.
    click(c, "#theme-toggle").await;
    c.wait()
        .at_most(Duration::from_secs(5))
        .for_element(Locator::Css("body.theme-dark"))
        .await
        .expect("the theme toggle sets body.theme-dark");
    let shot = presenter.screenshot("presenter-dark").await;
    println!("screenshot {}", shot.display());
    c.execute(
        "document.getElementById('rtt').scrollIntoView({ block: 'start' })",
        vec![],
    )
    .await
    .unwrap();
    let shot = presenter.screenshot("rtt-presenter").await;
    println!("screenshot {}", shot.display());
    assert!(
        c.find(Locator::Css("#error")).await.is_err(),
        "no error banner"
    );
    let shot = viewer.screenshot("following").await;
    println!("screenshot {}", shot.display());
    // Ending the sessions quits the browsers (killing chromedriver alone leaves them running).
    let _ = viewer.client.clone().close().await;
    let _ = presenter.client.clone().close().await;
}

/// Counts animation frames beside the page's own loop (test-side: the page's loop draws only
/// when what it shows has changed, so its count alone cannot say how many frames passed).
const COUNT_TICKS: &str = "if (window.__ticks === undefined) { window.__ticks = 0; \
     const tick = () => { window.__ticks += 1; requestAnimationFrame(tick); }; \
     requestAnimationFrame(tick); }";

/// [frames the page drew, animation frames ticked], read between frames so both count the
/// same ones.
const FRAMES: &str = "return [window.__pipescope.frame.count, window.__ticks]";

/// Waits until `ticks` more animation frames have passed and returns the frame counts then.
async fn after_ticks(c: &Client, ticks: u64, what: &str) -> [u64; 2] {
    let [_, from] = until_js::<[u64; 2]>(c, FRAMES, Duration::ZERO, what, |_| true).await;
    until_js::<[u64; 2]>(c, FRAMES, Duration::from_secs(60), what, |[_, t]| {
        *t >= from + ticks
    })
    .await
}

/// Playback over the whole of two 5,000-request runs (~20,000 arrows a frame): every frame of
/// playback is drawn, none while paused, one for a seek, and at the end every request and
/// reply is painted. What a frame costs is printed, not asserted.
#[tokio::test]
async fn ten_thousand_arrows_animate() {
    page_is_built();
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::start().await;
    let c = &browser.client;
    open(
        c,
        &format!("{}?count=5000&mode=compare&batch=100", server.http_url()),
    )
    .await;
    click(c, "#compare").await;
    c.wait()
        .at_most(Duration::from_secs(120))
        .for_element(Locator::Css("#speedup[data-speedup]"))
        .await
        .expect("the comparison finishes");
    until(c, "both runs' spans", 30, |s| {
        runs(s).len() == 2 && runs(s).iter().all(|r| r["spans"].as_u64() == Some(5000))
    })
    .await;
    c.execute(COUNT_TICKS, vec![]).await.unwrap();

    // The whole run on screen, near its end, slowest speed (1 µs → 1 s: it stays near the
    // end): while playing, every frame moves the playhead, so every frame is a redraw.
    click(c, "#zoom-fit").await;
    set_range(c, "speed", 60).await;
    set_range(c, "scrub", 9_990).await;
    click(c, "#play").await;
    until(c, "playing", 10, |s| s["playback"]["playing"] == true).await;
    let [drawn0, ticks0] = after_ticks(c, 1, "a frame while playing").await;
    let [drawn1, ticks1] = after_ticks(c, 150, "150 animation frames while playing").await;
    let s = state(c).await;
    assert_eq!(
        s["playback"]["playing"], true,
        "still playing: {}",
        s["playback"]
    );
    assert_eq!(
        drawn1 - drawn0,
        ticks1 - ticks0,
        "every animation frame of playback is drawn"
    );
    let arrows: u64 = runs(&s)
        .iter()
        .map(|r| r["arrows_drawn"].as_u64().unwrap())
        .sum();
    let shot = browser.screenshot("timeline-10k").await;
    println!(
        "{arrows} arrows a frame: frame.avg_ms = {:.2} (max {:.2}) over the last draws, {} frames drawn in {} animation frames; screenshot {}",
        s["frame"]["avg_ms"].as_f64().unwrap(),
        s["frame"]["max_ms"].as_f64().unwrap(),
        drawn1 - drawn0,
        ticks1 - ticks0,
        shot.display()
    );
    assert!(
        arrows >= 10_000,
        "at least 10,000 arrows drawn, got {arrows}"
    );

    // Paused, nothing changes: one frame shows the pause, then none.
    click(c, "#play").await;
    until(c, "paused", 10, |s| s["playback"]["playing"] == false).await;
    let [paused, _] = after_ticks(c, 1, "a frame after the pause").await;
    let [still, _] = after_ticks(c, 30, "30 animation frames paused").await;
    assert_eq!(still, paused, "no redraw while paused and unchanged");

    // A seek to the end is one redraw, with every request and every reply on it.
    set_range(c, "scrub", 10_000).await;
    let end = until(c, "the playhead at the end", 10, |s| {
        s["playback"]["position_us"].as_f64() == s["playback"]["extent_us"].as_f64()
    })
    .await;
    let [after, _] = after_ticks(c, 30, "30 animation frames after the seek").await;
    assert_eq!(after, paused + 1, "one redraw for one seek");
    for r in runs(&end) {
        let spans = r["spans"].as_u64().unwrap();
        assert_eq!(
            r["arrows_drawn"].as_u64(),
            Some(2 * spans),
            "every request and reply painted at the end: {r}"
        );
    }
    let _ = browser.client.clone().close().await;
}
