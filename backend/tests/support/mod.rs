//! Fixtures shared by the integration tests: a real redis-server per test on a free loopback
//! port, Redis inspection helpers, and the real backend served in-process on a free port.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use pipescope::local_redis::LocalRedis;
use pipescope::recorder::Progress;
use pipescope::server::hub::Hub;
use pipescope::target::RedisTarget;
use tokio::sync::oneshot;

/// A fresh redis-server for one test (never 6379, never shared).
pub fn redis() -> (LocalRedis, RedisTarget) {
    let redis = LocalRedis::start()
        .expect("redis-server must be installed for the tests (apt-get install redis-server)");
    let target = RedisTarget::parse(&redis.url()).unwrap();
    (redis, target)
}

/// The password `redis_with_password`'s servers require.
pub const PASSWORD: &str = "fidelity-pw";

/// A fresh redis-server that requires `PASSWORD`, and a URL that authenticates and selects
/// db 3: the engine's connections then begin with AUTH and SELECT.
pub fn redis_with_password() -> (LocalRedis, RedisTarget) {
    let redis = LocalRedis::start_with_args(&["--requirepass", PASSWORD])
        .expect("redis-server must be installed for the tests (apt-get install redis-server)");
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{}/3", redis.port());
    let target = RedisTarget::parse(&url).unwrap();
    (redis, target)
}

pub async fn admin(target: &RedisTarget) -> redis::aio::MultiplexedConnection {
    target.admin_connection().await.unwrap()
}

/// `INFO commandstats` as command → calls, e.g. "set" → 100000.
pub async fn command_calls(target: &RedisTarget) -> HashMap<String, u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut admin(target).await)
        .await
        .unwrap();
    info.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("cmdstat_")?;
            let (name, fields) = rest.split_once(':')?;
            let calls = fields
                .split(',')
                .find_map(|f| f.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name.to_string(), calls))
        })
        .collect()
}

pub async fn dbsize(target: &RedisTarget) -> u64 {
    redis::cmd("DBSIZE")
        .query_async(&mut admin(target).await)
        .await
        .unwrap()
}

/// Every key under `pipescope:` (SCAN, so it is what a user would see).
pub async fn pipescope_keys(target: &RedisTarget) -> Vec<String> {
    let mut con = admin(target).await;
    let mut cursor = 0u64;
    let mut keys = Vec::new();
    loop {
        let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg("pipescope:*")
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut con)
            .await
            .unwrap();
        keys.extend(found);
        if next == 0 {
            return keys;
        }
        cursor = next;
    }
}

/// The real backend (router, hub, websocket, page) on 127.0.0.1:<free port>.
pub struct Server {
    pub addr: SocketAddr,
    pub hub: Hub,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub async fn start(target: RedisTarget) -> Server {
        Self::start_with_network(target, Default::default()).await
    }

    /// The same, with a network dialled in between the engine and Redis.
    pub async fn start_with_network(target: RedisTarget, network: shared::Network) -> Server {
        let version = target.server_version().await.unwrap();
        Self::serve(Hub::with_network(target, version, network).await.unwrap()).await
    }

    /// The same, with `token` required to start or cancel runs (as when listening beyond
    /// loopback).
    pub async fn start_with_token(target: RedisTarget, token: &str) -> Server {
        let version = target.server_version().await.unwrap();
        let hub = Hub::with_network(target, version, shared::Network::LOOPBACK)
            .await
            .unwrap();
        Self::serve(hub.require_token(token.into())).await
    }

    /// The real backend around a hub the test made.
    pub async fn serve(hub: Hub) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(pipescope::server::serve(listener, hub.clone(), async {
            let _ = stopped.await;
        }));
        Server {
            addr,
            hub,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    pub fn http_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Shuts down as Ctrl-C would, and waits until serving has ended.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap()
    }
}
pub mod browser;
pub mod capture_demo;
pub mod clients;
pub mod commandstats;
pub mod firefox;
pub mod hogs;
pub mod html_file;
pub mod libraries;
pub mod netns;
pub mod observe;
pub mod oracle;
pub mod tcpdump;
pub mod tls;
pub mod wire;

/// Each node's key count (DBSIZE), in the cluster's node order.
pub fn dbsizes(cluster: &pipescope::cluster::LocalCluster) -> Vec<u64> {
    (0..cluster.ports().len())
        .map(|i| {
            let mut c = redis::Client::open(cluster.node_url(i))
                .unwrap()
                .get_connection()
                .unwrap();
            redis::cmd("DBSIZE").query(&mut c).unwrap()
        })
        .collect()
}

