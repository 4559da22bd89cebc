//! TLS to a PostgreSQL server: libpq's `sslmode` and `sslrootcert` on
//! rustls with the ring provider (pure Rust and assembly, no OpenSSL: it
//! cross-builds statically for the boards).
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` | when the server offers it, else in clear | not checked |
//! | `require` | always (a server without TLS is refused) | not checked; checked against `sslrootcert` when given, as libpq does |
//! | `verify-ca` | always | signed by a CA of `sslrootcert` |
//! | `verify-full` | always | signed by a CA of `sslrootcert` and made out to the host of the URL |
//!
//! Without `sslmode`: `prefer` for a server on this machine (`localhost`,
//! a loopback address), `require` for any other: a password never crosses
//! a network in clear unless the URL says `sslmode=disable`. A Unix
//! socket never uses TLS (the server does not offer it there; libpq
//! ignores `sslmode` too). `sslrootcert=FILE` is a PEM file of CA
//! certificates; without it, `verify-*` use `~/.postgresql/root.crt` as
//! libpq does, and `sslrootcert=system` the system's CAs
//! (`/etc/ssl/certs/ca-certificates.crt`).
//!
//! Only encryption without verification (`prefer`, `require`) protects
//! against a listener, not against a machine that answers in the server's
//! place: docs/security.md recommends `verify-full`.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Option<SslMode> {
        Some(match s {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// The name libpq gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// What the URL asked of TLS, taken out of it (the client library knows
/// neither `verify-*` nor `sslrootcert`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsParams {
    /// `sslmode`, when the URL gives one.
    pub mode: Option<SslMode>,
    /// `sslrootcert`, when the URL gives one.
    pub rootcert: Option<String>,
}

/// `url` without its `sslmode` and `sslrootcert` parameters, and their
/// values; an unknown `sslmode` is an error naming the accepted ones.
pub(crate) fn take_params(url: &str) -> Result<(String, TlsParams), String> {
    let mut p = TlsParams {
        mode: None,
        rootcert: None,
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), p));
    };
    let mut kept = Vec::new();
    for kv in query.split('&') {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        match k {
            "sslmode" => {
                let v = percent_decode(v);
                p.mode = Some(SslMode::parse(&v).ok_or_else(|| {
                    format!(
                        "sslmode={v} is not one of disable, prefer, require, verify-ca, verify-full"
                    )
                })?);
            }
            "sslrootcert" => p.rootcert = Some(percent_decode(v)),
            _ => kept.push(kv),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, p))
}

/// `%XX` decoded (a path in a URL: `%2F` is `/`); an invalid escape kept.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether every host is on this machine: a Unix socket, `localhost` or a
/// loopback address.
fn all_local(cfg: &postgres::Config) -> bool {
    cfg.get_hosts().iter().all(|h| match h {
        postgres::config::Host::Unix(_) => true,
        postgres::config::Host::Tcp(name) => {
            name == "localhost"
                || name
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|a| a.is_loopback())
        }
    })
}

/// Whether every host is a Unix socket.
fn all_unix(cfg: &postgres::Config) -> bool {
    cfg.get_hosts()
        .iter()
        .all(|h| matches!(h, postgres::config::Host::Unix(_)))
}

/// The mode in effect for `cfg`: the URL's, else the default (module
/// documentation); never TLS on Unix sockets.
pub(crate) fn effective_mode(p: &TlsParams, cfg: &postgres::Config) -> SslMode {
    if all_unix(cfg) {
        return SslMode::Disable;
    }
    match p.mode {
        Some(SslMode::Require) if p.rootcert.is_some() => SslMode::VerifyCa,
        Some(m) => m,
        None if all_local(cfg) => SslMode::Prefer,
        None => SslMode::Require,
    }
}

/// The rustls configuration for `mode` (not [`SslMode::Disable`]).
pub(crate) fn client_config(mode: SslMode, rootcert: Option<&str>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let cfg = match mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
            .with_no_client_auth(),
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let roots = Arc::new(root_store(mode, rootcert)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| format!("TLS: {e}"))?;
            let verifier: Arc<dyn ServerCertVerifier> = if mode == SslMode::VerifyCa {
                Arc::new(AnyName(webpki))
            } else {
                webpki
            };
            builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth()
        }
    };
    Ok(cfg)
}

/// The system's CA bundle (Debian, Ubuntu, Alpine, Buildroot's
/// ca-certificates).
const SYSTEM_CAS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// `HOME/.postgresql/root.crt`, libpq's default trust anchor, when it is
/// one only root or the caller could have put there: HOME comes from the
/// environment, which under `sudo -E` is another user's, and that user
/// would then choose which CA root trusts for the server that receives
/// root's password. The same rule as a store path named by the
/// environment (`rtshield_safefs::trusted_path`: every component owned by
/// root or the caller, writable by no one else).
fn default_rootcert(home: &Path, mode: SslMode) -> Result<PathBuf, String> {
    let file = home.join(".postgresql/root.crt");
    if !home.is_absolute() {
        return Err(format!(
            "sslmode={} needs the CA that signed the server's certificate: HOME is not an absolute directory; add sslrootcert=FILE (a PEM file) to the URL",
            mode.name()
        ));
    }
    rtshield_safefs::trusted_path(&file).map_err(|why| {
        format!(
            "sslmode={}: refusing the default CA file $HOME/.postgresql/root.crt (HOME={}, from the environment): {why}; a trust anchor must be yours or root's and writable by no one else — give sslrootcert=FILE",
            mode.name(),
            home.display()
        )
    })?;
    Ok(file)
}

/// The CAs of `sslrootcert` (or its default): at least one certificate.
fn root_store(mode: SslMode, rootcert: Option<&str>) -> Result<RootCertStore, String> {
    let file: PathBuf = match rootcert {
        Some("system") => PathBuf::from(SYSTEM_CAS),
        Some(f) => PathBuf::from(f),
        None => match std::env::var_os("HOME") {
            Some(h) => default_rootcert(Path::new(&h), mode)?,
            None => {
                return Err(format!(
                    "sslmode={} needs the CA that signed the server's certificate: add sslrootcert=FILE (a PEM file) to the URL",
                    mode.name()
                ))
            }
        },
    };
    let pem = rtshield_safefs::read_input(&file, 4 << 20).map_err(|e| {
        format!(
            "sslmode={} needs the CA that signed the server's certificate (sslrootcert=FILE, default ~/.postgresql/root.crt): {e}",
            mode.name()
        )
    })?;
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(&pem) {
        let c = c.map_err(|e| format!("sslrootcert {}: {e}", file.display()))?;
        roots
            .add(c)
            .map_err(|e| format!("sslrootcert {}: {e}", file.display()))?;
    }
    if roots.is_empty() {
        return Err(format!(
            "sslrootcert {}: no PEM certificate in it",
            file.display()
        ));
    }
    Ok(roots)
}

/// `prefer`/`require`: any certificate, but the handshake's signatures
/// still checked (the session is encrypted with whoever answered).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain checked, the name not. rustls checks the chain
/// first and the name last, so a name error means the chain was good.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adversary round 3, C9: under `sudo -E`, HOME is the other user's,
    /// and `~/.postgresql/root.crt` was taken as root's trust anchor. A
    /// default CA file in a HOME another user owns, or may write, is
    /// refused; the caller's own is used.
    #[test]
    fn the_default_ca_file_of_another_users_home_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".postgresql")).unwrap();
        std::fs::write(home.join(".postgresql/root.crt"), "x").unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let got = default_rootcert(&home, SslMode::VerifyFull).unwrap();
        assert_eq!(
            got,
            home.join(".postgresql/root.crt"),
            "the caller's own HOME"
        );
        // Writable by others: anyone could have put the file there.
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = default_rootcert(&home, SslMode::VerifyFull).unwrap_err();
        assert!(
            e.contains("refusing the default CA file") && e.contains("sslrootcert=FILE"),
            "{e}"
        );
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        if rustix::process::geteuid().is_root() {
            // Owned by another user (the attacker's HOME under sudo -E).
            std::os::unix::fs::chown(&home, Some(2345), Some(2345)).unwrap();
            let e = default_rootcert(&home, SslMode::VerifyFull).unwrap_err();
            assert!(e.contains("owned by uid 2345"), "{e}");
        }
        assert!(default_rootcert(Path::new("rel"), SslMode::VerifyFull).is_err());
    }

    #[test]
    fn tls_parameters_are_taken_out_of_the_url() {
        let (u, p) = take_params(
            "postgres://u@db/rt?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(u, "postgres://u@db/rt?application_name=x");
        assert_eq!(p.mode, Some(SslMode::VerifyFull));
        assert_eq!(p.rootcert.as_deref(), Some("/etc/ca.pem"));
        let (u, p) = take_params("postgres://u@db/rt?sslmode=disable").unwrap();
        assert_eq!(
            (u.as_str(), p.mode),
            ("postgres://u@db/rt", Some(SslMode::Disable))
        );
        assert!(take_params("postgres://u@db/rt?sslmode=allow")
            .unwrap_err()
            .contains("verify-full"));
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%41%zz"), "A%zz");
    }

    #[test]
    fn the_default_is_prefer_here_and_require_elsewhere() {
        let none = TlsParams {
            mode: None,
            rootcert: None,
        };
        let cfg = |u: &str| u.parse::<postgres::Config>().unwrap();
        for (url, want) in [
            ("postgres://u@localhost/rt", SslMode::Prefer),
            ("postgres://u@127.0.0.1:5433/rt", SslMode::Prefer),
            ("postgres://u@[::1]/rt", SslMode::Prefer),
            ("postgres://u@db.lab/rt", SslMode::Require),
            ("postgres://u@10.0.0.2/rt", SslMode::Require),
            ("postgresql://u@%2Frun%2Fpostgresql/rt", SslMode::Disable),
        ] {
            assert_eq!(effective_mode(&none, &cfg(url)), want, "{url}");
        }
        let require_ca = TlsParams {
            mode: Some(SslMode::Require),
            rootcert: Some("ca.pem".into()),
        };
        assert_eq!(
            effective_mode(&require_ca, &cfg("postgres://u@db/rt")),
            SslMode::VerifyCa
        );
    }
}
