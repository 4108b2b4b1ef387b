//! A request's and a reply's bytes on the wire (their RESP encoding), and the time they take to
//! send at an assumed loopback bandwidth.

use shared::KeyLayout;
use shared::keys::digits;

/// The bandwidth assumed for loopback when estimating transmission time: 10 Gbit/s.
pub const ASSUMED_BYTES_PER_SEC: f64 = 1.25e9;
pub const ASSUMED_BANDWIDTH_LABEL: &str = "10 Gbit/s";

/// Estimated transmission time of `bytes` at the assumed loopback bandwidth, µs.
pub fn transmission_us(bytes: f64) -> f64 {
    bytes / ASSUMED_BYTES_PER_SEC * 1e6
}

/// `+OK\r\n`: the reply to a SET.
pub const REPLY_BYTES: u64 = 5;

/// RESP bulk string `$<len>\r\n<bytes>\r\n`.
fn bulk(len: u64) -> u64 {
    1 + digits(len) + 2 + len + 2
}

/// Bytes of `SET pipescope:<run>:k<i> v<i>` on the wire (the key as `layout` names it):
/// `*3\r\n$3\r\nSET\r\n$<len>\r\npipescope:<run>:k<i>\r\n$<len>\r\nv<i>\r\n`.
pub fn request_bytes(run: u64, layout: KeyLayout, i: u64) -> u64 {
    let key = shared::keys::key_len(run, i, layout);
    let value = 1 + digits(i);
    4 + bulk(3) + bulk(key) + bulk(value)
}

/// Mean of `request_bytes(run, i)` over `i` in `0..n`, summed by digit count (exact, O(log n)).
pub fn mean_request_bytes(run: u64, layout: KeyLayout, n: u64) -> f64 {
    if n == 0 {
        return request_bytes(run, layout, 0) as f64;
    }
    let mut total = 0u64;
    let mut lo = 0u64;
    while lo < n {
        let hi = if lo == 0 { 10 } else { lo.saturating_mul(10) }.min(n);
        total += (hi - lo) * request_bytes(run, layout, lo);
        lo = hi;
    }
    total as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn request_bytes_follow_the_resp_encoding() {
        let key = "pipescope:7:k42";
        let expected = format!(
            "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$3\r\nv42\r\n",
            key.len()
        );
        assert_eq!(
            request_bytes(7, KeyLayout::Spread, 42),
            expected.len() as u64
        );
        assert_eq!(
            request_bytes(7, KeyLayout::Spread, 0),
            request_bytes(7, KeyLayout::Spread, 9)
        );
        assert_eq!(
            request_bytes(7, KeyLayout::Spread, 10),
            request_bytes(7, KeyLayout::Spread, 9) + 2
        );
        assert_eq!(REPLY_BYTES, "+OK\r\n".len() as u64);
        assert_eq!(
            request_bytes(7, KeyLayout::OneTag, 42),
            request_bytes(7, KeyLayout::Spread, 42) + 2,
            "{{7}}"
        );
    }

    #[test]
    fn mean_bytes_sum_by_digits() {
        for n in [1, 9, 10, 11, 100, 1234] {
            let brute: u64 = (0..n).map(|i| request_bytes(3, KeyLayout::OneTag, i)).sum();
            assert!(
                (mean_request_bytes(3, KeyLayout::OneTag, n) - brute as f64 / n as f64).abs()
                    < 1e-9
            );
        }
    }
}
