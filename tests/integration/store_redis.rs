//! The Redis state store (`--state-url redis://…`, cargo feature `redis`): several "hosts"
//! (crontap-runs with separate state directories) sharing one private `redis-server` that
//! each test starts on a free loopback port and kills when it ends (`redis_server.rs`).
//! Concurrent starts are held by gate files, never by sleeps; waits for a lease to run out
//! poll the server. The fleet on the hour is in the load tests (`tests/load/fleet.rs`).

#![cfg(feature = "redis")]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use crontap_run::state::redis::RedisStore;
use crontap_run::state::{Claim, Found, Lease, Store, Target};
use nix::sys::signal::Signal;
use redis::Commands;

use crate::harness::{Crontap, Receiver, SECRET, alive, eventually};
use crate::redis_server::{PASSWORD, Server, free_port};
use crate::state::{Gate, line_count, together};

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

/// Starts every host at once and returns what each printed (see [`together`]); none may
/// print the store's password.
fn start_together(hosts: &mut [Crontap], gate: &Gate) -> Vec<(i32, String)> {
    let children = hosts
        .iter_mut()
        .map(|h| h.spawn(Stdio::null(), Stdio::piped()))
        .collect();
    let results = together(children, gate);
    for (_, stderr) in &results {
        assert!(!stderr.contains(PASSWORD), "the password leaked: {stderr}");
    }
    results
}

/// `count` hosts, each with its own state directory under `dir`.
fn hosts(receiver: &Receiver, server: &Server, dir: &Path, count: usize) -> Vec<Crontap> {
    (0..count)
        .map(|i| host(receiver, &server.url(), &dir.join(format!("host-{i}"))))
        .collect()
}

const NOTICE_RUNNING: &str =
    "crontap-run: notice: skipped: job nightly is already running (--no-overlap)\n";

