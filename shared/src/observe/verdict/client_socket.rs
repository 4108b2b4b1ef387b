//! What the kernel counted on the proxy's socket from the client (`TCP_INFO`), beside the
//! proxy's reads of it: the fewest sends the client can have made, and how many of them the
//! proxy read merged. Worked out on the server: `ClientSocket` is never sent to the page.

/// What the kernel counted on the proxy's socket from the client, beside the proxy's reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientSocket {
    /// The proxy's reads of the socket: all of them, not only those that start a command.
    pub reads: u64,
    /// Segments that carried data (`tcpi_data_segs_in`), and their bytes
    /// (`tcpi_bytes_received`).
    pub segments: u64,
    pub bytes: u64,
    /// The largest segment seen from the client, at most its MSS (`tcpi_rcv_mss`).
    pub mss: u64,
}

impl ClientSocket {
    /// The fewest sends the client can have made: the kernel cuts a send into full segments
    /// and one short last one, so the segments beyond as many as its bytes fill at `mss` each
    /// are sends' ends. (`mss` is at most the client's, which only makes this fewer.)
    pub fn sends_at_least(&self) -> u64 {
        self.segments
            .saturating_sub(self.bytes.div_ceil(self.mss.max(1)))
    }

    /// Sends the proxy read merged with others: at least this many.
    pub fn merged(&self) -> u64 {
        self.sends_at_least().saturating_sub(self.reads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_are_counted_from_segments_beyond_what_the_bytes_fill() {
        // 1,000 one-SET sends on loopback, the reader stopped: 36 segments of 40,780 bytes,
        // the largest 32,768 (the kernel merged the rest once the reader's buffer was full).
        let late = ClientSocket {
            reads: 1,
            segments: 36,
            bytes: 40_780,
            mss: 32_768,
        };
        assert_eq!((late.sends_at_least(), late.merged()), (34, 33));
        // redis-py's pipeline, 7 sends of ~6,000 bytes in 8 segments: nothing shown merged.
        let batch = ClientSocket {
            reads: 3,
            segments: 8,
            bytes: 40_780,
            mss: 6_000,
        };
        assert_eq!((batch.sends_at_least(), batch.merged()), (1, 0));
    }
}
