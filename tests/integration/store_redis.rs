//! What only the Redis store does (`--state-url redis://…`, cargo feature `redis`): its
//! records and their TTLs, values it cannot read, operations sent twice, a password and
//! `rediss://`, a server that never answers, pauses or closes idle connections. What every
//! store does is in the store contract (`store_contract/`), which runs against this one
//! through [`Redis`]. Each test starts a private `redis-server` on a free loopback port and
//! kills it when it ends (`redis_server.rs`).

#![cfg(feature = "redis")]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crontap_run::state::redis::RedisStore;
use crontap_run::state::{Claim, Found, Lease, Store, Target};
use redis::Commands;

use crate::harness::{Crontap, Receiver};
use crate::redis_server::{PASSWORD, Server};
use crate::store_contract::{Backend, LEASE, LeaseBackend};

/// A "host": crontap-run with a state directory of its own (for its history) and the
/// shared server as its store (in the environment: on the command line, a password is
/// warned about).
pub(crate) fn host(receiver: &Receiver, state_url: &str, state_dir: &Path) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap
        .arg("--state-dir")
        .arg(state_dir)
        .env("CRONTAP_STATE_URL", state_url);
    crontap
}

// The store itself, through its trait: what each answer is, and that a holder whose lease
// was lost gets an error from every operation and changes nothing.

pub(crate) fn store(server: &Server, lease: Duration) -> RedisStore {
    RedisStore::open(&server.url(), lease).unwrap()
}

pub(crate) fn key(key: &str) -> Target {
    Target::Key {
        key: key.into(),
        job: "job".into(),
        keep_until: SystemTime::now() + Duration::from_secs(3600),
    }
}

pub(crate) fn granted(claim: Claim) -> Lease {
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
