//! A connection whose client does not speak Redis's protocol, told from its first bytes: it
//! is reported as not Redis traffic instead of being framed into "commands" and advised on.

use shared::observe::{Verdict, VerdictKind};

/// What the client's first bytes are when they cannot begin a Redis command (RESP arrays
/// begin with `*`; anything else Redis reads as an inline command, a line of text).
pub(super) fn what(first: &[u8]) -> Option<String> {
    let &b0 = first.first()?;
    // A TLS record: a handshake (22), protocol version 3.x.
    if b0 == 0x16 && first.get(1) == Some(&0x03) {
        return Some(
            "TLS (a TLS handshake where a command should be: a rediss:// client, or TLS sent to a plain port)"
                .into(),
        );
    }
    let line = first.split(|&b| b == b'\n').next().unwrap_or(first);
    let line = String::from_utf8_lossy(line);
    let line = line.trim_end();
    const METHODS: [&str; 9] = [
        "GET ", "POST ", "PUT ", "HEAD ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE ",
    ];
    if METHODS.iter().any(|m| line.starts_with(m)) && line.contains(" HTTP/") {
        return Some(format!("HTTP ({:?})", clip(line)));
    }
    // A reply's first byte (RESP2 and RESP3) where a command should be.
    if b"+-:$,#_%~>|=(!".contains(&b0) {
        return Some(format!(
            "Redis replies where commands should be ({:?}): the two sides are swapped; is --redis-port the port Redis listens on?",
            clip(line)
        ));
    }
    // An inline command is one line of text: binary in that line is no command. (What
    // follows the line may be a RESP command with binary values.)
    let binary = |b: &u8| b.is_ascii_control() && !b"\r\n\t".contains(b) || *b >= 0x80;
    let first_line = first.split(|&b| b == b'\n').next().unwrap_or(first);
    if b0 != b'*' && first_line.iter().take(64).any(binary) {
        return Some("binary data that is not Redis's protocol (RESP)".into());
    }
    None
}

/// The verdict of a connection that is not Redis traffic: no commands, said why.
pub(super) fn verdict(what: &str) -> Verdict {
    Verdict {
        kind: VerdictKind::Idle,
        headline: format!("not Redis traffic: the client sent {}", clip(what)),
        text: format!(
            "not Redis traffic: the client sent {what}; nothing of it is read as commands"
        ),
        timing_dependent: None,
        candidates: Vec::new(),
        decided_by: None,
    }
}

/// At most 40 characters of `line`, for a message.
fn clip(line: &str) -> String {
    match line.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::what;

    #[test]
    fn redis_commands_are_redis_traffic() {
        assert_eq!(what(b"*1\r\n$4\r\nPING\r\n"), None);
        assert_eq!(what(b"PING\r\n"), None);
        assert_eq!(what(b"set k v\r\n"), None);
    }

    #[test]
    fn an_inline_command_then_binary_values_is_redis_traffic() {
        let mut first = b"EXISTS r:3\r\n*3\r\n$3\r\nSET\r\n$3\r\nr:1\r\n$4\r\n".to_vec();
        first.extend_from_slice(&[0x00, 0xff, 0x10, 0x80, b'\r', b'\n']);
        assert_eq!(what(&first), None);
    }

    #[test]
    fn http_tls_replies_and_binary_are_not() {
        let http = what(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(http, "HTTP (\"GET / HTTP/1.1\")");
        assert!(
            what(&[0x16, 0x03, 0x01, 0x02, 0x00])
                .unwrap()
                .starts_with("TLS")
        );
        assert!(
            what(b"+OK\r\n")
                .unwrap()
                .starts_with("Redis replies where commands should be (\"+OK\")")
        );
        assert!(
            what(b"$5\r\nhello\r\n")
                .unwrap()
                .starts_with("Redis replies")
        );
        assert!(
            what(&[0x00, 0x01, 0xff])
                .unwrap()
                .starts_with("binary data")
        );
    }
}
