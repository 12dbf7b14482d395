//! The PostgreSQL store's connections (`cargo test --features postgres`): libpq's URLs
//! (several hosts, a URL from a file, `connect_timeout`, sslmode), a wrong password, a
//! server that never answers or is swamped, the state timeout across hosts, and no
//! connection held while the command runs. The store's table is in store_postgres.rs, what
//! every store does in the store contract (`store_contract/`).

#![cfg(feature = "postgres")]

use std::path::Path;
use std::time::{Duration, Instant};

use crontap_run::state::postgres::PostgresStore;

use crate::harness::{Receiver, eventually};
use crate::pg_server::{PASSWORD, free_port, server};
use crate::state::Gate;
use crate::store_contract::assert_refused;
use crate::store_postgres::{assert_no_password, host, run};

#[test]
fn a_wrong_password_is_refused_without_printing_it() {
    let wrong = "not-the-pw-93c1";
    let url = format!(
        "postgresql://crontap:{wrong}@127.0.0.1:{}/postgres",
        server().port
    );
    let shown = format!("postgresql://127.0.0.1:{}/postgres", server().port);
    let crontap = |receiver: &Receiver, state: &Path| host(receiver, state, &url);
    assert_refused(
        &crontap,
        &shown,
        // The user name (7 characters) is taken out of the server's message, and this is
        // the whole line.
        "FATAL: password authentication failed for user \"[REDACTED]\" (SQLSTATE 28P01)\n",
        wrong,
    );
}

#[test]
fn a_server_that_never_answers_is_given_up_on_in_connect_timeout() {
    // Accepts connections (the kernel does) and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("postgres://crontap:{PASSWORD}@127.0.0.1:{port}/jobs?connect_timeout=2");
    // With a state timeout too short for a second attempt.
    let crontap = |receiver: &Receiver, state: &Path| {
        let mut crontap = host(receiver, state, &url);
        crontap.args(["--state-timeout", "3s"]);
        crontap
    };
    let took = assert_refused(
        &crontap,
        &format!("postgres://127.0.0.1:{port}/jobs"),
        "no connection within 2s (connect_timeout)",
        PASSWORD,
    );
    let bounds = Duration::from_secs(2)..Duration::from_secs(8);
    assert!(took.iter().all(|t| bounds.contains(t)), "{took:?}");
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
    let other = free_port();
    let url = format!("postgres://crontap:{PASSWORD}@127.0.0.1:{dead},127.0.0.1:{other}/{db}");
    let crontap = |receiver: &Receiver, state: &Path| host(receiver, state, &url);
    assert_refused(
        &crontap,
        &format!("postgres://127.0.0.1:{dead},127.0.0.1:{other}/{db}"),
        "error connecting to server: Connection refused",
        PASSWORD,
    );
}

/// A state URL read from a file, as from a mounted secret, wins over the variable.
#[test]
fn a_state_url_file_wins_over_the_variable() {
    let db = "url_file";
    let url = server().database(db);
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("state-url");
    std::fs::write(&url_file, format!("  {url}\n")).unwrap();
    let out = run(host(&receiver, &dir.path().join("a"), "bogus:")
        .env("CRONTAP_STATE_URL_FILE", &url_file)
        .args(["--idempotency-key", "from-file", "--", "true"]));
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(server().key_row(db, "from-file").starts_with("succeeded|"));
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
