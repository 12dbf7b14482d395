//! What only the Redis store does (`--state-url redis://…`, cargo feature `redis`): its
//! records and their TTLs, values it cannot read, operations sent twice, a password and
//! `rediss://`, a server that never answers, pauses or closes idle connections. What every
//! store does is in the store contract (`store_contract/`), which runs against this one
//! through [`Redis`]. Each test starts a private `redis-server` on a free loopback port and
//! kills it when it ends (`redis_server.rs`).

#![cfg(feature = "redis")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crontap_run::state::redis::RedisStore;
use crontap_run::state::{Claim, Found, Lease, Store, Target};
use nix::sys::signal::Signal;
use redis::Commands;

use crate::harness::{Crontap, Receiver, SECRET, eventually};
use crate::redis_server::{PASSWORD, Server};
use crate::state::{Gate, line_count};
use crate::store_contract::{Backend, LEASE, LeaseBackend, assert_refused};

/// A "host": crontap-run with a state directory of its own (for its history) and the
/// shared server as its store (in the environment: on the command line, a password is
/// warned about).
fn host(receiver: &Receiver, state_url: &str, state_dir: &Path) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap
        .arg("--state-dir")
        .arg(state_dir)
        .env("CRONTAP_STATE_URL", state_url);
    crontap
}

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

// The store itself, through its trait: what each answer is, and that a holder whose lease
// was lost gets an error from every operation and changes nothing.

fn store(server: &Server, lease: Duration) -> RedisStore {
    RedisStore::open(&server.url(), lease).unwrap()
}

fn key(key: &str) -> Target {
    Target::Key {
        key: key.into(),
        job: "job".into(),
        keep_until: SystemTime::now() + Duration::from_secs(3600),
    }
}

fn granted(claim: Claim) -> Lease {
    match claim {
        Claim::Granted(lease) => lease,
        other => panic!("expected a grant, got {other:?}"),
    }
}

/// What the server keeps: a record of the key, the run and its status, for one lease while
/// held (by the server's clock), for the key's retention once finished, gone at once when
/// its retention has passed, and kept for the retention by a run that won its lapsed
/// lease back.
#[test]
fn the_server_keeps_a_record_for_a_lease_then_for_its_retention() {
    let server = Server::start();
    let lease = Duration::from_secs(30);
    let (mut a, mut b) = (store(&server, lease), store(&server, lease));
    assert_eq!(a.renew_every(), Some(Duration::from_secs(10)));

    let held = granted(a.claim(&key("k"), "run-a").unwrap());
    let record = server.get("crontap-run:key:k").unwrap();
    assert_eq!(record["status"], "running");
    assert_eq!(record["owner"], "run-a");
    assert_eq!(record["key"], "k");
    assert!((1..=30_000).contains(&server.pttl("crontap-run:key:k")));
    a.complete(held, false).unwrap();
    let held = granted(b.claim(&key("k"), "run-b").unwrap());
    b.complete(held, true).unwrap();
    let ttl = server.pttl("crontap-run:key:k");
    assert!((3_590_000..=3_600_000).contains(&ttl), "{ttl}");

    // A record whose retention has passed goes at once.
    let past = Target::Key {
        key: "old".into(),
        job: "job".into(),
        keep_until: SystemTime::UNIX_EPOCH,
    };
    let held = granted(a.claim(&past, "run-e").unwrap());
    a.complete(held, true).unwrap();
    assert!(server.get("crontap-run:key:old").is_none());

    // Won back after it ran out: a lease again, then the retention.
    let held = granted(a.claim(&key("k2"), "run-f").unwrap());
    let _: () = server.connect().del("crontap-run:key:k2").unwrap();
    a.renew(&held).unwrap();
    assert!((1..=30_000).contains(&server.pttl("crontap-run:key:k2")));
    let _: () = server.connect().del("crontap-run:key:k2").unwrap();
    a.complete(held, true).unwrap();
    let ttl = server.pttl("crontap-run:key:k2");
    assert!((3_590_000..=3_600_000).contains(&ttl), "{ttl}");
}

/// Every operation may be sent twice (its first reply lost with the connection): the
/// second one finds the first one's work done and says so, not "taken over".
#[test]
fn every_operation_can_be_resent() {
    let server = Server::start();
    let lease = Duration::from_secs(30);
    let mut store = store(&server, lease);
    for target in [key("k"), Target::Lock { job: "job".into() }] {
        let held = granted(store.claim(&target, "run-a").unwrap());
        granted(store.claim(&target, "run-a").unwrap());
        store.renew(&held).unwrap();
        store.renew(&held).unwrap();
        store.complete(held.clone(), false).unwrap();
        store.complete(held, false).unwrap();
    }
    assert_eq!(server.get("crontap-run:key:k").unwrap()["status"], "failed");
    assert!(server.get("crontap-run:lock:job").is_none());
    let held = granted(store.claim(&key("k2"), "run-b").unwrap());
    store.release(held.clone()).unwrap();
    store.release(held).unwrap();
    assert!(server.get("crontap-run:key:k2").is_none());
}

