//! A real headless Chromium driven through chromedriver (both from Debian), started per test
//! on a free port and killed on drop. A test fails when the page logged an error or a warning
//! to the console (`Drop` reads the console last), unless it said it expects that message
//! (`Browser::expect_console`).

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};

/// A CSS selector as fantoccini's locator.
pub fn css(s: &str) -> Locator<'_> {
    Locator::Css(s)
}

pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
    /// chromedriver's port and the session's id: the console is read on drop, without the
    /// async client.
    port: u16,
    session: String,
    /// Console messages a test provokes on purpose (a part of each).
    expected: std::sync::Mutex<Vec<String>>,
}

impl Browser {
    pub async fn start() -> Browser {
        // A free port can be taken by another test's server between `free_port` and
        // chromedriver's bind (most likely what failed a run once: the session request was reset,
        // as a redis-server resets HTTP). So chromedriver must still be running once its port
        // answers, and a failed start is tried again on a new port.
        let mut last = String::new();
        for _ in 0..3 {
            match Self::try_start().await {
                Ok(browser) => return browser,
                Err(e) => last = e,
            }
        }
        panic!("a chromium session: {last}");
    }

    async fn try_start() -> Result<Browser, String> {
        let port = pipescope::local_redis::free_port().unwrap();
        // Its own process group, so Chromium (chromedriver's child) goes with it on drop.
        let mut driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver must be installed for the browser tests (apt-get install chromium chromium-driver)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Ok(Some(status)) = driver.try_wait() {
            return Err(format!(
                "chromedriver exited ({status}); port {port} is someone else's"
            ));
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1400,1000",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({ "binary": chromium(), "args": args }),
        );
        // The console's messages, for `console_errors`.
        caps.insert(
            "goog:loggingPrefs".into(),
            serde_json::json!({ "browser": "ALL" }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let session = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await;
        match session {
            Ok(client) => {
                let session = client.session_id().await.ok().flatten().unwrap_or_default();
                Ok(Browser {
                    client,
                    driver,
                    _profile: profile,
                    port,
                    session,
                    expected: std::sync::Mutex::new(Vec::new()),
                })
            }
            Err(e) => {
                unsafe { libc::kill(-(driver.id() as i32), libc::SIGKILL) };
                let _ = driver.wait();
                Err(e.to_string())
            }
        }
    }

    /// Starts a browser, opens the page at `url` and waits until it is connected to `/ws`.
    pub async fn open(url: &str) -> Browser {
        let index = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/index.html");
        assert!(
            index.exists(),
            "dist/ is missing: build the page first (scripts/test does: trunk build --release)"
        );
        let browser = Browser::start().await;
        browser.client.goto(url).await.unwrap();
        browser
            .client
            .wait()
            .at_most(std::time::Duration::from_secs(30))
            .for_element(fantoccini::Locator::Css("#status[data-state='open']"))
            .await
            .expect("the page connects to /ws");
        browser
    }

    /// Saves a PNG of the page under target/screenshots/ and returns its path.
    pub async fn screenshot(&self, name: &str) -> std::path::PathBuf {
        Self::screenshot_of(&self.client, name).await
    }

    /// `screenshot` for a client borrowed on its own.
    pub async fn screenshot_of(c: &Client, name: &str) -> std::path::PathBuf {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, c.screenshot().await.unwrap()).unwrap();
        path
    }
}

fn chromium() -> &'static str {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("chromium")
}

impl Browser {
    /// A console error or warning containing `part` is what this test provokes: not a failure.
    pub fn expect_console(&self, part: &str) {
        self.expected.lock().unwrap().push(part.to_string());
    }

