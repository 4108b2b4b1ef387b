//! The one launcher of a local redis-server: on a free loopback port, without persistence,
//! stopped when dropped (and when pipescope dies). The embedded default when no Redis URL is
//! given, each node of a cluster of our own, the TLS server of `cost tls`, and every
//! test's server are started here.
//!
//! - `Launch`: what the server is besides plain: a TLS port too (`TlsFiles`), a cluster node
//!   (`ClusterNode`), extra arguments. Its redis-server arguments are written only here.
//! - `supervised`: the embedded default, restarted on the same port if it dies.
//! - `tls`: `TlsServer`, a server with a TLS port and a throwaway CA made for it.

mod supervised;
mod tls;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use supervised::Supervised;
pub use tls::{TlsServer, TlsServerError};

use crate::resp;

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

/// What a local redis-server is started as, besides a plain server on a free loopback port.
#[derive(Debug, Clone, Copy, Default)]
pub struct Launch<'a> {
    /// Also listen on a free TLS port, presenting these certificates.
    pub tls: Option<TlsFiles<'a>>,
    /// Run as a node of a cluster.
    pub cluster: Option<ClusterNode<'a>>,
    /// Further redis-server arguments (e.g. `--requirepass x`).
    pub extra: &'a [&'a str],
}

/// The certificate files a server with a TLS port uses (PEM): its certificate and key, and the
/// CA that signed it. Clients need no certificate of their own.
#[derive(Debug, Clone, Copy)]
pub struct TlsFiles<'a> {
    pub cert: &'a Path,
    pub key: &'a Path,
    pub ca: &'a Path,
}

/// A cluster node's own settings. Over TLS, the nodes' bus is TLS too (`--tls-cluster yes`),
/// so a client on a TLS port is told the other nodes' TLS ports.
#[derive(Debug, Clone, Copy)]
pub struct ClusterNode<'a> {
    /// The cluster bus port, chosen by the caller: the default (port + 10,000) can be past
    /// 65,535.
    pub bus_port: u16,
    /// The node's `nodes.conf` file name, in `dir`.
    pub config_file: &'a str,
    pub dir: &'a Path,
}

impl Launch<'_> {
    /// The redis-server command line for a server on `port` (and `tls_port`, with `tls`).
    fn args(&self, port: u16, tls_port: Option<u16>) -> Vec<String> {
        let mut args: Vec<String> = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
        ]
        .map(String::from)
        .to_vec();
        let path = |p: &Path| p.to_string_lossy().into_owned();
        if let Some(node) = self.cluster {
            args.extend([
                "--cluster-enabled".into(),
                "yes".into(),
                "--cluster-port".into(),
                node.bus_port.to_string(),
                "--cluster-config-file".into(),
                node.config_file.into(),
                "--dir".into(),
                path(node.dir),
            ]);
        }
        if let (Some(tls), Some(tls_port)) = (self.tls, tls_port) {
            args.extend(["--tls-port".into(), tls_port.to_string()]);
            if self.cluster.is_some() {
                args.extend(["--tls-cluster".into(), "yes".into()]);
            }
            args.extend([
                "--tls-cert-file".into(),
                path(tls.cert),
                "--tls-key-file".into(),
                path(tls.key),
                "--tls-ca-cert-file".into(),
                path(tls.ca),
                "--tls-auth-clients".into(),
                "no".into(),
            ]);
        }
        args.extend(self.extra.iter().map(|a| a.to_string()));
        args
    }

    /// The password PING needs, when `extra` sets one.
    fn password(&self) -> Option<&str> {
        self.extra
            .windows(2)
            .find(|w| w[0] == "--requirepass")
            .map(|w| w[1])
    }
}

/// A redis-server child process on 127.0.0.1:`port`; killed on drop.
#[derive(Debug)]
pub struct LocalRedis {
    child: Child,
    port: u16,
    tls_port: Option<u16>,
}

impl LocalRedis {
    /// Starts redis-server on a free loopback port and waits until it answers PING.
    pub fn start() -> Result<Self, LocalRedisError> {
        Self::launch(&Launch::default())
    }

    /// Same, with extra redis-server arguments (e.g. `--requirepass x`).
    pub fn start_with_args(extra: &[&str]) -> Result<Self, LocalRedisError> {
        Self::launch(&Launch {
            extra,
            ..Launch::default()
        })
    }

    /// Same, also listening on a free TLS port (`tls_port`) with `tls`'s certificate.
    pub fn start_tls(tls: TlsFiles<'_>) -> Result<Self, LocalRedisError> {
        Self::launch(&Launch {
            tls: Some(tls),
            ..Launch::default()
        })
    }

    /// Starts redis-server as `launch` says, on free loopback ports, and waits until it
    /// answers PING.
    pub fn launch(launch: &Launch<'_>) -> Result<Self, LocalRedisError> {
        let mut last = None;
        // Another process can take a free port between our probe and redis-server's bind.
        for _ in 0..ATTEMPTS {
            let port = free_port().map_err(LocalRedisError::Spawn)?;
            let tls_port = match launch.tls {
                Some(_) => Some(free_port().map_err(LocalRedisError::Spawn)?),
                None => None,
            };
            match Self::spawn(port, tls_port, launch) {
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
        Self::spawn(port, None, &Launch::default())
    }

    fn spawn(
        port: u16,
        tls_port: Option<u16>,
        launch: &Launch<'_>,
    ) -> Result<Self, LocalRedisError> {
        let mut cmd = Command::new("redis-server");
        cmd.args(launch.args(port, tls_port))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        die_with_parent(&mut cmd);
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LocalRedisError::NotInstalled,
            _ => LocalRedisError::Spawn(e),
        })?;
        let mut redis = LocalRedis {
            child,
            port,
            tls_port,
        };
        redis.wait_ready(launch.password())?;
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

    /// The TLS port, for a server launched with `tls`.
    pub fn tls_port(&self) -> Option<u16> {
        self.tls_port
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

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Whether the server on `port` answers PING (after AUTH with `password`) with `+PONG`.
fn ping(port: u16, password: Option<&str>) -> bool {
    let Ok(mut s) =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200))
    else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut msg = Vec::new();
    if let Some(p) = password {
        resp::encode_command(&mut msg, &[b"AUTH", p.as_bytes()]);
    }
    resp::encode_command(&mut msg, &[b"PING"]);
    if s.write_all(&msg).is_err() {
        return false;
    }
    let mut buf = [0u8; 64];
    let mut got = Vec::new();
    loop {
        // Each reply in turn: AUTH's `+OK`, then PING's. An error (a wrong password, a server
        // still loading) is not ready.
        match resp::scan_reply(&got) {
            Ok(Some(resp::Reply::Ok { len })) if &got[..len] == b"+PONG\r\n" => return true,
            Ok(Some(resp::Reply::Ok { len })) => {
                got.drain(..len);
                continue;
            }
            Ok(Some(resp::Reply::Error { .. })) | Err(_) => return false,
            Ok(None) => {}
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
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
