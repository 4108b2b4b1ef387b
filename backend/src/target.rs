//! The Redis server a run talks to: parsed from a URL once, shown to people only redacted.

use std::sync::Arc;
use std::time::Duration;

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::resp;
use crate::tls::{RedisStream, Tls, TlsError, Trust};

mod error;
mod url;

pub use error::{TargetError, describe};
pub use url::{UrlError, host_port};

/// Commands sent on the engine's measured connection before its first own command, at most
/// (AUTH, SELECT and CLIENT ID: see `connect_identified`).
pub const MAX_HANDSHAKE_COMMANDS: usize = 3;

/// How long to wait for a TCP connection to Redis before saying it is unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct RedisTarget {
    info: ConnectionInfo,
    host: String,
    port: u16,
    /// Where the engine's measured connection goes instead, e.g. a latency proxy in front of
    /// Redis. Admin traffic (version, cleanup) always goes straight to Redis.
    via: Option<std::net::SocketAddr>,
    /// For `rediss://`: TLS end to end with Redis (through the proxy too, which relays the
    /// encrypted bytes).
    tls: Option<Tls>,
    /// A node of a Redis Cluster (`--cluster`): runs go to every master (`crate::cluster`).
    cluster: bool,
    /// On a cluster behind a dialled network: each master's address (`host:port`) and the
    /// delay-line proxy in front of it (`net::route`). `at` routes a master's connections
    /// through its proxy.
    master_proxies: Option<Arc<[(String, std::net::SocketAddr)]>>,
}

/// How a `rediss://` target is trusted, from the command line (`--tls-ca`, `--tls-insecure`).
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    pub ca: Option<std::path::PathBuf>,
    pub insecure: bool,
}

/// Debug shows the redacted URL: `ConnectionInfo`'s own Debug would print the password.
impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RedisTarget")
            .field(&self.redacted())
            .finish()
    }
}

impl RedisTarget {
    /// A `redis://` or `rediss://` URL (trusting the system's roots for the latter).
    pub fn parse(url: &str) -> Result<Self, TargetError> {
        Self::parse_with(url, &TlsOptions::default())
    }

    /// A URL and how to trust its server if it is `rediss://` (`#insecure` at the end of the
    /// URL, as redis-rs reads it, is `--tls-insecure`).
    pub fn parse_with(url: &str, options: &TlsOptions) -> Result<Self, TargetError> {
        // redis-rs parses `rediss://` only with its own TLS features; the TLS here is ours,
        // so it reads the rest of the URL as `redis://`.
        let (url, tls_from_url) = match url.strip_prefix("rediss://") {
            Some(rest) => match rest.strip_suffix("#insecure") {
                Some(rest) => (format!("redis://{rest}"), Some(true)),
                None => (format!("redis://{rest}"), Some(false)),
            },
            None => (url.to_string(), None),
        };
        // Never echo the URL itself in the error: it may hold a password.
        url::check(&url)?;
        let info = url
            .as_str()
            .into_connection_info()
            .map_err(|e| UrlError::Other(e.category().to_string()))?;
        let ConnectionAddr::Tcp(host, port) = info.addr() else {
            return Err(TargetError::Unsupported("a unix socket"));
        };
        let (host, port) = (host.clone(), *port);
        let tls = match tls_from_url {
            None if options.ca.is_some() || options.insecure => {
                return Err(TlsError::NotTls.into());
            }
            None => None,
            Some(insecure_in_url) => {
                let trust = match (&options.ca, options.insecure || insecure_in_url) {
                    (_, true) => Trust::Insecure,
                    (Some(ca), false) => Trust::Ca(ca.clone()),
                    (None, false) => Trust::System,
                };
                Some(Tls::new(&host, trust)?)
            }
        };
        Ok(Self {
            info,
            host,
            port,
            via: None,
            tls,
            cluster: false,
            master_proxies: None,
        })
    }

    /// The same node, taken as the way into a Redis Cluster.
    pub fn as_cluster(self) -> RedisTarget {
        RedisTarget {
            cluster: true,
            ..self
        }
    }

    pub fn is_cluster(&self) -> bool {
        self.cluster
    }

    /// Whether the engine's connection goes through a proxy (`through`).
    pub fn is_proxied(&self) -> bool {
        self.via.is_some()
    }

