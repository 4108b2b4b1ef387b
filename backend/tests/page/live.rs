//! A long run watched live in headless Chromium, against the real backend and a real
//! redis-server: past the first requests drawn in full, the timeline keeps drawing the run (its
//! streamed sample), its run time advances, the window follows the run's edge at a scale of
//! round trips with "Fit run" a click away, and the counters under it are the engine's count (the
//! progress bar's); at the end they are the run's, as Redis's INFO commandstats counts it.

use crate::support;

use std::time::{Duration, Instant};

use fantoccini::Client;
use serde::Deserialize;
use support::browser::{Browser, click, until_js, until_state};

const COUNT: u64 = 100_000;

/// What the page shows at one moment, read in one script (one task of the page: the counters
/// and the progress bar come from the same state).
#[derive(Debug, Deserialize)]
struct Seen {
    live: bool,
    extent_us: f64,
    window_us: f64,
    sampled: u64,
    /// The progress bar's count.
    progress: u64,
    sent: String,
    received: String,
    trips: String,
    note: String,
    position: String,
}

const SEEN: &str = "const s = window.__pipescope; \
    const row = document.querySelector('.counter-row'); \
    const bar = document.querySelector('.run-progress progress'); \
    const t = (sel) => (row && row.querySelector(sel) || {}).textContent || ''; \
    if (!s || !s.runs.length || !bar || !row) return null; \
    return { live: s.playback.live, extent_us: s.playback.extent_us, \
      window_us: s.playback.window_us, sampled: s.runs[0].sampled, \
      progress: Number(bar.value), sent: t('.sent'), received: t('.received'), \
      trips: t('.round-trips'), note: t('.counter-note'), \
      position: document.getElementById('position').textContent };";

/// "≈52,001" → (52001, true).
fn number(s: &str) -> (u64, bool) {
    let about = s.starts_with('≈');
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    (
        digits
            .parse()
            .unwrap_or_else(|_| panic!("no number in {s:?}")),
        about,
    )
}

async fn seen(c: &Client, what: &str, limit: Duration, done: impl Fn(&Seen) -> bool) -> Seen {
    until_js::<Option<Seen>>(c, SEEN, limit, what, |s| s.as_ref().is_some_and(&done))
        .await
        .expect("checked above")
}

async fn scrub_to(c: &Client, fraction: f64) {
    c.execute(
        "const el = document.getElementById('scrub'); \
         el.value = Math.round(el.max * arguments[0]); \
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        vec![fraction.into()],
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_long_run_is_drawn_and_counted_live_past_its_first_requests_and_counted_whole_at_its_end()
{
    let (_redis, target) = support::redis();
    let server = support::Server::start(target.clone()).await;
    let browser = Browser::open(&format!(
        "{}?count={COUNT}&cmd=set&mode=sequential",
        server.http_url()
    ))
    .await;
    let c = &browser.client;
    support::browser::wait_enabled(c, "#run", Duration::from_secs(30)).await;
    click(c, "#run").await;

    // About half way: drawn past the first 5,000 (the sample beyond them), counters equal to
    // the progress bar's count, the run time the engine's.
    let half = seen(
        c,
        "the run live at about half way",
        Duration::from_secs(300),
        |s| {
            s.live
                && s.progress >= COUNT * 2 / 5
                && s.sampled > 0
                && number(&s.received).0 == s.progress
        },
    )
    .await;
    assert!(
        half.progress < COUNT,
        "the run finished before it was seen half way: {half:?}"
    );
    let (received, about) = number(&half.received);
    assert!(
        !about,
        "while live the count is the engine's, not an estimate: {half:?}"
    );
    assert_eq!(received, half.progress, "{half:?}");
    assert_eq!(
        number(&half.trips).0,
        half.progress,
        "sequential: a round trip a reply"
    );
    assert!(number(&half.sent).0 >= received, "{half:?}");
    assert_eq!(half.note, "the engine's count so far");
    assert!(
        half.position.contains(" live: ")
            && half.position.contains(&format!(
                "of {} done, drawn to ",
                shared::digits::group(COUNT)
            )),
        "{half:?}"
    );
    // Following the edge at a scale of round trips, not the whole run squeezed.
    assert!(
        half.window_us * 20.0 < half.extent_us,
        "the window follows the edge: {half:?}"
    );
    c.execute(
        "document.querySelector('section.teaching').scrollIntoView()",
        vec![],
    )
    .await
    .unwrap();
    let shot = browser.screenshot("live-half-way").await;
    println!("half way: {half:?}; screenshot {}", shot.display());

    // The picture goes on with the run.
    let later = seen(c, "the drawing advancing", Duration::from_secs(60), |s| {
        !s.live || s.extent_us > half.extent_us
    })
    .await;
    assert!(later.extent_us > half.extent_us, "{later:?}");

    // "Fit run": the whole run so far, a click away, and back.
    click(c, "#zoom-fit").await;
    until_state(
        c,
        "the whole run in the window",
        Duration::from_secs(10),
        |s| {
            let p = &s["playback"];
            match (p["window_us"].as_f64(), p["extent_us"].as_f64()) {
                (Some(w), Some(e)) => w >= e * (1.0 - 1e-9),
                _ => false,
            }
        },
    )
    .await;
    click(c, "#zoom-fit").await;

    // At the end: the whole run's counts, as Redis counted its SETs.
    let deadline = Instant::now() + Duration::from_secs(300);
    c.wait()
        .at_most(deadline.saturating_duration_since(Instant::now()))
        .for_element(support::browser::css(".run-progress.finished"))
        .await
        .expect("the run finishes");
    let sets = support::command_calls(&target).await["set"];
    assert_eq!(sets, COUNT, "Redis counted every SET");
    scrub_to(c, 1.0).await;
    let end = seen(c, "the counters at the end", Duration::from_secs(30), |s| {
        !s.live && number(&s.received).0 == COUNT
    })
    .await;
    for (what, shown) in [
        ("sent", &end.sent),
        ("replies", &end.received),
        ("round trips", &end.trips),
    ] {
        assert_eq!(number(shown), (sets, false), "{what} at the end: {end:?}");
    }

    // In the middle, past the requests drawn in full: counted from the sample, and said so.
    scrub_to(c, 0.5).await;
    let mid = seen(
        c,
        "the counters half way through",
        Duration::from_secs(30),
        |s| number(&s.received).1,
    )
    .await;
    let (received, _) = number(&mid.received);
    assert!(
        received > 5_000 && received < COUNT,
        "half way through the run is past the first 5,000: {mid:?}"
    );
    assert!(
        mid.note
            .contains("the first 5,000 counted one by one, the rest from every 32nd request"),
        "{mid:?}"
    );
    let _ = browser.client.clone().close().await;
}
