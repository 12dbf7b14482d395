//! `crontap-run check`: one test ping from the deployed host, with a report of each step,
//! against the loopback receiver, a 404, a refused port and an https server whose
//! certificate comes from a private CA. The token is never printed (the harness checks).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::harness::{Crontap, Output, Receiver, Reply, SECRET, refused_url};

/// `crontap-run check <args>` with the URL in CRONTAP_HEARTBEAT_URL.
fn check(url: &str, args: &[&str]) -> Output {
    Crontap::with_url(url).arg("check").args(args).run()
}

/// The report line of `step` (`DNS`, `HTTP` …).
fn step<'a>(out: &'a Output, step: &str) -> &'a str {
    let prefix = format!("{step}:");
    out.stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {step} line in:\n{}", out.stdout))
}

#[test]
fn a_working_http_url_passes_with_one_success_ping() {
    let receiver = Receiver::start();
    let out = check(&receiver.url(), &[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    let host = receiver.host();
    assert!(
        step(&out, "URL").contains(&format!("http://{host}/…")),
        "{}",
        out.stdout
    );
    assert_eq!(step(&out, "proxy"), "proxy:   none");
    assert!(
        step(&out, "DNS").contains("127.0.0.1 is an address"),
        "{}",
        out.stdout
    );
    assert!(
        step(&out, "connect").starts_with(&format!("connect: {host} in ")),
        "{}",
        out.stdout
    );
    assert_eq!(step(&out, "TLS"), "TLS:     none (an http URL)");
    assert!(
        step(&out, "HTTP").starts_with("HTTP:    200 OK in "),
        "{}",
        out.stdout
    );
    assert!(step(&out, "result").contains("OK"), "{}", out.stdout);
}

#[test]
fn fail_sends_the_fail_ping_naming_the_host() {
    let receiver = Receiver::start();
    let out = check(&receiver.url(), &["--fail"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let ping = receiver.only();
    assert!(
        ping.target
            .starts_with(&format!("/ping/{SECRET}/fail?msg=")),
        "{}",
        ping.target
    );
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(
        ping.msg().unwrap(),
        format!("crontap-run check from {}", hostname.trim())
    );
}

/// The URL comes from where a run reads it: the file wins over the variable.
#[test]
fn the_url_is_read_as_a_run_reads_it() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("url");
    std::fs::write(&file, format!("  {}\n", receiver.url())).unwrap();
    let out = Crontap::with_url(&refused_url())
        .env("CRONTAP_HEARTBEAT_URL_FILE", &file)
        .arg("check")
        .run();
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(receiver.received().len(), 1);

    let out = Crontap::new()
        .env("MY_URL", receiver.url())
        .args(["check", "--url-env", "MY_URL"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(receiver.received().len(), 2);

    let out = Crontap::new().arg("check").run();
    assert_eq!(out.code, 1);
    assert!(
        step(&out, "URL").contains("none configured (CRONTAP_HEARTBEAT_URL is not set)"),
        "{}",
        out.stdout
    );
    let out = Crontap::with_url("ftp://example/secret").arg("check").run();
    assert_eq!(out.code, 125);
    assert!(
        out.stderr.contains("must be an http or https URL"),
        "{}",
        out.stderr
    );
}

/// A 404 (or 410) says the heartbeat may be deleted or its token rotated, and exits 1.
#[test]
fn not_found_explains_deleted_or_rotated_heartbeats() {
    for status in [404, 410] {
        let receiver = Receiver::scripted(&[Reply::Status(status)]);
        let out = check(&receiver.url(), &[]);
        assert_eq!(out.code, 1, "{}", out.stdout);
        assert_eq!(receiver.received().len(), 1, "no retry in a check");
        assert!(step(&out, "HTTP").starts_with(&format!("HTTP:    {status} ")));
        let result = step(&out, "result");
        for words in ["deleted", "token rotated", "deploy the current URL"] {
            assert!(result.contains(words), "{words}: {result}");
        }
    }
    let receiver = Receiver::scripted(&[Reply::Status(503)]);
    let out = check(&receiver.url(), &[]);
    assert_eq!(out.code, 1);
    assert!(
        step(&out, "result").contains("busy or failing"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_refused_connection_stops_at_connect() {
    let out = check(&refused_url(), &["--ping-timeout", "5s"]);
    assert_eq!(out.code, 1);
    let connect = step(&out, "connect");
    assert!(
        connect.contains("FAILED") && connect.contains("refused"),
        "{connect}"
    );
    assert!(connect.contains("HTTPS_PROXY"), "{connect}");
    assert!(!out.stdout.contains("HTTP:"), "{}", out.stdout);
}

/// A proxy from the environment is named (without its credentials), and NO_PROXY is
/// honoured as reqwest honours it: the request goes through the proxy, which here is the
/// receiver itself.
#[test]
fn the_proxy_in_use_is_named_without_credentials() {
    let receiver = Receiver::start();
    let proxy = format!("http://proxyuser:proxypass123@{}", receiver.host());
    let out = Crontap::with_url(&format!("http://heartbeat.invalid/ping/{SECRET}"))
        .env("HTTP_PROXY", &proxy)
        .arg("check")
        .run();
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        step(&out, "proxy"),
        format!(
            "proxy:   http://{}:{} (from HTTP_PROXY)",
            "127.0.0.1",
            receiver.port()
        )
    );
    assert!(!out.stdout.contains("proxypass123"), "{}", out.stdout);
    assert_eq!(
        receiver.only().target,
        format!("http://heartbeat.invalid/ping/{SECRET}")
    );

    let direct = Receiver::start();
    let out = Crontap::with_url(&direct.url())
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1")
        .arg("check")
        .run();
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        step(&out, "proxy"),
        "proxy:   none (NO_PROXY excludes 127.0.0.1)"
    );
    assert_eq!(direct.received().len(), 1);
}

/// An https server whose certificate a private CA signed, answering 200.
struct PrivateCa {
    port: u16,
    ca_file: PathBuf,
    _dir: tempfile::TempDir,
    requests: Arc<Mutex<Vec<String>>>,
}

impl PrivateCa {
    fn start() -> PrivateCa {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "crontap-run test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, ca_cert.pem()).unwrap();

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone()];
        let config = Arc::new(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(
                    chain,
                    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
                )
                .unwrap(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        // Serves until the test process ends; each test has its own listener.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let conn = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut reader = BufReader::new(&mut tls);
                let mut request_line = String::new();
                // The check's own handshake sends no request; a refused certificate neither.
                if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                    continue;
                }
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                    header.clear();
                }
                seen.lock()
                    .unwrap()
                    .push(request_line.trim_end().to_owned());
                let _ = tls.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
        });
        PrivateCa {
            port,
            ca_file,
            _dir: dir,
            requests,
        }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}/ping/{SECRET}", self.port)
    }
}

#[test]
fn https_with_a_private_ca_in_ssl_cert_file() {
    let server = PrivateCa::start();
    let out = Crontap::with_url(&server.url())
        .env("SSL_CERT_FILE", &server.ca_file)
        .env_remove("SSL_CERT_DIR")
        .arg("check")
        .run();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let tls = step(&out, "TLS");
    assert!(
        tls.starts_with("TLS:     TLS 1.3, certificate verified with"),
        "{tls}"
    );
    assert!(
        tls.contains(&format!(
            "the system's roots (1 certificates from SSL_CERT_FILE {})",
            server.ca_file.display()
        )),
        "{tls}"
    );
    assert!(
        step(&out, "HTTP").starts_with("HTTP:    200 OK"),
        "{}",
        out.stdout
    );
    assert_eq!(
        *server.requests.lock().unwrap(),
        [format!("GET /ping/{SECRET} HTTP/1.1")]
    );
}

/// Without the CA, the handshake fails and the report names the likely causes: a private
/// CA needs SSL_CERT_FILE; nothing is sent.
#[test]
fn https_with_an_unknown_ca_names_ssl_cert_file() {
    let server = PrivateCa::start();
    let dir = tempfile::tempdir().unwrap();
    let out = Crontap::with_url(&server.url())
        // An empty bundle: the bundled Mozilla roots are used, as in a FROM scratch image.
        .env("SSL_CERT_FILE", dir.path().join("none.pem"))
        .env_remove("SSL_CERT_DIR")
        .arg("check")
        .run();
    assert_eq!(out.code, 1, "{}", out.stdout);
    let tls = step(&out, "TLS");
    assert!(tls.contains("FAILED"), "{tls}");
    assert!(
        tls.contains("does not chain to a root trusted here"),
        "{tls}"
    );
    assert!(tls.contains("the bundled Mozilla roots"), "{tls}");
    assert!(tls.contains("point SSL_CERT_FILE at its PEM file"), "{tls}");
    assert!(tls.contains("FROM scratch"), "{tls}");
    assert!(!out.stdout.contains("HTTP:"), "{}", out.stdout);
    assert!(server.requests.lock().unwrap().is_empty());
}

#[test]
fn a_name_that_does_not_resolve_stops_at_dns() {
    let out = check(
        &format!("http://no-such-host.invalid/ping/{SECRET}"),
        &["--ping-timeout", "20s"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let dns = step(&out, "DNS");
    assert!(
        dns.contains("FAILED: cannot resolve no-such-host.invalid"),
        "{dns}"
    );
    assert!(dns.contains("HTTPS_PROXY"), "{dns}");
    assert!(!out.stdout.contains("connect:"), "{}", out.stdout);
}
