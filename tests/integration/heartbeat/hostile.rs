//! `heartbeat create` against a careless operator and a hostile or broken API: an
//! `--api-url` with credentials or a query (refused, naming the option, nothing sent); URL
//! files a run would refuse (two lines, too large), which `create` must not call "in place";
//! a URL file's directory that cannot be made (refused before the service is asked); two
//! `create`s at once for one file (one heartbeat made, not two); an API that accepts and
//! never answers, or drips its answer (bounded by the API timeout); and an https API whose
//! certificate comes from a CA named by `SSL_CERT_FILE`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use super::stand_in::{CrontapAnswer, crontap, healthchecks, token};
use super::{Keys, assert_clean, assert_one_line_error, mode, url_in};
use crate::harness::{Crontap, Output};

/// `heartbeat create` of the heartbeat `job` on `service` at `api`, its URL in `file`.
fn create(keys: &Keys, service: &str, api: &str, file: &Path) -> Crontap {
    let mut c = Crontap::new();
    c.env("CRONTAP_CLIENT_ID", &keys.client_id)
        .env("CRONTAP_API_KEY", &keys.crontap)
        .env("HEALTHCHECKS_API_KEY", &keys.healthchecks)
        .args([
            "heartbeat",
            "create",
            "--service",
            service,
            "--api-url",
            api,
        ])
        .args(["--name", "job", "--period", "1h", "--url-file"])
        .arg(file);
    c
}

#[test]
fn an_api_url_with_credentials_a_query_or_a_fragment_is_refused_and_never_printed() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("job.url");
    let port = api.url().rsplit(':').next().unwrap().to_owned();
    let password = format!("pw{}", token(24));
    let value = format!("qv{}", token(24));
    let cases = [
        (
            format!("http://ops:{password}@127.0.0.1:{port}"),
            "password",
        ),
        (format!("http://{password}@127.0.0.1:{port}"), "password"),
        (format!("http://127.0.0.1:{port}/?token={value}"), "query"),
        (format!("http://127.0.0.1:{port}/?{value}"), "query"),
        (format!("http://127.0.0.1:{port}/#{value}"), "fragment"),
    ];
    for (url, what) in &cases {
        let out = create(&keys, "healthchecks", url, &file).run();
        assert_one_line_error(&out);
        assert!(out.stderr.contains("--api-url"), "{}", out.stderr);
        assert!(out.stderr.contains(what), "{}", out.stderr);
        assert_clean(&out, &keys, &[password.clone(), value.clone()]);
        // The same for `plan --create`.
        let mut c = Crontap::new();
        c.env("HEALTHCHECKS_API_KEY", &keys.healthchecks)
            .args(["plan", "--crontab", "-", "--create", "--service"])
            .args(["healthchecks", "--api-url", url, "--url-dir"])
            .arg(tmp.path())
            .stdin(b"0 3 * * * /usr/bin/backup\n");
        let out = c.run();
        assert_one_line_error(&out);
        assert!(out.stderr.contains("--api-url"), "{}", out.stderr);
        assert_clean(&out, &keys, &[password.clone(), value.clone()]);
    }
    assert!(api.seen().is_empty(), "sent to a refused --api-url");
    assert!(!file.exists());
}

#[test]
fn a_url_file_a_run_would_refuse_is_never_taken_for_the_heartbeats_url() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::PingUrl);
    let tmp = tempfile::tempdir().unwrap();
    let ping = format!("https://ping.example/{}", token(32));
    let too_large = format!("{ping}/{}", "a".repeat(9 * 1024));
    let refused = [
        (
            format!("{ping}\nhttps://other.example/x\n"),
            "more than one line",
        ),
        (too_large, "larger"),
    ];
    for (held, said) in &refused {
        let file = tmp.path().join("job.url");
        std::fs::write(&file, held).unwrap();
        let out = create(&keys, "crontap", &api.url(), &file).run();
        assert_one_line_error(&out);
        assert!(out.stderr.contains(said), "{said}: {}", out.stderr);
        assert!(out.stderr.contains("job.url"), "{}", out.stderr);
        assert_clean(&out, &keys, std::slice::from_ref(&ping));
        // And a run refuses it the same way.
        let mut run = Crontap::new();
        let out = run.arg("--url-file").arg(&file).args(["--", "true"]).run();
        assert_eq!(out.code, 125, "{}", out.stderr);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), *held);
    }
    // What a run reads (a byte-order mark, blank lines, a CRLF) is read alike.
    let file = tmp.path().join("job.url");
    std::fs::write(&file, format!("\u{feff}\r\n{ping}\r\n\r\n")).unwrap();
    let out = create(&keys, "crontap", &api.url(), &file).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("nothing changed"), "{}", out.stderr);
    assert_clean(&out, &keys, std::slice::from_ref(&ping));
    assert!(
        api.seen().is_empty(),
        "created although the file held a URL"
    );
}

