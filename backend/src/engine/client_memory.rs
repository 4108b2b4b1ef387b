//! Redis's memory while a run is in flight (`shared::RedisMemory`): a second connection, straight
//! to Redis, polls `CLIENT LIST ID <id>` for the run's own connection and `INFO memory` every
//! `INTERVAL` and keeps the peaks. It runs on the caller's runtime, not on the run's thread, so
//! the run's own replies are never held up behind a sample.

use std::future::Future;
use std::time::Duration;

use shared::RedisMemory;
use tokio::sync::oneshot;

use crate::target::RedisTarget;

/// How often Redis is asked. Each sample is one round trip on the admin connection and a few
/// µs of Redis's time, so polling costs a run well under 1 % of Redis's time.
pub const INTERVAL: Duration = Duration::from_millis(2);

/// One connection's line of `CLIENT LIST`, the fields kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFields {
    pub tot_mem: u64,
    pub omem: u64,
    pub qbuf: u64,
}

/// The first line of a `CLIENT LIST` reply; `None` without `tot-mem` (no such client).
pub fn parse_client_line(list: &str) -> Option<ClientFields> {
    let line = list.lines().next()?;
    let field = |name: &str| {
        line.split(' ')
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
    };
    Some(ClientFields {
        tot_mem: field("tot-mem")?,
        omem: field("omem").unwrap_or(0),
        qbuf: field("qbuf").unwrap_or(0),
    })
}

/// `used_memory` in an `INFO memory` reply.
pub fn parse_used_memory(info: &str) -> Option<u64> {
    info.lines()
        .find_map(|l| l.trim().strip_prefix("used_memory:"))
        .and_then(|v| v.parse().ok())
}

/// An admin connection ready to sample, with `used_memory` read before the run.
pub struct Sampler {
    con: redis::aio::MultiplexedConnection,
    before: Option<u64>,
}

impl Sampler {
    /// Connects straight to Redis (past any proxy) and reads `used_memory`; `None` (logged) if
    /// Redis cannot be reached this way: the run goes on without the figures.
    pub async fn connect(target: &RedisTarget) -> Option<Sampler> {
        let mut con = match target.direct().admin_connection().await {
            Ok(con) => con,
            Err(e) => {
                tracing::warn!("no connection to sample Redis's memory: {e}");
                return None;
            }
        };
        let before = used_memory(&mut con).await;
        Some(Sampler { con, before })
    }

    /// Runs `run` to its end while sampling, from the moment its connection's id arrives on
    /// `id` until `run` finishes. The first sample is taken before the run's first command:
    /// the id comes with a sender the sampler answers once it has it (`Ready`), so even a
    /// run shorter than one interval has a sample. `None` if no id came (CLIENT ID refused, or
    /// the run failed before connecting) or Redis answered no sample; the run's result is
    /// returned either way.
    pub async fn sample_while<T>(
        mut self,
        id: oneshot::Receiver<(u64, Ready)>,
        run: impl Future<Output = T>,
    ) -> (T, Option<RedisMemory>) {
        tokio::pin!(run);
        let id = tokio::select! {
            out = &mut run => return (out, None),
            id = id => id.ok(),
        };
        let Some((id, ready)) = id else {
            return (run.await, None);
        };
        let before = self.before.unwrap_or(0);
        let mut memory = RedisMemory {
            used_memory_before: before,
            used_memory_peak: before,
            interval_us: INTERVAL.as_micros() as u32,
            ..RedisMemory::default()
        };
        // False once the run's connection is gone (CLIENT LIST ID lists nothing).
        let mut take = async |memory: &mut RedisMemory| {
            let (client, used) = match sample(&mut self.con, id).await {
                Sample::Taken(client, used) => (client, used),
                Sample::Gone => return false,
                Sample::NoAnswer => return true,
            };
            memory.client_tot_mem_peak = memory.client_tot_mem_peak.max(client.tot_mem);
            memory.client_omem_peak = memory.client_omem_peak.max(client.omem);
            memory.client_qbuf_peak = memory.client_qbuf_peak.max(client.qbuf);
            memory.used_memory_peak = memory.used_memory_peak.max(used);
            memory.samples += 1;
            true
        };
        take(&mut memory).await;
        let _ = ready.send(());
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + INTERVAL, INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let out = loop {
            tokio::select! {
                biased;
                out = &mut run => break out,
                // The run's connection is gone (its run is ending): sampling on would only
                // add commands to the run's window.
                _ = tick.tick() => if !take(&mut memory).await {
                    break run.await;
                },
            }
        };
        (out, (memory.samples > 0).then_some(memory))
    }
}

/// Answered by the sampler once it has sampled the run's connection before its first command.
pub type Ready = oneshot::Sender<()>;

/// The run's side: hands its connection's id to the sampler, if there is one, and waits (at
/// most `wait`) until it has taken its first sample, before the run's first command and its
/// clock start.
pub async fn announce(to: oneshot::Sender<(u64, Ready)>, id: u64, wait: Duration) {
    let (ready, sampled) = oneshot::channel();
    if to.send((id, ready)).is_ok() {
        let _ = tokio::time::timeout(wait, sampled).await;
    }
}

/// One sample: the run's connection and `used_memory`, in one round trip. `None` once the
/// connection is gone (the run's end) or if Redis refuses.
/// One sample of the run's connection.
enum Sample {
    Taken(ClientFields, u64),
    /// CLIENT LIST ID listed no connection: the run's is closed.
    Gone,
    /// Redis did not answer, or not in words this reads.
    NoAnswer,
}

async fn sample(con: &mut redis::aio::MultiplexedConnection, id: u64) -> Sample {
    let Ok((list, info)): redis::RedisResult<(String, String)> = redis::pipe()
        .cmd("CLIENT")
        .arg("LIST")
        .arg("ID")
        .arg(id)
        .cmd("INFO")
        .arg("memory")
        .query_async(con)
        .await
    else {
        return Sample::NoAnswer;
    };
    if list.trim().is_empty() {
        return Sample::Gone;
    }
    match (parse_client_line(&list), parse_used_memory(&info)) {
        (Some(client), Some(used)) => Sample::Taken(client, used),
        _ => Sample::NoAnswer,
    }
}

async fn used_memory(con: &mut redis::aio::MultiplexedConnection) -> Option<u64> {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(con)
        .await
        .ok()?;
    parse_used_memory(&info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_client_line_and_used_memory() {
        let list = "id=7 addr=127.0.0.1:50000 laddr=127.0.0.1:6400 fd=8 name= age=0 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=16890 qbuf-free=16 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=3 omem=61440 tot-mem=99328 events=rw cmd=set user=default redir=-1 resp=2\n";
        assert_eq!(
            parse_client_line(list),
            Some(ClientFields {
                tot_mem: 99_328,
                omem: 61_440,
                qbuf: 16_890
            })
        );
        assert_eq!(parse_client_line(""), None, "no such client");
        let info = "# Memory\r\nused_memory:1234567\r\nused_memory_human:1.18M\r\n";
        assert_eq!(parse_used_memory(info), Some(1_234_567));
        assert_eq!(parse_used_memory("# Memory\r\n"), None);
    }
}
