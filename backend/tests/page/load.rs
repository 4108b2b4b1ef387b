//! What loading the page costs: the WASM's gzipped size against its budget (at most 377,000
//! bytes under `gzip -9`), and the time from navigation start until the page is
//! interactive, in headless Chromium against the real backend and a real redis-server. The time
//! is printed, never asserted: it depends on the machine.

use crate::support;
use pipescope::median::median;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::browser::{Browser, until_js};

/// The gzipped WASM may not grow past this (bytes, `gzip -9`).
const GZIPPED_BUDGET: usize = 377_000;

/// Page loads timed (each in a fresh browser, so nothing is cached).
const LOADS: usize = 5;

fn dist_wasm() -> PathBuf {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist");
    let wasm: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap_or_else(|e| {
            panic!("dist/ is missing ({e}): build the page first (scripts/test does: trunk build --release)")
        })
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .collect();
    assert_eq!(wasm.len(), 1, "dist/ must hold one .wasm: {wasm:?}");
    wasm.into_iter().next().unwrap()
}

/// The size of `path` under `gzip -9 -c` (the command the budget is stated in), or `None`
/// without gzip.
fn gzip9_size(path: &Path) -> Option<usize> {
    let out = Command::new("gzip")
        .arg("-9")
        .arg("-c")
        .arg(path)
        .output()
        .ok()?;
    assert!(out.status.success(), "gzip -9 failed: {}", out.status);
    Some(out.stdout.len())
}

#[test]
fn the_wasm_stays_within_its_gzipped_budget() {
    let path = dist_wasm();
    let raw = std::fs::read(&path).unwrap();
    let Some(gzipped) = gzip9_size(&path) else {
        support::cannot_check("gzip is not installed: the WASM's size is not checked");
        return;
    };
    // A sanity check that this is a compressed WASM, not an empty or broken file.
    assert!(raw.starts_with(b"\0asm"), "{} is not WASM", path.display());
    assert!(
        gzipped < raw.len(),
        "gzip did not compress {}",
        path.display()
    );
    println!(
        "page WASM: {} bytes raw, {} bytes gzip -9 (budget {GZIPPED_BUDGET}, {} to spare)",
        raw.len(),
        gzipped,
        GZIPPED_BUDGET as i64 - gzipped as i64
    );
    assert!(
        gzipped <= GZIPPED_BUDGET,
        "{} is {} bytes gzipped (gzip -9), over the page's budget of {GZIPPED_BUDGET}: \
         see docs/measurements.md, \"The page's size and load time\"",
        path.display(),
        gzipped
    );
}

/// The page marks `pipescope-interactive` (User Timing) once its Run button can be pressed: the
/// `Welcome` has been handled. Its `startTime` is milliseconds since navigation start.
const INTERACTIVE: &str = "const m = performance.getEntriesByName('pipescope-interactive')[0]; \
     const run = document.querySelector('#run'); \
     const wasm = performance.getEntriesByType('resource').find(r => r.name.endsWith('.wasm')); \
     return m ? { at: m.startTime, run_enabled: !!run && !run.disabled, \
                  wasm_done: wasm ? wasm.responseEnd : null, \
                  dom_content_loaded: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd } \
              : null";

#[derive(serde::Deserialize, Debug)]
struct Interactive {
    at: f64,
    run_enabled: bool,
    wasm_done: Option<f64>,
    dom_content_loaded: f64,
}

#[tokio::test]
async fn the_page_becomes_interactive_and_says_when() {
    let _ = dist_wasm();
    let (_redis, target) = support::redis();
    let server = support::Server::start(target).await;
    let mut times = Vec::new();
    let mut wasm_done = Vec::new();
    for load in 0..LOADS {
        let browser = Browser::start().await;
        let c = &browser.client;
        c.goto(&server.http_url()).await.unwrap();
        let seen: Option<Interactive> = until_js(
            c,
            INTERACTIVE,
            Duration::from_secs(30),
            "the page marks pipescope-interactive",
            |v: &Option<Interactive>| v.is_some(),
        )
        .await;
        let seen = seen.unwrap();
        // The mark is made once the button is pressable, and it stays so on an idle server.
        assert!(
            seen.run_enabled,
            "load {load}: marked interactive, but #run is disabled: {seen:?}"
        );
        assert!(
            seen.at >= seen.dom_content_loaded && seen.at > 0.0,
            "load {load}: the mark comes before the document loaded: {seen:?}"
        );
        let wasm = seen
            .wasm_done
            .expect("the page's WASM is among its resources");
        assert!(
            wasm <= seen.at,
            "load {load}: interactive before the WASM arrived: {seen:?}"
        );
        println!(
            "load {load}: interactive at {:.1} ms after navigation start (WASM fetched by {wasm:.1} ms)",
            seen.at
        );
        times.push(seen.at);
        wasm_done.push(wasm);
    }
    println!(
        "page interactive (Run enabled, Welcome handled), median of {LOADS} fresh loads on loopback: \
         {:.1} ms (min {:.1}, max {:.1}); WASM fetched by {:.1} ms (median)",
        median(times.clone()).unwrap(),
        times.iter().copied().fold(f64::INFINITY, f64::min),
        times.iter().copied().fold(0.0, f64::max),
        median(wasm_done).unwrap()
    );
}