#[test]
fn a_directory_that_cannot_be_made_is_refused_before_the_service_is_asked() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::PingUrl);
    // /proc takes no directory from anyone, root included.
    let file = Path::new("/proc/crontap-run-test-url-dir")
        .join(token(8))
        .join("job.url");
    let out = create(&keys, "crontap", &api.url(), &file).run();
    assert_one_line_error(&out);
    assert!(
        out.stderr.contains("/proc/crontap-run-test-url-dir"),
        "{}",
        out.stderr
    );
    assert!(
        api.seen().is_empty(),
        "created a heartbeat whose URL could not be kept: {}",
        out.stderr
    );
}

#[test]
fn a_failed_create_leaves_no_directory_it_made() {
    let keys = Keys::new();
    let api = crontap("another-client", "another-key", CrontapAnswer::PingUrl);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a/b/job.url");
    let out = create(&keys, "crontap", &api.url(), &file).run();
    assert_one_line_error(&out);
    assert!(out.stderr.contains("401"), "{}", out.stderr);
    assert!(
        !tmp.path().join("a").exists(),
        "left the directories it made"
    );
    // One that was there stays.
    std::fs::create_dir(tmp.path().join("a")).unwrap();
    let out = create(&keys, "crontap", &api.url(), &file).run();
    assert_one_line_error(&out);
    assert!(tmp.path().join("a").is_dir() && !tmp.path().join("a/b").exists());
}

/// A Crontap API that holds its answer to the first create until the test releases it,
/// counting every create.
struct Gated {
    port: u16,
    creates: Arc<AtomicUsize>,
    arrived: mpsc::Receiver<usize>,
    release: mpsc::Sender<()>,
}

impl Gated {
    fn start() -> Gated {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let creates = Arc::new(AtomicUsize::new(0));
        let (arrived_tx, arrived) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let count = Arc::clone(&creates);
        std::thread::spawn(move || {
            for mut request in server.incoming_requests() {
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                let _ = arrived_tx.send(n);
                let gate = Arc::clone(&release_rx);
                std::thread::spawn(move || {
                    if n == 1 {
                        let _ = gate.lock().unwrap().recv();
                    }
                    let url = format!("http://127.0.0.1:9/ping/{}", token(32));
                    let answer = format!("{{\"pingUrl\":\"{url}\"}}");
                    let _ = request.respond(tiny_http::Response::from_string(answer));
                });
            }
        });
        Gated {
            port,
            creates,
            arrived,
            release,
        }
    }
}

#[test]
fn two_creates_at_once_make_one_heartbeat() {
    let keys = Keys::new();
    let api = Gated::start();
    let url = format!("http://127.0.0.1:{}", api.port);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("urls/job.url");
    let first = create(&keys, "crontap", &url, &file).start();
    assert_eq!(
        api.arrived.recv_timeout(crate::harness::MARKER_WAIT),
        Ok(1),
        "the first create never came: {}",
        first.stderr_so_far()
    );
    let second = create(&keys, "crontap", &url, &file).start();
    // The second waits for the first, rather than create the heartbeat again.
    let waiting = "waiting for another crontap-run creating a heartbeat in";
    let seen = crate::harness::eventually(crate::harness::MARKER_WAIT, || {
        second.stderr_so_far().contains(waiting) || api.creates.load(Ordering::SeqCst) > 1
    });
    assert!(seen, "{}", second.stderr_so_far());
    api.release.send(()).unwrap();
    let (first, second) = (first.finish(), second.finish());
    for out in [&first, &second] {
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_clean(out, &keys, &[url_in(&file)]);
    }
    assert_eq!(api.creates.load(Ordering::SeqCst), 1, "{}", second.stderr);
    assert!(
        second.stderr.contains("nothing changed"),
        "{}",
        second.stderr
    );
    assert_eq!(mode(&file), 0o600);
}