    /// The console's errors and warnings not yet read (by `console_errors` or here), less
    /// those expected. Read over a plain socket: drop cannot wait on the async client.
    fn unexpected_console(&self) -> Result<Vec<String>, String> {
        use std::io::{Read, Write};
        let body = r#"{"type":"browser"}"#;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port))
            .map_err(|e| format!("chromedriver: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "POST /session/{}/se/log HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.session,
            self.port,
            body.len()
        )
        .map_err(|e| format!("chromedriver: {e}"))?;
        // Read up to the headers' end, then the body's Content-Length (chromedriver keeps the
        // connection open whatever the request asks).
        let mut reply: Vec<u8> = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        let (head, want) = loop {
            let n = s
                .read(&mut buf)
                .map_err(|e| format!("chromedriver's browser log: {e}"))?;
            if n == 0 {
                return Err("chromedriver's browser log: the connection closed".into());
            }
            reply.extend_from_slice(&buf[..n]);
            if let Some(at) = reply.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&reply[..at]).to_lowercase();
                let want = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .ok_or_else(|| format!("chromedriver's browser log: no length in {head}"))?;
                break (at + 4, want);
            }
        };
        while reply.len() < head + want {
            let n = s
                .read(&mut buf)
                .map_err(|e| format!("chromedriver's browser log: {e}"))?;
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&buf[..n]);
        }
        let json = String::from_utf8_lossy(&reply[head..]).into_owned();
        let json = json.as_str();
        let v: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| format!("chromedriver's browser log ({e}): {json}"))?;
        let expected = self.expected.lock().unwrap();
        Ok(v["value"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
            .map(|e| format!("{}: {}", e["level"], e["message"]))
            .filter(|m| !expected.iter().any(|x| m.contains(x.as_str())))
            .collect())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let console = match std::thread::panicking() {
            true => Ok(Vec::new()),
            false => self.unexpected_console(),
        };
        // The whole group: chromedriver and every Chromium process it started.
        unsafe { libc::kill(-(self.driver.id() as i32), libc::SIGKILL) };
        let _ = self.driver.wait();
        match console {
            Ok(logged) if logged.is_empty() => {}
            Ok(logged) => panic!(
                "the page logged {} console error(s) or warning(s):\n{}",
                logged.len(),
                logged.join("\n")
            ),
            Err(e) => panic!("the page's console could not be read: {e}"),
        }
    }
}

