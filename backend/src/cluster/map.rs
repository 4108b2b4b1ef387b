//! Which master serves which slot, as a cluster says (`CLUSTER SLOTS`, from any node), and
//! the redirects a node answers with when a slot has moved (`MOVED`) or is moving (`ASK`).
//!
//! The map is read once before a run and again only when a redirect says it changed: a client
//! that asks per command turns every command into two round trips.

use std::fmt;

use super::slot::SLOTS;

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(
        "Redis at {addr} is not a cluster (its cluster support is disabled); run without --cluster to use it as a single server"
    )]
    NotACluster { addr: String },
    #[error(
        "the cluster at {addr} serves no master for slots {ranges}: a run needs every slot served (cluster_state:fail); check it with `redis-cli --cluster check {addr}`"
    )]
    Uncovered { addr: String, ranges: String },
    #[error("Redis at {addr} answered CLUSTER SLOTS with something unexpected: {detail}")]
    Unexpected { addr: String, detail: String },
    #[error("Redis at {addr}: {}", crate::target::describe(.error))]
    Redis {
        addr: String,
        error: redis::RedisError,
    },
}

/// One master and the slot ranges it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Master {
    pub host: String,
    pub port: u16,
    pub ranges: Vec<(u16, u16)>,
}

impl Master {
    pub fn addr(&self) -> String {
        crate::target::host_port(&self.host, self.port)
    }
}

/// The cluster's slot map: its masters, and which of them serves each slot.
#[derive(Debug, Clone)]
pub struct SlotMap {
    masters: Vec<Master>,
    /// `owner[slot]`: an index into `masters`.
    owner: Vec<u16>,
}

impl SlotMap {
    /// Asks the node behind `conn` (at `addr`, `host:port`) for the map. A node that announces
    /// no endpoint (an empty host) is taken to be on `addr`'s host.
    pub async fn discover(
        conn: &mut redis::aio::MultiplexedConnection,
        addr: &str,
    ) -> Result<SlotMap, ClusterError> {
        let reply: redis::Value = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query_async(conn)
            .await
            .map_err(|source| {
                if source.to_string().contains("cluster support disabled") {
                    ClusterError::NotACluster { addr: addr.into() }
                } else {
                    ClusterError::Redis {
                        addr: addr.into(),
                        error: source,
                    }
                }
            })?;
        let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        SlotMap::from_reply(&reply, host).map_err(|detail| match detail {
            Invalid::Uncovered(ranges) => ClusterError::Uncovered {
                addr: addr.into(),
                ranges,
            },
            Invalid::Shape(detail) => ClusterError::Unexpected {
                addr: addr.into(),
                detail,
            },
        })
    }

