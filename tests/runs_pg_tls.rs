//! The PostgreSQL store over TLS (issue 21): a private server on
//! 127.0.0.1 with `ssl=on`, a certificate signed by a CA made here with
//! openssl, and a `pg_hba.conf` that refuses every connection without TLS
//! — so a command that works proves it used TLS.

use crate::runs_pg::{PgServer, PASSWORD, USER};
use crate::util::{describe, require};
use std::path::Path;
use std::process::{Command, Output};

/// `openssl ARGS` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl {args:?}: {}", describe(&o));
}

/// A CA (`ca.crt`), another CA (`other.crt`) and a server certificate
/// the first signed, made out to `localhost` only (no IP address: a URL
/// naming 127.0.0.1 passes `verify-ca` and fails `verify-full`).
fn make_certs(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for ca in ["ca", "other"] {
        let mut a = vec!["req", "-x509"];
        a.extend(ec);
        let (key, crt, subj) = (
            format!("{ca}.key"),
            format!("{ca}.crt"),
            format!("/CN=rtshield test {ca}"),
        );
        a.extend(["-keyout", &key, "-out", &crt, "-days", "2", "-subj", &subj]);
        openssl(dir, &a);
    }
    let mut a = vec!["req"];
    a.extend(ec);
    a.extend([
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    openssl(dir, &a);
    std::fs::write(
        dir.join("ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "ext",
        ],
    );
}

/// A TCP port free now on 127.0.0.1.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `rtshield runs list` on `url`.
fn list(url: &str) -> Output {
    crate::util::command()
        .args(["runs", "list", "--store", url])
        .env_remove("RTSHIELD_STORE")
        .env_remove("PGPASSFILE")
        .env("HOME", "/nonexistent")
        .env("PGPASSWORD", PASSWORD)
        .output()
        .unwrap()
}

#[test]
fn tls_modes_against_a_server_that_requires_tls() {
    if !require(
        Command::new("openssl").arg("version").output().is_ok(),
        "openssl is not installed (apt-get install openssl)",
    ) {
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    make_certs(certs.path());
    let port = free_port();
    let opts = format!(
        "-p {port} -c listen_addresses='127.0.0.1' -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key"
    );
    let Some(_pg) = PgServer::start_with(&opts, |s| {
        use std::os::unix::fs::PermissionsExt;
        for f in ["server.crt", "server.key"] {
            let to = s.data().join(f);
            std::fs::copy(certs.path().join(f), &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).unwrap();
            s.chown_to_server(&to);
        }
        // TLS or nothing: a connection in clear is refused by the server.
        std::fs::write(
            s.data().join("pg_hba.conf"),
            "local all all scram-sha-256\n\
             hostssl all all 127.0.0.1/32 scram-sha-256\n\
             hostnossl all all 127.0.0.1/32 reject\n",
        )
        .unwrap();
    }) else {
        return;
    };
    let ca = certs.path().join("ca.crt");
    let other = certs.path().join("other.crt");
    let url = |host: &str, q: &str| format!("postgres://{USER}@{host}:{port}/postgres{q}");
    let works = |u: String| {
        let o = list(&u);
        assert!(o.status.success(), "{u}: {}", describe(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("0 runs"),
            "{u}: {}",
            describe(&o)
        );
    };
    let refused = |u: String, why: &str| {
        let o = list(&u);
        assert_eq!(o.status.code(), Some(1), "{u}: {}", describe(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(why), "{u}: expected {why:?}: {}", describe(&o));
        assert!(!err.contains(PASSWORD), "{err}");
    };
    // The control: without TLS the server refuses (so each success below
    // went over TLS).
    refused(url("127.0.0.1", "?sslmode=disable"), "no encryption");
    // No sslmode, a server on this machine: prefer, and the server offers TLS.
    works(url("127.0.0.1", ""));
    works(url("127.0.0.1", "?sslmode=prefer"));
    works(url("127.0.0.1", "?sslmode=require"));
    let ca_q = |mode: &str, ca: &Path| format!("?sslmode={mode}&sslrootcert={}", ca.display());
    works(url("127.0.0.1", &ca_q("verify-ca", &ca)));
    works(url("localhost", &ca_q("verify-full", &ca)));
    // The certificate is made out to localhost, not 127.0.0.1.
    refused(url("127.0.0.1", &ca_q("verify-full", &ca)), "certificate");
    // Signed by another CA than the one given: refused, whatever the name.
    refused(
        url("localhost", &ca_q("verify-full", &other)),
        "certificate",
    );
    refused(url("127.0.0.1", &ca_q("verify-ca", &other)), "certificate");
    // require with a CA checks the CA, as libpq does.
    refused(url("127.0.0.1", &ca_q("require", &other)), "certificate");
    // verify-* without a CA to check against: a clear refusal.
    refused(url("localhost", "?sslmode=verify-full"), "sslrootcert");
    let o = list(&url("localhost", "?sslmode=allow"));
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
}
