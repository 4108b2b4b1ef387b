//! A redis-server of our own listening on a plain port and a TLS port, with a throwaway CA and
//! certificate made for it: so TLS is measured (`cost tls`, `versus
//! redis-benchmark --tls`) without anyone's certificates, and only TLS differs between the two ports.

use super::{LocalRedis, LocalRedisError, TlsFiles};
use crate::target::{RedisTarget, TargetError, TlsOptions};
use crate::tls::throwaway::Throwaway;

#[derive(Debug, thiserror::Error)]
pub enum TlsServerError {
    #[error("making a throwaway certificate: {0}")]
    Certificate(Box<dyn std::error::Error + Send + Sync>),
    #[error("starting a redis-server with a TLS port: {0}")]
    Start(#[from] LocalRedisError),
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// The server and its certificates (removed on drop, after the server: fields drop in order).
pub struct TlsServer {
    pub local: LocalRedis,
    pub tls_port: u16,
    /// The plain port.
    pub plain: RedisTarget,
    /// The TLS port, trusting the throwaway CA.
    pub tls: RedisTarget,
    pub certs: Throwaway,
}

impl TlsServer {
    pub fn start() -> Result<TlsServer, TlsServerError> {
        let certs = Throwaway::new().map_err(TlsServerError::Certificate)?;
        let local = LocalRedis::start_tls(TlsFiles {
            cert: &certs.cert,
            key: &certs.key,
            ca: &certs.ca,
        })?;
        let tls_port = local.tls_port().expect("launched with a TLS port");
        let plain = RedisTarget::parse(&local.url())?;
        let trust = TlsOptions {
            ca: Some(certs.ca.clone()),
            insecure: false,
        };
        let tls = RedisTarget::parse_with(&format!("rediss://127.0.0.1:{tls_port}/0"), &trust)?;
        Ok(TlsServer {
            local,
            tls_port,
            plain,
            tls,
            certs,
        })
    }
}
