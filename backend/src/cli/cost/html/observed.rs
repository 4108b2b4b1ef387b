//! The observation's file: `pipescope observe --html` as a child process, exactly as a user
//! runs it, in front of a redis-server of our own, while two redis-benchmarks send SETs
//! through it on `connections` connections, half one at a time and half pipelined 100 deep;
//! then Ctrl-C, and the file it wrote.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncReadExt, BufReader};

use pipescope::local_redis::LocalRedis;

/// Logs the moment the file's table shows `rows` observed connections.
pub fn drawn(rows: usize) -> String {
    format!(
        "<script>new MutationObserver((m,o)=>{{if(document.querySelectorAll(\
         '#observed-table tr.observed-row').length>={rows}){{o.disconnect();\
         console.log('pipescope-interactive '+performance.now())}}}})\
         .observe(document,{{childList:true,subtree:true}})</script>"
    )
}

/// Writes the observation into `file`; the connections observe reported.
pub async fn make(file: &Path, count: u64, connections: u32) -> anyhow::Result<usize> {
    let redis = LocalRedis::start().context("starting a redis-server for the experiment")?;
    let mut observe = tokio::process::Command::new(std::env::current_exe()?)
        .args([
            "observe",
            "--redis-url",
            &redis.url(),
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--no-equivalent", "--json", "--html"])
        .arg(file)
        .env_remove("REDIS_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("starting pipescope observe")?;
    let mut notes = BufReader::new(observe.stderr.take().expect("piped"));
    let listen = pipescope::child_line::first(&mut notes, Duration::from_secs(30), |line| {
        line.strip_prefix("listening ")
            .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
    })
    .await
    .context("pipescope observe never said where it listens")?;
    // Its later notes are read on, so that it never blocks on a full pipe.
    let notes = tokio::spawn(async move {
        let mut rest = String::new();
        let _ = notes.read_to_string(&mut rest).await;
        rest
    });

    let waiting = connections / 2;
    let benches = [(waiting, 1), (connections - waiting, 100)]
        .into_iter()
        .filter(|&(c, _)| c > 0)
        .map(|(c, depth)| {
            let sets = count * u64::from(c) / u64::from(connections);
            eprintln!(
                "redis-benchmark -c {c} -P {depth} -n {sets} SETs through pipescope observe --html {}",
                file.display()
            );
            benchmark(listen.port(), c, depth, sets)
        });
    futures_util::future::try_join_all(benches).await?;

    unsafe {
        libc::kill(
            observe.id().context("observe ended early")? as i32,
            libc::SIGINT,
        )
    };
    let mut report = String::new();
    observe
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut report)
        .await?;
    let status = tokio::time::timeout(Duration::from_secs(60), observe.wait())
        .await
        .context("pipescope observe did not end within 60 s of Ctrl-C")??;
    let notes = notes.await.unwrap_or_default();
    anyhow::ensure!(
        status.success(),
        "pipescope observe --html failed ({status}): {notes}"
    );
    let seen: Vec<serde_json::Value> = serde_json::from_str(&report)
        .with_context(|| format!("pipescope observe's report is not a JSON array: {report}"))?;
    Ok(seen.len())
}

/// `redis-benchmark -c clients -P depth` of `sets` SETs on random keys, through `port`.
async fn benchmark(port: u16, clients: u32, depth: u32, sets: u64) -> anyhow::Result<()> {
    let out = tokio::process::Command::new("redis-benchmark")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-c", &clients.to_string(), "-P", &depth.to_string()])
        .args(["-n", &sets.to_string(), "-r", "100000", "-q"])
        .args(["SET", "costhtml:__rand_int__", "v00000"])
        .stdin(Stdio::null())
        .output()
        .await
        .context("running redis-benchmark (Debian's redis-tools)")?;
    anyhow::ensure!(
        out.status.success(),
        "redis-benchmark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}
