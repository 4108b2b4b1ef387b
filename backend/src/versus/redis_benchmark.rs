//! redis-benchmark's command line for SETs shaped like ours, and its `--csv` output.

use crate::engine::keys;

/// Where redis-benchmark's keys go (it writes `<prefix>` + 12 digits).
const THEIR_PREFIX: &str = "redis-benchmark:";

/// redis-benchmark's command arguments for SETs shaped like ours, and the options it needs
/// to reach the server (`--cluster`, `--tls --cacert`).
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    key: String,
    value: String,
    /// `k`s of padding after the prefix, so the keys are as long as ours.
    pad: usize,
    /// Options before the command: `--cluster`, `--tls --cacert FILE`.
    options: Vec<String>,
}

/// The prefix of redis-benchmark's keys on a cluster: shorter than `THEIR_PREFIX`, so that
/// with the tag they are as long as ours.
const CLUSTER_PREFIX: &str = "rb:";

/// What redis-benchmark puts in a cluster's keys: `{tag}`, replaced per node by a hash tag of
/// one of that node's slots (2 to 4 characters between the braces).
const CLUSTER_TAG: &str = "{tag}";

impl Shape {
    /// Keys and values as long as ours on average (Redis's own cost per SET grows with them,
    /// so redis-benchmark's shorter default keys would flatter it), a fresh key each (`-r` over a keyspace so large that almost none
    /// repeat; its default `-r N` overwrites a third of them, which costs Redis less than
    /// creating keys, as ours all do).
    pub(crate) fn like_ours(run_id: u64, count: u64) -> Shape {
        let mean = |f: &dyn Fn(u64) -> usize| {
            let total: usize = (0..count).map(f).sum();
            (total + count as usize / 2) / count.max(1) as usize
        };
        let digits = |i: u64| itoa::Buffer::new().format(i).len();
        let ns = keys::namespace(run_id).len();
        // Ours: `<namespace>k<i>`, `v<i>`; theirs: `<prefix><pad>` + 12 digits, `v` + padding.
        let key_len = mean(&|i| ns + 1 + digits(i));
        let value_len = mean(&|i| 1 + digits(i));
        let pad = key_len.saturating_sub(THEIR_PREFIX.len() + 12);
        Shape {
            key: format!("{THEIR_PREFIX}{}__rand_int__", "k".repeat(pad)),
            value: format!("v{}", "0".repeat(value_len.saturating_sub(1))),
            pad,
            options: Vec::new(),
        }
    }

    /// On a cluster (`--cluster`): with a `{tag}` in the key, without which redis-benchmark
    /// stops at the first MOVED. It binds each client to one master and replaces the tag so
    /// that client's keys land on that master. The prefix is shortened (`CLUSTER_PREFIX`) to
    /// make room for the tag, so the keys stay as long as ours (give or take a character: the
    /// tag it puts in is 2 to 4 characters between the braces).
    ///
    /// And on one thread (`--threads 1`): by default it runs a thread per master, and then
    /// `-c 1` fails ("All clients disconnected... aborting": its help asks for at least as
    /// many clients as masters), and a thread with no client left stops only on its 250 ms
    /// timer, which rounds the time it reports up to the next tick. On one thread its clients
    /// share one event loop, as without `--cluster`, and the run ends with its last reply.
    pub(crate) fn on_cluster(&mut self) {
        let pad = (THEIR_PREFIX.len() + self.pad)
            .saturating_sub(CLUSTER_PREFIX.len() + CLUSTER_TAG.len());
        self.key = format!(
            "{CLUSTER_PREFIX}{CLUSTER_TAG}{}__rand_int__",
            "k".repeat(pad)
        );
        self.options
            .extend(["--cluster", "--threads", "1"].map(String::from));
    }

    /// Over TLS (`--tls`), trusting the CA certificate in `ca` (`--cacert`).
    pub(crate) fn over_tls(&mut self, ca: &std::path::Path) {
        self.options.push("--tls".into());
        self.options.push("--cacert".into());
        self.options.push(ca.to_string_lossy().into_owned());
    }
}

/// Whether this machine's redis-benchmark was built with TLS (its `--help` lists `--tls`).
pub async fn supports_tls() -> anyhow::Result<bool> {
    use anyhow::Context;
    let out = tokio::process::Command::new("redis-benchmark")
        .arg("--help")
        .output()
        .await
        .context("running redis-benchmark --help (Debian: apt-get install redis-tools)")?;
    let help = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    Ok(help.lines().any(|l| l.trim_start().starts_with("--tls ")))
}

/// `redis-benchmark -c clients -P k -n count` of SETs shaped as `shape` against
/// 127.0.0.1:`port`, over a keyspace of `keyspace` (`-r`; at most `MAX_KEYSPACE`), printing
/// `--csv`.
pub(crate) fn redis_benchmark(
    port: u16,
    clients: u32,
    k: u32,
    count: u64,
    keyspace: u64,
    shape: &Shape,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("redis-benchmark");
    cmd.args([
        "-h",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-c",
        &clients.to_string(),
        "-P",
        &k.to_string(),
        "-n",
        &count.to_string(),
        "-r",
        &keyspace.min(MAX_KEYSPACE).to_string(),
        "--csv",
    ]);
    cmd.args(&shape.options);
    cmd.args(["SET", &shape.key, &shape.value]);
    cmd
}

/// redis-benchmark's `-r` at most: its random numbers are C ints, and above 2^31 it silently
/// writes one key.
pub(crate) const MAX_KEYSPACE: u64 = 2_000_000_000;

/// redis-benchmark's `--csv` line for the SETs: (requests per second, p50 in µs).
pub(crate) fn parse_csv(stdout: &str) -> Option<(f64, f64)> {
    // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...
    // "SET redis-benchmark:…","123456.79","0.070","0.016","0.023",...
    let line = stdout.lines().find(|l| l.starts_with("\"SET"))?;
    let cells: Vec<&str> = line.trim_matches('"').split("\",\"").collect();
    let rps = cells.get(1)?.parse().ok()?;
    let p50_ms: f64 = cells.get(4)?.parse().ok()?;
    Some((rps, p50_ms * 1000.0))
}

#[cfg(test)]
mod tests {
    #[test]
    fn their_sets_are_shaped_like_ours() {
        let run_id = 1_764_701_234_567;
        let s = super::Shape::like_ours(run_id, 100_000);
        // Ours: "pipescope:1764701234567:k" + 4.9 digits on average; "v" + 4.9 digits.
        assert_eq!(s.key.replace("__rand_int__", "000000012345").len(), 30);
        assert_eq!(s.value, "v00000");
        assert!(s.key.starts_with(super::THEIR_PREFIX));
        let mut c = super::Shape::like_ours(run_id, 100_000);
        c.on_cluster();
        assert_eq!(c.key.replace("__rand_int__", "000000012345").len(), 30);
        assert!(c.key.contains("{tag}"), "{}", c.key);
        assert_eq!(c.options, ["--cluster", "--threads", "1"]);
    }
}
