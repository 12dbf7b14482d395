//! The PostgreSQL store (`cargo test --features postgres`): several "hosts" (each with its
//! own `--state-dir`) sharing one `--state-url`, the leases that keep a long job's hold and
//! let the next run take over a stopped one, TLS, and an unusable server.
//!
//! The tests use one private server for the whole test binary, each test in a database of
//! its own (`pg_server.rs`). The server's password is checked to appear nowhere
//! crontap-run prints. The fleets on the hour are in the load tests (`tests/load/fleet.rs`).

#![cfg(feature = "postgres")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crontap_run::state::postgres::PostgresStore;
use crontap_run::state::{Claim, Found, Lease, Store, Target};
use nix::sys::signal::Signal;

use crate::harness::{Crontap, Output, Receiver, SECRET, eventually};
use crate::pg_server::{PASSWORD, free_port, server};
use crate::state::{Gate, line_count, together};

/// Fails if the server's password shows in `text`.
fn assert_no_password(text: &str, what: &str) {
    assert!(
        !text.contains(PASSWORD),
        "the state store's password leaked into {what}:\n{text}"
    );
}

/// Runs to completion; checks that neither the heartbeat URL's secret nor the password
/// was printed.
fn run(crontap: &mut Crontap) -> Output {
    let out = crontap.run();
    assert_no_password(&out.stdout, "stdout");
    assert_no_password(&out.stderr, "stderr");
    out
}

/// crontap-run on one host: its own state directory, the shared store `url` (in the
/// environment: on the command line, its password would be warned about).
fn host(receiver: &Receiver, state: &Path, url: &str) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap
        .arg("--state-dir")
        .arg(state)
        .env("CRONTAP_STATE_URL", url);
    crontap
}

/// Starts `count` hosts at once, each built by `crontap(i)`, and returns what each printed
/// (see [`together`]); none may print the database password.
fn hosts_together(
    count: usize,
    gate: &Gate,
    mut crontap: impl FnMut(usize) -> Crontap,
) -> Vec<(i32, String)> {
    let children = (0..count)
        .map(|i| crontap(i).spawn(Stdio::null(), Stdio::piped()))
        .collect();
    let results = together(children, gate);
    for (_, stderr) in &results {
        assert_no_password(stderr, "stderr");
    }
    results
}

/// The key `--once-per 1d` gives `job` now (a day may begin between this and the run:
/// callers that compare allow for the next one).
fn day_key(job: &str) -> String {
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(secs - secs % 86_400);
    format!("{job}:{}", humantime::format_rfc3339_seconds(start))
}

