//! What only the PostgreSQL store does (`cargo test --features postgres`): its table (made
//! beforehand, by an older or a later release, pruned), REPEATABLE READ, libpq's URLs
//! (several hosts, `connect_timeout`, sslmode), a wrong password, and holding no connection
//! while the command runs. What every store does is in the store contract
//! (`store_contract/`), which runs against this one through [`Postgres`].
//!
//! The tests use one private server for the whole test binary, each test in a database of
//! its own (`pg_server.rs`). The server's password is checked to appear nowhere
//! crontap-run prints. The fleets on the hour are in the load tests (`tests/load/fleet.rs`).

#![cfg(feature = "postgres")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use crontap_run::state::postgres::PostgresStore;
use crontap_run::state::{Claim, Lease, Store, Target};
use nix::sys::signal::Signal;

use crate::harness::{Crontap, Output, Receiver, eventually};
use crate::pg_server::{PASSWORD, server};
use crate::state::{Gate, line_count, together};
use crate::store_contract::{Backend, LEASE, LeaseBackend};

/// Fails if the server's password shows in `text`.
pub(crate) fn assert_no_password(text: &str, what: &str) {
    assert!(
        !text.contains(PASSWORD),
        "the state store's password leaked into {what}:\n{text}"
    );
}

/// Runs to completion; checks that neither the heartbeat URL's secret nor the password
/// was printed.
pub(crate) fn run(crontap: &mut Crontap) -> Output {
    let out = crontap.run();
    assert_no_password(&out.stdout, "stdout");
    assert_no_password(&out.stderr, "stderr");
    out
}

/// crontap-run on one host: its own state directory, the shared store `url` (in the
/// environment: on the command line, its password would be warned about).
pub(crate) fn host(receiver: &Receiver, state: &Path, url: &str) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap
        .arg("--state-dir")
        .arg(state)
        .env("CRONTAP_STATE_URL", url);
    crontap
}

