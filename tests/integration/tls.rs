//! https heartbeat URLs: rustls with the system's roots, `SSL_CERT_FILE`, the bundled
//! fallback, and no certificate loading at all for http.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::harness::{Crontap, Receiver, SECRET};

/// An https receiver on 127.0.0.1 with a fresh self-signed certificate, answering 200.
struct TlsReceiver {
    port: u16,
    cert_file: PathBuf,
    _dir: tempfile::TempDir,
    requests: Arc<Mutex<Vec<String>>>,
    connections: Arc<AtomicUsize>,
}

impl TlsReceiver {
    fn start() -> TlsReceiver {
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cert_file = dir.path().join("receiver.pem");
        std::fs::write(&cert_file, certified.cert.pem()).unwrap();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        ));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = Arc::new(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![certified.cert.der().clone()], key)
                .unwrap(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let connections = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::clone(&connections);
        // Serves until the test process ends; each test has its own listener.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                accepted.fetch_add(1, Ordering::SeqCst);
                let conn = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut request_line = String::new();
                let mut reader = BufReader::new(&mut tls);
                if reader.read_line(&mut request_line).is_err() {
                    continue; // the client refused the certificate
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
        TlsReceiver {
            port,
            cert_file,
            _dir: dir,
            requests,
            connections,
        }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}/ping/{SECRET}", self.port)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

#[test]
fn ssl_cert_file_is_trusted() {
    let receiver = TlsReceiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("SSL_CERT_FILE", &receiver.cert_file)
        .env_remove("SSL_CERT_DIR")
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(out.stderr, "");
    assert_eq!(
        receiver.requests(),
        [format!("GET /ping/{SECRET} HTTP/1.1")]
    );
}

#[test]
fn an_untrusted_certificate_is_refused_reported_and_not_retried() {
    let receiver = TlsReceiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .sh("exit 4");
    assert_eq!(out.code, 4);
    assert!(receiver.requests().is_empty());
    assert_eq!(
        receiver.connections.load(Ordering::SeqCst),
        1,
        "a certificate error is final"
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    let expected = format!("ping to 127.0.0.1:{} failed: ", receiver.port);
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert!(
        out.stderr.contains("invalid peer certificate"),
        "{}",
        out.stderr
    );
}

#[test]
fn unusable_ssl_cert_file_falls_back_to_bundled_roots_with_a_warning() {
    let receiver = TlsReceiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("SSL_CERT_FILE", "/nonexistent/roots.pem")
        .env_remove("SSL_CERT_DIR")
        .sh("exit 0");
    assert_eq!(out.code, 0);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].contains("using the bundled roots"),
        "{}",
        out.stderr
    );
    // The bundled Mozilla roots do not include the test's self-signed certificate.
    assert!(
        lines[1].contains("failed: ") && lines[1].contains("invalid peer certificate"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_http_url_reads_no_certificates() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("SSL_CERT_FILE", "/nonexistent/roots.pem")
        .arg("-vv")
        .sh("exit 0");
    assert_eq!(receiver.received().len(), 1);
    assert!(!out.stderr.contains("root"), "{}", out.stderr);

    let tls = TlsReceiver::start();
    let https = Crontap::with_url(&tls.url())
        .env("SSL_CERT_FILE", &tls.cert_file)
        .arg("-v")
        .sh("exit 0");
    assert!(
        https.stderr.contains("using system root certificates"),
        "{}",
        https.stderr
    );
}