/// Waits until the button `selector` can be pressed (the page is connected, idle and allowed
/// to control), at most `limit`.
pub async fn wait_enabled(c: &Client, selector: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        if c.find(fantoccini::Locator::Css(selector))
            .await
            .unwrap()
            .is_enabled()
            .await
            .unwrap()
        {
            return;
        }
        assert!(Instant::now() < deadline, "{selector} never enabled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Evaluates `script` (which returns a JSON value) until `done` accepts what it returns, at
/// most `limit`, and returns that. Fails with `what` and the last value.
pub async fn until_js<T: serde::de::DeserializeOwned + std::fmt::Debug>(
    c: &Client,
    script: &str,
    limit: Duration,
    what: &str,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let value = c.execute(script, vec![]).await.unwrap();
        let value: T = serde_json::from_value(value).unwrap();
        if done(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: {value:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks `selector` once it is on the page (at most 30 s). A list the page redraws (the
/// observed connections grow while a client runs) can replace the element between finding
/// and clicking it; then it is found again, within the same deadline.
pub async fn click(c: &Client, selector: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let element = c
            .wait()
            .at_most(left)
            .for_element(Locator::Css(selector))
            .await
            .unwrap_or_else(|e| panic!("{selector}: {e}"));
        match element.click().await {
            Ok(()) => return,
            Err(e) if e.is_stale_element_reference() && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("clicking {selector}: {e}"),
        }
    }
}

/// Ticks the checkbox `selector` once it is on the page (at most 30 s): clicks it unless it is
/// ticked already (a file opens on one of its connections chosen).
pub async fn tick(c: &Client, selector: &str) {
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(selector))
        .await
        .unwrap_or_else(|e| panic!("{selector}: {e}"));
    let ticked = c
        .execute(
            "return document.querySelector(arguments[0]).checked",
            vec![selector.into()],
        )
        .await
        .unwrap();
    if ticked != serde_json::Value::Bool(true) {
        click(c, selector).await;
    }
}

/// `window.__pipescope`, the timeline's published state (null until its first draw).
pub async fn page_state(c: &Client) -> serde_json::Value {
    c.execute("return window.__pipescope || null", vec![])
        .await
        .unwrap()
}

/// Polls `page_state` until `check` holds, at most `limit`; fails with `what` and the state.
pub async fn until_state(
    c: &Client,
    what: &str,
    limit: Duration,
    check: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + limit;
    loop {
        let s = page_state(c).await;
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

/// Sizes the window so that the viewport (innerWidth × innerHeight) is exactly `w` × `h`.
pub async fn viewport(c: &Client, w: u32, h: u32) {
    c.set_window_size(w, h).await.unwrap();
    let mut inner = settled_inner(c).await;
    for _ in 0..6 {
        if inner == [w as f64, h as f64] {
            return;
        }
        // The window's frame takes some of it: grow the window by what is missing.
        let (dw, dh) = (w as f64 - inner[0], h as f64 - inner[1]);
        let size = c.get_window_size().await.unwrap();
        c.set_window_size(
            (size.0 as f64 + dw).max(1.0) as u32,
            (size.1 as f64 + dh).max(1.0) as u32,
        )
        .await
        .unwrap();
        inner = settled_inner(c).await;
    }
    panic!("the viewport could not be made {w}×{h}: it is {inner:?}");
}

/// innerWidth × innerHeight once a resize has landed: read every 50 ms until two reads agree
/// (at most 2 s), since a busy machine reports the new size some frames after the window got it.
async fn settled_inner(c: &Client) -> [f64; 2] {
    let read = || async {
        serde_json::from_value::<[f64; 2]>(
            c.execute("return [window.innerWidth, window.innerHeight]", vec![])
                .await
                .unwrap(),
        )
        .unwrap()
    };
    let mut last = read().await;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = read().await;
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// A Chrome DevTools Protocol command, sent through chromedriver to the page's tab.
#[derive(Debug)]
pub struct Cdp {
    pub cmd: &'static str,
    pub params: serde_json::Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let body = serde_json::json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// `cmd` with `params` on the page's tab; its result.
pub async fn cdp(c: &Client, cmd: &'static str, params: serde_json::Value) -> serde_json::Value {
    c.issue_cmd(Cdp { cmd, params })
        .await
        .unwrap_or_else(|e| panic!("DevTools {cmd}: {e}"))
}

/// chromedriver's `se/log` for the browser's console.
#[derive(Debug)]
struct BrowserLog;

impl fantoccini::wd::WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(r#"{"type":"browser"}"#.to_string()),
        )
    }
}

/// The console's errors since the last call (the page's and the browser's own, such as a
/// blocked request), as `level: message`.
pub async fn console_errors(c: &Client) -> Vec<String> {
    let log = c
        .issue_cmd(BrowserLog)
        .await
        .expect("chromedriver's browser log");
    log.as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["level"] == "SEVERE")
        .map(|e| format!("{}: {}", e["level"], e["message"]))
        .collect()
}

/// `selector`'s rendered text, once it is on the page (30 s).
pub async fn text(c: &Client, selector: &str) -> String {
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(selector))
        .await
        .unwrap_or_else(|e| panic!("{selector}: {e}"))
        .text()
        .await
        .unwrap()
}

/// Whether `selector` is on the page and laid out (not hidden, nor inside anything hidden).
pub async fn shown(c: &Client, selector: &str) -> bool {
    c.execute(
        "const e = document.querySelector(arguments[0]); return !!e && e.offsetParent !== null",
        vec![selector.into()],
    )
    .await
    .unwrap()
    .as_bool()
    .unwrap()
}

/// `selector`'s textContent now (hidden text too); `None` where it is not on the page.
pub async fn text_of(c: &Client, selector: &str) -> Option<String> {
    let v = c
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : null",
            vec![selector.into()],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}
