//! What is wrong with a Redis URL, part by part, before redis-rs reads it: its own refusal
//! ("InvalidClientConfig") does not say which part. Never echoes the user or password.

/// A URL refused, naming the part that is wrong and what it should look like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error(
        "not a Redis URL: it must start with redis:// or rediss://, e.g. redis://127.0.0.1:6379"
    )]
    NoScheme,
    #[error("the URL must start with redis:// or rediss://, not {0}://")]
    Scheme(String),
    #[error("the URL names no host: say redis://HOST:PORT, e.g. redis://127.0.0.1:6379")]
    NoHost,
    #[error("the IPv6 address in the URL has no closing ]: say redis://[ADDRESS]:PORT")]
    Ipv6,
    #[error("the port must be a number: {0}")]
    PortNotNumber(String),
    #[error("port {0} is out of range (1–65535)")]
    PortRange(String),
    #[error("the database must be a number (0, 1, …) after the last /: {0}")]
    Db(String),
    #[error(
        "not a Redis URL ({0}); expected redis://[USER:PASSWORD@]HOST:PORT[/DB] (percent-encode @, / and # in a password)"
    )]
    Other(String),
}

/// Checks the parts of `url` that people get wrong, in the order they appear.
pub fn check(url: &str) -> Result<(), UrlError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(UrlError::NoScheme);
    };
    if !matches!(scheme, "redis" | "rediss") {
        // The scheme holds no secret; anything else might, so only a plain word is echoed.
        return match scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            true => Err(UrlError::Scheme(scheme.to_string())),
            false => Err(UrlError::NoScheme),
        };
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    // The host is after the last @ (a password may hold one only percent-encoded, but people
    // forget: the last @ is still where the host starts).
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port = match host_port.strip_prefix('[') {
        Some(v6) => {
            let Some((_, after)) = v6.split_once(']') else {
                return Err(UrlError::Ipv6);
            };
            after.strip_prefix(':')
        }
        None => {
            let (host, port) = match host_port.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (host_port, None),
            };
            if host.is_empty() {
                return Err(UrlError::NoHost);
            }
            port
        }
    };
    if let Some(port) = port {
        check_port(port)?;
    }
    let db = tail
        .strip_prefix('/')
        .map(|p| p.split(['?', '#']).next().unwrap_or(""));
    if let Some(db) = db
        && !db.is_empty()
        && db.parse::<u32>().is_err()
    {
        return Err(UrlError::Db(db.to_string()));
    }
    Ok(())
}

fn check_port(port: &str) -> Result<(), UrlError> {
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UrlError::PortNotNumber(port.to_string()));
    }
    match port.parse::<u32>() {
        Ok(1..=65535) => Ok(()),
        _ => Err(UrlError::PortRange(port.to_string())),
    }
}

/// `host:port`, with an IPv6 host in brackets (`[::1]:6379`): as people write it, and as
/// a socket address parses.
pub fn host_port(host: &str, port: u16) -> String {
    match host.contains(':') && !host.starts_with('[') {
        true => format!("[{host}]:{port}"),
        false => format!("{host}:{port}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_is_named() {
        assert_eq!(check("redis://127.0.0.1:6379/0"), Ok(()));
        assert_eq!(check("redis://:pw@[::1]:6379"), Ok(()));
        assert_eq!(check("rediss://u:p@host"), Ok(()));
        assert_eq!(
            check("redis://h:99999"),
            Err(UrlError::PortRange("99999".into()))
        );
        assert_eq!(check("redis://h:0"), Err(UrlError::PortRange("0".into())));
        assert_eq!(
            check("redis://h:x1"),
            Err(UrlError::PortNotNumber("x1".into()))
        );
        assert_eq!(check("redis://h:1/abc"), Err(UrlError::Db("abc".into())));
        assert_eq!(check("http://h:1"), Err(UrlError::Scheme("http".into())));
        assert_eq!(check("127.0.0.1:6379"), Err(UrlError::NoScheme));
        assert_eq!(check("redis://:6379"), Err(UrlError::NoHost));
        assert_eq!(check("redis://[::1:6379"), Err(UrlError::Ipv6));
        assert_eq!(host_port("::1", 6379), "[::1]:6379");
        assert_eq!(host_port("localhost", 6379), "localhost:6379");
    }

    #[test]
    fn a_password_is_never_echoed() {
        for url in [
            "http://:s3cret@h:1",
            "redis://:s3cret@h:99999",
            "redis://u:s3cret@h:1/abc",
            "redis://:s3:cret@:1",
        ] {
            let err = check(url).unwrap_err().to_string();
            assert!(!err.contains("s3"), "{url}: {err}");
        }
    }
}