fn key(name: &str) -> Target {
    Target::Key {
        key: name.into(),
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

/// A store as one host opens it, leases of a minute.
fn store(db: &str) -> PostgresStore {
    PostgresStore::open(&server().url(db, ""), Duration::from_secs(60)).unwrap()
}

#[test]
fn a_table_made_beforehand_or_by_a_later_release_is_used_as_it_is() {
    let db = "store_schema";
    server().database(db);
    // As a DBA would create it from the documented schema, plus a column a later release
    // might add; the role then needs no right to create tables.
    server().psql(
        db,
        "CREATE TABLE crontap_run_holds (
            kind text NOT NULL, name text NOT NULL, job text NOT NULL, status text NOT NULL,
            owner text NOT NULL, holder text NOT NULL DEFAULT '',
            lease_until timestamptz NOT NULL, keep_until timestamptz NOT NULL,
            claimed_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            added_later text NOT NULL DEFAULT 'x',
            PRIMARY KEY (kind, name))",
    );
    let mut a = store(db);
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    a.complete(lease, true).unwrap();
    assert!(matches!(
        a.claim(&key("k"), "run-b").unwrap(),
        Claim::Done(_)
    ));
    // Expired records are deleted by a later completion; live ones stay.
    server().psql(
        db,
        "UPDATE crontap_run_holds SET keep_until = now() - interval '1 second'",
    );
    let lease = granted(a.claim(&key("k3"), "run-c").unwrap());
    a.complete(lease, true).unwrap();
    assert_eq!(
        server().psql(db, "SELECT string_agg(name, ',') FROM crontap_run_holds"),
        "k3"
    );
    let holder = server().psql(db, "SELECT holder FROM crontap_run_holds");
    assert!(
        holder.ends_with(&format!(" pid {}", std::process::id())),
        "{holder}"
    );
}

#[test]
fn a_lock_whose_lease_lapsed_is_not_pruned_and_is_renewed_again() {
    let db = "store_lapsed_lock";
    server().database(db);
    let (mut holder, mut other) = (store(db), store(db));
    let lock = Target::Lock { job: "plk".into() };
    let lease = granted(holder.claim(&lock, "run-a").unwrap());
    // The holder missed its renewals (stopped, cut off): its lease and the lock row's
    // retention are in the server's past.
    server().psql(
        db,
        "UPDATE crontap_run_holds SET lease_until = now() - interval '2 seconds', \
         keep_until = now() - interval '2 seconds'",
    );
    // Any run completing a key prunes expired rows: not the lapsed lock.
    let key_lease = granted(other.claim(&key("other"), "run-b").unwrap());
    other.complete(key_lease, true).unwrap();
    assert_eq!(
        server().psql(
            db,
            "SELECT owner FROM crontap_run_holds WHERE kind = 'lock' AND name = 'plk'"
        ),
        "run-a",
        "the lapsed lock was pruned"
    );
    // Its holder renews it, and holds it again.
    holder.renew(&lease).unwrap();
    assert!(matches!(other.claim(&lock, "run-c").unwrap(), Claim::Held));

    // A running row whose lease ended long ago is pruned.
    server().psql(
        db,
        "UPDATE crontap_run_holds SET lease_until = now() - interval '25 hours', \
         keep_until = now() - interval '25 hours' WHERE kind = 'lock'",
    );
    let key_lease = granted(other.claim(&key("other2"), "run-b").unwrap());
    other.complete(key_lease, true).unwrap();
    assert_eq!(
        server().psql(
            db,
            "SELECT count(*) FROM crontap_run_holds WHERE kind = 'lock'"
        ),
        "0"
    );
    // Its holder, still running, puts it back on the next renewal.
    holder.renew(&lease).unwrap();
    assert!(matches!(other.claim(&lock, "run-c").unwrap(), Claim::Held));
    // A row another run holds is not taken back.
    holder.release(lease.clone()).unwrap();
    let taken = granted(other.claim(&lock, "run-c").unwrap());
    let err = holder.renew(&lease).unwrap_err();
    assert!(format!("{err:#}").contains("another run"), "{err:#}");
    assert_eq!(
        server().psql(
            db,
            "SELECT owner FROM crontap_run_holds WHERE kind = 'lock'"
        ),
        "run-c"
    );
    other.release(taken).unwrap();
}

#[test]
fn a_stopped_no_overlap_holder_keeps_its_lock_through_another_hosts_prune() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let db = "stopped_no_overlap";
    let url = server().database(db);
    let gate = Gate::new(dir.path());
    let marker = dir.path().join("second ran");
    // The holder that lost its lease runs on (the mode this test is about).
    let options = [
        "--state-lease",
        "3s",
        "--job",
        "plk",
        "--on-lease-lost",
        "continue",
    ];
    let mut first = host(&receiver, &dir.path().join("a"), &url)
        .args(options)
        .args(["--no-overlap", "--timeout", "60s", "--", "sh", "-c"])
        .arg(format!("echo ready; {}", gate.wait_script()))
        .start();
    first.wait_for("ready");
    // Stopped past its lease (and the lock row's first retention)...
    first.signal(Signal::SIGSTOP);
    std::thread::sleep(Duration::from_millis(4500));
    // ...while another host completes a key, which prunes expired rows.
    let other = run(host(&receiver, &dir.path().join("b"), &url).args([
        "--idempotency-key",
        "other-1",
        "--",
        "true",
    ]));
    assert_eq!((other.code, other.stderr.as_str()), (0, ""));
    first.signal(Signal::SIGCONT);
    // Renewed within a renewal period (1 s): the lock is the first run's again.
    std::thread::sleep(Duration::from_millis(2500));
    let second = run(host(&receiver, &dir.path().join("c"), &url)
        .args(options)
        .args(["--no-overlap", "--", "touch"])
        .arg(&marker));
    gate.open();
    let out = first.finish();
    assert_no_password(&out.stderr, "stderr");
    assert_eq!(
        (second.code, second.stderr.as_str()),
        (
            0,
            "crontap-run: notice: skipped: job plk is already running (--no-overlap)\n"
        )
    );
    assert!(
        !marker.exists(),
        "a second --no-overlap run overlapped the first"
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn claims_race_cleanly_under_repeatable_read() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let db = "repeatable_read";
    let url = server().database(db);
    server().psql(
        "postgres",
        &format!("ALTER DATABASE {db} SET default_transaction_isolation = 'repeatable read'"),
    );
    // A failed key: every host may take it over, and all race for the same row.
    let failed = run(host(&receiver, &dir.path().join("first"), &url).args([
        "--idempotency-key",
        "rr-1",
        "--",
        "false",
    ]));
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    assert!(server().key_row(db, "rr-1").starts_with("failed|"));
    // A transaction holds the row for a moment, so every claim waits for it and then finds
    // the row changed since its snapshot: under REPEATABLE READ, a serialization failure.
    let server = server();
    let mut blocker = Command::new(server.bin.join("psql"))
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
        .arg(&server.dir)
        .args(["-p", &server.port.to_string(), "-U", "crontap", "-d", db])
        .args([
            "-c",
            "BEGIN; UPDATE crontap_run_holds SET updated_at = now() WHERE name = 'rr-1'; \
             SELECT pg_sleep(2); COMMIT;",
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("run psql");
    assert!(eventually(Duration::from_secs(10), || {
        server.psql(
            db,
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'BEGIN; UPDATE%' \
             AND wait_event = 'PgSleep'",
        ) == "1"
    }));
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let children = (0..12)
        .map(|i| {
            host(&receiver, &dir.path().join(format!("host{i}")), &url)
                .args(["--idempotency-key", "rr-1", "--timeout", "60s"])
                .args(["--", "sh", "-c", &script])
                .spawn(Stdio::null(), Stdio::piped())
        })
        .collect();
    let results = together(children, &gate);
    for (_, stderr) in &results {
        assert_no_password(stderr, "stderr");
    }
    assert!(blocker.wait().unwrap().success());
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    assert_eq!(line_count(&count), 1, "{results:#?}");
    assert!(server.key_row(db, "rr-1").starts_with("succeeded|"));
}

/// A table made by a release before fencing tokens gets its column and sequence on first
/// use, and its rows keep working.
#[test]
fn a_table_from_an_older_release_gains_fencing_tokens() {
    let db = "store_old_table";
    server().database(db);
    server().psql(
        db,
        "CREATE TABLE crontap_run_holds (
            kind text NOT NULL, name text NOT NULL, job text NOT NULL, status text NOT NULL,
            owner text NOT NULL, holder text NOT NULL DEFAULT '',
            lease_until timestamptz NOT NULL, keep_until timestamptz NOT NULL,
            claimed_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (kind, name));
         INSERT INTO crontap_run_holds (kind, name, job, status, owner, lease_until, keep_until)
            VALUES ('key', 'old', 'job', 'succeeded', 'r', now(), now() + interval '1 day');",
    );
    let mut a = store(db);
    assert!(matches!(
        a.claim(&key("old"), "run-a").unwrap(),
        Claim::Done(_)
    ));
    let lease = granted(a.claim(&key("new"), "run-a").unwrap());
    assert!(lease.fencing > 0);
}

/// The store contract's view of PostgreSQL: a database of the test's own.
pub(crate) struct Postgres {
    db: String,
    url: String,
}

impl Postgres {
    /// `SELECT … FROM crontap_run_holds WHERE` the row of `target`.
    fn row(&self, what: &str, target: &Target) -> String {
        let (kind, name) = match target {
            Target::Lock { job } => ("lock", job),
            Target::Key { key, .. } => ("key", key),
        };
        server().psql(
            &self.db,
            &format!(
                "SELECT {what} FROM crontap_run_holds t WHERE kind = '{kind}' AND name = '{name}'"
            ),
        )
    }
}

impl Backend for Postgres {
    fn new(name: &str) -> Self {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Names are at most 63 bytes.
        let db = format!("c{n}_{}", &name[..name.len().min(40)]);
        let url = server().database(&db);
        Postgres { db, url }
    }

    fn state_dir(&self, dir: &Path, i: usize) -> PathBuf {
        dir.join(format!("host{i}"))
    }

    fn attach(&self, crontap: &mut Crontap) {
        crontap.env("CRONTAP_STATE_URL", &self.url);
    }

    fn lease_args(&self) -> &'static [&'static str] {
        &["--state-lease", "3s"]
    }

    fn secret(&self) -> Option<&'static str> {
        Some(PASSWORD)
    }

    fn key_row(&self, key: &str) -> String {
        server().key_row(&self.db, key)
    }

    fn assert_lock_free(&self, job: &str) {
        let lock = Target::Lock { job: job.into() };
        assert_eq!(self.row("count(*)", &lock), "0");
    }
}