#[test]
fn a_value_that_cannot_be_read_is_moved_aside_and_never_blocks() {
    let server = Server::start();
    let mut store = store(&server, Duration::from_secs(30));
    for (name, junk) in [("k", "hello"), ("k2", "{}"), ("k3", "")] {
        let key_name = format!("crontap-run:key:{name}");
        let _: () = server.connect().set(&key_name, junk).unwrap();
        assert_eq!(store.look(&key(name)).unwrap(), Found::Free);
        let lease = granted(store.claim(&key(name), "run-a").unwrap());
        let keys: Vec<String> = server
            .connect()
            .keys(format!("{key_name}.corrupt-*"))
            .unwrap();
        assert_eq!(keys.len(), 1, "{name}: {keys:?}");
        store.complete(lease, true).unwrap();
        assert!(matches!(
            store.claim(&key(name), "run-b").unwrap(),
            Claim::Done(_)
        ));
    }
    // Two moved aside in the same second are both kept, for 30 days.
    let key_name = "crontap-run:key:twice";
    for junk in ["first", "second"] {
        let _: () = server.connect().set(key_name, junk).unwrap();
        let lease = granted(store.claim(&key("twice"), "run-a").unwrap());
        store.release(lease).unwrap();
    }
    let aside: Vec<String> = server
        .connect()
        .keys(format!("{key_name}.corrupt-*"))
        .unwrap();
    let mut kept: Vec<String> = aside
        .iter()
        .map(|name| server.connect().get(name).unwrap())
        .collect();
    kept.sort();
    assert_eq!(kept, ["first", "second"], "{aside:?}");
    for name in &aside {
        let ttl = server.pttl(name);
        assert!(
            (29 * 86_400_000..=30 * 86_400_000).contains(&ttl),
            "{name}: {ttl}"
        );
    }
    // A status a newer crontap-run wrote is no record at all, and is not moved aside.
    let newer = r#"{"status":"paused","owner":"r","job":"j","updated":1764374401}"#;
    let _: () = server.connect().set("crontap-run:key:k4", newer).unwrap();
    assert_eq!(store.look(&key("k4")).unwrap(), Found::Free);
    granted(store.claim(&key("k4"), "run-a").unwrap());
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

/// The store contract's view of Redis: a server of the test's own.
pub(crate) struct Redis(Server);

impl Redis {
    fn name(target: &Target) -> String {
        match target {
            Target::Lock { job } => format!("crontap-run:lock:{job}"),
            Target::Key { key, .. } => format!("crontap-run:key:{key}"),
        }
    }
}

impl Backend for Redis {
    fn new(_: &str) -> Self {
        Redis(Server::with_password())
    }

    fn state_dir(&self, dir: &Path, i: usize) -> PathBuf {
        dir.join(format!("host-{i}"))
    }

    fn attach(&self, crontap: &mut Crontap) {
        crontap.env("CRONTAP_STATE_URL", self.0.url());
    }

    fn lease_args(&self) -> &'static [&'static str] {
        &["--state-lease", "3s"]
    }

    fn secret(&self) -> Option<&'static str> {
        Some(PASSWORD)
    }

    fn key_row(&self, key: &str) -> String {
        self.0
            .get(&format!("crontap-run:key:{key}"))
            .map(|r| {
                format!(
                    "{}|{}",
                    r["status"].as_str().unwrap(),
                    r["owner"].as_str().unwrap()
                )
            })
            .unwrap_or_default()
    }

    /// Beside key records, only the job's fencing counter is left, as it must: tokens only
    /// grow.
    fn assert_lock_free(&self, job: &str) {
        let names: Vec<String> = self.0.connect().keys("*").unwrap();
        let left: Vec<&String> = names
            .iter()
            .filter(|n| !n.starts_with("crontap-run:key:"))
            .collect();
        assert_eq!(left, [&format!("crontap-run:fence:{job}")], "{names:?}");
    }
}

impl LeaseBackend for Redis {
    const TAKEN_OVER: &'static str = "another run took it over";

    fn open(&self) -> Box<dyn Store> {
        Box::new(RedisStore::open(&self.0.url(), LEASE).unwrap())
    }

    fn url(&self) -> String {
        self.0.url()
    }

    fn url_via(&self, port: u16) -> String {
        format!("redis://:{PASSWORD}@127.0.0.1:{port}/0")
    }

    fn port(&self) -> u16 {
        self.0.port
    }

    /// Removes every running hold, as the server does when its TTL runs out.
    fn lapse(&self) {
        let mut con = self.0.connect();
        let names: Vec<String> = con.keys("crontap-run:*").unwrap();
        for name in names {
            let running = self.0.get(&name).is_some_and(|r| r["status"] == "running");
            if running && !name.starts_with("crontap-run:fence:") {
                let _: () = con.del(&name).unwrap();
            }
        }
    }

    fn cut_connections(&self) -> usize {
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("normal")
            .arg("SKIPME")
            .arg("yes")
            .query(&mut self.0.connect())
            .unwrap()
    }

    fn record(&self, target: &Target) -> Option<String> {
        self.0.connect().get(Self::name(target)).unwrap()
    }

    fn set_status(&self, key: &str, status: &str) {
        let name = format!("crontap-run:key:{key}");
        let mut record = self.0.get(&name).unwrap();
        record["status"] = status.into();
        let _: () = self.0.connect().set(&name, record.to_string()).unwrap();
    }

    fn expires_in(&self, target: &Target) -> Duration {
        Duration::from_millis(self.0.pttl(&Self::name(target)).max(0) as u64)
    }

    fn taken_over(key: &str) -> String {
        format!("the lease on crontap-run:key:{key} expired and another run took it over")
    }

    fn down(port: u16) -> (String, String, &'static str) {
        (
            format!("redis://:{PASSWORD}@127.0.0.1:{port}/0"),
            format!("redis://127.0.0.1:{port}/0"),
            "",
        )
    }
}
