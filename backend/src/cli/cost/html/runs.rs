//! The runs' file: the seed's experiment (`bench --mode compare`) or a batch sweep (`bench
//! --mode sweep`) on a redis-server of our own, written by `bench --html` as a child process,
//! exactly as a user would write it.

use std::os::fd::AsFd;
use std::path::Path;
use std::process::Stdio;

use anyhow::Context;

use pipescope::local_redis::LocalRedis;

/// Writes `--count` SETs per run at batches up to `batch` (`sweep`) or sequentially and at
/// `batch` into `file`.
pub fn make(file: &Path, count: u64, batch: u32, sweep: bool) -> anyhow::Result<()> {
    let redis = LocalRedis::start().context("starting a redis-server for the experiment")?;
    let (mode, batch_flag) = match sweep {
        true => ("sweep", "--max-batch"),
        false => ("compare", "--batch"),
    };
    eprintln!(
        "bench --mode {mode} --count {count} {batch_flag} {batch} --html {}",
        file.display()
    );
    // Its table goes to our stderr: stdout is this job's.
    let table = std::io::stderr().as_fd().try_clone_to_owned()?;
    let status = std::process::Command::new(std::env::current_exe()?)
        .args(["bench", "--mode", mode, "--count", &count.to_string()])
        .args([batch_flag, &batch.to_string(), "--redis-url", &redis.url()])
        .arg("--html")
        .arg(file)
        .env_remove("REDIS_URL")
        .stdout(Stdio::from(table))
        .status()
        .context("running pipescope bench")?;
    anyhow::ensure!(status.success(), "pipescope bench --html failed ({status})");
    Ok(())
}
