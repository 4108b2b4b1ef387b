//! Reply scanning: where one complete reply at the front of a buffer ends, found in place, so
//! a whole batch's replies are counted without building a value per reply; and the few reads
//! the engine makes of a complete reply (an error's text, an integer, an array's elements, a
//! bulk string's bytes).

use super::frame::{ProtocolError, Type, find_crlf, is_error_type, parse_int};

/// What one complete reply at the front of a buffer was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Any non-error reply; `len` bytes long.
    Ok { len: usize },
    /// An error reply (`-ERR …`); the message is `buf[1..len-2]`.
    Error { len: usize },
}

impl Reply {
    // A complete reply is never empty, so there is no `is_empty` to go with `len`.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(self) -> usize {
        match self {
            Reply::Ok { len } | Reply::Error { len } => len,
        }
    }
}

/// Scans one reply at the start of `buf`. `Ok(None)` means the reply is not complete yet.
pub fn scan_reply(buf: &[u8]) -> Result<Option<Reply>, ProtocolError> {
    // The reply to SET, by far the most common: skip the general scan.
    if buf.starts_with(b"+OK\r\n") {
        return Ok(Some(Reply::Ok { len: 5 }));
    }
    let Some(&kind) = buf.first() else {
        return Ok(None);
    };
    let is_error = is_error_type(kind);
    let Some(end) = scan_value(buf, 0)? else {
        return Ok(None);
    };
    Ok(Some(if is_error {
        Reply::Error { len: end }
    } else {
        Reply::Ok { len: end }
    }))
}

/// Returns the offset just past the value starting at `pos`, or `None` if incomplete.
fn scan_value(buf: &[u8], pos: usize) -> Result<Option<usize>, ProtocolError> {
    let Some(&kind) = buf.get(pos) else {
        return Ok(None);
    };
    let Some(line_end) = find_crlf(buf, pos + 1) else {
        return Ok(None);
    };
    let after_line = line_end + 2;
    match Type::of(kind) {
        Some(Type::Line) => Ok(Some(after_line)),
        Some(Type::Blob) => {
            let len = int(&buf[pos + 1..line_end])?;
            if len < 0 {
                return Ok(Some(after_line)); // null bulk string
            }
            let end = after_line + len as usize + 2;
            if buf.len() < end {
                return Ok(None);
            }
            if &buf[end - 2..end] != b"\r\n" {
                return Err(ProtocolError("bulk string not terminated by CRLF"));
            }
            Ok(Some(end))
        }
        Some(Type::Aggregate { pairs }) => {
            let items = Type::items(pairs, int(&buf[pos + 1..line_end])?);
            let mut at = after_line;
            for _ in 0..items.max(0) {
                match scan_value(buf, at)? {
                    Some(next) => at = next,
                    None => return Ok(None),
                }
            }
            Ok(Some(at))
        }
        None => Err(ProtocolError("unknown reply type byte")),
    }
}

/// True when a complete reply (as returned by `scan_reply`) is an error.
pub fn is_error(reply: &[u8]) -> bool {
    reply.first().is_some_and(|&b| is_error_type(b))
}

/// The text of an error reply: `-ERR x\r\n` → `ERR x`; for a RESP3 bulk error, its payload.
pub fn error_text(reply: &[u8]) -> String {
    let body = match reply.first() {
        Some(b'!') => find_crlf(reply, 1).map_or(&reply[1..], |e| &reply[e + 2..]),
        _ => &reply[1.min(reply.len())..],
    };
    String::from_utf8_lossy(body.strip_suffix(b"\r\n").unwrap_or(body)).into_owned()
}

/// The value of a complete integer reply (`:42\r\n` → 42), e.g. INCR's.
pub fn integer(reply: &[u8]) -> Result<i64, ProtocolError> {
    match reply {
        [b':', rest @ ..] => int(rest.strip_suffix(b"\r\n").unwrap_or(rest)),
        _ => Err(ProtocolError("expected an integer reply")),
    }
}

/// The elements of a complete array reply (e.g. EXEC's), each as its own complete reply,
/// without allocating. `Ok(None)` for a null array (`*-1`), which is how EXEC says the
/// transaction did not run.
pub fn array_elements(reply: &[u8]) -> Result<Option<Elements<'_>>, ProtocolError> {
    if reply.first() != Some(&b'*') {
        return Err(ProtocolError("expected an array"));
    }
    let line_end = find_crlf(reply, 1).ok_or(ProtocolError("array header not terminated"))?;
    let count = int(&reply[1..line_end])?;
    if count < 0 {
        return Ok(None);
    }
    Ok(Some(Elements {
        reply,
        at: line_end + 2,
        left: count as u64,
    }))
}

