//! A key's hash slot, computed as Redis does (`keyHashSlot` in its cluster.c): CRC16 (XMODEM)
//! of the key, or of its hash tag, modulo 16,384.
//!
//! The hash tag is what lies between the first `{` and the first `}` after it, when that is
//! not empty: `{user1000}.following` and `{user1000}.followers` share a slot; `{}x` and `x{`
//! are hashed whole.

use crc::{CRC_16_XMODEM, Crc};

/// Hash slots in a cluster.
pub const SLOTS: u16 = 16_384;

const CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_XMODEM);

/// The slot `key` lives in.
pub fn key_slot(key: &[u8]) -> u16 {
    CRC16.checksum(hashed_part(key)) % SLOTS
}

/// The part of `key` that is hashed: its hash tag when it has a non-empty one, else all of it.
fn hashed_part(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&b| b == b'}') {
        Some(len) if len > 0 => &key[open + 1..open + 1 + len],
        _ => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crc_is_xmodem() {
        // The catalogue's check value for CRC-16/XMODEM.
        assert_eq!(CRC16.checksum(b"123456789"), 0x31c3);
    }

    #[test]
    fn hash_tags_as_redis_reads_them() {
        assert_eq!(hashed_part(b"{user1000}.following"), b"user1000");
        assert_eq!(
            key_slot(b"{user1000}.following"),
            key_slot(b"{user1000}.followers")
        );
        // The first `{` and the first `}` after it; an empty tag hashes the whole key.
        assert_eq!(hashed_part(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hashed_part(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hashed_part(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hashed_part(b"x{"), b"x{");
        assert_eq!(hashed_part(b""), b"");
    }
}
