//! The network the latency proxy puts between the engine and Redis.

use serde::{Deserialize, Serialize};

/// The network between the engine and Redis, dialled in by the latency proxy. All zero is the
/// plain connection (no proxy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Network {
    /// One-way delay engine → Redis, µs.
    #[serde(default)]
    pub delay_out_us: u32,
    /// One-way delay Redis → engine, µs.
    #[serde(default)]
    pub delay_back_us: u32,
    /// Each chunk's delay varies within ± this many µs (never reordered).
    #[serde(default)]
    pub jitter_us: u32,
    /// Bytes per second each way; `None` is unlimited.
    #[serde(default)]
    pub bandwidth: Option<u64>,
}

impl Network {
    pub const LOOPBACK: Network = Network::symmetric(0);

    /// The presets offered on the page: name and one-way delay.
    pub const PRESETS: [(&'static str, u32); 4] = [
        ("loopback", 0),
        ("same rack", 100),
        ("same region", 500),
        ("cross-country", 30_000),
    ];

    pub const fn symmetric(delay_us: u32) -> Network {
        Network {
            delay_out_us: delay_us,
            delay_back_us: delay_us,
            jitter_us: 0,
            bandwidth: None,
        }
    }

    /// True when nothing is injected, so the engine talks to Redis directly.
    pub fn is_loopback(&self) -> bool {
        *self == Network::LOOPBACK
    }

    /// Injected round-trip time, µs (without transmission time).
    pub fn round_trip_us(&self) -> u64 {
        self.delay_out_us as u64 + self.delay_back_us as u64
    }

    pub fn label(&self) -> String {
        if self.is_loopback() {
            return "loopback".to_string();
        }
        let mut s = if self.delay_out_us == self.delay_back_us {
            format!("one-way delay {} µs", self.delay_out_us)
        } else {
            format!(
                "one-way delay {} µs out, {} µs back",
                self.delay_out_us, self.delay_back_us
            )
        };
        if self.jitter_us > 0 {
            s += &format!(", jitter ±{} µs", self.jitter_us);
        }
        if let Some(bw) = self.bandwidth {
            s += &format!(", {bw} B/s");
        }
        s
    }
}
