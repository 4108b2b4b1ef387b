//! Presenter mode fits one screen for the room: at 1920×1080 and at
//! 1280×720, while a Compare runs and after it, each run's progress, the speed-up headline (once
//! there is one) and the timeline canvas lie inside the viewport with the page scrolled to the
//! top; the controls are folded into one line; none of these boxes overlap; and no two of the
//! labels the timeline painted on its canvas overlap, no slider's label is cut and nothing
//! overflows sideways. The same for a sweep of 30 runs (three rounds of ten batch sizes): one
//! bar and a strip of cells for its progress, two of its runs drawn and a button per batch to
//! draw more. In headless Chromium against the real backend and a real redis-server; the
//! screenshots go to target/screenshots/.

use crate::support;

use std::time::Duration;

use serde::Deserialize;
use support::browser::{Browser, until_js, viewport};

/// Sequential SETs through a 250 µs each-way delay: each pays at least 0.5 ms, so the first run
/// lasts long enough to be measured while it runs; more than the 5,000 requests the timeline
/// draws in full, so its "first N of M drawn" caption is painted.
const PREPARED: &str =
    "?count=10000&mode=pipelined&batch=1000&plan=compare&delay=250&presenter=1&theme=light";

/// Measures the screen in one evaluation, so "running" and the boxes describe the same moment.
const MEASURE: &str = r#"
const box = (el) => {
  if (!el) return null;
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return null;
  return { name: el.id || el.className, x: r.left, y: r.top, w: r.width, h: r.height };
};
const controls = document.querySelector('section.controls');
const summary = document.querySelector('#controls-summary');
const bar = document.querySelector('.controls-bar');
const barBox = box(bar);
// Everything visible in the folded controls (text, buttons), to check they share one row.
const inBar = bar ? [...bar.querySelectorAll('#controls-summary, button')]
  .map(box).filter((b) => b) : [];
