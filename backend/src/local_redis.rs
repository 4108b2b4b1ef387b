//! The embedded default: when no Redis URL is given, pipescope runs its own redis-server on a
//! free loopback port, without persistence, and stops it when pipescope exits.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const READY_TIMEOUT: Duration = Duration::from_secs(10);
const ATTEMPTS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum LocalRedisError {
    #[error(
        "redis-server was not found on PATH. Install it (Debian: `apt-get install redis-server`) or give --redis-url / REDIS_URL"
    )]
    NotInstalled,
    #[error("could not start redis-server: {0}")]
    Spawn(std::io::Error),
    #[error("redis-server did not become ready on port {port}: {detail}")]
    NotReady { port: u16, detail: String },
}

/// A redis-server child process on 127.0.0.1:`port`; killed on drop.
#[derive(Debug)]
pub struct LocalRedis {
    child: Child,
    port: u16,
}

impl LocalRedis {
    /// Starts redis-server on a free loopback port and waits until it answers PING.
    pub fn start() -> Result<Self, LocalRedisError> {
        Self::start_with_args(&[])
    }

    /// Same, with extra redis-server arguments (e.g. `--requirepass x`).
    pub fn start_with_args(extra: &[&str]) -> Result<Self, LocalRedisError> {
        let mut last = None;
        // Another process can take the free port between our probe and redis-server's bind.
        for _ in 0..ATTEMPTS {
            let port = free_port().map_err(LocalRedisError::Spawn)?;
            match Self::spawn(port, extra) {
                Ok(redis) => return Ok(redis),
                Err(e @ LocalRedisError::NotReady { .. }) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// Starts redis-server on a given port (e.g. again, where one just died).
    #[cfg(feature = "test-util")]
    pub fn start_on(port: u16) -> Result<Self, LocalRedisError> {
        Self::spawn(port, &[])
    }

    fn spawn(port: u16, extra: &[&str]) -> Result<Self, LocalRedisError> {
        let mut cmd = Command::new("redis-server");
        let port_arg = port.to_string();
        cmd.args([
            "--port",
            &port_arg,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(["--daemonize", "no", "--loglevel", "warning"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        die_with_parent(&mut cmd);
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LocalRedisError::NotInstalled,
            _ => LocalRedisError::Spawn(e),
        })?;
        let mut redis = LocalRedis { child, port };
        let password = extra
            .windows(2)
            .find(|w| w[0] == "--requirepass")
            .map(|w| w[1]);
        redis.wait_ready(password)?;
        redis.drain_output();
        Ok(redis)
    }

    /// Waits until the server answers PING (with `password`, if it needs one), or fails if it
    /// exits or stays silent for `READY_TIMEOUT`.
    fn wait_ready(&mut self, password: Option<&str>) -> Result<(), LocalRedisError> {
        let port = self.port;
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut detail = format!("exited with {status}");
                if let Some(mut out) = self.child.stdout.take() {
                    let mut text = String::new();
                    let _ = out.read_to_string(&mut text);
                    detail.push_str(": ");
                    detail.push_str(text.trim());
                }
                return Err(LocalRedisError::NotReady { port, detail });
            }
            if ping(port, password) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(LocalRedisError::NotReady {
                    port,
                    detail: "no answer to PING".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Drains the server's output in the background so a chatty server never blocks on a pipe.
    fn drain_output(&mut self) {
        let stdout = self
            .child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>);
        let stderr = self
            .child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>);
        for pipe in [stdout, stderr].into_iter().flatten() {
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    tracing::debug!(target: "redis-server", "{line}");
                }
            });
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Starts a redis-server on `port` and watches it from a thread of its own: if it dies (a
    /// crash, an OOM kill), it is started again on the same port, so the URL stays valid and the
    /// next run works. Stopped when the returned guard is dropped.
    pub fn supervised() -> Result<Supervised, LocalRedisError> {
        let redis = Self::start()?;
        let port = redis.port;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            // The watchdog thread owns the server: redis-server is tied to the thread that
            // spawned it (die_with_parent), and this one lives until the guard is dropped.
            std::thread::Builder::new()
                .name("redis-watchdog".into())
                .spawn(move || {
                    let mut redis = redis;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(200));
                        if redis.is_running() {
                            continue;
                        }
                        tracing::error!(port, "the embedded redis-server died; starting it again");
                        match Self::spawn(port, &[]) {
                            Ok(fresh) => redis = fresh,
                            Err(e) => tracing::error!("could not restart redis-server: {e}"),
                        }
                    }
                })
                .map_err(LocalRedisError::Spawn)?
        };
        Ok(Supervised {
            port,
            stop,
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Whether the process is still running (it may have crashed or been killed).
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops the server now (SIGKILL: there is nothing to persist) and reaps it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An embedded redis-server kept running by a watchdog; stopped on drop.
#[derive(Debug)]
pub struct Supervised {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Supervised {
    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join(); // drops (kills) the server it owns
        }
    }
}

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn ping(port: u16, password: Option<&str>) -> bool {
    let Ok(mut s) =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200))
    else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut msg = String::new();
    if let Some(p) = password {
        msg.push_str(&format!("*2\r\n$4\r\nAUTH\r\n${}\r\n{p}\r\n", p.len()));
    }
    msg.push_str("*1\r\n$4\r\nPING\r\n");
    if s.write_all(msg.as_bytes()).is_err() {
        return false;
    }
    let mut buf = [0u8; 64];
    let mut got = Vec::new();
    while !got.windows(7).any(|w| w == b"+PONG\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        if got.starts_with(b"-") {
            return false;
        }
    }
    true
}

/// Asks Linux to kill redis-server if pipescope dies without running destructors (SIGKILL,
/// a crash), so no orphan server is left behind.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe and touches only the child's own state.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}