#[test]
fn ten_hosts_with_one_once_per_key_run_the_command_once() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    // A new database: the ten also race to create the table.
    let url = server().database("ten_hosts_once_per");
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let key = day_key("import");
    let results = hosts_together(10, &gate, |i| {
        let mut crontap = host(&receiver, &dir.path().join(format!("host{i}")), &url);
        crontap
            .args(["--once-per", "1d", "--job", "import", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]);
        crontap
    });
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let notice = format!("crontap-run: notice: skipped: {key} is being run by another instance\n");
    let skipped = results.iter().filter(|(_, e)| *e == notice).count();
    let silent = results.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!((skipped, silent), (9, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command ran more than once");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));

    // Any host, later: already done.
    let later = run(host(&receiver, &dir.path().join("host3"), &url)
        .args(["--once-per", "1d", "--job", "import", "--", "sh", "-c"])
        .arg(format!("echo run >> '{}'", count.display())));
    assert_eq!(later.code, 0);
    assert!(
        later.stderr.starts_with(&format!(
            "crontap-run: notice: skipped: {key} already succeeded at "
        )),
        "{}",
        later.stderr
    );
    assert_eq!(line_count(&count), 1);
    assert!(
        server()
            .key_row("ten_hosts_once_per", &key)
            .starts_with("succeeded|")
    );
}

#[test]
fn ten_hosts_with_no_overlap_run_one_at_a_time() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let url = server().database("ten_hosts_no_overlap");
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    // The URL from a file this time, as from a mounted secret; it wins over the variable.
    let url_file = dir.path().join("state-url");
    std::fs::write(&url_file, format!("  {url}\n")).unwrap();
    let results = hosts_together(10, &gate, |i| {
        let mut crontap = host(&receiver, &dir.path().join(format!("host{i}")), "bogus:");
        crontap.env("CRONTAP_STATE_URL_FILE", &url_file);
        crontap
            .args(["--no-overlap", "--job", "sync", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]);
        crontap
    });
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let notice = "crontap-run: notice: skipped: job sync is already running (--no-overlap)\n";
    let skipped = results.iter().filter(|(_, e)| e == notice).count();
    let silent = results.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!((skipped, silent), (9, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command overlapped itself");

    // The lock is gone with its run: the next run runs.
    let db = "ten_hosts_no_overlap";
    assert_eq!(
        server().psql(db, "SELECT count(*) FROM crontap_run_holds"),
        "0"
    );
    let next = run(host(&receiver, &dir.path().join("host0"), &url)
        .args(["--no-overlap", "--job", "sync", "--", "sh", "-c"])
        .arg(format!("echo run >> '{}'", count.display())));
    assert_eq!((next.code, next.stderr.as_str()), (0, ""));
    assert_eq!(line_count(&count), 2);
}

#[test]
fn a_job_that_outlives_its_lease_keeps_its_lock_and_key() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let db = "outlives_lease";
    let url = server().database(db);
    let gate = Gate::new(dir.path());
    let marker = dir.path().join("other host ran");
    let options = ["--state-lease", "3s", "--job", "long"];
    let mut holder = host(&receiver, &dir.path().join("a"), &url)
        .args(options)
        .args([
            "--no-overlap",
            "--idempotency-key",
            "long-1",
            "--timeout",
            "60s",
        ])
        .args(["--", "sh", "-c"])
        .arg(format!("echo ready; {}", gate.wait_script()))
        .start();
    holder.wait_for("ready");

    // For 10 s, over three leases, another host keeps trying: for the lock, then the key.
    let started = Instant::now();
    let mut tries = 0;
    while started.elapsed() < Duration::from_secs(10) {
        let (extra, reason) = match tries % 2 {
            0 => ("--no-overlap", "job long is already running (--no-overlap)"),
            _ => (
                "--idempotency-key",
                "long-1 is being run by another instance",
            ),
        };
        let mut other = host(&receiver, &dir.path().join("b"), &url);
        other.args(options).arg(extra);
        if extra == "--idempotency-key" {
            other.arg("long-1");
        }
        let out = run(other.arg("--").arg("touch").arg(&marker));
        assert_eq!(
            (out.code, out.stderr.as_str()),
            (
                0,
                format!("crontap-run: notice: skipped: {reason}\n").as_str()
            ),
            "try {tries} after {:?}",
            started.elapsed()
        );
        assert!(
            !marker.exists(),
            "another host ran while the job held its lease"
        );
        tries += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(tries >= 10, "only {tries} tries");
    // Renewed: the key's lease now ends well after the 3 s it started with.
    assert_eq!(
        server().psql(
            db,
            "SELECT bool_and(lease_until > claimed_at + interval '6 seconds') \
             FROM crontap_run_holds WHERE owner <> ''"
        ),
        "t"
    );
    gate.open();
    let out = holder.finish();
    assert_no_password(&out.stderr, "stderr");
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        server().psql(
            db,
            "SELECT count(*) FROM crontap_run_holds WHERE kind = 'lock'"
        ),
        "0"
    );
    assert!(server().key_row(db, "long-1").starts_with("succeeded|"));
}

#[test]
fn a_stale_holder_cannot_complete_over_the_next_holder() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let db = "stale_holder";
    let url = server().database(db);
    let gate = Gate::new(dir.path());
    // The holder that lost its lease runs on (the mode this test is about).
    let options = [
        "--state-lease",
        "3s",
        "--idempotency-key",
        "batch-9",
        "--on-lease-lost",
        "continue",
    ];
    let mut stale = host(&receiver, &dir.path().join("a"), &url)
        .args(options)
        .args(["--timeout", "60s", "--", "sh", "-c"])
        .arg(format!("echo ready; {}", gate.wait_script()))
        .start();
    stale.wait_for("ready");
    // Stopped, it cannot renew: its lease runs out while its job still runs.
    stale.signal(Signal::SIGSTOP);

    let next_id = std::cell::RefCell::new(String::new());
    let took_over = eventually(Duration::from_secs(30), || {
        let out = run(host(&receiver, &dir.path().join("b"), &url)
            .args(options)
            .args(["--", "sh", "-c", "echo \"next $CRONTAP_RUN_ID\""]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        match out.stdout.strip_prefix("next ") {
            Some(id) => {
                assert_eq!(out.stderr, "");
                *next_id.borrow_mut() = id.trim().to_owned();
                true
            }
            None => {
                let notice = "crontap-run: notice: skipped: batch-9 is being run by another \
                              instance\n";
                assert_eq!(out.stderr, notice);
                false
            }
        }
    });
    gate.open();
    stale.signal(Signal::SIGCONT);
    let out = stale.finish();
    assert!(took_over, "the next run never took over the expired lease");
    let next_id = next_id.into_inner();
    assert_no_password(&out.stderr, "stderr");

    // The stale holder's job succeeded and says so, but its result is not recorded: the
    // record is the next holder's.
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains(
            "crontap-run: error: cannot record the run's result in the state store: the key \
             batch-9 was taken over by another run after this run's lease expired"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(
        server().key_row(db, "batch-9"),
        format!("succeeded|{next_id}")
    );
    let later = run(host(&receiver, &dir.path().join("c"), &url)
        .args(options)
        .args(["--", "echo", "ran again"]));
    assert_eq!(later.code, 0);
    assert!(
        later
            .stderr
            .starts_with("crontap-run: notice: skipped: batch-9 already succeeded at "),
        "{}",
        later.stderr
    );
}

/// Checks a run refused because the store at `redacted` is unusable: exit 125, one line
/// naming the store, the command not run, one fail ping saying why.
fn assert_refused(out: &Output, receiver: &Receiver, marker: &Path, redacted: &str, why: &str) {
    assert_eq!(out.code, 125, "{}", out.stderr);
    let prefix =
        format!("crontap-run: error: the state store {redacted} is unreachable or failing: {why}");
    assert!(out.stderr.starts_with(&prefix), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(!marker.exists(), "the command ran");
    let msg = receiver.only().msg().expect("a fail ping");
    assert!(receiver.only().target.contains("/fail?"));
    assert!(
        msg.starts_with("not run: ") && msg.contains("state store"),
        "{msg}"
    );
    assert_no_password(&msg, "the fail ping");
}

#[test]
fn an_unreachable_store_is_refused_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let port = free_port(); // nothing listens there any more
    for option in ["--once-per=1d", "--no-overlap"] {
        let receiver = Receiver::start();
        let url = format!("postgres://crontap:{PASSWORD}@127.0.0.1:{port}/jobs");
        let started = Instant::now();
        let out = run(host(&receiver, &dir.path().join("state"), &url)
            .args([option, "--", "touch"])
            .arg(&marker));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_refused(
            &out,
            &receiver,
            &marker,
            &format!("postgres://127.0.0.1:{port}/jobs"),
            "error connecting to server: Connection refused",
        );
    }
}

#[test]
fn a_wrong_password_is_refused_without_printing_it() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let wrong = "not-the-pw-93c1";
    let url = format!(
        "postgresql://crontap:{wrong}@127.0.0.1:{}/postgres",
        server().port
    );
    let out = run(host(&receiver, &dir.path().join("state"), &url)
        .args(["--once-per", "1d", "--", "touch"])
        .arg(&marker));
    assert_refused(
        &out,
        &receiver,
        &marker,
        &format!("postgresql://127.0.0.1:{}/postgres", server().port),
        // The user name (7 characters) is taken out of the server's message.
        "FATAL: password authentication failed for user \"[REDACTED]\"",
    );
    assert!(!out.stderr.contains("crontap\""), "{}", out.stderr);
    assert!(!out.stderr.contains(wrong), "{}", out.stderr);
    assert!(!receiver.only().target.contains(wrong));
}

#[test]
fn a_server_that_never_answers_is_given_up_on_in_connect_timeout() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    // Accepts connections (the kernel does) and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("postgres://crontap:{PASSWORD}@127.0.0.1:{port}/jobs?connect_timeout=2");
    let started = Instant::now();
    // With a state timeout too short for a second attempt.
    let out = run(host(&receiver, &dir.path().join("state"), &url)
        .args(["--state-timeout", "3s", "--no-overlap", "--", "touch"])
        .arg(&marker));
    let took = started.elapsed();
    assert!(
        (Duration::from_secs(2)..Duration::from_secs(8)).contains(&took),
        "{took:?}"
    );
    assert_refused(
        &out,
        &receiver,
        &marker,
        &format!("postgres://127.0.0.1:{port}/jobs"),
        "no connection within 2s (connect_timeout)",
    );
    drop(silent);
}

/// A server swamped by a fleet answers no new connection at all: its accept queue is full
/// and the kernel drops the handshake, so the client's own connect_timeout ends the attempt.
/// That is a busy server too, asked again until the state timeout, not a final failure.
#[test]
fn a_connection_that_times_out_is_tried_again() {
    use std::os::fd::AsRawFd;

    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let swamped = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = swamped.local_addr().unwrap();
    // An accept queue of one connection, which this one fills.
    // SAFETY: listen(2) on a socket this test owns; it only changes the queue's length.
    assert_eq!(unsafe { libc::listen(swamped.as_raw_fd(), 0) }, 0);
    let _queued = std::net::TcpStream::connect(addr).unwrap();
    let probe = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300));
    assert!(
        probe.is_err(),
        "the accept queue is not full; the test proves nothing"
    );

    let url = format!(
        "postgres://crontap:{PASSWORD}@127.0.0.1:{}/jobs?connect_timeout=1",
        addr.port()
    );
    let out = run(host(&receiver, &dir.path().join("state"), &url)
        .args(["-v", "--state-timeout", "4s", "--no-overlap", "--", "touch"])
        .arg(&marker));
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(!marker.exists());
    assert!(
        out.stderr.contains("connecting again"),
        "a connect timeout was final: {}",
        out.stderr
    );
    drop(swamped);
}