    /// The map from a CLUSTER SLOTS reply: `[[first, last, [host, port, id, …], replicas…], …]`.
    fn from_reply(reply: &redis::Value, default_host: &str) -> Result<SlotMap, Invalid> {
        let shape = |what: &str| Invalid::Shape(format!("{what} in {reply:?}"));
        let redis::Value::Array(ranges) = reply else {
            return Err(shape("not an array"));
        };
        let mut masters: Vec<Master> = Vec::new();
        let mut owner = vec![u16::MAX; usize::from(SLOTS)];
        for range in ranges {
            let redis::Value::Array(parts) = range else {
                return Err(shape("a range that is not an array"));
            };
            let (Some(first), Some(last), Some(redis::Value::Array(node))) =
                (int(parts.first()), int(parts.get(1)), parts.get(2))
            else {
                return Err(shape("a range without first, last and master"));
            };
            let (Some(host), Some(port)) = (text(node.first()), int(node.get(1))) else {
                return Err(shape("a master without host and port"));
            };
            if first > last || last >= i64::from(SLOTS) || !(1..=65_535).contains(&port) {
                return Err(shape("a range or port out of bounds"));
            }
            let host = if host.is_empty() || host == "?" {
                default_host.to_string()
            } else {
                host
            };
            let (first, last, port) = (first as u16, last as u16, port as u16);
            let i = match masters
                .iter()
                .position(|m| m.host == host && m.port == port)
            {
                Some(i) => i,
                None => {
                    masters.push(Master {
                        host,
                        port,
                        ranges: Vec::new(),
                    });
                    masters.len() - 1
                }
            };
            masters[i].ranges.push((first, last));
            owner[usize::from(first)..=usize::from(last)].fill(i as u16);
        }
        let uncovered = ranges_where(&owner, |o| o == u16::MAX);
        if !uncovered.is_empty() {
            return Err(Invalid::Uncovered(
                uncovered
                    .iter()
                    .map(|&(a, b)| {
                        if a == b {
                            a.to_string()
                        } else {
                            format!("{a}–{b}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        for m in &mut masters {
            m.ranges.sort_unstable();
        }
        Ok(SlotMap { masters, owner })
    }

    pub fn masters(&self) -> &[Master] {
        &self.masters
    }

    /// The index (into `masters`) of the master serving `slot`.
    pub fn master_of(&self, slot: u16) -> usize {
        usize::from(self.owner[usize::from(slot % SLOTS)])
    }
}

/// Why a CLUSTER SLOTS reply makes no map.
enum Invalid {
    Uncovered(String),
    Shape(String),
}

fn int(v: Option<&redis::Value>) -> Option<i64> {
    match v? {
        redis::Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn text(v: Option<&redis::Value>) -> Option<String> {
    match v? {
        redis::Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        redis::Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// The runs of slots whose owner satisfies `pred`, as inclusive ranges.
fn ranges_where(owner: &[u16], pred: impl Fn(u16) -> bool) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    let mut start = None;
    for (slot, &o) in owner.iter().enumerate() {
        match (pred(o), start) {
            (true, None) => start = Some(slot),
            (false, Some(s)) => {
                out.push((s as u16, slot as u16 - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s as u16, owner.len() as u16 - 1));
    }
    out
}

/// A node's answer that a key is elsewhere: `-MOVED <slot> <host:port>` (the slot's master
/// changed: refresh the map) or `-ASK <slot> <host:port>` (the slot is migrating: send this
/// one command there, after ASKING, and keep the map).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    Moved { slot: u16, addr: String },
    Ask { slot: u16, addr: String },
}

impl Redirect {
    /// Reads an error reply's text (with or without its leading `-`).
    pub fn parse(error: &[u8]) -> Option<Redirect> {
        let text = std::str::from_utf8(error).ok()?;
        let text = text.strip_prefix('-').unwrap_or(text).trim_end();
        let mut words = text.split(' ');
        let (kind, slot, addr) = (words.next()?, words.next()?, words.next()?);
        if words.next().is_some() {
            return None;
        }
        let slot: u16 = slot.parse().ok().filter(|&s| s < SLOTS)?;
        let addr = addr.to_string();
        match kind {
            "MOVED" => Some(Redirect::Moved { slot, addr }),
            "ASK" => Some(Redirect::Ask { slot, addr }),
            _ => None,
        }
    }
}

impl fmt::Display for Redirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Redirect::Moved { slot, addr } => write!(f, "MOVED {slot} {addr}"),
            Redirect::Ask { slot, addr } => write!(f, "ASK {slot} {addr}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::Value;

    fn range(first: i64, last: i64, host: &str, port: i64) -> Value {
        Value::Array(vec![
            Value::Int(first),
            Value::Int(last),
            Value::Array(vec![
                Value::BulkString(host.into()),
                Value::Int(port),
                Value::BulkString(b"id".to_vec()),
            ]),
        ])
    }

    #[test]
    fn a_reply_becomes_a_map_and_a_hole_is_named() {
        let reply = Value::Array(vec![
            range(0, 8000, "10.0.0.1", 7000),
            range(8001, 16383, "", 7001),
            range(100, 200, "10.0.0.1", 7000),
        ]);
        let map = SlotMap::from_reply(&reply, "seed").unwrap_or_else(|_| panic!("a map"));
        assert_eq!(map.masters().len(), 2);
        assert_eq!(
            map.masters()[1].addr(),
            "seed:7001",
            "no endpoint: the seed's host"
        );
        assert_eq!(map.master_of(0), 0);
        assert_eq!(map.master_of(16383), 1);
        let holes = Value::Array(vec![range(0, 99, "a", 1), range(5000, 16382, "a", 1)]);
        match SlotMap::from_reply(&holes, "seed") {
            Err(Invalid::Uncovered(r)) => assert_eq!(r, "100–4999, 16383"),
            _ => panic!("holes are named"),
        }
    }

    #[test]
    fn redirects() {
        assert_eq!(
            Redirect::parse(b"-MOVED 3999 127.0.0.1:6381\r\n"),
            Some(Redirect::Moved {
                slot: 3999,
                addr: "127.0.0.1:6381".into()
            })
        );
        assert_eq!(
            Redirect::parse(b"ASK 1 h:1"),
            Some(Redirect::Ask {
                slot: 1,
                addr: "h:1".into()
            })
        );
        for not in [
            &b"-ERR wrong"[..],
            b"MOVED x h:1",
            b"MOVED 16384 h:1",
            b"ASK 1",
        ] {
            assert_eq!(
                Redirect::parse(not),
                None,
                "{}",
                String::from_utf8_lossy(not)
            );
        }
    }
}