/// An API on 127.0.0.1 that reads each request and then says nothing (`drip`: the head of
/// an answer, then a byte a second, for ever).
fn silent_api(drip: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                if drip {
                    let head = "HTTP/1.1 201 Created\r\nContent-Length: 100000\r\n\r\n";
                    let _ = stream.write_all(head.as_bytes());
                    while stream.write_all(b" ").is_ok() {
                        std::thread::sleep(Duration::from_secs(1));
                    }
                }
                // Held open until the client gives up.
                let _ = reader.read_to_end(&mut Vec::new());
            });
        }
    });
    port
}

#[test]
fn an_api_that_never_answers_is_given_up_on_after_the_timeout() {
    let keys = Keys::new();
    let tmp = tempfile::tempdir().unwrap();
    for drip in [false, true] {
        let port = silent_api(drip);
        let file = tmp.path().join("d/job.url");
        let url = format!("http://127.0.0.1:{port}");
        let out: Output = create(&keys, "healthchecks", &url, &file).run();
        assert_one_line_error(&out);
        assert!(
            out.stderr.contains("no answer within 10s"),
            "{}",
            out.stderr
        );
        assert!(out.elapsed >= Duration::from_secs(10), "{:?}", out.elapsed);
        assert!(out.elapsed < Duration::from_secs(60), "{:?}", out.elapsed);
        assert!(!file.exists() && !tmp.path().join("d").exists());
        assert_clean(&out, &keys, &[]);
    }
}

/// A Healthchecks API over https with a certificate for 127.0.0.1 from a CA of its own;
/// answers one create with a new check. The CA's certificate file, and what it received.
fn https_api(dir: &Path) -> (u16, std::path::PathBuf, Arc<Mutex<String>>) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(String::new()));
    let seen = Arc::clone(&received);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let conn = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, stream);
            let mut reader = BufReader::new(&mut tls);
            let (mut head, mut line) = (String::new(), String::new());
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                head.push_str(&line);
                line.clear();
            }
            if head.is_empty() {
                continue; // the client refused the certificate
            }
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            head.push_str(&String::from_utf8_lossy(&body));
            *seen.lock().unwrap() = head;
            let answer = format!(
                "{{\"ping_url\":\"https://127.0.0.1:{port}/ping/5bf2e2fd-b1a8-4b5e-a4bb-62d2b1e6e5d0\"}}"
            );
            let reply = format!(
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{answer}",
                answer.len()
            );
            let _ = tls.write_all(reply.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    (port, ca_file, received)
}

#[test]
fn an_https_api_is_trusted_through_ssl_cert_file_and_refused_without() {
    let keys = Keys::new();
    let tmp = tempfile::tempdir().unwrap();
    let (port, ca_file, received) = https_api(tmp.path());
    let url = format!("https://127.0.0.1:{port}");
    let file = tmp.path().join("urls/job.url");
    // Without the CA: the TLS step named, nothing kept.
    let out = create(&keys, "healthchecks", &url, &file).run();
    assert_one_line_error(&out);
    assert!(out.stderr.contains("TLS"), "{}", out.stderr);
    assert!(!file.exists());
    assert!(received.lock().unwrap().is_empty());
    // With it: created over TLS, the key in its header.
    let out = create(&keys, "healthchecks", &url, &file)
        .env("SSL_CERT_FILE", &ca_file)
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_clean(&out, &keys, &[url_in(&file)]);
    let seen = received.lock().unwrap().clone();
    assert!(seen.starts_with("POST /api/v3/checks/ HTTP/1.1"), "{seen}");
    assert!(
        seen.to_ascii_lowercase()
            .contains(&format!("x-api-key: {}", keys.healthchecks)),
        "{seen}"
    );
    assert!(url_in(&file).starts_with(&format!("https://127.0.0.1:{port}/ping/")));
    assert_eq!(mode(&file), 0o600);
}
