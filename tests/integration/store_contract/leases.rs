//! The contract through the binary, for server stores: a long job renews its leases, a
//! stale holder records nothing over the next one, an unusable server is refused, a holder
//! cut off stops in time, kills anywhere leave the store usable, and the state directory is
//! still checked.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::Signal;

use super::{LeaseBackend, assert_no_secret, host, run};
use crate::harness::{Crontap, Receiver, SECRET, eventually};
use crate::state::{Gate, line_count};

/// A port free a moment ago on 127.0.0.1.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Sends SIGCONT when dropped, so a failing test never leaves a stopped process.
struct Resume(i32);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.0), Signal::SIGCONT);
    }
}

/// A job that runs for longer than its lease keeps its lock and key: its crontap-run
/// renews them, and every other host is skipped meanwhile.
pub(crate) fn a_job_that_outlives_its_lease_keeps_its_lock_and_key<B: LeaseBackend>(b: &B) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let marker = dir.path().join("other host ran");
    let options = ["--state-lease", "3s", "--job", "long"];
    let mut holder = host(b, &receiver, dir.path(), 0)
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
    let key = crontap_run::state::Target::Key {
        key: "long-1".into(),
        job: "long".into(),
        keep_until: SystemTime::now(),
    };
    let lock = crontap_run::state::Target::Lock { job: "long".into() };

    // For 10 s, over three leases, another host keeps trying: for the lock, then the key.
    let started = Instant::now();
    let mut tries = 0;
    while started.elapsed() < Duration::from_secs(10) {
        let (extra, reason) = match tries % 2 {
            0 => (
                ["--no-overlap"].as_slice(),
                "job long is already running (--no-overlap)",
            ),
            _ => (
                ["--idempotency-key", "long-1"].as_slice(),
                "long-1 is being run by another instance",
            ),
        };
        let out = run(
            b,
            host(b, &receiver, dir.path(), 1)
                .args(options)
                .args(extra)
                .arg("--")
                .arg("touch")
                .arg(&marker),
        );
        let notice = format!("crontap-run: notice: skipped: {reason}\n");
        assert_eq!(
            (out.code, out.stderr.as_str()),
            (0, notice.as_str()),
            "try {tries}"
        );
        assert!(
            !marker.exists(),
            "another host ran while the job held its lease"
        );
        // The hold lasts one lease at a time, by the server's clock.
        for target in [&key, &lock] {
            let left = b.expires_in(target);
            assert!(
                left > Duration::ZERO && left <= Duration::from_secs(3),
                "{left:?}"
            );
        }
        tries += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(tries >= 10, "only {tries} tries");
    assert_eq!(holder.stderr_so_far(), "");
    gate.open();
    let out = holder.finish();
    assert_no_secret(b, &out.stderr);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    b.assert_lock_free("long");
    assert!(b.key_row("long-1").starts_with("succeeded|"));
    // Kept for the retention, not for one lease.
    let kept = b.expires_in(&key);
    assert!(kept > Duration::from_secs(7 * 86_400 - 60), "{kept:?}");
    receiver.only();
}

/// With `--on-lease-lost continue`, a holder stopped past its lease runs on; the next run
/// takes the key over, and the stale holder's result (a failure, which would let the key
/// run again) is not recorded over the next one's.
pub(crate) fn a_stale_holder_cannot_complete_over_the_next_holder<B: LeaseBackend>(b: &B) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let count = dir.path().join("count");
    let options = [
        "--state-lease",
        "3s",
        "--idempotency-key",
        "batch-9",
        "--on-lease-lost",
        "continue",
    ];
    let script = format!(
        "echo run >> '{}'; echo ready; {}; exit 1",
        count.display(),
        gate.wait_script()
    );
    let mut stale = host(b, &receiver, dir.path(), 0)
        .args(options)
        .args(["--timeout", "60s", "--", "sh", "-c", &script])
        .start();
    stale.wait_for("ready");
    let first = b.key_row("batch-9");
    assert!(first.starts_with("running|"), "{first}");
    // Stopped, it cannot renew: its lease runs out while its job still runs.
    stale.signal(Signal::SIGSTOP);
    let resume = Resume(stale.pid());

    let next_id = std::cell::RefCell::new(String::new());
    let took_over = eventually(Duration::from_secs(30), || {
        let out = run(
            b,
            host(b, &receiver, dir.path(), 1)
                .args(options)
                .args(["--", "sh", "-c"])
                .arg(format!(
                    "echo run >> '{}'; echo \"$CRONTAP_RUN_ID\"",
                    count.display()
                )),
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        if out.stdout.is_empty() {
            let notice = "crontap-run: notice: skipped: batch-9 is being run by another instance\n";
            assert_eq!(out.stderr, notice);
            return false;
        }
        assert_eq!(out.stderr, "");
        *next_id.borrow_mut() = out.stdout.trim().to_owned();
        true
    });
    assert!(took_over, "the next run never took over the expired lease");
    let next_id = next_id.into_inner();
    assert_eq!(line_count(&count), 2);
    let record = b.key_row("batch-9");
    assert_eq!(record, format!("succeeded|{next_id}"));
    assert_ne!(record, first.replace("running", "succeeded"));

    // Thawed, the stale holder finishes its job and says so, but its result is not recorded.
    drop(resume);
    gate.open();
    let out = stale.finish();
    assert_no_secret(b, &out.stderr);
    assert_eq!(out.code, 1, "the job's own status: {}", out.stderr);
    let error = format!(
        "crontap-run: error: cannot record the run's result in the state store: {}",
        B::taken_over("batch-9")
    );
    assert!(out.stderr.contains(&error), "{}", out.stderr);
    assert_eq!(b.key_row("batch-9"), record);
    let later = run(
        b,
        host(b, &receiver, dir.path(), 2)
            .args(options)
            .args(["--", "true"]),
    );
    assert_eq!(later.code, 0);
    let done = "crontap-run: notice: skipped: batch-9 already succeeded at ";
    assert!(later.stderr.starts_with(done), "{}", later.stderr);
    assert_eq!(line_count(&count), 2);
}

