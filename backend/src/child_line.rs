//! Waiting for a child process to say something: its output read a line at a time until a
//! line holds what is waited for, within a deadline (tcpdump's "listening on", `pipescope
//! observe`'s "listening ADDR").

use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Why the wait ended without the line.
#[derive(Debug, thiserror::Error)]
pub enum Unsaid {
    #[error("its output ended first: {0}")]
    Ended(String),
    #[error("not within {} s: {said}", .limit.as_secs())]
    TooLong { limit: Duration, said: String },
    #[error("reading its output: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads `out` a line at a time until `found` finds what is waited for in one (given the line
/// without its end), within `limit`. What was read before is in the error, for the user.
pub async fn first<T>(
    out: &mut (impl AsyncBufRead + Unpin),
    limit: Duration,
    mut found: impl FnMut(&str) -> Option<T>,
) -> Result<T, Unsaid> {
    let mut said = String::new();
    let waited = tokio::time::timeout(limit, async {
        let mut line = String::new();
        loop {
            line.clear();
            if out.read_line(&mut line).await? == 0 {
                return Ok(None);
            }
            said.push_str(&line);
            if let Some(t) = found(line.trim_end()) {
                return Ok(Some(t));
            }
        }
    })
    .await;
    match waited {
        Ok(Ok(Some(t))) => Ok(t),
        Ok(Ok(None)) => Err(Unsaid::Ended(said.trim().to_string())),
        Ok(Err(e)) => Err(Unsaid::Io(e)),
        Err(_) => Err(Unsaid::TooLong {
            limit,
            said: said.trim().to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Unsaid, first};

    #[tokio::test]
    async fn finds_the_line_or_says_what_came_before_the_end() {
        let limit = Duration::from_secs(5);
        let mut out: &[u8] = b"starting\nlistening 127.0.0.1:7000\nmore\n";
        let addr = first(&mut out, limit, |l| {
            l.strip_prefix("listening ").map(str::to_string)
        });
        assert_eq!(addr.await.unwrap(), "127.0.0.1:7000");
        let mut out: &[u8] = b"tcpdump: lo: permission denied\n";
        let e = first(&mut out, limit, |l| {
            l.contains("listening on").then_some(())
        });
        match e.await {
            Err(Unsaid::Ended(said)) => assert_eq!(said, "tcpdump: lo: permission denied"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn gives_up_at_the_deadline() {
        // A pipe whose writer is kept open and says nothing.
        let (reader, _writer) = tokio::io::duplex(64);
        let mut out = tokio::io::BufReader::new(reader);
        let e = first(&mut out, Duration::from_millis(50), |_| Some(())).await;
        assert!(matches!(e, Err(Unsaid::TooLong { .. })), "{e:?}");
    }
}
