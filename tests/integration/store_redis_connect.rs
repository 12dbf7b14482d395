//! The Redis store's connections (`--state-url redis://…`, cargo feature `redis`): a server
//! that never answers or answers slowly, one paused for longer than a lease, one that closes
//! idle connections, a password in the URL, and `rediss://`. The store's records are in
//! store_redis.rs, what every store does in the store contract (`store_contract/`).

#![cfg(feature = "redis")]

use std::path::Path;
use std::time::{Duration, Instant};

use crontap_run::state::Store;
use nix::sys::signal::Signal;

use crate::harness::{Crontap, Receiver, SECRET, eventually};
use crate::redis_server::{PASSWORD, Server};
use crate::state::{Gate, line_count};
use crate::store_contract::assert_refused;
use crate::store_redis::{granted, host, key, store};

/// Checks that every state feature refuses the store at `state_url` (see
/// [`assert_refused`]), with `env` set too.
fn refused(state_url: &str, shown: &str, env: &[(&str, &str)]) {
    let crontap = |receiver: &Receiver, state: &Path| {
        let mut crontap = host(receiver, state_url, state);
        for (name, value) in env {
            crontap.env(name, value);
        }
        crontap
    };
    let took = assert_refused(&crontap, shown, "", PASSWORD);
    assert!(
        took.iter().all(|t| *t < Duration::from_secs(20)),
        "{took:?}"
    );
}

#[test]
fn a_store_that_never_answers_is_given_up_on() {
    // Connections are accepted by the kernel and never answered. With a password and a
    // database the client has several replies to wait for when connecting; the deadline is
    // for them all.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{port}/3");
    let out = host(&receiver, &url, dir.path())
        .args(["--no-overlap", "--", "true"])
        .run();
    let elapsed = started.elapsed();
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(elapsed < Duration::from_secs(9), "{elapsed:?}");
    assert_eq!(
        out.stderr,
        format!(
            "crontap-run: error: the state store redis://127.0.0.1:{port}/3 is unreachable or \
             failing: cannot connect: no answer within 5s\n"
        )
    );
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("not run: the state store "), "{msg}");
    drop(listener);
}

#[test]
fn a_password_in_the_url_is_used_and_never_shown() {
    let server = Server::with_password();
    let port = server.port;
    let shown = format!("redis://127.0.0.1:{port}/0");
    // Wrong, or missing: refused, and the password is nowhere.
    refused(
        &format!("redis://:wrong-{PASSWORD}@127.0.0.1:{port}/0"),
        &shown,
        &[],
    );
    refused(&shown, &shown, &[]);

    // Right: the store works, from a file (a mounted secret) or the environment.
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    // Apart from the state directory, whose files must not hold the password.
    let secrets = tempfile::tempdir().unwrap();
    let url_file = secrets.path().join("state-url");
    std::fs::write(&url_file, format!("{}\n", server.url())).unwrap();
    let first = Crontap::with_url(&receiver.url())
        .arg("--state-dir")
        .arg(dir.path())
        .arg("--state-url-file")
        .arg(&url_file)
        .args(["-v", "--idempotency-key", "k-1", "--", "true"])
        .run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(!first.stderr.contains(PASSWORD), "{}", first.stderr);
    let second = Crontap::with_url(&receiver.url())
        .arg("--state-dir")
        .arg(dir.path())
        .env("CRONTAP_STATE_URL", server.url())
        .args(["-v", "--idempotency-key", "k-1", "--", "sh", "-c"])
        .arg("echo \"url=${CRONTAP_STATE_URL-unset}\"")
        .run();
    assert_eq!(second.code, 0);
    assert!(
        second.stderr.contains("k-1 already succeeded at"),
        "{}",
        second.stderr
    );
    assert!(!second.stderr.contains(PASSWORD), "{}", second.stderr);
    assert_eq!(second.stdout, "", "a skipped run runs nothing");
    let third = Crontap::with_url(&receiver.url())
        .arg("--state-dir")
        .arg(dir.path())
        .env("CRONTAP_STATE_URL", server.url())
        .args(["--no-overlap", "--", "sh", "-c"])
        .arg("echo \"url=${CRONTAP_STATE_URL-unset}\"")
        .run();
    assert_eq!(
        third.stdout, "url=unset\n",
        "the job never sees the state URL"
    );
    for entry in crate::state::entries_under(dir.path()) {
        if entry.is_file() {
            let text = std::fs::read_to_string(&entry).unwrap();
            assert!(!text.contains(PASSWORD), "{}: {text}", entry.display());
        }
    }
}