/// Whether the server sees a connection named `app` in `db` as TLS.
fn uses_tls(db: &str, app: &str) -> String {
    server().psql(
        db,
        &format!(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.datname = '{db}' AND a.application_name = '{app}'"
        ),
    )
}

#[test]
fn sslmodes_as_libpq_has_them() {
    let db = "sslmodes";
    server().database(db);
    let ca = server().ca.display().to_string();
    let open = |host: &str, query: &str| {
        let url = format!(
            "postgres://crontap:{PASSWORD}@{host}:{}/{db}?{query}",
            server().port
        );
        PostgresStore::open(&url, Duration::from_secs(60))
    };
    for (app, host, query, tls) in [
        ("disable", "127.0.0.1", "sslmode=disable".to_owned(), "f"),
        // prefer, the default: TLS when offered, the certificate unchecked.
        ("default", "127.0.0.1", String::new(), "t"),
        ("require", "127.0.0.1", "sslmode=require".to_owned(), "t"),
        // The certificate names localhost only: verify-ca does not look at names.
        (
            "ca",
            "127.0.0.1",
            format!("sslmode=verify-ca&sslrootcert={ca}"),
            "t",
        ),
        (
            "full",
            "localhost",
            format!("sslmode=verify-full&sslrootcert={ca}"),
            "t",
        ),
    ] {
        let store = open(host, &format!("{query}&application_name={app}"))
            .unwrap_or_else(|e| panic!("{app}: {e:#}"));
        assert_eq!(uses_tls(db, app), tls, "{app}");
        drop(store);
    }
    for (host, query, says) in [
        // The name is checked...
        (
            "127.0.0.1",
            format!("sslmode=verify-full&sslrootcert={ca}"),
            "certificate not valid for name \"127.0.0.1\"",
        ),
        // ...and so is the issuer: the system's roots do not know the test CA.
        (
            "localhost",
            "sslmode=verify-full".to_owned(),
            "UnknownIssuer",
        ),
    ] {
        let err = format!("{:#}", open(host, &query).map(drop).unwrap_err());
        assert!(
            err.starts_with("error performing TLS handshake: ") && err.contains(says),
            "{query}: {err}"
        );
        assert_no_password(&err, "the error");
    }
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
fn a_key_is_held_then_done_or_free_again() {
    let db = "store_keys";
    server().database(db);
    let (mut a, mut b) = (store(db), store(db));
    assert_eq!(a.renew_every(), Some(Duration::from_secs(20)));
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    assert!(matches!(b.claim(&key("k"), "run-b").unwrap(), Claim::Held));
    a.complete(lease, false).unwrap();
    // Failed: the next run may try again.
    let lease = granted(b.claim(&key("k"), "run-b").unwrap());
    let before = SystemTime::now() - Duration::from_secs(60);
    b.complete(lease, true).unwrap();
    match a.claim(&key("k"), "run-c").unwrap() {
        Claim::Done(at) => assert!(at > before, "{at:?}"),
        other => panic!("expected done, got {other:?}"),
    }
    // Released: as if never claimed.
    let lease = granted(a.claim(&key("k2"), "run-c").unwrap());
    a.release(lease).unwrap();
    assert_eq!(server().key_row(db, "k2"), "");
    granted(b.claim(&key("k2"), "run-d").unwrap());
    // Locks: held until released, then free.
    let lock = Target::Lock { job: "job".into() };
    let lease = granted(a.claim(&lock, "run-e").unwrap());
    assert!(matches!(b.claim(&lock, "run-f").unwrap(), Claim::Held));
    a.complete(lease, true).unwrap();
    granted(b.claim(&lock, "run-f").unwrap());
}

#[test]
fn an_expired_lease_is_taken_over_and_its_holder_locked_out() {
    let db = "store_takeover";
    server().database(db);
    let (mut stale, mut next) = (store(db), store(db));
    let lock = Target::Lock { job: "job".into() };
    let stale_key = granted(stale.claim(&key("k"), "run-stale").unwrap());
    let stale_lock = granted(stale.claim(&lock, "run-stale").unwrap());
    assert!(matches!(
        next.claim(&key("k"), "run-next").unwrap(),
        Claim::Held
    ));
    // The server's clock decides: move the leases into its past.
    server().psql(
        db,
        "UPDATE crontap_run_holds SET lease_until = now() - interval '1 second'",
    );
    let next_key = granted(next.claim(&key("k"), "run-next").unwrap());
    let next_lock = granted(next.claim(&lock, "run-next").unwrap());
    for (what, err) in [
        ("renew", stale.renew(&stale_key).unwrap_err()),
        ("renew", stale.renew(&stale_lock).unwrap_err()),
        (
            "complete",
            stale.complete(stale_key.clone(), true).unwrap_err(),
        ),
        ("release", stale.release(stale_key).unwrap_err()),
        ("release", stale.release(stale_lock).unwrap_err()),
    ] {
        assert!(
            format!("{err:#}").contains("another run"),
            "{what}: {err:#}"
        );
    }
    next.renew(&next_key).unwrap();
    next.complete(next_key, false).unwrap();
    assert_eq!(server().key_row(db, "k"), "failed|run-next");
    next.release(next_lock).unwrap();
}

#[test]
fn a_dropped_connection_is_made_again() {
    let db = "store_reconnect";
    server().database(db);
    let mut a = PostgresStore::open(
        &server().url(db, "?application_name=reconnect"),
        Duration::from_secs(60),
    )
    .unwrap();
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    assert_eq!(
        server().psql(
            db,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = 'reconnect'"
        ),
        "1"
    );
    a.renew(&lease).unwrap();
    a.complete(lease, true).unwrap();
    assert_eq!(server().key_row(db, "k"), "succeeded|run-a");
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
    let results = hosts_together(12, &gate, |i| {
        let mut crontap = host(&receiver, &dir.path().join(format!("host{i}")), &url);
        crontap
            .args(["--idempotency-key", "rr-1", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]);
        crontap
    });
    assert!(blocker.wait().unwrap().success());
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    assert_eq!(line_count(&count), 1, "{results:#?}");
    assert!(server.key_row(db, "rr-1").starts_with("succeeded|"));
}

#[test]
fn several_comma_separated_hosts_are_tried_in_turn() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let db = "several_hosts";
    server().database(db);
    let marker = dir.path().join("ran");
    let dead = free_port(); // nothing listens there any more
    // libpq's form: the first host is down, the second answers.
    let url = format!(
        "postgres://crontap:{PASSWORD}@127.0.0.1:{dead},127.0.0.1:{}/{db}?connect_timeout=2",
        server().port
    );
    let out = run(host(&receiver, &dir.path().join("a"), &url)
        .args(["--idempotency-key", "several-1", "--", "touch"])
        .arg(&marker));
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(marker.exists());
    assert!(server().key_row(db, "several-1").starts_with("succeeded|"));

    // None answers: the message names them all, and nothing else of the URL.
    std::fs::remove_file(&marker).unwrap();
    let receiver = Receiver::start();
    let other = free_port();
    let url = format!("postgres://crontap:{PASSWORD}@127.0.0.1:{dead},127.0.0.1:{other}/{db}");
    let out = run(host(&receiver, &dir.path().join("b"), &url)
        .args(["--no-overlap", "--", "touch"])
        .arg(&marker));
    assert_refused(
        &out,
        &receiver,
        &marker,
        &format!("postgres://127.0.0.1:{dead},127.0.0.1:{other}/{db}"),
        "error connecting to server: Connection refused",
    );
}

