//! An observation as one file, for `cost html --observed`: `pipescope observe --html` as a
//! child process, exactly as a user runs it, in front of a redis-server of our own, while two
//! redis-benchmarks send SETs through it on `connections` connections, half one at a time and
//! half pipelined 100 deep; then Ctrl-C, and the file it wrote.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;

use super::observe_child::ObserveChild;
use crate::engine::keys;
use crate::local_redis::LocalRedis;
use crate::versus::{MAX_KEYSPACE, Shape, redis_benchmark};

/// Writes the observation by `exe` (this very binary) into `file`; the connections observe
/// reported.
pub async fn make(exe: &Path, file: &Path, count: u64, connections: u32) -> anyhow::Result<usize> {
    let redis = LocalRedis::start().context("starting a redis-server for the experiment")?;
    let file_arg = file.to_string_lossy();
    let observe = ObserveChild::start(exe, &redis.url(), &["--html", &file_arg]).await?;
    let listen = observe.addr;

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

    let ended = observe.stop(libc::SIGINT, Duration::from_secs(60)).await?;
    anyhow::ensure!(
        ended.status.success(),
        "pipescope observe --html failed ({}): {}",
        ended.status,
        ended.notes
    );
    let report = ended.report;
    let seen: Vec<serde_json::Value> = serde_json::from_str(&report)
        .with_context(|| format!("pipescope observe's report is not a JSON array: {report}"))?;
    Ok(seen.len())
}

/// `redis-benchmark -c clients -P depth` of `sets` SETs shaped like ours, through `port`.
async fn benchmark(port: u16, clients: u32, depth: u32, sets: u64) -> anyhow::Result<()> {
    let shape = Shape::like_ours(keys::first_run_id(), sets);
    let out = redis_benchmark(port, clients, depth, sets, MAX_KEYSPACE, &shape)
        .stdin(Stdio::null())
        .output()
        .await
        .context("running redis-benchmark (Debian: apt-get install redis-tools)")?;
    anyhow::ensure!(
        out.status.success(),
        "redis-benchmark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}