impl LeaseBackend for Postgres {
    const TAKEN_OVER: &'static str = "another run";

    fn open(&self) -> Box<dyn Store> {
        Box::new(PostgresStore::open(&self.url, LEASE).unwrap())
    }

    fn url(&self) -> String {
        self.url.clone()
    }

    fn url_via(&self, port: u16) -> String {
        server()
            .url(&self.db, "")
            .replace(&format!(":{}/", server().port), &format!(":{port}/"))
    }

    fn port(&self) -> u16 {
        server().port
    }

    fn lapse(&self) {
        server().psql(
            &self.db,
            "UPDATE crontap_run_holds SET lease_until = now() - interval '1 second' \
             WHERE status = 'running'",
        );
    }

    fn cut_connections(&self) -> usize {
        let cut = server().psql(
            &self.db,
            &format!(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = '{}' AND pid <> pg_backend_pid()",
                self.db
            ),
        );
        cut.parse().unwrap()
    }

    fn record(&self, target: &Target) -> Option<String> {
        Some(self.row("t::text", target)).filter(|row| !row.is_empty())
    }

    fn set_status(&self, key: &str, status: &str) {
        server().psql(
            &self.db,
            &format!("UPDATE crontap_run_holds SET status = '{status}' WHERE name = '{key}'"),
        );
    }

    fn expires_in(&self, target: &Target) -> Duration {
        let ms = self.row(
            "(extract(epoch FROM (CASE WHEN status = 'running' THEN lease_until \
             ELSE keep_until END) - now()) * 1000)::bigint",
            target,
        );
        Duration::from_millis(ms.parse::<i64>().unwrap().max(0) as u64)
    }

    fn taken_over(key: &str) -> String {
        format!("the key {key} was taken over by another run after this run's lease expired")
    }

    fn down(port: u16) -> (String, String, &'static str) {
        (
            format!("postgres://crontap:{PASSWORD}@127.0.0.1:{port}/jobs"),
            format!("postgres://127.0.0.1:{port}/jobs"),
            "error connecting to server: Connection refused",
        )
    }
}