/// Runs `crontap-run --job nightly <feature> -- touch <marker>` for every state feature,
/// each through `crontap(receiver, state dir)`, and checks the refusal of an unusable
/// store: exit 125, one error line naming it as `shown` (then `why`), the command not run,
/// one fail ping saying why, and `secret` nowhere. Returns how long each run took.
pub(crate) fn assert_refused(
    crontap: &dyn Fn(&Receiver, &Path) -> Crontap,
    shown: &str,
    why: &str,
    secret: &str,
) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let features: [&[&str]; 3] = [
        &["--no-overlap"],
        &["--once-per", "1d"],
        &["--idempotency-key", "k-1"],
    ];
    let mut took = Vec::new();
    for feature in features {
        let receiver = Receiver::start();
        let started = Instant::now();
        let out = crontap(&receiver, &dir.path().join("state"))
            .args(["--job", "nightly"])
            .args(feature)
            .args(["--", "touch"])
            .arg(&marker)
            .run();
        took.push(started.elapsed());
        let what = format!("{feature:?}");
        assert_eq!(out.code, 125, "{what}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{what}: {}", out.stderr);
        let expected =
            format!("crontap-run: error: the state store {shown} is unreachable or failing: {why}");
        assert!(out.stderr.starts_with(&expected), "{what}: {}", out.stderr);
        assert!(!out.stderr.contains(secret), "{what}: {}", out.stderr);
        assert!(!marker.exists(), "{what}: the command ran");
        let request = receiver.only();
        let fail = format!("/ping/{SECRET}/fail?msg=");
        assert!(
            request.target.starts_with(&fail),
            "{what}: {}",
            request.target
        );
        assert!(
            !request.target.contains(secret),
            "{what}: {}",
            request.target
        );
        let msg = request.msg().unwrap();
        let says = format!("not run: the state store {shown} is unreachable");
        assert!(msg.starts_with(&says), "{what}: {msg}");
        assert!(!msg.contains(secret), "{what}: {msg}");
    }
    let history =
        std::fs::read_to_string(dir.path().join("state/history/nightly.jsonl")).unwrap_or_default();
    assert!(!history.contains(secret), "{history}");
    took
}

pub(crate) fn an_unreachable_store_is_refused_and_reported<B: LeaseBackend>(b: &B) {
    let port = free_port(); // nothing listens there any more
    let (url, shown, why) = B::down(port);
    let crontap = |receiver: &Receiver, state: &Path| {
        let mut crontap = Crontap::with_url(&receiver.url());
        crontap
            .arg("--state-dir")
            .arg(state)
            .env("CRONTAP_STATE_URL", &url);
        crontap
    };
    let took = assert_refused(&crontap, &shown, why, b.secret().unwrap());
    assert!(took.iter().all(|t| *t < Duration::from_secs(5)), "{took:?}");
}

/// `--on-lease-lost stop` (the default): a holder cut off from the server stops its
/// command before its lease can run out, so another host never overlaps it.
pub(crate) fn a_holder_cut_off_from_the_server_stops_before_another_host_starts<B: LeaseBackend>(
    b: &B,
) {
    let proxy = crate::proxy::CutProxy::start(b.port());
    crate::proxy::a_cut_off_holder_stops_before_another_host_starts(
        &b.url_via(proxy.port()),
        &b.url(),
        &proxy,
        b.secret().unwrap(),
    );
}

pub(crate) fn the_store_survives_kills_anywhere<B: LeaseBackend>(b: &B) {
    let args = ["--state-url", &b.url(), "--state-lease", "3s"].map(str::to_owned);
    crate::kill_anywhere::kill_anywhere(&args, Duration::from_secs(3), 200);
}

/// The history of a server store's runs stays in the state directory, so one that another
/// account could change is refused before the command, as with the file store.
pub(crate) fn a_state_directory_others_can_write_is_refused_with_a_server_store_too<
    B: LeaseBackend,
>(
    b: &B,
) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = b.state_dir(dir.path(), 0);
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let marker = dir.path().join("ran");
    let out = run(
        b,
        host(b, &receiver, dir.path(), 0)
            .args(["--job", "shared", "--no-overlap", "--", "touch"])
            .arg(&marker),
    );
    assert_eq!(out.code, 125, "{out:?}");
    assert!(out.stderr.contains("mode 0777"), "{out:?}");
    assert!(!marker.exists(), "the command ran");
    assert!(receiver.only().target.contains("/fail"));
    // One that is not there yet is made when the history is written.
    let fresh = b.state_dir(dir.path(), 1);
    let out = run(
        b,
        host(b, &receiver, dir.path(), 1).args(["--job", "shared", "--no-overlap", "--", "true"]),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(fresh.join("history").is_dir());
}