/// The `pipescope` binary under test, started as a user would: no `REDIS_URL` from this
/// process's environment, logging at `log` (`RUST_LOG`, e.g. "pipescope=info").
pub fn pipescope(log: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"));
    cmd.env_remove("REDIS_URL").env("RUST_LOG", log);
    cmd
}

/// Reads a child's stdout on a thread of its own (to the end, so the child never blocks on a
/// full pipe) and returns the first line `pick` accepts, within `limit`; fails with `what` and
/// the lines seen when the deadline passes or the output ends first.
pub fn stdout_line<T: Send + 'static>(
    stdout: std::process::ChildStdout,
    limit: Duration,
    what: &str,
    mut pick: impl FnMut(&str) -> Option<T> + Send + 'static,
) -> T {
    use std::io::BufRead;
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut found = false;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if found {
                continue;
            }
            let picked = pick(&line);
            found = picked.is_some();
            let _ = tx.send(picked.ok_or(line));
        }
    });
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Ok(found)) => return found,
            Ok(Err(line)) => seen.push(line),
            Err(RecvTimeoutError::Timeout) => {
                panic!("{what}: not within {limit:?}; stdout so far: {seen:?}")
            }
            Err(RecvTimeoutError::Disconnected) => panic!("{what}: stdout ended: {seen:?}"),
        }
    }
}

/// A check that cannot run here (a tool missing, ptrace denied): under `CI=true` the test
/// fails, saying why; elsewhere it prints a visible skip and the caller returns.
pub fn cannot_check(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and this check cannot run: {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

/// `fut`, which must finish within `limit`; fails with `what` otherwise.
pub async fn within<T>(
    limit: Duration,
    what: &str,
    fut: impl std::future::Future<Output = T>,
) -> T {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {limit:?}"))
}

/// Waits until `progress` counts `replies` replies, at most `limit`; fails if `run` ended
/// first (with how it ended) or the deadline passes (with how far it got).
pub async fn until_progress<T: std::fmt::Debug>(
    progress: &Progress,
    replies: u64,
    limit: Duration,
    run: &mut tokio::task::JoinHandle<T>,
) {
    let deadline = Instant::now() + limit;
    while progress.read().0 < replies {
        if run.is_finished() {
            let ended: String = format!("{:?}", run.await.unwrap())
                .chars()
                .take(300)
                .collect();
            panic!("the run ended before {replies} replies: {ended}…");
        }
        assert!(
            Instant::now() < deadline,
            "{} of {replies} replies within {limit:?}",
            progress.read().0
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Runs this test binary's ignored test `child` (its full path, `module::name`) under `strace -f -qq` with `strace_args`
/// (e.g. `-e trace=…`) and `env`, and returns its stdout and the trace. `None` where strace
/// is not installed or may not trace here (see `cannot_check`: a failure under `CI=true`).
pub fn under_strace(
    strace_args: &[&str],
    child: &str,
    env: (&str, &str),
) -> Option<(String, String)> {
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        cannot_check("strace is not installed (apt-get install strace)");
        return None;
    }
    let trace = std::env::temp_dir().join(format!(
        "pipescope-{}-{}.txt",
        child.replace("::", "-"),
        std::process::id()
    ));
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq"])
        .args(strace_args)
        .arg("-o")
        .arg(&trace)
        .arg(std::env::current_exe().unwrap())
        .args([child, "--exact", "--ignored", "--nocapture"])
        .env(env.0, env.1)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("ptrace") {
        cannot_check(&format!(
            "strace may not trace here (ptrace denied): {stderr}"
        ));
        return None;
    }
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the child test {child} did not run (renamed?): {stdout}"
    );
    let syscalls = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    Some((stdout, syscalls))
}

/// Children of `pid` whose command name is `name`, from /proc.
pub fn children_named(pid: u32, name: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                return false;
            };
            // "pid (comm) state ppid ..."
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                return false;
            };
            let comm = &stat[open + 1..close];
            let ppid = stat[close + 2..]
                .split(' ')
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok());
            comm == name && ppid == Some(pid)
        })
        .collect()
}

/// A node's `cmdstat_set` calls and its keys (DBSIZE), over a blocking connection to `url`.
pub fn set_calls_and_keys(url: &str) -> (u64, u64) {
    let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut c)
        .unwrap();
    let sets = info
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap());
    (sets, redis::cmd("DBSIZE").query(&mut c).unwrap())
}