#[test]
fn ten_hosts_run_a_once_per_key_once() {
    let server = Server::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let mut hosts = hosts(&receiver, &server, dir.path(), 10);
    for host in &mut hosts {
        host.args(["--once-per", "1d", "--job", "nightly", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]);
    }
    let results = start_together(&mut hosts, &gate);
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let skipped = results
        .iter()
        .filter(|(_, e)| {
            e.starts_with("crontap-run: notice: skipped: nightly:")
                && e.ends_with(" is being run by another instance\n")
        })
        .count();
    let silent = results.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!((skipped, silent), (9, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command ran more than once");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));

    // Done for the day, whichever host asks.
    let again = host(&receiver, &server.url(), &dir.path().join("host-10"))
        .args([
            "--once-per",
            "1d",
            "--job",
            "nightly",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .run();
    assert_eq!(again.code, 0);
    assert!(
        again.stderr.contains(" already succeeded at "),
        "{}",
        again.stderr
    );
    assert_eq!(line_count(&count), 1);
    receiver.only();
    // Each host keeps its own history.
    let histories: usize = (0..11)
        .map(|i| line_count(&dir.path().join(format!("host-{i}/history/nightly.jsonl"))))
        .sum();
    assert_eq!(histories, 11);
}

#[test]
fn no_overlap_holds_across_hosts() {
    let server = Server::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let mut hosts = hosts(&receiver, &server, dir.path(), 10);
    for host in &mut hosts {
        host.args(["--no-overlap", "--job", "nightly", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]);
    }
    let results = start_together(&mut hosts, &gate);
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let skipped = results.iter().filter(|(_, e)| e == NOTICE_RUNNING).count();
    let silent = results.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!((skipped, silent), (9, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command ran more than once");
    receiver.only();

    // The lock went with the run: nothing is left on the server, and the next run goes.
    // Only the job's fencing counter stays, as it must: tokens only grow.
    let keys: Vec<String> = server.connect().keys("*").unwrap();
    assert_eq!(keys, ["crontap-run:fence:nightly"]);
    let next = host(&receiver, &server.url(), &dir.path().join("host-0"))
        .args([
            "--no-overlap",
            "--job",
            "nightly",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .run();
    assert_eq!((next.code, next.stderr.as_str()), (0, ""));
    assert_eq!(line_count(&count), 2);
}

#[test]
fn a_job_outliving_its_lease_is_never_run_twice() {
    let server = Server::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!(
        "echo run >> '{}'; echo ready; {}",
        count.display(),
        gate.wait_script()
    );
    let options = ["--state-lease", "3s", "--job", "long"];
    let mut holder = host(&receiver, &server.url(), &dir.path().join("a"))
        .args(options)
        .args(["--no-overlap", "--once-per", "1d", "--timeout", "60s"])
        .args(["--", "sh", "-c", &script])
        .start();
    holder.wait_for("ready");
    let started = Instant::now();
    let key = server
        .connect()
        .keys::<_, Vec<String>>("crontap-run:key:long:*")
        .unwrap()
        .pop()
        .expect("the key is on the server");

    // Another host keeps trying, for more than three leases: the key and the lock are
    // renewed, never lost, so every try is skipped.
    let mut tries = 0;
    while started.elapsed() < Duration::from_secs(10) {
        let by_key = host(&receiver, &server.url(), &dir.path().join("b"))
            .args(options)
            .args(["--once-per", "1d", "--", "sh", "-c", &script])
            .run();
        assert_eq!(by_key.code, 0, "{}", by_key.stderr);
        assert!(
            by_key
                .stderr
                .ends_with(" is being run by another instance\n"),
            "after {:?}: {}",
            started.elapsed(),
            by_key.stderr
        );
        let by_lock = host(&receiver, &server.url(), &dir.path().join("b"))
            .args(options)
            .args(["--no-overlap", "--", "sh", "-c", &script])
            .run();
        assert_eq!(by_lock.code, 0, "{}", by_lock.stderr);
        assert!(
            by_lock.stderr.contains("job long is already running"),
            "after {:?}: {}",
            started.elapsed(),
            by_lock.stderr
        );
        // The hold lasts one lease at a time, by the server's clock.
        let ttl = server.pttl(&key);
        assert!((1..=3000).contains(&ttl), "{ttl}");
        tries += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(tries >= 10, "{tries}");
    assert!(
        holder.stderr_so_far().is_empty(),
        "{}",
        holder.stderr_so_far()
    );

    gate.open();
    let out = holder.finish();
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(line_count(&count), 1, "the command ran twice");
    let record = server.get(&key).unwrap();
    assert_eq!(record["status"], "succeeded");
    // Kept past the period's end, not for one lease.
    assert!(
        server.pttl(&key) > 7 * 86_400 * 1000,
        "{}",
        server.pttl(&key)
    );
    receiver.only();
}

#[test]
fn a_stale_holder_cannot_complete_over_the_next_holder() {
    let server = Server::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let count = dir.path().join("count");
    // The holder that lost its lease runs on (the mode this test is about).
    let options = [
        "--state-lease",
        "3s",
        "--idempotency-key",
        "batch-9",
        "--on-lease-lost",
        "continue",
    ];
    // The first holder's job fails: were its result written, the next run would go again.
    let script = format!(
        "echo run >> '{}'; echo ready; {}; exit 1",
        count.display(),
        gate.wait_script()
    );
    let mut stale = host(&receiver, &server.url(), &dir.path().join("a"))
        .args(options)
        .args(["--timeout", "60s", "--", "sh", "-c", &script])
        .start();
    stale.wait_for("ready");
    let name = "crontap-run:key:batch-9";
    let first = server.get(name).unwrap();
    assert_eq!(first["status"], "running");

    // Frozen, crontap-run cannot renew: the server lets its lease run out.
    stale.signal(Signal::SIGSTOP);
    let _resume = Resume(stale.pid());
    assert!(
        eventually(Duration::from_secs(20), || server.get(name).is_none()),
        "the frozen holder's lease never expired"
    );
    let next = host(&receiver, &server.url(), &dir.path().join("b"))
        .args(options)
        .args(["--", "sh", "-c"])
        .arg(format!("echo run >> '{}'", count.display()))
        .run();
    assert_eq!((next.code, next.stderr.as_str()), (0, ""));
    assert_eq!(line_count(&count), 2);
    let record = server.get(name).unwrap();
    assert_eq!(record["status"], "succeeded");
    assert_ne!(record["owner"], first["owner"]);

    // Thawed, the stale holder finishes its job but cannot write over the new record.
    stale.signal(Signal::SIGCONT);
    gate.open();
    let out = stale.finish();
    assert_eq!(out.code, 1, "the job's own status: {}", out.stderr);
    assert!(
        out.stderr.contains(
            "crontap-run: error: cannot record the run's result in the state store: the lease \
             on crontap-run:key:batch-9 expired and another run took it over"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(server.get(name).unwrap(), record);
    let after = host(&receiver, &server.url(), &dir.path().join("c"))
        .args(options)
        .args(["--", "true"])
        .run();
    assert_eq!(after.code, 0);
    assert!(
        after
            .stderr
            .starts_with("crontap-run: notice: skipped: batch-9 already succeeded at "),
        "{}",
        after.stderr
    );
    assert_eq!(line_count(&count), 2);
}

/// Sends SIGCONT when dropped, so a failing test never leaves a stopped process.
struct Resume(i32);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.0), Signal::SIGCONT);
    }
}

/// Runs `crontap-run <feature> -- touch <marker>` against an unusable store and checks the
/// refusal: exit 125, one error line naming the store, the command not run, one fail ping.
fn assert_refused(state_url: &str, shown: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let features: &[&[&str]] = &[
        &["--no-overlap"],
        &["--once-per", "1d"],
        &["--idempotency-key", "k-1"],
    ];
    for feature in features {
        let receiver = Receiver::start();
        let mut crontap = host(&receiver, state_url, &dir.path().join("state"));
        for pair in extra.chunks(2) {
            crontap.env(pair[0], pair[1]);
        }
        let started = Instant::now();
        let out = crontap
            .args(["--job", "nightly"])
            .args(*feature)
            .args(["--", "touch"])
            .arg(&marker)
            .run();
        let what = format!("{feature:?}");
        assert_eq!(out.code, 125, "{what}: {}", out.stderr);
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        assert_eq!(out.stderr.lines().count(), 1, "{what}: {}", out.stderr);
        let expected =
            format!("crontap-run: error: the state store {shown} is unreachable or failing: ");
        assert!(out.stderr.starts_with(&expected), "{what}: {}", out.stderr);
        assert!(!out.stderr.contains(PASSWORD), "{what}: {}", out.stderr);
        assert!(!marker.exists(), "{what}: the command ran");
        let request = receiver.only();
        assert!(
            request
                .target
                .starts_with(&format!("/ping/{SECRET}/fail?msg=")),
            "{what}: {}",
            request.target
        );
        let msg = request.msg().unwrap();
        assert!(
            msg.starts_with(&format!("not run: the state store {shown} is unreachable")),
            "{what}: {msg}"
        );
        assert!(!msg.contains(PASSWORD), "{what}: {msg}");
    }
    let history =
        std::fs::read_to_string(dir.path().join("state/history/nightly.jsonl")).unwrap_or_default();
    assert!(!history.contains(PASSWORD), "{history}");
}

#[test]
fn a_store_that_is_down_is_refused_and_reported() {
    let port = free_port();
    assert_refused(
        &format!("redis://:{PASSWORD}@127.0.0.1:{port}/0"),
        &format!("redis://127.0.0.1:{port}/0"),
        &[],
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
    assert_refused(
        &format!("redis://:wrong-{PASSWORD}@127.0.0.1:{port}/0"),
        &shown,
        &[],
    );
    assert_refused(&shown, &shown, &[]);

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
    assert_refused(&url, &shown, &["SSL_CERT_FILE", &other_s]);
}

/// A crontap-run killed outright takes its job with it, as with the file store: nothing
/// would renew the lease, and another host would start the job while it still ran.
#[test]
fn a_sigkilled_holder_takes_its_job_with_it_and_its_lease_runs_out() {
    let server = Server::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!(
        "echo $$ > '{}'; echo ready; exec sleep 600",
        pid_file.display()
    );
    let mut holder = host(&receiver, &server.url(), &dir.path().join("a"))
        .args(["--state-lease", "3s", "--no-overlap", "--job", "nightly"])
        .args(["--", "sh", "-c", &script])
        .spawn(Stdio::piped(), Stdio::null());
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let gone = eventually(Duration::from_secs(20), || !alive(pid.trim()));
    if !gone && let Ok(pid) = pid.trim().parse() {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    assert!(gone, "the job of the SIGKILLed crontap-run survived");

    // Nobody renews the lock; the server drops it within one lease.
    let marker = dir.path().join("ran");
    assert!(eventually(Duration::from_secs(20), || {
        server.get("crontap-run:lock:nightly").is_none()
    }));
    let next = host(&receiver, &server.url(), &dir.path().join("b"))
        .args(["--no-overlap", "--job", "nightly", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!((next.code, next.stderr.as_str()), (0, ""));
    assert!(marker.exists());
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

#[test]
fn the_store_holds_records_and_frees_keys() {
    let server = Server::start();
    let lease = Duration::from_secs(30);
    let (mut a, mut b) = (store(&server, lease), store(&server, lease));
    assert_eq!(a.renew_every(), Some(Duration::from_secs(10)));

    let held = granted(a.claim(&key("k"), "run-a").unwrap());
    assert!(matches!(b.claim(&key("k"), "run-b").unwrap(), Claim::Held));
    let record = server.get("crontap-run:key:k").unwrap();
    assert_eq!(record["status"], "running");
    assert_eq!(record["owner"], "run-a");
    assert_eq!(record["key"], "k");
    assert!((1..=30_000).contains(&server.pttl("crontap-run:key:k")));
    a.renew(&held).unwrap();
    // Failed: kept, and taken over by the next claim.
    a.complete(held, false).unwrap();
    assert_eq!(server.get("crontap-run:key:k").unwrap()["status"], "failed");
    let held = granted(b.claim(&key("k"), "run-b").unwrap());
    let before = SystemTime::now();
    b.complete(held, true).unwrap();
    let ttl = server.pttl("crontap-run:key:k");
    assert!((3_590_000..=3_600_000).contains(&ttl), "{ttl}");
    let Claim::Done(at) = a.claim(&key("k"), "run-c").unwrap() else {
        panic!("a succeeded key is done")
    };
    assert!(at + Duration::from_secs(1) >= before, "{at:?}");

    // Released: gone, as if never claimed.
    let held = granted(a.claim(&key("k2"), "run-d").unwrap());
    a.release(held).unwrap();
    assert!(server.get("crontap-run:key:k2").is_none());

    // A record whose retention has passed goes at once.
    let past = Target::Key {
        key: "old".into(),
        job: "job".into(),
        keep_until: SystemTime::UNIX_EPOCH,
    };
    let held = granted(a.claim(&past, "run-e").unwrap());
    a.complete(held, true).unwrap();
    assert!(server.get("crontap-run:key:old").is_none());

    // Locks: held, then gone when completed.
    let lock = Target::Lock { job: "job".into() };
    let held = granted(a.claim(&lock, "run-f").unwrap());
    assert!(matches!(b.claim(&lock, "run-g").unwrap(), Claim::Held));
    a.complete(held, true).unwrap();
    assert!(server.get("crontap-run:lock:job").is_none());
    granted(b.claim(&lock, "run-g").unwrap());
}

#[test]
fn a_holder_whose_lease_was_taken_over_changes_nothing() {
    let server = Server::start();
    let lease = Duration::from_secs(30);
    let (mut stale, mut next) = (store(&server, lease), store(&server, lease));
    let mut con = server.connect();
    for target in [key("k"), Target::Lock { job: "job".into() }] {
        let name = match &target {
            Target::Lock { .. } => "crontap-run:lock:job",
            Target::Key { .. } => "crontap-run:key:k",
        };
        let lost = granted(stale.claim(&target, "run-stale").unwrap());
        // The lease runs out (as when the holder stops renewing)...
        let _: () = con.del(name).unwrap();
        // ...and the next run holds it before the stale holder comes back.
        let held = granted(next.claim(&target, "run-next").unwrap());
        let record = server.get(name).unwrap();
        for result in [
            stale.renew(&lost),
            stale.complete(lost.clone(), false),
            stale.release(lost.clone()),
        ] {
            let err = result.unwrap_err().to_string();
            assert!(err.contains("another run took it over"), "{err}");
        }
        assert_eq!(server.get(name).unwrap(), record);
        next.complete(held, true).unwrap();
    }
    assert_eq!(
        server.get("crontap-run:key:k").unwrap()["status"],
        "succeeded"
    );
    assert!(server.get("crontap-run:lock:job").is_none());
}

/// A lease that ran out while nobody took it over (the holder or the server paused, the
/// network cut for longer than a lease) is won back by the next renewal, and a result is
/// recorded even when the key is gone: the run that held it is the only one that ran.
#[test]
fn a_lease_that_expired_untaken_is_won_back() {
    let server = Server::start();
    let lease = Duration::from_secs(30);
    let (mut holder, mut other) = (store(&server, lease), store(&server, lease));
    let mut con = server.connect();
    for target in [key("k"), Target::Lock { job: "job".into() }] {
        let name = match &target {
            Target::Lock { .. } => "crontap-run:lock:job",
            Target::Key { .. } => "crontap-run:key:k",
        };
        let held = granted(holder.claim(&target, "run-a").unwrap());
        let _: () = con.del(name).unwrap();
        holder.renew(&held).unwrap();
        let record = server.get(name).unwrap();
        assert_eq!(
            (record["status"].as_str(), record["owner"].as_str()),
            (Some("running"), Some("run-a"))
        );
        assert!((1..=30_000).contains(&server.pttl(name)));
        // Held again: others are kept out.
        assert!(matches!(
            other.claim(&target, "run-b").unwrap(),
            Claim::Held
        ));
        // Gone again when the job ends: the result is still written.
        let _: () = con.del(name).unwrap();
        holder.complete(held, true).unwrap();
    }
    let record = server.get("crontap-run:key:k").unwrap();
    assert_eq!(
        (record["status"].as_str(), record["owner"].as_str()),
        (Some("succeeded"), Some("run-a"))
    );
    let ttl = server.pttl("crontap-run:key:k");
    assert!((3_590_000..=3_600_000).contains(&ttl), "{ttl}");
    assert!(matches!(
        other.claim(&key("k"), "run-b").unwrap(),
        Claim::Done(_)
    ));
    assert!(server.get("crontap-run:lock:job").is_none());

    // A released lease that is already gone is released.
    let held = granted(holder.claim(&key("k2"), "run-c").unwrap());
    let _: () = con.del("crontap-run:key:k2").unwrap();
    holder.release(held).unwrap();
    assert!(server.get("crontap-run:key:k2").is_none());
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

#[test]
fn the_store_reconnects_after_losing_its_connection() {
    let server = Server::start();
    let mut store = store(&server, Duration::from_secs(30));
    let held = granted(store.claim(&key("k"), "run-a").unwrap());
    let _: () = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes")
        .query(&mut server.connect())
        .unwrap();
    // The store connects again and sends the command again.
    store.renew(&held).unwrap();
    kill_clients(&server);
    store.complete(held, true).unwrap();
    assert_eq!(
        server.get("crontap-run:key:k").unwrap()["status"],
        "succeeded"
    );
}

fn kill_clients(server: &Server) {
    let _: () = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes")
        .query(&mut server.connect())
        .unwrap();
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

#[test]
fn a_look_finds_what_a_claim_would_and_takes_nothing() {
    let server = Server::start();
    let lease = Duration::from_secs(30);
    let (mut a, mut b) = (store(&server, lease), store(&server, lease));
    crate::store_contract::a_look_finds_what_a_claim_would_and_takes_nothing(&mut a, &mut b);
}

#[test]
fn fencing_tokens_grow_with_every_claim_of_a_job() {
    let server = Server::start();
    let lease = Duration::from_secs(30);
    let (mut a, mut b) = (store(&server, lease), store(&server, lease));
    crate::store_contract::fencing_tokens_grow_with_every_claim_of_a_job(&mut a, &mut b);
}

/// `--on-lease-lost stop` (the default): a holder cut off from the server stops its
/// command before its lease can run out, so another host never overlaps it.
#[test]
fn a_holder_cut_off_from_the_server_stops_before_another_host_starts() {
    let server = Server::start();
    let proxy = crate::proxy::CutProxy::start(server.port);
    let via_proxy = format!("redis://127.0.0.1:{}/0", proxy.port());
    crate::proxy::a_cut_off_holder_stops_before_another_host_starts(
        &via_proxy,
        &server.url(),
        &proxy,
        PASSWORD,
    );
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

#[test]
fn the_redis_store_survives_kills_anywhere() {
    let server = Server::start();
    let args = ["--state-url", &server.url(), "--state-lease", "3s"].map(str::to_owned);
    crate::kill_anywhere::kill_anywhere(&args, Duration::from_secs(3), 200);
}

/// The history of a server store's runs stays in the state directory, so one that another
/// account could change is refused before the command, as with the file store.
#[test]
fn a_state_directory_others_can_write_is_refused_with_a_server_store_too() {
    let server = Server::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let marker = dir.path().join("ran");
    let out = host(&receiver, &server.url(), &state)
        .args(["--job", "shared", "--no-overlap", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(out.code, 125, "{out:?}");
    assert!(out.stderr.contains("mode 0777"), "{out:?}");
    assert!(!marker.exists(), "the command ran");
    assert!(receiver.only().target.contains("/fail"));
    // One that is not there yet is made when the history is written.
    let fresh = dir.path().join("fresh");
    let out = host(&receiver, &server.url(), &fresh)
        .args(["--job", "shared", "--no-overlap", "--", "true"])
        .run();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(fresh.join("history").is_dir());
}
