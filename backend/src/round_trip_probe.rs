//! One-at-a-time SETs on one connection, each round trip timed on its own: what a proxy adds
//! to a request's latency, to the microsecond.
//!
//! Why not redis-benchmark's p50: its histogram keeps one significant digit, so at loopback
//! latencies its percentiles move in 8 µs steps, too coarse to tell 24 µs added from 30.
//! The probe is a plain blocking client, as a one-at-a-time application is: write a SET,
//! block until its `+OK`, take the time, repeat.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::resp;

/// Where the probe's keys go (emptied with the database between runs).
const PREFIX: &str = "pipescope-probe:";

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("probe connection to {addr}: {source}")]
    Io {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("probe: {addr} answered a SET with {reply:?}, not +OK")]
    Reply { addr: SocketAddr, reply: String },
}

/// `count` SETs one at a time against `addr`: each round trip's time, in the order sent.
pub fn round_trips(addr: SocketAddr, count: u64) -> Result<Vec<Duration>, ProbeError> {
    let io = |source| ProbeError::Io { addr, source };
    let mut stream = TcpStream::connect(addr).map_err(io)?;
    stream.set_nodelay(true).map_err(io)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(io)?;
    let mut times = Vec::with_capacity(count as usize);
    let mut command = Vec::with_capacity(64);
    let mut reply = [0u8; 5];
    for i in 0..count {
        command.clear();
        set_command(&mut command, i);
        let sent = Instant::now();
        stream.write_all(&command).map_err(io)?;
        stream.read_exact(&mut reply).map_err(io)?;
        times.push(sent.elapsed());
        if &reply != b"+OK\r\n" {
            // Whatever else came (an error's text) is not read: the connection is dropped.
            return Err(ProbeError::Reply {
                addr,
                reply: String::from_utf8_lossy(&reply).into_owned(),
            });
        }
    }
    Ok(times)
}

/// `SET pipescope-probe:<i> v<i>` in RESP.
fn set_command(out: &mut Vec<u8>, i: u64) {
    let mut digits = itoa::Buffer::new();
    let i = digits.format(i).as_bytes();
    resp::array_header(out, 3);
    resp::bulk(out, b"SET");
    resp::bulk_of(out, [PREFIX.as_bytes(), i]);
    resp::bulk_of(out, [b"v", i]);
}

/// The median of `times`, in µs.
pub fn p50_us(times: &[Duration]) -> f64 {
    crate::median::median(times.to_vec()).map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_a_set_in_resp() {
        let mut out = Vec::new();
        set_command(&mut out, 42);
        assert_eq!(
            out,
            b"*3\r\n$3\r\nSET\r\n$18\r\npipescope-probe:42\r\n$3\r\nv42\r\n"
        );
    }
}
