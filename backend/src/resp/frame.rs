//! The RESP type: what a value's first byte says it is, and the two pieces of syntax every
//! value is built from (a CRLF-terminated line, a decimal count in it).
//!
//! Every RESP value starts with one type byte, then a line:
//!
//! ```text
//! +OK\r\n                    a line: simple string (+), error (-), integer (:), and RESP3's
//! :42\r\n                    null (_), double (,), boolean (#) and big number (()
//! $3\r\nabc\r\n              a blob: bulk string ($), bulk error (!), verbatim string (=):
//!                            a length, then that many bytes and CRLF ($-1 is null)
//! *2\r\n$1\r\na\r\n:1\r\n    an aggregate: array (*), set (~), push (>), map (%) and
//!                            attribute (|): a count, then that many values (pairs for % and |)
//! ```
//!
//! The scanner (`scan`) and the streaming framer (`framer`) both read values by this table,
//! so a type byte means the same to each.

/// What a value's first byte makes it: how to find where it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// The value is its first line.
    Line,
    /// The first line holds a length; that many bytes and a CRLF follow (none when negative).
    Blob,
    /// The first line holds a count; that many values follow, or twice as many (`pairs`).
    Aggregate { pairs: bool },
}

impl Type {
    /// The type a value starting with `byte` has; `None` when no RESP value starts so.
    #[inline]
    pub const fn of(byte: u8) -> Option<Type> {
        match byte {
            b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Some(Type::Line),
            b'$' | b'!' | b'=' => Some(Type::Blob),
            b'*' | b'~' | b'>' => Some(Type::Aggregate { pairs: false }),
            b'%' | b'|' => Some(Type::Aggregate { pairs: true }),
            _ => None,
        }
    }

    /// Values an aggregate of `count` holds (a map's or attribute's pairs count twice).
    #[inline]
    pub const fn items(pairs: bool, count: i64) -> i64 {
        if pairs { count * 2 } else { count }
    }
}

/// True for the type bytes of an error: a simple error (`-`) or a RESP3 bulk error (`!`).
#[inline]
pub const fn is_error_type(byte: u8) -> bool {
    matches!(byte, b'-' | b'!')
}

/// A stream or reply that is not RESP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed reply from Redis: {0}")]
pub struct ProtocolError(pub &'static str);

/// Where the CRLF ending the line that goes on at `from` is, or `None` if it is not here yet.
pub fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|i| from + i)
}

/// A line's count, length or integer (`42`, `-1`).
pub fn parse_int(digits: &[u8]) -> Option<i64> {
    // The usual case, a few plain digits, without going through `str`; anything else (a sign,
    // a long number, garbage) as `str::parse` says.
    if (1..=18).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
        return Some(
            digits
                .iter()
                .fold(0i64, |n, d| n * 10 + i64::from(d - b'0')),
        );
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_byte_has_one_type() {
        let lines = b"+-:_,#(";
        let blobs = b"$!=";
        let aggregates = b"*~>%|";
        for b in 0..=255u8 {
            let want = if lines.contains(&b) {
                Some(Type::Line)
            } else if blobs.contains(&b) {
                Some(Type::Blob)
            } else if aggregates.contains(&b) {
                Some(Type::Aggregate {
                    pairs: b == b'%' || b == b'|',
                })
            } else {
                None
            };
            assert_eq!(Type::of(b), want, "{:?}", b as char);
        }
        assert!(is_error_type(b'-') && is_error_type(b'!') && !is_error_type(b'+'));
    }

    #[test]
    fn counts_parse_as_str_does() {
        for text in [
            "0",
            "7",
            "42",
            "-1",
            "+3",
            "123456789012345678",
            "1234567890123456789",
        ] {
            assert_eq!(parse_int(text.as_bytes()), text.parse().ok(), "{text}");
        }
        for bad in ["", "x", "1x", "99999999999999999999"] {
            assert_eq!(parse_int(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(find_crlf(b"+OK\r\n", 1), Some(3));
        assert_eq!(find_crlf(b"+OK\r", 1), None);
        assert_eq!(find_crlf(b"+OK", 9), None);
    }
}
