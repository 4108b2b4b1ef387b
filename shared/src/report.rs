//! What a run produced: the summary sent in `Finished` and printed by `pipescope bench`.

use serde::{Deserialize, Serialize};

use crate::spec::RunSpec;

/// Request latency (reply parsed − request issued) in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Latency {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// The share (0..=1) of all requests' summed latency taken by the slowest 1 % of them. For
    /// a sequential run that is the share of its wall time: why N × p50 falls short of it.
    #[serde(default)]
    pub slowest_1pct_share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub spec: RunSpec,
    /// Commands that got their reply (equals `spec.count` unless the run was cut short).
    pub done: u64,
    pub wall_us: u64,
    pub ops_per_sec: f64,
    /// Times the engine waited for the network: one per command or one per batch.
    pub round_trips: u64,
    /// Writes (send syscalls) the engine made: one per batch, or one per command when a
    /// pipeline flushes each command.
    #[serde(default)]
    pub writes: u64,
    /// Commands on the wire, as Redis counts them (MULTI and EXEC included; one MSET for a
    /// batch of keys).
    #[serde(default)]
    pub wire_commands: u64,
    pub latency: Latency,
    /// With the latency proxy in the path: where a round trip's time went, measured by its
    /// wire tap (medians over the stamped requests).
    #[serde(default)]
    pub split: Option<RoundTripSplit>,
    /// Redis's own time per command of this run's kind (µs), measured by Redis: the change in
    /// `INFO commandstats` `calls` and `usec` for that command across the run (other clients'
    /// calls of the same command in that window are counted too). `None` where Redis did not say.
    #[serde(default)]
    pub redis_usec_per_call: Option<f64>,
    /// What the run cost Redis besides its commands' own time, from `INFO cpu` and
    /// `INFO stats` read before and after it. `None` where Redis did not say.
    #[serde(default)]
    pub redis_load: Option<RedisLoad>,
    /// With the other client (`RunSpec::other_client`): where its INCRs landed among the run's,
    /// from the counter values Redis replied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleaving: Option<crate::interleave::Interleaving>,
    /// Redis's memory while the run was in flight, sampled by polling Redis (`RedisMemory`).
    /// `None` where it was not sampled (not instrumented, or Redis refused CLIENT ID).
    #[serde(default)]
    pub redis_memory: Option<RedisMemory>,
    /// On a Redis Cluster: what each master got, and the redirects on the way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterRun>,
}

/// A run on a Redis Cluster, counted by the engine: each batch goes out as one sub-batch per
/// master it touches, side by side.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClusterRun {
    pub masters: Vec<MasterShare>,
    /// MOVED replies: the slot's master had changed; the command went again where the reply
    /// said, and the slot map was read again.
    pub moved: u64,
    /// ASK replies: the slot was migrating; the command went again, after ASKING, to the
    /// node importing it.
    pub ask: u64,
    /// Times the slot map was read during the run (after MOVED; at most once per batch).
    pub map_refreshes: u64,
}

/// One master's part of a cluster run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MasterShare {
    /// `host:port`.
    pub addr: String,
    /// Commands it executed for the run (redirected ones counted where they ran).
    pub commands: u64,
    /// Sub-batches it answered: its round trips.
    pub round_trips: u64,
}

/// Redis's CPU, connections and commands across a run, measured by Redis (`INFO cpu`,
/// `INFO stats`) when the run's set-up was done (a GET run's keys seeded, the other client
/// connected: each on a connection of its own) and again after its last reply. Counters of
/// the whole server: anything else Redis did in that window counts too.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RedisLoad {
    /// CPU time Redis's process used (`used_cpu_user` + `used_cpu_sys`, all its threads),
    /// µs, over the run's commands on the wire (`RunSummary::wire_commands`).
    pub cpu_us_per_command: f64,
    /// The CPU time itself, µs.
    pub cpu_us: f64,
    /// Connections Redis accepted during the run (`total_connections_received`), less the
    /// one that read the counters afterwards: the run's own (one, or a pool's).
    pub connections_received: u64,
    /// Commands Redis processed in the window (`total_commands_processed`): the run's on the
    /// wire, the other client's commands when it ran, and pipescope's own few readings (the INFO
    /// that opened the window, the run connection's CLIENT ID, the memory sampler's CLIENT LIST
    /// and INFO memory). `None` where INFO left it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands_processed: Option<u64>,
}

/// Redis's memory during a run, measured by polling Redis on a second (admin) connection every
/// `interval_us` while the run was in flight: `CLIENT LIST ID <id>` for the run's own
/// connection (its id from `CLIENT ID`, asked on it before the first command) and
/// `INFO memory`. Peaks are the largest of the `samples` taken, so a peak between two samples
/// can be missed; the polling itself costs Redis a little time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RedisMemory {
    /// Peak `tot-mem` of the run's connection, bytes: everything Redis held for this client
    /// (query buffer, arguments, output buffers).
    pub client_tot_mem_peak: u64,
    /// Peak `omem`: replies waiting in the client's output list, bytes.
    pub client_omem_peak: u64,
    /// Peak `qbuf`: request bytes read but not yet executed, bytes.
    pub client_qbuf_peak: u64,
    /// `INFO memory` `used_memory` just before the run, and the largest sampled during it.
    pub used_memory_before: u64,
    pub used_memory_peak: u64,
    /// Samples of the run's connection taken.
    pub samples: u32,
    /// The polling interval, µs.
    pub interval_us: u32,
}