    /// The cluster reached through one proxy per master (`proxies`: each master's `host:port`
    /// and its proxy's address), for the engine's connections; admin traffic goes direct.
    pub fn through_masters(&self, proxies: Vec<(String, std::net::SocketAddr)>) -> RedisTarget {
        RedisTarget {
            master_proxies: Some(proxies.into()),
            ..self.clone()
        }
    }

    /// This node alone, not as a way into a cluster and with no proxy: what the proxy in front
    /// of it is calibrated against.
    pub fn as_node(&self) -> RedisTarget {
        RedisTarget {
            cluster: false,
            via: None,
            master_proxies: None,
            ..self.clone()
        }
    }

    /// Another node of the same deployment at `host:port`: the same user, password, db and
    /// TLS trust (verified against that host's name); through that node's proxy when the
    /// cluster has one per master (`through_masters`), else no proxy.
    pub fn at(&self, host: &str, port: u16) -> Result<RedisTarget, TargetError> {
        let tls = match &self.tls {
            Some(tls) => Some(Tls::new(host, tls.trust().clone())?),
            None => None,
        };
        Ok(RedisTarget {
            info: self
                .info
                .clone()
                .set_addr(ConnectionAddr::Tcp(host.to_string(), port)),
            host: host.to_string(),
            port,
            via: self.master_proxies.as_ref().and_then(|all| {
                let addr = host_port(host, port);
                all.iter().find(|(a, _)| *a == addr).map(|(_, via)| *via)
            }),
            tls,
            cluster: self.cluster,
            master_proxies: self.master_proxies.clone(),
        })
    }

    /// How the connection is trusted, for TLS targets.
    pub fn tls_trust(&self) -> Option<&Trust> {
        self.tls.as_ref().map(Tls::trust)
    }

    /// The same Redis, with the engine's connection routed through `proxy`.
    pub fn through(&self, proxy: std::net::SocketAddr) -> RedisTarget {
        RedisTarget {
            via: Some(proxy),
            ..self.clone()
        }
    }

    /// The same Redis without the proxy: a connection straight to it (e.g. for untimed set-up
    /// the proxy must not see).
    pub fn direct(&self) -> RedisTarget {
        RedisTarget {
            via: None,
            ..self.clone()
        }
    }

    /// Redis's address as a socket address (resolving a host name).
    pub async fn socket_addr(&self) -> Result<std::net::SocketAddr, TargetError> {
        let addr = self.addr();
        match tokio::net::lookup_host(&addr).await.map(|mut a| a.next()) {
            Ok(Some(sa)) => Ok(sa),
            Ok(None) => Err(TargetError::Unreachable {
                addr,
                cause: std::io::Error::other("no address for that host"),
            }),
            Err(cause) => Err(TargetError::Unreachable { addr, cause }),
        }
    }

    /// `host:port`, the address without credentials (an IPv6 host in brackets).
    pub fn addr(&self) -> String {
        host_port(&self.host, self.port)
    }

    /// A Redis error on one of this target's connections, in a user's words.
    fn redis_error(&self, error: redis::RedisError) -> TargetError {
        let settings = self.info.redis_settings();
        let user = settings.username().map(str::to_string);
        TargetError::from_redis(self.addr(), user, settings.db(), error)
    }

    /// The URL with the password removed: safe for logs and for the page.
    pub fn redacted(&self) -> String {
        let settings = self.info.redis_settings();
        let user = match (settings.username(), settings.password()) {
            (Some(user), Some(_)) => format!("{user}:***@"),
            (Some(user), None) => format!("{user}@"),
            (None, Some(_)) => ":***@".to_string(),
            (None, None) => String::new(),
        };
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://{user}{}/{}", self.addr(), settings.db())
    }

    /// The redacted URL and, for TLS, how the server is trusted, and whether it is the way into
    /// a cluster: the target line people see.
    pub fn shown(&self) -> String {
        let url = match self.tls_trust() {
            Some(trust) => format!("{} ({})", self.redacted(), trust.label()),
            None => self.redacted(),
        };
        match self.cluster {
            true => format!("Redis Cluster via {url}"),
            false => url,
        }
    }