const runs = [...document.querySelectorAll('.run-progress')].map((el) => ({
  run: el.dataset.run,
  running: el.classList.contains('running'),
  value: Number(el.querySelector('progress')?.value || 0),
  box: box(el),
}));
const state = window.__pipescope || {};
const canvas = document.querySelector('#timeline');
// A slider's label cut short: its text wider or taller than its box.
const cut = [...document.querySelectorAll('.playback .slider > span')]
  .filter((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
  .map((el) => el.textContent);
const chooser = document.querySelector('.run-chooser');
return {
  inner: [window.innerWidth, window.innerHeight],
  scroll_width: document.documentElement.scrollWidth,
  cut,
  chooser: chooser ? chooser.textContent : null,
  strip: document.querySelectorAll('.run-strip .cell').length,
  strip_done: document.querySelectorAll('.run-strip .cell.finished').length,
  connected: document.querySelector('#status')?.dataset.state === 'open',
  scroll_height: document.documentElement.scrollHeight,
  scroll_y: window.scrollY,
  controls: box(controls),
  summary: box(summary),
  summary_text: summary ? summary.textContent : '',
  summary_line_height: summary ? parseFloat(getComputedStyle(summary).lineHeight) : 0,
  bar: barBox,
  in_bar: inBar,
  runs,
  progress: box(document.querySelector('section.progress')),
  speedup: box(document.querySelector('#speedup')),
  timeline: box(canvas),
  teaching: box(document.querySelector('section.teaching')),
  canvas_css: canvas ? [canvas.clientWidth, canvas.clientHeight] : [0, 0],
  labels: state.labels || [],
  finished: (state.runs || []).filter((r) => r.wall_us !== undefined).length,
};
"#;

#[derive(Debug, Deserialize, Clone)]
struct Rect {
    name: String,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Rect {
    fn overlaps(&self, o: &Rect) -> bool {
        // Half a pixel of slack: rounding at shared edges is not an overlap.
        let ox = (self.x + self.w).min(o.x + o.w) - self.x.max(o.x);
        let oy = (self.y + self.h).min(o.y + o.h) - self.y.max(o.y);
        ox > 0.5 && oy > 0.5
    }
}

#[derive(Debug, Deserialize)]
struct RunBox {
    run: String,
    running: bool,
    value: f64,
    #[serde(rename = "box")]
    rect: Option<Rect>,
}

#[derive(Debug, Deserialize)]
struct Label {
    text: String,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

#[derive(Debug, Deserialize)]
struct Screen {
    inner: [f64; 2],
    scroll_width: f64,
    cut: Vec<String>,
    chooser: Option<String>,
    strip: usize,
    strip_done: usize,
    connected: bool,
    scroll_height: f64,
    scroll_y: f64,
    controls: Option<Rect>,
    summary: Option<Rect>,
    summary_text: String,
    summary_line_height: f64,
    bar: Option<Rect>,
    in_bar: Vec<Rect>,
    runs: Vec<RunBox>,
    progress: Option<Rect>,
    speedup: Option<Rect>,
    timeline: Option<Rect>,
    teaching: Option<Rect>,
    canvas_css: [f64; 2],
    labels: Vec<Label>,
    finished: usize,
}

impl Screen {
    fn running(&self) -> bool {
        self.runs.iter().any(|r| r.running && r.value > 0.0)
    }
}

/// What ran: the summary's words for it, and once it finished, how many bars its progress
/// shows and whether a speed-up headline is among what must be seen.
struct Plan {
    words: &'static str,
    bars_after: usize,
    speedup: bool,
}

const COMPARE: Plan = Plan {
    words: "Compare",
    bars_after: 2,
    speedup: true,
};

/// Everything the room must see is on screen, folded controls in one line, nothing overlapping.
fn check(s: &Screen, when: &str, after: bool, plan: &Plan) {
    let [width, height] = s.inner;
    let at = format!("{width}×{height} {when}");
    assert_eq!(s.scroll_y, 0.0, "{at}: the page is at its top");
    assert!(
        s.scroll_width <= width + 0.5,
        "{at}: nothing overflows sideways (the page is {} px wide)",
        s.scroll_width
    );
    assert!(
        s.cut.is_empty(),
        "{at}: slider labels cut short: {:?}",
        s.cut
    );
    let inside = |r: &Rect| {
        assert!(
            r.x >= -0.5 && r.y >= -0.5 && r.x + r.w <= width + 0.5 && r.y + r.h <= height + 0.5,
            "{at}: {} ({r:?}) lies inside the viewport without scrolling",
            r.name
        );
    };

    // The controls: folded into one summary line, text and buttons on one row.
    let controls = s.controls.as_ref().expect("the controls are shown");
    let summary = s.summary.as_ref().expect("the folded controls' summary");
    let bar = s.bar.as_ref().expect("the folded controls' bar");
    assert!(
        s.summary_text.contains(plan.words) && s.summary_text.contains(",000"),
        "{at}: the summary says what the buttons will run: {:?}",
        s.summary_text
    );
    assert!(
        summary.h <= s.summary_line_height * 1.5,
        "{at}: the summary is one line of text ({} px high, line height {} px): {:?}",
        summary.h,
        s.summary_line_height,
        s.summary_text
    );
    let row = (bar.y, bar.y + bar.h);
    let tallest = s.in_bar.iter().map(|b| b.h).fold(0.0, f64::max);
    assert!(
        bar.h <= tallest * 1.5,
        "{at}: the controls bar is one row ({} px high, its tallest item {tallest} px)",
        bar.h
    );
    for item in &s.in_bar {
        let mid = item.y + item.h / 2.0;
        assert!(
            mid >= row.0 && mid <= row.1,
            "{at}: {} sits on the bar's row {row:?}: {item:?}",
            item.name
        );
    }
    inside(controls);

    // Each run's progress, the headline (after) and the timeline: on screen.
    assert!(!s.runs.is_empty(), "{at}: progress is shown");
    let runs: Vec<&Rect> = s
        .runs
        .iter()
        .map(|r| {
            r.rect
                .as_ref()
                .unwrap_or_else(|| panic!("{at}: run {}'s progress is visible", r.run))
        })
        .collect();
    if after {
        assert_eq!(
            runs.len(),
            plan.bars_after,
            "{at}: the runs' progress: {:?}",
            s.runs
        );
    }
    for r in &runs {
        inside(r);
    }
    let timeline = s.timeline.as_ref().expect("the timeline canvas");
    inside(timeline);
    // The timeline's card too: its counters and playback controls are on screen.
    inside(s.teaching.as_ref().expect("the timeline's card"));
    assert!(
        timeline.h >= height * 0.3,
        "{at}: the timeline takes the room it has left ({} px of {height})",
        timeline.h
    );
    let speedup = if after && plan.speedup {
        let up = s
            .speedup
            .as_ref()
            .expect("the speed-up headline after a Compare");
        inside(up);
        Some(up)
    } else {
        None
    };

    // No two of the key boxes overlap (a run's bar lies inside the progress card, so the card
    // stands for the runs against the others).
    let progress = s.progress.as_ref().expect("the progress card");
    let mut key: Vec<&Rect> = vec![controls, progress, timeline];
    key.extend(speedup);
    for (i, a) in key.iter().enumerate() {
        for b in &key[i + 1..] {
            assert!(
                !a.overlaps(b),
                "{at}: {} and {} overlap: {a:?} {b:?}",
                a.name,
                b.name
            );
        }
    }
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            assert!(
                !a.overlaps(b),
                "{at}: two runs' progress overlap: {a:?} {b:?}"
            );
        }
    }

    // The canvas's own text: inside the canvas, no two labels overlapping.
    assert!(
        s.labels.len() >= 4,
        "{at}: the timeline published its labels: {:?}",
        s.labels
    );
    let [cw, ch] = s.canvas_css;
    for l in &s.labels {
        assert!(
            l.x >= -0.5 && l.y >= -0.5 && l.x + l.w <= cw + 0.5 && l.y + l.h <= ch + 0.5,
            "{at}: the label {:?} lies inside the {cw}×{ch} canvas: {l:?}",
            l.text
        );
    }
    for (i, a) in s.labels.iter().enumerate() {
        for b in &s.labels[i + 1..] {
            let (ra, rb) = (
                Rect {
                    name: a.text.clone(),
                    x: a.x,
                    y: a.y,
                    w: a.w,
                    h: a.h,
                },
                Rect {
                    name: b.text.clone(),
                    x: b.x,
                    y: b.y,
                    w: b.w,
                    h: b.h,
                },
            );
            assert!(
                !ra.overlaps(&rb),
                "{at}: timeline labels {:?} and {:?} overlap: {a:?} {b:?}",
                a.text,
                b.text
            );
        }
    }
    let _ = s.scroll_height;
}

async fn one_screen(w: u32, h: u32) {
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!("{}{PREPARED}", server.http_url())).await;
    let c = &browser.client;
    viewport(c, w, h).await;
    support::browser::wait_enabled(c, "#compare", Duration::from_secs(30)).await;
    support::browser::click(c, "#compare").await;

    let during: Screen = until_js(
        c,
        MEASURE,
        Duration::from_secs(60),
        "the sequential run in progress",
        Screen::running,
    )
    .await;
    let shot = browser
        .screenshot(&format!("presenter-{w}x{h}-running"))
        .await;
    println!("during the Compare: {}", shot.display());

    let after: Screen = until_js(
        c,
        MEASURE,
        Duration::from_secs(120),
        "both runs finished, the headline shown and drawn",
        |s: &Screen| s.speedup.is_some() && s.finished == 2 && !s.running(),
    )
    .await;
    // The playback animates the finished runs; the screenshot is of the settled page.
    let shot = browser.screenshot(&format!("presenter-{w}x{h}")).await;
    println!("after the Compare: {}", shot.display());

    check(&during, "during the Compare", false, &COMPARE);
    check(&after, "after the Compare", true, &COMPARE);
}

/// A sweep of 20,000 SETs to batch 1,000: 30 runs.
const SWEEP: &str = "?count=20000&sweep=1000&presenter=1&theme=light";

async fn sweep_on_one_screen(w: u32, h: u32) {
    let plan = Plan {
        words: "Sweep",
        bars_after: 1,
        speedup: false,
    };
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!("{}{SWEEP}", server.http_url())).await;
    let c = &browser.client;
    viewport(c, w, h).await;
    support::browser::wait_enabled(c, "#sweep", Duration::from_secs(30)).await;
    // The page's websocket, kept where the test can close it (as a server closes a page
    // that reads too slowly): caught on the first message the page sends.
    c.execute(
        "const send = WebSocket.prototype.send;
         WebSocket.prototype.send = function (d) { window.__test_ws = this; return send.call(this, d); };",
        vec![],
    )
    .await
    .unwrap();
    support::browser::click(c, "#sweep").await;

    let during: Screen = until_js(
        c,
        MEASURE,
        Duration::from_secs(120),
        "the sweep under way past its fourth run",
        |s: &Screen| s.running() && s.strip == 30 && s.chooser.is_some(),
    )
    .await;
    let shot = browser
        .screenshot(&format!("presenter-sweep-{w}x{h}-running"))
        .await;
    println!("during the sweep: {}", shot.display());
    check(&during, "during the sweep", false, &plan);

    let after: Screen = until_js(
        c,
        MEASURE,
        Duration::from_secs(300),
        "the sweep's 30 runs finished and drawn",
        |s: &Screen| s.strip_done == 30 && s.finished == 2,
    )
    .await;
    let shot = browser
        .screenshot(&format!("presenter-sweep-{w}x{h}"))
        .await;
    println!("after the sweep: {}", shot.display());
    check(&after, "after the sweep", true, &plan);
    let chooser = after.chooser.as_deref().unwrap_or_default();
    assert!(
        chooser.starts_with("2 of 30 runs drawn") && chooser.contains("batch 1000"),
        "the timeline draws two of the sweep's runs and offers every batch: {chooser:?}"
    );

    // A batch added from the chooser is drawn, and the screen still holds.
    support::browser::click(c, ".run-chooser .chip:nth-of-type(5)").await;
    let three: Screen = until_js(
        c,
        MEASURE,
        Duration::from_secs(30),
        "a third run drawn",
        |s: &Screen| s.finished == 3,
    )
    .await;
    assert!(
        three
            .chooser
            .as_deref()
            .is_some_and(|t| t.starts_with("3 of 30 runs drawn")),
        "{:?}",
        three.chooser
    );
    check(&three, "with a third run drawn", true, &plan);

    // Its connection lost and made again after the sweep: the page keeps the sweep it
    // followed (its strip, every run done), on one screen.
    c.execute("window.__test_ws.close();", vec![])
        .await
        .unwrap();
    until_js(
        c,
        MEASURE,
        Duration::from_secs(30),
        "the page saw its connection close",
        |s: &Screen| !s.connected,
    )
    .await;
    let back: Screen = until_js(
        c,
        MEASURE,
        Duration::from_secs(60),
        "the sweep kept after a reconnect",
        |s: &Screen| s.connected && s.strip_done == 30 && s.chooser.is_some() && s.finished >= 2,
    )
    .await;
    let shot = browser
        .screenshot(&format!("presenter-sweep-{w}x{h}-reconnected"))
        .await;
    println!("after a reconnect: {}", shot.display());
    check(&back, "after a reconnect", true, &plan);
}

#[tokio::test]
async fn a_sweep_in_presenter_mode_fits_1920_by_1080() {
    sweep_on_one_screen(1920, 1080).await;
}

#[tokio::test]
async fn a_sweep_in_presenter_mode_fits_1280_by_720() {
    sweep_on_one_screen(1280, 720).await;
}

#[tokio::test]
async fn presenter_mode_fits_1920_by_1080() {
    one_screen(1920, 1080).await;
}

#[tokio::test]
async fn presenter_mode_fits_1280_by_720() {
    one_screen(1280, 720).await;
}
