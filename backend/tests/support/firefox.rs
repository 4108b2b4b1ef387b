//! A real headless Firefox (Debian's firefox-esr), driven through Marionette, its own remote
//! protocol (`len:json` frames on a TCP port chosen in a fresh profile): enough to open a page,
//! run a script in it and take a screenshot. Killed with its process group on drop.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct Firefox {
    stream: TcpStream,
    next_id: u64,
    child: Child,
    _profile: tempfile::TempDir,
}

impl Firefox {
    /// Starts firefox-esr headless, or `None` when it is not installed.
    pub async fn start() -> Option<Firefox> {
        let found = Command::new("firefox-esr")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return None;
        }
        let profile = tempfile::tempdir().unwrap();
        let port = pipescope::local_redis::free_port().unwrap();
        std::fs::write(
            profile.path().join("user.js"),
            format!("user_pref(\"marionette.port\", {port});\n"),
        )
        .unwrap();
        let child = Command::new("firefox-esr")
            .args(["--headless", "--marionette", "--no-remote", "--profile"])
            .arg(profile.path())
            .arg("--window-size=1400,1000")
            .env("HOME", profile.path())
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let stream = loop {
            if let Ok(s) = TcpStream::connect(("127.0.0.1", port)).await {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "firefox-esr's Marionette did not listen on {port}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let mut firefox = Firefox {
            stream,
            next_id: 0,
            child,
            _profile: profile,
        };
        let hello = firefox.frame().await;
        assert_eq!(hello["applicationType"], "gecko", "{hello}");
        firefox
            .command(
                "WebDriver:NewSession",
                serde_json::json!({ "capabilities": {} }),
            )
            .await;
        Some(firefox)
    }

    /// One `len:json` frame.
    async fn frame(&mut self) -> serde_json::Value {
        let mut len = Vec::new();
        loop {
            let b = self.stream.read_u8().await.expect("Marionette's frame");
            if b == b':' {
                break;
            }
            len.push(b);
        }
        let len: usize = std::str::from_utf8(&len).unwrap().parse().unwrap();
        let mut body = vec![0; len];
        self.stream.read_exact(&mut body).await.unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Sends `name` with `params`; its result (an error fails the test with Firefox's words).
    pub async fn command(&mut self, name: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let msg = serde_json::json!([0, self.next_id, name, params]).to_string();
        self.stream
            .write_all(format!("{}:{msg}", msg.len()).as_bytes())
            .await
            .unwrap();
        let reply = tokio::time::timeout(Duration::from_secs(60), self.frame())
            .await
            .unwrap_or_else(|_| panic!("Firefox did not answer {name} within 60 s"));
        assert!(reply[2].is_null(), "{name}: {}", reply[2]);
        reply[3].clone()
    }

    pub async fn goto(&mut self, url: &str) {
        self.command("WebDriver:Navigate", serde_json::json!({ "url": url }))
            .await;
    }

    /// Runs `script` (a function body that returns a JSON value) in the page.
    pub async fn execute(&mut self, script: &str) -> serde_json::Value {
        self.command(
            "WebDriver:ExecuteScript",
            serde_json::json!({ "script": script, "args": [] }),
        )
        .await["value"]
            .clone()
    }

    /// Saves a PNG of the viewport under target/screenshots/ and returns its path.
    pub async fn screenshot(&mut self, name: &str) -> std::path::PathBuf {
        use base64::Engine;
        let png = self
            .command(
                "WebDriver:TakeScreenshot",
                serde_json::json!({ "full": false }),
            )
            .await["value"]
            .as_str()
            .expect("a screenshot")
            .to_string();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(
            &path,
            base64::engine::general_purpose::STANDARD
                .decode(png)
                .unwrap(),
        )
        .unwrap();
        path
    }
}

impl Drop for Firefox {
    fn drop(&mut self) {
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}
