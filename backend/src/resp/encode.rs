//! The one RESP encoder. A command is an array of bulk strings:
//!
//! ```text
//! SET k1 v1  →  *3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n
//! ```
//!
//! Everything is appended to a caller's buffer, so a reused buffer costs no allocation per
//! command. `bulk_of` and `bulk_header` write one bulk string from pieces (a key prefix and an
//! index), so callers never assemble an argument in a buffer of its own first.

/// Appends `*N\r\n$len\r\narg\r\n…` for `args` to `out`.
pub fn encode_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    array_header(out, args.len());
    for arg in args {
        bulk(out, arg);
    }
}

/// Appends an array's header, `*<count>\r\n`; its `count` values follow.
#[inline]
pub fn array_header(out: &mut Vec<u8>, count: usize) {
    out.push(b'*');
    push_len(out, count);
    out.extend_from_slice(CRLF);
}

/// Appends `arg` as a bulk string, `$<len>\r\n<arg>\r\n`.
#[inline]
pub fn bulk(out: &mut Vec<u8>, arg: &[u8]) {
    bulk_of(out, [arg]);
}

/// Appends one bulk string whose bytes are `parts`, end to end.
#[inline]
pub fn bulk_of<const N: usize>(out: &mut Vec<u8>, parts: [&[u8]; N]) {
    bulk_header(out, parts.iter().map(|p| p.len()).sum());
    for part in parts {
        out.extend_from_slice(part);
    }
    out.extend_from_slice(CRLF);
}

/// Appends a bulk string's header, `$<len>\r\n`: the caller appends its `len` bytes and
/// `CRLF` (as a byte it can `push`, which costs less than a one-byte slice).
#[inline]
pub fn bulk_header(out: &mut Vec<u8>, len: usize) {
    out.push(b'$');
    push_len(out, len);
    out.extend_from_slice(CRLF);
}

/// What ends every line and every bulk string.
pub const CRLF: &[u8] = b"\r\n";

/// Appends a length or count in decimal; most are short, so the one- and two-digit cases skip
/// the general formatter.
#[inline]
fn push_len(out: &mut Vec<u8>, len: usize) {
    match len {
        0..=9 => out.push(b'0' + len as u8),
        10..=99 => out.extend_from_slice(&[b'0' + (len / 10) as u8, b'0' + (len % 10) as u8]),
        _ => out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_a_set() {
        let mut out = Vec::new();
        encode_command(&mut out, &[b"SET", b"k1", b"v1"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n");
    }

    #[test]
    fn a_bulk_string_from_pieces_is_one_bulk_string() {
        let (mut pieces, mut whole) = (Vec::new(), Vec::new());
        bulk_of(&mut pieces, [b"pipescope:1:k", b"1234567"]);
        bulk(&mut whole, b"pipescope:1:k1234567");
        assert_eq!(pieces, whole);
        assert_eq!(whole, b"$20\r\npipescope:1:k1234567\r\n");
    }

    #[test]
    fn lengths_of_any_size_are_encoded() {
        for len in [0usize, 9, 10, 99, 100, 12345] {
            let mut out = Vec::new();
            push_len(&mut out, len);
            assert_eq!(out, len.to_string().as_bytes());
        }
    }
}
