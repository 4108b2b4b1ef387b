//! TLS to Redis (`rediss://`): which certificates a connection trusts, the rustls client
//! config built from that once, and what a failed handshake means in words.
//!
//! The engine's measured connections and the admin connections (version, cleanup) share the
//! one config, so both trust exactly the same servers.
//!
//! - `stream`: a connection to Redis, plain or TLS, and its two halves.
//! - `insecure`: `--tls-insecure`'s verifier, which accepts any server certificate.
//! - `throwaway`: a throwaway CA and server certificate, for a redis-server of our own.

mod insecure;
mod stream;
pub mod throwaway;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

pub use stream::{ReadHalf, RedisStream, WriteHalf};

/// What a `rediss://` connection trusts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Trust {
    /// The system's root certificates (rustls-native-certs).
    #[default]
    System,
    /// Only the CA certificates in this PEM file (`--tls-ca`).
    Ca(PathBuf),
    /// Any certificate: no verification at all (`--tls-insecure`).
    Insecure,
}

impl Trust {
    /// What the target line says after the address.
    pub fn label(&self) -> String {
        match self {
            Trust::System => "TLS, verified against the system's roots".into(),
            Trust::Ca(path) => format!("TLS, verified against {}", path.display()),
            Trust::Insecure => "TLS NOT VERIFIED (--tls-insecure): anyone in between can read and change the traffic".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read the CA file {path}: {cause}")]
    CaFile {
        path: PathBuf,
        cause: rustls::pki_types::pem::Error,
    },
    #[error("the CA file {0} holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)")]
    NoCertificate(PathBuf),
    #[error("the CA file {path} holds a certificate rustls cannot use: {cause}")]
    BadCertificate { path: PathBuf, cause: rustls::Error },
    #[error("no usable root certificate on this system ({0}); give your CA with --tls-ca FILE")]
    NoSystemRoots(String),
    #[error("{0} is not a host name TLS can verify")]
    BadServerName(String),
    #[error("--tls-ca and --tls-insecure only apply to rediss:// URLs")]
    NotTls,
}

/// The TLS side of a target: the config and the name the server's certificate must carry.
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
    trust: Trust,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("name", &self.name)
            .field("trust", &self.trust)
            .finish()
    }
}

impl Tls {
    /// A config for talking to `host` (the Redis host, also through a proxy: the certificate
    /// is Redis's) trusting what `trust` says.
    pub fn new(host: &str, trust: Trust) -> Result<Tls, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions");
        let config = match &trust {
            Trust::Insecure => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(insecure::AcceptAnything::new(provider)))
                .with_no_client_auth(),
            Trust::System => builder
                .with_root_certificates(system_roots()?)
                .with_no_client_auth(),
            Trust::Ca(path) => builder
                .with_root_certificates(ca_roots(path)?)
                .with_no_client_auth(),
        };
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| TlsError::BadServerName(host.to_string()))?;
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            name,
            trust,
        })
    }

    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    /// The TLS handshake over `tcp` (straight to Redis or through a relay).
    pub async fn connect(&self, tcp: TcpStream) -> std::io::Result<RedisStream> {
        let tls = self.connector.connect(self.name.clone(), tcp).await?;
        let session = tls.get_ref().1;
        tracing::debug!(
            version = ?session.protocol_version(),
            suite = ?session.negotiated_cipher_suite().map(|s| s.suite()),
            "TLS to Redis"
        );
        Ok(RedisStream::Tls(Box::new(tls)))
    }
}

/// Says what went wrong in a failed TLS handshake, and what to do about it, in words.
pub fn explain(e: &std::io::Error) -> String {
    let rustls_error = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let hint = match rustls_error {
        Some(rustls::Error::InvalidCertificate(c)) => match c {
            CertificateError::UnknownIssuer => {
                "the server's certificate is not signed by a CA pipescope trusts: give its CA with --tls-ca FILE"
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the server's certificate has expired: renew it on the server"
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet: check the clocks"
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "the server's certificate is for another host name: connect by the name it carries"
            }
            // webpki's CaUsedAsEndEntity, only reachable through `Other`.
            CertificateError::Other(other)
                if format!("{other:?}").contains("CaUsedAsEndEntity") =>
            {
                "the server presents a CA certificate as its own (a self-signed certificate with CA:TRUE, as `openssl req -x509` makes by default): sign a server certificate with that CA and give the CA with --tls-ca FILE"
            }
            _ => "the server's certificate was rejected",
        },
        Some(rustls::Error::InvalidMessage(_))
        | Some(rustls::Error::InappropriateMessage { .. }) => {
            "the server did not answer in TLS: is this port a TLS port? (a plain port takes redis://)"
        }
        Some(_) => "the TLS handshake failed",
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the server closed the connection during the TLS handshake: is this port a TLS port?"
        }
        None => "the TLS handshake failed",
    };
    format!("{hint} ({e})")
}

fn system_roots() -> Result<RootCertStore, TlsError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map_or_else(|| "none found".to_string(), |e| e.to_string());
        return Err(TlsError::NoSystemRoots(why));
    }
    Ok(roots)
}

fn ca_roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|cause| TlsError::CaFile {
            path: path.to_path_buf(),
            cause,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate(path.to_path_buf()));
    }
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|cause| TlsError::BadCertificate {
            path: path.to_path_buf(),
            cause,
        })?;
    }
    Ok(roots)
}
