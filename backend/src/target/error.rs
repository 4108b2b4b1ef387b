//! What can go wrong reaching Redis, in the words a user acts on: each error says the address,
//! the part that is wrong and the fix, once. Redis's own replies (NOAUTH, WRONGPASS, "DB
//! index is out of range") are recognised here, on both the admin connections (redis-rs) and
//! the engine's own handshake, and a failed pipeline is one line: its first failure and a count.

use super::CONNECT_TIMEOUT;
use super::url::UrlError;
use crate::tls::TlsError;

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(transparent)]
    BadUrl(#[from] UrlError),
    #[error("{0} is not supported by the engine yet; use a redis://host:port URL")]
    Unsupported(&'static str),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("TLS to Redis at {addr} failed: {message}")]
    TlsHandshake { addr: String, message: String },
    #[error(
        "cannot reach Redis at {addr}: {cause}. Is redis-server running there? Check the address"
    )]
    Unreachable { addr: String, cause: std::io::Error },
    #[error("Redis at {addr} did not answer within {CONNECT_TIMEOUT:?}")]
    ConnectTimeout { addr: String },
    #[error(
        "Redis at {addr} asks for a password: put it in the URL, redis://:PASSWORD@{addr} (or redis://USER:PASSWORD@{addr} for an ACL user)"
    )]
    NoPassword { addr: String },
    #[error("Redis at {addr} has no password set, but the URL gives one: drop it, redis://{addr}")]
    NoPasswordSet { addr: String },
    #[error("Redis at {addr} refused {}", refused_whom(.user, .addr))]
    WrongPassword { addr: String, user: Option<String> },
    #[error("Redis at {addr} has no database {db}: {}", databases_note(*.databases, .addr))]
    NoSuchDb {
        addr: String,
        db: i64,
        /// How many the server has (CONFIG GET databases), when it says.
        databases: Option<u32>,
    },
    #[error(
        "Redis at {addr} is a Redis Cluster node: add --cluster to run against its cluster (as redis-cli -c does)"
    )]
    ClusterNode { addr: String },
    #[error("Redis at {addr} refused the handshake: {message}")]
    Handshake { addr: String, message: String },
    #[error("Redis at {addr}: {}", describe(.error))]
    Redis {
        addr: String,
        /// Not a `source`: `describe` says it in one line, and the error chain would print
        /// redis-rs's own words (a failed pipeline's every command) again.
        error: redis::RedisError,
    },
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
}

fn refused_whom(user: &Option<String>, addr: &str) -> String {
    match user {
        Some(user) => format!(
            "user {user:?} with that password: check both in the URL, redis://USER:PASSWORD@{addr}"
        ),
        None => format!(
            "the password: check it in the URL, redis://:PASSWORD@{addr} (an ACL user's as redis://USER:PASSWORD@{addr})"
        ),
    }
}

fn databases_note(databases: Option<u32>, addr: &str) -> String {
    match databases {
        Some(0) | None => format!(
            "it has fewer (its `databases` setting); choose a lower one after the last / of the URL, e.g. redis://{addr}/0"
        ),
        Some(1) => format!("it has only database 0: use redis://{addr}/0"),
        Some(n) => format!(
            "it has {n} (0–{}); choose one of those after the last / of the URL, e.g. redis://{addr}/0",
            n - 1
        ),
    }
}

impl TargetError {
    /// A Redis error on the connection to `addr` (logged in as `user`, on database `db`), in
    /// the words above when Redis said something a user can fix.
    pub fn from_redis(
        addr: String,
        user: Option<String>,
        db: i64,
        error: redis::RedisError,
    ) -> Self {
        let text = match (error.code(), error.detail()) {
            (Some(code), Some(detail)) => format!("{code} {detail}"),
            (Some(code), None) => code.to_string(),
            _ => error.to_string(),
        };
        match Self::from_reply(addr.clone(), user.clone(), db, &text) {
            Some(e) => e,
            None if error.kind() == redis::ErrorKind::AuthenticationFailed => {
                TargetError::WrongPassword { addr, user }
            }
            None => TargetError::Redis { addr, error },
        }
    }

    /// The error reply `text` (e.g. "NOAUTH Authentication required.") to a handshake
    /// command, if it is one a user can fix.
    pub fn from_reply(addr: String, user: Option<String>, db: i64, text: &str) -> Option<Self> {
        let code = text.split_whitespace().next().unwrap_or("");
        match code {
            "NOAUTH" => Some(TargetError::NoPassword { addr }),
            "WRONGPASS" => Some(TargetError::WrongPassword { addr, user }),
            // Redis 6+ when a password is given but none is set.
            "ERR" if text.contains("without any password configured") => {
                Some(TargetError::NoPasswordSet { addr })
            }
            "ERR" if text.contains("DB index is out of range") => Some(TargetError::NoSuchDb {
                addr,
                db,
                databases: None,
            }),
            _ => None,
        }
    }
}

/// A redis-rs error in one line: Redis's own reply (its code and words), or for a pipeline or
/// transaction that failed in several places, the first failure and how many there were.
pub fn describe(error: &redis::RedisError) -> String {
    if let Some(failures) = error.clone().into_server_errors()
        && let Some((index, first)) = failures.first()
    {
        let first = server_error(first);
        return match failures.len() {
            1 => first,
            n => format!(
                "{n} commands failed; the first (command {}): {first}",
                index + 1
            ),
        };
    }
    match (error.kind(), error.detail()) {
        (redis::ErrorKind::Io, _) => match std::error::Error::source(error) {
            Some(cause) => format!("connection failed: {cause}"),
            None => error.to_string(),
        },
        (_, Some(detail)) => format!("{} ({detail})", error.category()),
        _ => error.to_string(),
    }
}

fn server_error(e: &redis::ServerError) -> String {
    match e.details() {
        Some(detail) => format!("{} {detail}", e.code()),
        None => e.code().to_string(),
    }
}