    /// A redis-rs client for the admin side of a plain target (`admin_connection`); a TLS
    /// target's admin connections go over the engine's own TLS stream instead.
    fn client(&self) -> Result<redis::Client, TargetError> {
        redis::Client::open(self.info.clone()).map_err(|e| self.redis_error(e))
    }

    pub async fn admin_connection(&self) -> Result<redis::aio::MultiplexedConnection, TargetError> {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(Duration::from_secs(30)));
        if self.tls.is_some() {
            // Over our own TLS stream (the engine's config, the same trust); redis-rs does
            // the AUTH and SELECT the URL asks for.
            let stream = self.direct().connect_stream().await?;
            let (con, driver) = redis::aio::MultiplexedConnection::new_with_config(
                self.info.redis_settings(),
                stream,
                config,
            )
            .await
            .map_err(|e| self.redis_error(e))?;
            tokio::spawn(driver);
            return Ok(con);
        }
        self.client()?
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| self.redis_error(e))
    }

    /// The engine's own connection: TCP with Nagle off (it would hold back small writes and
    /// distort every round trip), TLS for `rediss://`, authenticated and on the right db.
    pub async fn connect_raw(&self) -> Result<RedisStream, TargetError> {
        let mut stream = self.connect_stream().await?;
        for cmd in self.handshake_commands() {
            self.handshake(&mut stream, &cmd).await?;
        }
        Ok(stream)
    }

    /// TCP (through the proxy if there is one) and, for `rediss://`, the TLS handshake with
    /// Redis: a connection ready for its first command.
    async fn connect_stream(&self) -> Result<RedisStream, TargetError> {
        let addr = self.via.map_or_else(|| self.addr(), |via| via.to_string());
        let stream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&addr)).await {
            Err(_) => return Err(TargetError::ConnectTimeout { addr }),
            Ok(Err(cause)) => return Err(TargetError::Unreachable { addr, cause }),
            Ok(Ok(stream)) => stream,
        };
        stream
            .set_nodelay(true)
            .map_err(|cause| TargetError::Unreachable {
                addr: addr.clone(),
                cause,
            })?;
        let Some(tls) = &self.tls else {
            return Ok(RedisStream::Tcp(stream));
        };
        match tokio::time::timeout(CONNECT_TIMEOUT, tls.connect(stream)).await {
            // A plain Redis port reads a ClientHello as the start of an inline command and
            // waits for the rest of the line.
            Err(_) => Err(TargetError::TlsHandshake {
                addr: self.addr(),
                message: format!(
                    "no TLS answer within {CONNECT_TIMEOUT:?}: is this port a TLS port? (a plain port takes redis://)"
                ),
            }),
            Ok(Err(e)) => Err(TargetError::TlsHandshake {
                addr: self.addr(),
                message: crate::tls::explain(&e),
            }),
            Ok(Ok(stream)) => Ok(stream),
        }
    }

    /// The engine's measured connection: `connect_raw`, then `CLIENT ID` on it, so that a
    /// second connection can watch what Redis holds for this one (`CLIENT LIST ID`). Through a
    /// proxy the id is that of the proxy's connection to Redis, the one whose buffers hold the
    /// run's traffic. `None` (logged) where Redis refuses CLIENT ID; the run goes on.
    pub async fn connect_identified(&self) -> Result<(RedisStream, Option<u64>), TargetError> {
        let mut stream = self.connect_raw().await?;
        let mut cmd = Vec::new();
        resp::encode_command(&mut cmd, &[b"CLIENT", b"ID"]);
        let id = match self.handshake(&mut stream, &cmd).await {
            Ok(reply) => std::str::from_utf8(&reply)
                .ok()
                .and_then(|r| r.strip_prefix(':')?.trim_end().parse().ok()),
            Err(TargetError::Handshake { message, .. }) => {
                tracing::warn!("CLIENT ID refused ({message}); Redis's memory is not sampled");
                None
            }
            Err(e) => return Err(e),
        };
        Ok((stream, id))
    }

    /// Commands sent on the engine's measured connection before the run's first: the
    /// handshake, then CLIENT ID (`connect_identified`).
    pub fn commands_before_run(&self) -> usize {
        self.handshake_commands().len() + 1
    }

    /// What `connect_raw` sends before the engine's first command, encoded, one command each:
    /// AUTH if the URL has a password, SELECT if its db is not 0. The wire tap counts them as
    /// commands, so their number is where a run's first command is on the wire.
    pub fn handshake_commands(&self) -> Vec<Vec<u8>> {
        let settings = self.info.redis_settings();
        let mut commands = Vec::with_capacity(MAX_HANDSHAKE_COMMANDS);
        if let Some(password) = settings.password() {
            let mut cmd = Vec::new();
            match settings.username() {
                Some(user) => {
                    resp::encode_command(&mut cmd, &[b"AUTH", user.as_bytes(), password.as_bytes()])
                }
                None => resp::encode_command(&mut cmd, &[b"AUTH", password.as_bytes()]),
            }
            commands.push(cmd);
        }
        if settings.db() != 0 {
            let mut cmd = Vec::new();
            resp::encode_command(&mut cmd, &[b"SELECT", settings.db().to_string().as_bytes()]);
            commands.push(cmd);
        }
        commands
    }

    /// Sends `cmd` and reads its reply, returned whole; an error reply is an error.
    async fn handshake(
        &self,
        stream: &mut RedisStream,
        cmd: &[u8],
    ) -> Result<Vec<u8>, TargetError> {
        let addr = self.addr();
        let io = |cause| TargetError::Unreachable {
            addr: addr.clone(),
            cause,
        };
        stream.write_all(cmd).await.map_err(io)?;
        stream.flush().await.map_err(io)?;
        let mut buf = Vec::with_capacity(256);
        loop {
            let read = tokio::time::timeout(CONNECT_TIMEOUT, stream.read_buf(&mut buf))
                .await
                .map_err(|_| TargetError::ConnectTimeout { addr: addr.clone() })?
                .map_err(io)?;
            let message = |m: &str| TargetError::Handshake {
                addr: addr.clone(),
                message: m.to_string(),
            };
            match resp::scan_reply(&buf) {
                Ok(Some(resp::Reply::Ok { len })) => {
                    buf.truncate(len);
                    return Ok(buf);
                }
                Ok(Some(resp::Reply::Error { len })) => {
                    let text = String::from_utf8_lossy(&buf[1..len - 2]);
                    let settings = self.info.redis_settings();
                    let user = settings.username().map(str::to_string);
                    return Err(
                        TargetError::from_reply(addr.clone(), user, settings.db(), &text)
                            .unwrap_or_else(|| message(&text)),
                    );
                }
                Ok(None) if read == 0 => return Err(message("connection closed")),
                Ok(None) => continue,
                Err(e) => return Err(message(&e.to_string())),
            }
        }
    }

    /// `redis_version` from `INFO server`; also the start-up check that Redis is there, with a
    /// plain TCP connect first so an unreachable server gets a plain message.
    pub async fn server_version(&self) -> Result<String, TargetError> {
        let addr = self.addr();
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&addr)).await {
            Err(_) => return Err(TargetError::ConnectTimeout { addr }),
            Ok(Err(cause)) => return Err(TargetError::Unreachable { addr, cause }),
            Ok(Ok(_)) => {}
        }
        let mut con = match self.admin_connection().await {
            // redis-rs says only "authentication failed" when no password is set at all.
            Err(TargetError::WrongPassword { addr, user: None }) => {
                return Err(
                    match Box::pin(self.without_password().server_version()).await {
                        Ok(_) => TargetError::NoPasswordSet { addr },
                        Err(_) => TargetError::WrongPassword { addr, user: None },
                    },
                );
            }
            Err(TargetError::NoSuchDb { addr, db, .. }) => {
                let databases = self.databases().await;
                return Err(TargetError::NoSuchDb {
                    addr,
                    db,
                    databases,
                });
            }
            con => con?,
        };
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut con)
            .await
            .map_err(|e| self.redis_error(e))?;
        Ok(info
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap_or("unknown")
            .trim()
            .to_string())
    }
    /// The same target, with no user or password.
    fn without_password(&self) -> RedisTarget {
        let settings = self.info.redis_settings().clone();
        let settings = redis::RedisConnectionInfo::default()
            .set_db(settings.db())
            .set_protocol(settings.protocol());
        RedisTarget {
            info: self.info.clone().set_redis_settings(settings),
            ..self.direct()
        }
    }

    /// How many databases Redis has (`CONFIG GET databases`, asked on database 0), if it says.
    async fn databases(&self) -> Option<u32> {
        let settings = self.info.redis_settings().clone().set_db(0);
        let db0 = RedisTarget {
            info: self.info.clone().set_redis_settings(settings),
            ..self.direct()
        };
        let mut con = db0.admin_connection().await.ok()?;
        let reply: std::collections::HashMap<String, u32> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("databases")
            .query_async(&mut con)
            .await
            .ok()?;
        reply.get("databases").copied()
    }

    /// Refuses a Redis Cluster node taken as a single server (no `--cluster`): every key of
    /// another node's slots would be answered with MOVED.
    pub async fn refuse_cluster_node(&self) -> Result<(), TargetError> {
        match !self.cluster && self.is_cluster_node().await? {
            true => Err(TargetError::ClusterNode { addr: self.addr() }),
            false => Ok(()),
        }
    }

    /// Whether this Redis is a node of a Redis Cluster (`INFO cluster`).
    pub async fn is_cluster_node(&self) -> Result<bool, TargetError> {
        let mut con = self.admin_connection().await?;
        let info: String = redis::cmd("INFO")
            .arg("cluster")
            .query_async(&mut con)
            .await
            .map_err(|e| self.redis_error(e))?;
        Ok(info.lines().any(|l| l.trim() == "cluster_enabled:1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_the_password() {
        let t = RedisTarget::parse("redis://:s3cret@127.0.0.1:6400/2").unwrap();
        assert_eq!(t.redacted(), "redis://:***@127.0.0.1:6400/2");
        let t = RedisTarget::parse("redis://alice:s3cret@localhost:6400").unwrap();
        assert_eq!(t.redacted(), "redis://alice:***@localhost:6400/0");
        assert!(!format!("{t:?}").contains("s3cret"));
    }

    #[test]
    fn the_handshake_is_auth_then_select_as_the_url_asks() {
        let count = |url| RedisTarget::parse(url).unwrap().handshake_commands().len();
        assert_eq!(count("redis://127.0.0.1:6400"), 0);
        assert_eq!(count("redis://127.0.0.1:6400/3"), 1);
        assert_eq!(count("redis://:pw@127.0.0.1:6400/0"), 1);
        let both = RedisTarget::parse("redis://alice:pw@127.0.0.1:6400/3").unwrap();
        let both = both.handshake_commands();
        assert_eq!(both.len() + 1, MAX_HANDSHAKE_COMMANDS, "and CLIENT ID");
        assert_eq!(both[0], b"*3\r\n$4\r\nAUTH\r\n$5\r\nalice\r\n$2\r\npw\r\n");
        assert_eq!(both[1], b"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n");
    }

    #[test]
    fn bad_urls_do_not_echo_the_password() {
        let err = RedisTarget::parse("http://:s3cret@host")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn rediss_urls_are_tls_and_the_tls_flags_need_one() {
        let insecure = TlsOptions {
            ca: None,
            insecure: true,
        };
        let t =
            RedisTarget::parse_with("rediss://pipe:s3cret@127.0.0.1:6400/2", &insecure).unwrap();
        assert_eq!(t.redacted(), "rediss://pipe:***@127.0.0.1:6400/2");
        assert_eq!(t.tls_trust(), Some(&Trust::Insecure));
        assert!(t.shown().contains("NOT VERIFIED"));
        let both = t.handshake_commands();
        assert_eq!(
            both[0],
            b"*3\r\n$4\r\nAUTH\r\n$4\r\npipe\r\n$6\r\ns3cret\r\n"
        );
        // redis-rs's own spelling of insecure.
        let t = RedisTarget::parse("rediss://127.0.0.1:6400/0#insecure").unwrap();
        assert_eq!(t.tls_trust(), Some(&Trust::Insecure));
        let err = RedisTarget::parse_with("redis://127.0.0.1:6400", &insecure).unwrap_err();
        assert!(matches!(err, TargetError::Tls(TlsError::NotTls)), "{err}");
        let missing = TlsOptions {
            ca: Some("/nonexistent/ca.pem".into()),
            insecure: false,
        };
        let err = RedisTarget::parse_with("rediss://127.0.0.1:6400", &missing)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot read the CA file /nonexistent/ca.pem"),
            "{err}"
        );
    }
}
