//! A throwaway CA and a server certificate it signed for 127.0.0.1, written to a fresh
//! temporary directory that is removed on drop: for a redis-server of our own with a TLS port
//! (`cost tls`), so TLS is measured without anyone's certificates.

use std::path::PathBuf;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

pub struct Throwaway {
    dir: PathBuf,
    /// The CA's certificate (PEM): what a client trusts (`--tls-ca`).
    pub ca: PathBuf,
    /// The server's certificate and key (PEM).
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Throwaway {
    pub fn new() -> Result<Throwaway, Box<dyn std::error::Error + Send + Sync>> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "pipescope throwaway CA");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_pem = ca_params.self_signed(&ca_key)?.pem();
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate()?;
        let params = CertificateParams::new(vec!["127.0.0.1".to_string()])?;
        let cert_pem = params.signed_by(&key, &issuer)?.pem();

        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("pipescope-tls-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let t = Throwaway {
            ca: dir.join("ca.pem"),
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            dir,
        };
        std::fs::write(&t.ca, ca_pem)?;
        std::fs::write(&t.cert, cert_pem)?;
        std::fs::write(&t.key, key.serialize_pem())?;
        Ok(t)
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
