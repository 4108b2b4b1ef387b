//! Opening a file from disk in a fresh headless Chromium, timed: from navigation until the
//! file's own script logs that what a person came for is drawn (`pipescope-interactive <ms>`).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::io::BufReader;

/// Logs the moment the timeline publishes its first frame with runs (`window.__pipescope`).
pub const RUNS_DRAWN: &str = "<script>{let v;Object.defineProperty(window,'__pipescope',{configurable:true,\
get(){return v},set(x){v=x;if(!window.__shown&&x&&x.runs&&x.runs.length){window.__shown=1;\
console.log('pipescope-interactive '+performance.now())}}})}</script>";

/// Logs the moment the file's table shows `rows` observed connections.
pub fn table_shown(rows: usize) -> String {
    format!(
        "<script>new MutationObserver((m,o)=>{{if(document.querySelectorAll(\
         '#observed-table tr.observed-row').length>={rows}){{o.disconnect();\
         console.log('pipescope-interactive '+performance.now())}}}})\
         .observe(document,{{childList:true,subtree:true}})</script>"
    )
}

/// Opens `page` from disk in a fresh headless Chromium; the ms it logged (`pipescope-interactive
/// <ms>`), read from the browser's log.
pub async fn first_drawn(page: &Path) -> anyhow::Result<f64> {
    let profile = tempfile::tempdir()?;
    let mut child = tokio::process::Command::new(chromium())
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("starting chromium (apt-get install chromium)")?;
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let said = pipescope::child_line::first(&mut stderr, Duration::from_secs(60), |line| {
        let at = line.find("\"pipescope-interactive ")?;
        line[at + 23..].split('"').next()?.parse::<f64>().ok()
    })
    .await;
    // The whole group: Chromium's renderer and helpers too.
    if let Some(pid) = child.id() {
        unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
    }
    let _ = child.wait().await;
    said.map_err(|e| {
        let e = e.to_string();
        let tail = &e[e.floor_char_boundary(e.len().saturating_sub(600))..];
        anyhow::anyhow!("chromium never drew the page: …{tail}")
    })
}

fn chromium() -> &'static str {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("chromium")
}
