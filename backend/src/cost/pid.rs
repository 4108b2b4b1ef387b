//! What `observe --pid` costs the traced client: `redis-benchmark -c 1 -P 1` of SETs on our
//! own redis-server, untraced, traced by pipescope (attached by pid to a shell that then
//! execs redis-benchmark, so the whole run is traced), and under `strace -f` for comparison,
//! in rounds that rotate who goes first, each run on an empty database. A fourth run has only
//! the programs on the syscall tracepoints attached, returning at once: the part of the cost
//! that comes from the kernel's hooks themselves (every syscall on the host takes its slow
//! path while they are attached), which no work saved in the programs can remove.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::io::AsyncWriteExt;

use crate::syscalls::{Target, Tracer};

use crate::versus::{MAX_KEYSPACE, Median, Shape, parse_csv, redis_benchmark};

/// `pipescope cost pid`: throughput traced and under strace, each against untraced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PidCost {
    pub count: u64,
    pub rounds: usize,
    pub untraced_ops_per_sec: Median,
    pub traced_ops_per_sec: Median,
    pub strace_ops_per_sec: Median,
    /// The syscall tracepoints' programs attached, returning at once.
    pub hooks_ops_per_sec: Median,
    /// Median of the rounds' traced / untraced throughput.
    pub traced_ratio: Median,
    /// Median of the rounds' hooks-alone / untraced throughput: the most tracing syscalls
    /// this way can leave.
    pub hooks_ratio: Median,
    /// Median of the rounds' strace / untraced throughput.
    pub strace_ratio: Median,
    /// The client's own CPU (user + system, its kernel's tracing included) per SET, µs:
    /// steadier than throughput on a shared machine.
    pub untraced_cpu_us: Median,
    pub traced_cpu_us: Median,
    pub strace_cpu_us: Median,
    pub hooks_cpu_us: Median,
    /// The traced runs' sends per SET on redis-benchmark's socket (1 at -P 1): the trace saw
    /// every command.
    pub sends_per_set: Median,
}

#[derive(Clone, Copy, Debug)]
enum How {
    Untraced,
    Traced,
    Strace,
    HooksAlone,
}

/// `rounds` rounds (at least; more while `budget` lasts, at most 21) of `count` SETs each
/// of the four ways against our redis-server on `port` (`url`).
pub async fn measure(
    url: &str,
    port: u16,
    count: u64,
    rounds: usize,
    budget: Duration,
) -> anyhow::Result<PidCost> {
    let began = std::time::Instant::now();
    let shape = Shape::like_ours(crate::engine::keys::first_run_id(), count);
    let client = redis::Client::open(url)?;
    let mut admin = client.get_multiplexed_async_connection().await?;
    let hows = [How::Untraced, How::Traced, How::Strace, How::HooksAlone];
    let (mut untraced, mut traced, mut strace, mut hooks) = (vec![], vec![], vec![], vec![]);
    let mut sends = vec![];
    let mut cpu: [Vec<f64>; 4] = Default::default();
    let mut round = 0;
    while round < rounds || (began.elapsed() < budget && round < 21) {
        let mut got = [0.0; 4];
        for k in 0..4 {
            // Rotating who goes first.
            let how = hows[(round + k) % 4];
            let _: () = redis::cmd("FLUSHALL")
                .arg("SYNC")
                .query_async(&mut admin)
                .await?;
            let before = children_cpu_us();
            let (rps, sent) = run(how, port, count, &shape).await?;
            cpu[how as usize].push((children_cpu_us() - before) / count as f64);
            got[how as usize] = rps;
            if let (How::Traced, Some(s)) = (how, sent) {
                sends.push(s as f64 / count as f64);
            }
        }
        eprintln!(
            "round {}: untraced {:.0} SETs/s, traced {:.0} ({:.2}×), strace -f {:.0} ({:.2}×), hooks alone {:.0} ({:.2}×)",
            round + 1,
            got[0],
            got[1],
            got[1] / got[0],
            got[2],
            got[2] / got[0],
            got[3],
            got[3] / got[0]
        );
        untraced.push(got[0]);
        traced.push(got[1]);
        strace.push(got[2]);
        hooks.push(got[3]);
        round += 1;
    }
    let _: () = redis::cmd("FLUSHALL")
        .arg("SYNC")
        .query_async(&mut admin)
        .await?;
    let ratio = |a: &[f64], b: &[f64]| Median::of(a.iter().zip(b).map(|(x, y)| x / y).collect());
    Ok(PidCost {
        count,
        rounds: round,
        traced_ratio: ratio(&traced, &untraced),
        strace_ratio: ratio(&strace, &untraced),
        hooks_ratio: ratio(&hooks, &untraced),
        untraced_ops_per_sec: Median::of(untraced),
        traced_ops_per_sec: Median::of(traced),
        strace_ops_per_sec: Median::of(strace),
        hooks_ops_per_sec: Median::of(hooks),
        sends_per_set: Median::of(sends),
        untraced_cpu_us: Median::of(cpu[0].clone()),
        traced_cpu_us: Median::of(cpu[1].clone()),
        strace_cpu_us: Median::of(cpu[2].clone()),
        hooks_cpu_us: Median::of(cpu[3].clone()),
    })
}

/// The CPU (user + system) of this process's children that have ended, µs.
fn children_cpu_us() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(u.ru_utime) + us(u.ru_stime)
}

type Start = fn(Target) -> Result<Tracer, crate::syscalls::TraceError>;

/// One redis-benchmark run: its SETs/s, and (traced) the sends the trace saw on its socket.
async fn run(how: How, port: u16, count: u64, shape: &Shape) -> anyhow::Result<(f64, Option<u64>)> {
    let bench = redis_benchmark(port, 1, 1, count, MAX_KEYSPACE, shape);
    let argv: Vec<String> = std::iter::once(bench.as_std().get_program())
        .chain(bench.as_std().get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let quoted: Vec<String> = argv.iter().map(|a| format!("'{a}'")).collect();
    let script = match how {
        How::Strace => format!(
            "read go; exec strace -f -qq -o /dev/null {}",
            quoted.join(" ")
        ),
        _ => format!("read go; exec {}", quoted.join(" ")),
    };
    // A shell that waits for a line, then execs the run: traced from its first syscall.
    let mut shell = tokio::process::Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting redis-benchmark (Debian: apt-get install redis-tools strace)")?;
    let pid = shell.id().context("the shell ended at once")?;
    let start = match how {
        How::Traced => Some(Tracer::start as Start),
        How::HooksAlone => Some(Tracer::hooks_alone as Start),
        How::Untraced | How::Strace => None,
    };
    let tracer = match start {
        Some(start) => {
            Some(tokio::task::spawn_blocking(move || start(Target::Pids(vec![pid]))).await??)
        }
        None => None,
    };
    let mut stdin = shell.stdin.take().context("the shell's stdin")?;
    stdin.write_all(b"go\n").await?;
    drop(stdin);
    let out = shell.wait_with_output().await?;
    let sent = match tracer {
        Some(t) => {
            let traced = tokio::task::spawn_blocking(move || t.finish()).await??;
            if traced.lost > 0 {
                eprintln!(
                    "the trace lost {} records (its ring buffers filled)",
                    traced.lost
                );
            }
            let to_redis = traced.sockets.iter().filter(|s| s.peer.port() == port);
            Some(to_redis.map(|s| s.evidence.sends).sum())
        }
        None => None,
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (rps, _) = parse_csv(&stdout).with_context(|| {
        format!(
            "unexpected redis-benchmark output ({how:?}): {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok((rps, sent))
}
