//! A redis-server with a TLS port, its certificates made at test time (rcgen): a CA, a server
//! certificate it signed for 127.0.0.1, one that has expired, and a CA that signed nothing
//! here (the wrong one). The server keeps its plain port too, for inspecting it as the
//! default user without TLS.

use std::path::PathBuf;

use pipescope::local_redis::{LocalRedis, TlsFiles};
use pipescope::target::{RedisTarget, TlsOptions};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    date_time_ymd,
};

/// Which certificate the server presents.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ServerCert {
    Valid,
    Expired,
    /// The CA's own certificate (CA:TRUE), as `openssl req -x509` makes by default.
    TheCa,
}

pub struct TlsRedis {
    pub redis: LocalRedis,
    pub tls_port: u16,
    /// The CA that signed the server's certificate (PEM).
    pub ca: PathBuf,
    /// A CA that signed nothing this server presents (PEM).
    pub wrong_ca: PathBuf,
    _dir: tempfile::TempDir,
}

/// The password of every ACL user `acl_user` makes.
pub const ACL_PASSWORD: &str = "tls-secret";

fn ca(name: &str) -> (CertificateParams, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    (params, key)
}

impl TlsRedis {
    pub fn start(cert: ServerCert) -> TlsRedis {
        let dir = tempfile::tempdir().unwrap();
        let (ca_params, ca_key) = ca("pipescope test CA");
        let ca_pem = ca_params.self_signed(&ca_key).unwrap().pem();
        let ca_key_pem = ca_key.serialize_pem();
        let issuer = Issuer::new(ca_params, ca_key);
        let (wrong_params, wrong_key) = ca("some other CA");
        let wrong_pem = wrong_params.self_signed(&wrong_key).unwrap().pem();

        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "pipescope test redis");
        if cert == ServerCert::Expired {
            params.not_before = date_time_ymd(2020, 1, 1);
            params.not_after = date_time_ymd(2021, 1, 1);
        }
        let server_pem = params.signed_by(&key, &issuer).unwrap().pem();

        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let ca = write("ca.pem", &ca_pem);
        let wrong_ca = write("wrong-ca.pem", &wrong_pem);
        let (cert_file, key_file) = match cert {
            ServerCert::TheCa => (ca.clone(), write("ca.key", &ca_key_pem)),
            _ => (
                write("server.pem", &server_pem),
                write("server.key", &key.serialize_pem()),
            ),
        };

        let redis = LocalRedis::start_tls(TlsFiles {
            cert: &cert_file,
            key: &key_file,
            ca: &ca,
        })
        .expect("redis-server (with TLS) must be installed for the tests");
        let tls_port = redis.tls_port().expect("launched with a TLS port");
        TlsRedis {
            redis,
            tls_port,
            ca,
            wrong_ca,
            _dir: dir,
        }
    }

    /// `rediss://` to the TLS port, as `user` (with `ACL_PASSWORD`) or the default user.
    pub fn url(&self, user: Option<&str>) -> String {
        let auth = user.map_or_else(String::new, |u| format!("{u}:{ACL_PASSWORD}@"));
        format!("rediss://{auth}127.0.0.1:{}/0", self.tls_port)
    }

    /// The TLS port as `user`, trusting the server's own CA.
    pub fn target(&self, user: Option<&str>) -> RedisTarget {
        self.target_with(user, self.trust_ca())
    }

    pub fn target_with(&self, user: Option<&str>, options: TlsOptions) -> RedisTarget {
        RedisTarget::parse_with(&self.url(user), &options).unwrap()
    }

    pub fn trust_ca(&self) -> TlsOptions {
        TlsOptions {
            ca: Some(self.ca.clone()),
            insecure: false,
        }
    }

    /// The plain port as the default user: for setting up and inspecting, never for runs.
    pub fn plain(&self) -> RedisTarget {
        RedisTarget::parse(&self.redis.url()).unwrap()
    }

    /// Creates ACL user `name` (password `ACL_PASSWORD`) with `rules` after `on`, e.g.
    /// `["~pipescope:*", "+@all"]`.
    pub async fn acl_user(&self, name: &str, rules: &[&str]) {
        let mut con = self.plain().admin_connection().await.unwrap();
        let mut cmd = redis::cmd("ACL");
        cmd.arg("SETUSER")
            .arg(name)
            .arg("on")
            .arg(format!(">{ACL_PASSWORD}"));
        for r in rules {
            cmd.arg(*r);
        }
        let () = cmd.query_async(&mut con).await.unwrap();
    }
}