#[test]
fn rediss_verifies_the_server_with_the_system_roots() {
    let tls = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = tls.path().join("server.pem");
    let key = tls.path().join("server.key");
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let server = Server::with(Some(PASSWORD), Some((&cert, &key)));
    let url = format!("rediss://:{PASSWORD}@127.0.0.1:{}/0", server.port);
    let shown = format!("rediss://127.0.0.1:{}/0", server.port);

    // Trusted through SSL_CERT_FILE: used.
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let script = format!("echo run >> '{}'", count.display());
    for _ in 0..2 {
        let out = host(&receiver, &url, dir.path())
            .env("SSL_CERT_FILE", &cert)
            .args(["--idempotency-key", "tls-1", "--", "sh", "-c", &script])
            .run();
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(!out.stderr.contains(PASSWORD), "{}", out.stderr);
    }
    assert_eq!(line_count(&count), 1);

    // Not trusted: refused, as an unusable store.
    let other = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let other_file = tls.path().join("other.pem");
    std::fs::write(&other_file, other.cert.pem()).unwrap();
    let other_s = other_file.display().to_string();
    refused(&url, &shown, &[("SSL_CERT_FILE", &other_s)]);
}

/// A server that closes idle connections (`timeout`, as NAT and firewalls do unasked)
/// closes crontap-run's while the job runs; the result is still recorded.
#[test]
fn a_connection_closed_while_idle_still_records_the_result() {
    let server = Server::start();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("timeout")
        .arg("1")
        .query(&mut server.connect())
        .unwrap();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let out = host(&receiver, &server.url(), dir.path())
        .args(["--state-lease", "30s", "--idempotency-key", "rk2"])
        .args(["--", "sleep", "3"])
        .run();
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let record = server.get("crontap-run:key:rk2").unwrap();
    assert_eq!(record["status"], "succeeded");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

/// With `--on-lease-lost continue`, the server stops answering for longer than a lease
/// (paused, or cut off), so the lease runs out with nobody taking it over: the running
/// crontap-run wins it back, keeps the key from other runs, and records its result.
#[test]
fn a_server_paused_for_longer_than_a_lease_leaves_the_hold_with_its_run() {
    let server = Server::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let count = dir.path().join("count");
    let options = [
        "--state-lease",
        "3s",
        "--idempotency-key",
        "rk1",
        "--on-lease-lost",
        "continue",
    ];
    let script = format!(
        "echo run >> '{}'; echo ready; {}",
        count.display(),
        gate.wait_script()
    );
    let mut holder = host(&receiver, &server.url(), &dir.path().join("a"))
        .args(options)
        .args(["--timeout", "60s", "--", "sh", "-c", &script])
        .start();
    holder.wait_for("ready");
    let name = "crontap-run:key:rk1";
    let first = server.get(name).unwrap();
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, Signal::SIGSTOP).unwrap();
    let resume = ResumeServer(pid);
    std::thread::sleep(Duration::from_secs(5));
    drop(resume);
    // The lease ran out while the server was stopped; the holder's next renewal holds it
    // again.
    assert!(
        eventually(Duration::from_secs(20), || {
            server.get(name).is_some_and(|r| {
                r["status"] == "running"
                    && r["owner"] == first["owner"]
                    && r["updated"] != first["updated"]
            })
        }),
        "{:?}",
        server.get(name)
    );
    let other = host(&receiver, &server.url(), &dir.path().join("b"))
        .args(options)
        .args(["--", "sh", "-c"])
        .arg(format!("echo run >> '{}'", count.display()))
        .run();
    assert_eq!(other.code, 0, "{}", other.stderr);
    assert!(
        other
            .stderr
            .ends_with("rk1 is being run by another instance\n"),
        "{}",
        other.stderr
    );
    gate.open();
    let out = holder.finish();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("cannot record"), "{}", out.stderr);
    let record = server.get(name).unwrap();
    assert_eq!(
        (&record["status"], &record["owner"]),
        (&"succeeded".into(), &first["owner"])
    );
    assert_eq!(line_count(&count), 1);
}

/// Sends SIGCONT to a stopped server when dropped.
struct ResumeServer(nix::unistd::Pid);

impl Drop for ResumeServer {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(self.0, Signal::SIGCONT);
    }
}

/// A reply slower than a third of the lease is given up on (and the next renewal tried),
/// so one slow reply cannot let a short lease run out.
#[test]
fn replies_are_awaited_for_a_third_of_a_short_lease() {
    let server = Server::start();
    let mut store = store(&server, Duration::from_secs(3));
    let held = granted(store.claim(&key("k"), "run-a").unwrap());
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, Signal::SIGSTOP).unwrap();
    let resume = ResumeServer(pid);
    let started = Instant::now();
    let err = format!("{:#}", store.renew(&held).unwrap_err());
    let elapsed = started.elapsed();
    drop(resume);
    assert!(elapsed < Duration::from_millis(2500), "{elapsed:?}");
    assert!(err.ends_with("no answer within 1s"), "{err}");
    store.renew(&held).unwrap();
}

/// `--state-timeout` bounds connecting too: a server that never answers is given up on then.
#[test]
fn the_state_timeout_bounds_a_server_that_never_answers() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("redis://127.0.0.1:{port}/0");
    let out = host(&receiver, &url, dir.path())
        .args(["--state-timeout", "1s", "--no-overlap", "--", "touch"])
        .arg(dir.path().join("ran"))
        .run();
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(out.stderr.contains("within 1s"), "{}", out.stderr);
    assert!(!dir.path().join("ran").exists());
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("not run: "), "{msg}");
    drop(listener);
}
