//! Who runs in a round of a comparison (`Contender`), and what one timed run measured
//! (`Sample`).

use shared::Wait;

use super::BUSY_POLL;

/// Who runs in a round.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Contender {
    Theirs,
    /// redis-benchmark through the observing proxy (`Bench::observer`).
    TheirsObserved,
    /// redis-benchmark through a plain relay (`Bench::relay`): what any proxy in between costs.
    TheirsRelayed,
    /// redis-benchmark direct, while pipescope captures `lo` live (`Bench::capture`).
    TheirsCaptured,
    /// redis-benchmark direct, while tcpdump captures the same port (`Bench::tcpdump`): what
    /// the kernel's capture alone costs, the captured column's reference.
    TheirsTcpdump,
    Ours {
        wait: Wait,
        instrument: bool,
    },
    /// redis-benchmark on K connections, one command at a time each (`-c K -P 1`).
    TheirsConnections,
    /// Our engine on a pool of K connections (`Mode::Connections`), sleeping for replies.
    OursConnections,
    /// Our engine sleeping for replies, over TLS to the same server (`Bench::tls`).
    OursOverTls,
    /// Our engine sleeping for replies, on a cluster (`Bench::cluster`), batches split per
    /// master.
    OursOnCluster,
    /// `redis-benchmark --cluster` on `clients` connections K deep each, against the
    /// cluster's first master (`Bench::port`): it binds each client to one master.
    TheirsOnCluster {
        clients: u32,
    },
    /// Our engine sleeping for replies on the cluster, `times` × K deep, each batch split per
    /// master (about K per master when `times` is the number of masters).
    OursOnClusterTimes {
        times: u32,
    },
}

pub(crate) const SLEEPING: Contender = Contender::Ours {
    wait: Wait::Sleep,
    instrument: true,
};
pub(super) const BUSY_POLLING: Contender = Contender::Ours {
    wait: BUSY_POLL,
    instrument: true,
};
/// The busy-polling engine measuring nothing. Instrumentation is measured against the
/// busy-polling engine: its round trips are the shortest, so the same bookkeeping is the
/// largest share of them (and its runs are the quickest, so more rounds fit).
pub(super) const BARE: Contender = Contender::Ours {
    wait: BUSY_POLL,
    instrument: false,
};

/// One timed run's result.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sample {
    pub(crate) ops_per_sec: f64,
    /// redis-benchmark's own p50 (its `--csv` column: a histogram bucket's value, 8 µs apart
    /// below 1 ms): per request at K = 1, per batch of K above. Not measured for our engine's
    /// runs.
    pub(crate) p50_us: Option<f64>,
    /// Through the observing proxy, or captured live: the SETs it framed during the run.
    pub(crate) observed_sets: Option<u64>,
    /// Captured live (by pipescope or tcpdump): packets libpcap (or the interface) dropped
    /// during the run.
    pub(crate) capture_dropped: Option<u64>,
    /// SETs Redis executed during the run (`INFO commandstats`).
    pub(crate) redis_sets: Option<u64>,
    /// Redis's CPU time (`INFO cpu`, user + sys) across the run over the SETs it executed
    /// (`INFO commandstats`), µs.
    pub(super) redis_cpu_us_per_set: Option<f64>,
}

impl Sample {
    pub(super) fn ours(ops_per_sec: f64) -> Sample {
        Sample {
            ops_per_sec,
            ..Sample::default()
        }
    }
}

impl Contender {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Contender::Theirs => "direct",
            Contender::TheirsObserved => "observed",
            Contender::TheirsRelayed => "relayed",
            Contender::TheirsCaptured => "captured",
            Contender::TheirsTcpdump => "tcpdump",
            Contender::Ours {
                instrument: false, ..
            } => "bare",
            Contender::Ours {
                wait: Wait::Sleep, ..
            } => "sleeping",
            Contender::Ours { .. } => "busy-polling",
            Contender::TheirsConnections => "redis-benchmark",
            Contender::OursConnections => "pipescope",
            Contender::OursOverTls => "over TLS",
            Contender::OursOnCluster => "on the cluster",
            Contender::TheirsOnCluster { clients: 1 } => "redis-benchmark --cluster -c 1",
            Contender::TheirsOnCluster { .. } => "redis-benchmark --cluster, a client per master",
            Contender::OursOnClusterTimes { times: 1 } => "pipescope K deep",
            Contender::OursOnClusterTimes { .. } => "pipescope masters × K deep",
        }
    }

    /// What framed a run's SETs: the observing proxy or the live capture.
    pub(super) fn seer(&self) -> &'static str {
        match self {
            Contender::TheirsCaptured => "capture",
            _ => "proxy",
        }
    }
}