/// Iterator over an array reply's elements; see `array_elements`.
pub struct Elements<'a> {
    reply: &'a [u8],
    at: usize,
    left: u64,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<&'a [u8], ProtocolError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(match scan_value(self.reply, self.at) {
            Ok(Some(end)) => {
                let item = &self.reply[self.at..end];
                self.at = end;
                Ok(item)
            }
            Ok(None) => {
                self.left = 0;
                Err(ProtocolError("array shorter than its count"))
            }
            Err(e) => {
                self.left = 0;
                Err(e)
            }
        })
    }
}

/// The bytes of a complete bulk-string reply (`$3\r\n812\r\n` → `812`); `None` for a null one.
pub fn bulk_bytes(reply: &[u8]) -> Result<Option<&[u8]>, ProtocolError> {
    if reply.first() != Some(&b'$') {
        return Err(ProtocolError("expected a bulk string"));
    }
    let line_end = find_crlf(reply, 1).ok_or(ProtocolError("bulk header not terminated"))?;
    if int(&reply[1..line_end])? < 0 {
        return Ok(None);
    }
    reply[line_end + 2..]
        .strip_suffix(b"\r\n")
        .map(Some)
        .ok_or(ProtocolError("bulk string not terminated by CRLF"))
}

fn int(digits: &[u8]) -> Result<i64, ProtocolError> {
    parse_int(digits).ok_or(ProtocolError("bad length or integer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_integers() {
        assert_eq!(integer(b":42\r\n"), Ok(42));
        assert_eq!(integer(b":-3\r\n"), Ok(-3));
        assert!(integer(b"+OK\r\n").is_err());
    }

    #[test]
    fn scans_every_reply_kind() {
        let cases: [(&[u8], Reply); 6] = [
            (b"+OK\r\n", Reply::Ok { len: 5 }),
            (b"-ERR no\r\n", Reply::Error { len: 9 }),
            (b":42\r\n", Reply::Ok { len: 5 }),
            (b"$3\r\nabc\r\n", Reply::Ok { len: 9 }),
            (b"$-1\r\n", Reply::Ok { len: 5 }),
            (b"*2\r\n$1\r\na\r\n:1\r\n", Reply::Ok { len: 15 }),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                scan_reply(bytes),
                Ok(Some(want)),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn incomplete_replies_wait_for_more_bytes() {
        for partial in [
            &b""[..],
            b"+O",
            b"+OK\r",
            b"$3\r\nab",
            b"$3\r\nabc\r",
            b"*2\r\n:1\r\n",
        ] {
            assert_eq!(
                scan_reply(partial),
                Ok(None),
                "{:?}",
                String::from_utf8_lossy(partial)
            );
        }
    }

    #[test]
    fn errors_and_arrays_are_taken_apart() {
        assert!(is_error(b"-ERR no\r\n") && !is_error(b"+OK\r\n"));
        assert_eq!(
            error_text(b"-EXECABORT Transaction discarded\r\n"),
            "EXECABORT Transaction discarded"
        );
        assert_eq!(error_text(b"!5\r\nERR x\r\n"), "ERR x");
        let exec = b"*3\r\n+OK\r\n-ERR bad\r\n:1\r\n";
        let items: Vec<&[u8]> = array_elements(exec)
            .unwrap()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(items, [&b"+OK\r\n"[..], b"-ERR bad\r\n", b":1\r\n"]);
        assert!(array_elements(b"*-1\r\n").unwrap().is_none());
        assert!(array_elements(b"+OK\r\n").is_err());
        assert_eq!(bulk_bytes(b"$3\r\n812\r\n"), Ok(Some(&b"812"[..])));
        assert_eq!(bulk_bytes(b"$0\r\n\r\n"), Ok(Some(&b""[..])));
        assert_eq!(bulk_bytes(b"$-1\r\n"), Ok(None));
        assert!(bulk_bytes(b":1\r\n").is_err());
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(scan_reply(b"?what\r\n").is_err());
        assert!(scan_reply(b"$x\r\n").is_err());
        assert!(scan_reply(b"$1\r\nab\r\n").is_err());
    }
}