#[test]
fn a_look_finds_what_a_claim_would_and_takes_nothing() {
    server().database("store_look");
    let (mut a, mut b) = (store("store_look"), store("store_look"));
    crate::store_contract::a_look_finds_what_a_claim_would_and_takes_nothing(&mut a, &mut b);
}

/// A row whose status this version does not know (a newer crontap-run wrote it) blocks
/// nothing: it is as if there were no record.
#[test]
fn a_status_from_a_newer_version_blocks_nothing() {
    let db = "store_newer";
    server().database(db);
    let mut a = store(db);
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    a.complete(lease, true).unwrap();
    assert!(matches!(a.look(&key("k")).unwrap(), Found::Done(_)));
    server().psql(
        db,
        "UPDATE crontap_run_holds SET status = 'paused' WHERE name = 'k'",
    );
    assert_eq!(a.look(&key("k")).unwrap(), Found::Free);
    granted(a.claim(&key("k"), "run-b").unwrap());
}

#[test]
fn fencing_tokens_grow_with_every_claim_of_a_job() {
    server().database("store_fencing");
    let (mut a, mut b) = (store("store_fencing"), store("store_fencing"));
    crate::store_contract::fencing_tokens_grow_with_every_claim_of_a_job(&mut a, &mut b);
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

/// `--on-lease-lost stop` (the default): a holder cut off from the server stops its
/// command before its lease can run out, so another host never overlaps it.
#[test]
fn a_holder_cut_off_from_the_server_stops_before_another_host_starts() {
    let db = "store_cut";
    server().database(db);
    let proxy = crate::proxy::CutProxy::start(server().port);
    let via_proxy = server().url(db, "").replace(
        &format!(":{}/", server().port),
        &format!(":{}/", proxy.port()),
    );
    crate::proxy::a_cut_off_holder_stops_before_another_host_starts(
        &via_proxy,
        &server().url(db, ""),
        &proxy,
        PASSWORD,
    );
}

/// `--state-timeout` bounds all store work before the command: with two of three hosts
/// silent, each host gets its share of it, and the job starts on the third.
#[test]
fn the_state_timeout_is_shared_by_the_hosts_of_a_url() {
    let db = "store_hosts";
    server().database(db);
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let silent = [
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
    ];
    let ports: Vec<u16> = silent
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect();
    let url = format!(
        "postgres://crontap:{PASSWORD}@127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}/{db}",
        ports[0],
        ports[1],
        server().port
    );
    let out = run(host(&receiver, &dir.path().join("state"), &url)
        .args(["--state-timeout", "15s", "--no-overlap", "--", "touch"])
        .arg(&marker));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(marker.exists());

    // Three silent hosts: each one's default connect_timeout is 5 s, but all three
    // together get the state timeout and no more.
    let url = format!(
        "postgres://crontap:{PASSWORD}@127.0.0.1:{0},127.0.0.1:{1},127.0.0.1:{0}/{db}",
        ports[0], ports[1]
    );
    let started = Instant::now();
    let out = run(host(&receiver, &dir.path().join("state"), &url)
        .args(["--state-timeout", "3s", "--no-overlap", "--", "touch"])
        .arg(dir.path().join("never")));
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(!dir.path().join("never").exists());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    drop(silent);
}

#[test]
fn the_postgres_store_survives_kills_anywhere() {
    let db = "store_kills";
    let url = server().database(db);
    let args = ["--state-url", &url, "--state-lease", "3s"].map(str::to_owned);
    crate::kill_anywhere::kill_anywhere(&args, Duration::from_secs(3), 200);
}

/// A run holds no connection to the server while its command runs (each renewal opens a
/// short one), so a fleet of long jobs does not use up the server's connections.
#[test]
fn no_connection_is_held_while_the_command_runs() {
    let db = "store_idle";
    let url = server().database(db);
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let mut run = host(&receiver, &dir.path().join("a"), &url)
        .args([
            "--no-overlap",
            "--job",
            "idle",
            "--timeout",
            "60s",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!("echo ready; {}", gate.wait_script()))
        .start();
    run.wait_for("ready");
    let count = || {
        server().psql(
            "postgres",
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}' \
                 AND application_name = 'crontap-run'"
            ),
        )
    };
    assert!(
        eventually(Duration::from_secs(10), || count() == "0"),
        "{} connections held while the command runs",
        count()
    );
    gate.open();
    assert_eq!(run.finish().code, 0);
}