/// One round trip cut at the latency proxy, from its wire tap's stamps (medians, µs): engine →
/// proxy → Redis (the dialled delay out, less the compensation, plus two loopback hops), Redis
/// as the proxy sees it (proxy → Redis → proxy: Redis's own work plus two loopback hops and
/// wake-ups), and proxy → engine (the dialled delay back, less the compensation).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RoundTripSplit {
    pub out_us: f64,
    pub server_us: f64,
    pub back_us: f64,
    /// Requests the medians were taken over.
    pub samples: u64,
    /// How much earlier than its dialled delay the proxy released each chunk out and back
    /// (µs): the forwarding cost it measured when it started, so that a round trip through it
    /// costs 2·D plus the direct one. A leg can read this much under its dialled delay.
    #[serde(default)]
    pub early_out_us: f64,
    #[serde(default)]
    pub early_back_us: f64,
    /// The connection was TLS: the wire tap could not read it, so it stamped nothing
    /// (`samples` is 0) rather than counting ciphertext as commands.
    #[serde(default)]
    pub encrypted: bool,
}

impl RunSummary {
    pub fn wall_ms(&self) -> f64 {
        self.wall_us as f64 / 1000.0
    }

    /// How many times faster this run was than `baseline` (wall time ratio).
    pub fn speedup_over(&self, baseline: &RunSummary) -> f64 {
        if self.wall_us == 0 {
            return f64::INFINITY;
        }
        // Compare throughput so runs of different counts still compare fairly.
        self.ops_per_sec / baseline.ops_per_sec
    }

    /// Keys each command on the wire carried, for MSET/MGET runs (one command for a batch of
    /// keys, so a figure per command there is per batch); `None` in every other mode.
    pub fn keys_per_command(&self) -> Option<f64> {
        match self.spec.mode {
            crate::spec::Mode::Mset { .. } if self.wire_commands > 0 && self.done > 0 => {
                Some(self.done as f64 / self.wire_commands as f64)
            }
            _ => None,
        }
    }

    /// `per_command` (a figure per command on the wire) per key, for MSET/MGET runs.
    pub fn per_key(&self, per_command: f64) -> Option<f64> {
        self.keys_per_command().map(|k| per_command / k)
    }
}

/// A CSV field as RFC 4180 has it: quoted when it holds a comma, quote or line break; quotes
/// doubled.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Operations per second from a count and a duration in microseconds.
pub fn ops_per_sec(done: u64, elapsed_us: u64) -> f64 {
    if elapsed_us == 0 {
        return 0.0;
    }
    done as f64 * 1e6 / elapsed_us as f64
}

/// One request's timing, in µs from the run's start (fractional: a loopback round trip is tens
/// of µs). In a pipeline every command of a batch has the batch's `issued` time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// The request's position in the run, from 0.
    pub i: u64,
    /// Handed to the connection (the batch write began).
    pub issued_us: f64,
    /// Its reply's bytes were read.
    pub replied_us: f64,
    /// With the latency proxy: its bytes were handed to Redis (wire tap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_server_us: Option<f64>,
    /// With the latency proxy: its reply was read from Redis (wire tap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_server_us: Option<f64>,
    /// On a cluster: the master that answered it, an index into `RunSummary::cluster`'s
    /// `masters` (after a redirect, the one that finally ran it). Measured by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u16>,
    /// On a cluster: it was answered MOVED or ASK first and sent again where Redis said (its
    /// times are those of the trip that ran it). Counted by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect: Option<Redirected>,
}

/// Why a cluster run's request was sent again (externally tagged: `"Moved"`, `"Ask"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Redirected {
    /// The slot had a new master.
    Moved,
    /// The slot was migrating: sent after ASKING to the node importing it.
    Ask,
}

impl Span {
    /// A span measured at the engine only.
    pub fn new(i: u64, issued_us: f64, replied_us: f64) -> Span {
        Span {
            i,
            issued_us,
            replied_us,
            at_server_us: None,
            from_server_us: None,
            node: None,
            redirect: None,
        }
    }
}

/// A run's request timings, bounded whatever its count: the first requests in full (enough to
/// animate) and an evenly strided sample of the whole run (enough to draw its shape).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Timeline {
    /// Requests `0..first.len()`, every one.
    pub first: Vec<Span>,
    /// Every `stride`-th request of the whole run (indices are multiples of `stride`).
    pub sampled: Vec<Span>,
    pub stride: u64,
}

/// A finished run as a late page needs it: what it measured and how its requests went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub run: u64,
    pub summary: RunSummary,
    pub timeline: Timeline,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_without_a_master_reads_and_writes_as_before() {
        // A recording made before cluster runs: no `node`.
        let old: Span = serde_json::from_str(r#"{"i":7,"issued_us":1.5,"replied_us":9.0}"#)
            .expect("an old span decodes");
        assert_eq!(old, Span::new(7, 1.5, 9.0));
        assert_eq!((old.node, old.redirect), (None, None));
        let json = serde_json::to_string(&Span::new(7, 1.5, 9.0)).unwrap();
        assert!(
            !json.contains("node") && !json.contains("redirect"),
            "{json}"
        );
    }

    #[test]
    fn a_cluster_span_names_its_master() {
        let span = Span {
            node: Some(2),
            ..Span::new(3, 0.0, 40.0)
        };
        let json = serde_json::to_string(&span).unwrap();
        assert!(json.contains(r#""node":2"#), "{json}");
        assert_eq!(serde_json::from_str::<Span>(&json).unwrap(), span);
        for (redirect, word) in [(Redirected::Moved, "Moved"), (Redirected::Ask, "Ask")] {
            let span = Span {
                redirect: Some(redirect),
                ..span
            };
            let json = serde_json::to_string(&span).unwrap();
            assert!(json.contains(&format!(r#""redirect":"{word}""#)), "{json}");
            assert_eq!(serde_json::from_str::<Span>(&json).unwrap(), span);
        }
    }
}
