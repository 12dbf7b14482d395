//! The run's promises under faults operators meet: crontap-run killed with its whole process
//! group, signals before the command starts and between attempts, stale variables from the
//! caller, and orphans ending while nothing else waits for them.
//!
//! Each test drives the real binary and asserts on what the job saw (markers it writes),
//! what the receiver got, and the exit status. Races are tried many times over.

use std::io::BufRead;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::harness::{Crontap, Receiver, Reply, SECRET, alive, eventually, read_pid};
use crate::state::stateful;

/// Whether `pid` is gone from the process table: not running, and no zombie either.
fn reaped(pid: &str) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// Item 1: `timeout -s KILL`, `kill -KILL -<pgid>` and a service manager stopping a
/// process group kill crontap-run and everything in its group at once. The job, in its own
/// group and ignoring SIGTERM, must not outlive it, so the next `--no-overlap` run cannot
/// overlap it.
#[test]
fn a_group_wide_sigkill_takes_a_state_holding_job_with_it() {
    for round in 0..5 {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let pid_file = dir.path().join("pid");
        let script = format!(
            "trap '' TERM; echo $$ > '{}'; echo ready; exec sleep 60",
            pid_file.display()
        );
        let mut crontap = stateful(&receiver, &state);
        crontap
            .args(["--no-overlap", "--job", "j", "--", "sh", "-c", &script])
            .command()
            .process_group(0);
        let mut holder = crontap.spawn(Stdio::piped(), Stdio::null());
        let mut line = String::new();
        std::io::BufReader::new(holder.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n");
        let job = read_pid(&pid_file);

        killpg(Pid::from_raw(holder.id() as i32), Signal::SIGKILL).unwrap();
        assert_eq!(holder.wait().unwrap().signal(), Some(libc::SIGKILL));
        // About a second in practice; more is allowed for a loaded test machine.
        let gone = eventually(Duration::from_secs(5), || !alive(&job));
        if !gone {
            let _ = kill(Pid::from_raw(job.parse().unwrap()), Signal::SIGKILL);
        }
        assert!(
            gone,
            "round {round}: the job outlived its killed crontap-run"
        );

        let marker = dir.path().join("ran");
        let next = stateful(&receiver, &state)
            .args(["--no-overlap", "--job", "j", "--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(next.code, 0, "{}", next.stderr);
        assert!(marker.exists(), "round {round}: the next run was skipped");
    }
}

/// Item 2 and `--jitter`: a signal that ends jobs, arriving before the command started, ends
/// the run with 128+S and a `not run` report; nothing is started and nothing stays claimed.
/// SIGUSR1, meant for a job, is dropped and changes nothing.
#[test]
fn a_signal_before_the_command_starts_ends_the_run_without_starting_it() {
    for (sig, code) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGINT, 130),
        (Signal::SIGHUP, 129),
        (Signal::SIGQUIT, 131),
    ] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let marker = dir.path().join("ran");
        let mut crontap = stateful(&receiver, &state);
        let running = crontap
            .args(["-v", "--jitter", "1h", "--no-overlap", "--job", "j", "--"])
            .arg("touch")
            .arg(&marker)
            .start();
        running.wait_for_log("--jitter: waiting");
        running.signal(Signal::SIGUSR1);
        running.signal(sig);
        let out = running.finish();
        assert_eq!(out.code, code, "{sig}: {}", out.stderr);
        assert!(!marker.exists(), "{sig}: the command was started");
        let ping = receiver.only();
        assert_eq!(
            ping.msg().as_deref(),
            Some(format!("not run: stopped by {}", sig.as_str()).as_str())
        );

        // Nothing was left claimed: the next run of the job runs.
        let next = stateful(&receiver, &state)
            .args(["--no-overlap", "--job", "j", "--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(next.code, 0, "{}", next.stderr);
        assert!(marker.exists(), "{sig}: the next run was skipped");
    }
}

/// Item 3: every signal crontap-run passes on reaches the job exactly once.
#[test]
fn each_forwarded_signal_reaches_the_job_exactly_once() {
    let receiver = Receiver::start();
    let script = "n=0; trap 'n=$((n+1)); echo usr1 $n' USR1; \
                  trap 'echo term; exit 0' TERM; echo ready; \
                  while :; do sleep 0.01; done";
    let mut running = Crontap::with_url(&receiver.url())
        .args(["--", "sh", "-c", script])
        .start();
    running.wait_for("ready");
    for n in 1..=50 {
        running.signal(Signal::SIGUSR1);
        running.wait_for(&format!("usr1 {n}"));
    }
    running.signal(Signal::SIGTERM);
    running.wait_for("term");
    let out = running.finish();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.matches("usr1").count(), 50, "{}", out.stdout);
    assert_eq!(out.stdout.matches("term").count(), 1, "{}", out.stdout);
}

/// Item 3, between attempts: a hangup, quit or stop request sent while crontap-run waits to
/// retry ends the run with the last attempt's status and no further attempt; SIGUSR1 there
/// has no job to go to and changes nothing. Sent right as the attempt ends, to catch the
/// moment before the wait begins.
#[test]
fn a_signal_between_attempts_ends_the_retries() {
    let signals = [
        Signal::SIGHUP,
        Signal::SIGTERM,
        Signal::SIGQUIT,
        Signal::SIGINT,
    ];
    for sig in signals.into_iter().cycle().take(20) {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let attempts = dir.path().join("attempts");
        let pid_file = dir.path().join("pid");
        let script = format!(
            "echo $CRONTAP_ATTEMPT >> '{}'; echo $$ > '{}'; echo done; exit 3",
            attempts.display(),
            pid_file.display()
        );
        let mut running = Crontap::with_url(&receiver.url())
            .args(["--retries", "2", "--retry-delay", "1h", "--"])
            .args(["sh", "-c", &script])
            .start();
        running.wait_for("done");
        // Sent as soon as the attempt has exited: crontap-run may not have noticed yet.
        let pid = read_pid(&pid_file);
        assert!(eventually(Duration::from_secs(10), || !alive(&pid)));
        running.signal(Signal::SIGUSR1);
        running.signal(sig);
        let out = running.finish();
        assert_eq!(out.code, 3, "{sig}: {}", out.stderr);
        assert_eq!(std::fs::read_to_string(&attempts).unwrap(), "1\n");
        let msg = receiver.only().msg().unwrap();
        assert!(msg.starts_with("exit 3 after "), "{sig}: {msg}");
    }
}

/// Item 5: per-run variables a caller passes in are not this run's and never reach the
/// job; `CRONTAP_JOB` does not either, so a nested crontap-run takes its own lock.
#[test]
fn stale_per_run_variables_never_reach_the_job() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_IDEMPOTENCY_KEY", "stale-key")
        .env("CRONTAP_FENCING_TOKEN", "999")
        .env("CRONTAP_RUN_ID", "stale-run")
        .env("CRONTAP_ATTEMPT", "7")
        .env("CRONTAP_JOB", "outer")
        .args(["--", "env"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    for stale in [
        "CRONTAP_IDEMPOTENCY_KEY",
        "CRONTAP_FENCING_TOKEN",
        "stale-run",
        "CRONTAP_ATTEMPT=7",
        "CRONTAP_JOB",
    ] {
        assert!(!out.stdout.contains(stale), "{stale} reached the job");
    }
    assert!(out.stdout.contains("CRONTAP_ATTEMPT=1\n"));

    let dir = tempfile::tempdir().unwrap();
    let nested = Crontap::with_url(&receiver.url())
        .env("CRONTAP_JOB", "x")
        .env("CRONTAP_STATE_DIR", dir.path())
        .args(["--no-overlap", "--", env!("CARGO_BIN_EXE_crontap-run")])
        .args(["--no-overlap", "--", "echo", "hi"])
        .run();
    assert_eq!(nested.code, 0, "{}", nested.stderr);
    assert_eq!(nested.stdout, "hi\n");
}

/// Item 7: orphans that end while crontap-run waits to retry, or while it sends the report,
/// are reaped there and then, not left as zombies.
#[test]
fn orphans_ending_between_attempts_or_during_the_ping_are_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let orphan = dir.path().join("orphan");
    // The job leaves a child that outlives it briefly, then fails.
    let script = format!(
        "sleep 0.3 & echo $! > '{}'; echo done; exit 1",
        orphan.display()
    );
    let receiver = Receiver::start();
    let mut running = Crontap::with_url(&receiver.url())
        .args(["--retries", "1", "--retry-delay", "1h", "--", "sh", "-c"])
        .arg(&script)
        .start();
    running.wait_for("done");
    let pid = read_pid(&orphan);
    assert!(
        eventually(Duration::from_secs(10), || reaped(&pid)),
        "an orphan that ended during the retry wait stayed a zombie"
    );
    running.signal(Signal::SIGTERM);
    assert_eq!(running.finish().code, 1);

    // A receiver that never answers keeps crontap-run in its report.
    std::fs::remove_file(&orphan).unwrap();
    let receiver = Receiver::scripted(&[Reply::Hang]);
    let script = format!("sleep 0.3 & echo $! > '{}'; echo done", orphan.display());
    let mut running = Crontap::with_url(&receiver.url())
        .args(["--ping-timeout", "20s", "--ping-retries", "0", "--"])
        .args(["sh", "-c", &script])
        .start();
    running.wait_for("done");
    let pid = read_pid(&orphan);
    assert!(
        eventually(Duration::from_secs(10), || reaped(&pid)),
        "an orphan that ended during the ping stayed a zombie"
    );
    running.signal(Signal::SIGTERM);
    assert_eq!(running.finish().code, 0);
}

/// An ordinary `--jitter` run: a random wait below DUR, then the command and its ping.
#[test]
fn a_jittered_run_runs_the_command_and_pings() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--jitter", "1s", "--", "sh", "-c", "echo ran"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "ran\n");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
}

/// `--jitter` is validated like every duration: at most an hour.
#[test]
fn jitter_past_an_hour_is_refused() {
    let out = Crontap::new().args(["--jitter", "2h", "--", "true"]).run();
    assert_eq!(out.code, 125);
    assert!(out.stderr.contains("--jitter"), "{}", out.stderr);
}

/// Item 4: a bug in crontap-run (a panic, made on purpose here with the tests' fault
/// switch) never replaces the command's status once the command has run, and the fail ping
/// still goes out, with the summary's head when the full summary cannot be made.
#[test]
fn a_panic_in_the_summary_keeps_the_status_and_still_pings() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_FAULT", "summary")
        .sh("echo 'secret detail' >&2; exit 3");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("internal error"), "{}", out.stderr);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("exit 3 after "), "{msg}");
    assert!(!msg.contains("secret detail"), "{msg}");
}

/// Item 4, before the command starts: a panic is crontap-run's own failure, exit 125 with a
/// fail ping, and the command does not run.
#[test]
fn a_panic_before_the_command_starts_is_125_with_a_fail_ping() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_FAULT", "admission")
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(!marker.exists());
    assert_eq!(
        receiver.only().msg().as_deref(),
        Some("not run: crontap-run failed (internal error)")
    );
}

/// Item 4, retries: an error setting up a later attempt ends the retries; the attempt that
/// ran keeps its status, and is reported and recorded like any last attempt.
#[test]
fn an_error_setting_up_a_retry_keeps_the_last_status() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_FAULT", "attempt-setup")
        .args(["--retries", "2", "--retry-delay", "10ms"])
        .sh("exit 4");
    assert_eq!(out.code, 4, "{}", out.stderr);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("exit 4 after "), "{msg}");
    assert!(msg.contains("(attempt 1 of 3)"), "{msg}");
}

/// Item 6: a dry run reads the state and never takes or writes it. Beside a live
/// `--no-overlap` run, or after a `--once-per` period's success, it says the run would be
/// skipped and does not run the command; the live run's lock is untouched.
#[test]
fn a_dry_run_reads_the_state_and_never_takes_it() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let marker = dir.path().join("ran");

    let mut holder = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "j", "--", "sh", "-c"])
        .arg("echo ready; exec sleep 600")
        .start();
    holder.wait_for("ready");
    let dry = stateful(&receiver, &state)
        .args(["--dry-run", "--no-overlap", "--job", "j", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        !marker.exists(),
        "the dry run ran the command beside a live run"
    );
    assert!(dry.stderr.contains("would be skipped"), "{}", dry.stderr);
    // The live run still holds its lock.
    let real = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "j", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(real.code, 0);
    assert!(!marker.exists(), "the dry run released the live run's lock");
    holder.signal(Signal::SIGTERM);
    holder.finish();

    // A period already done.
    let once = ["--once-per", "1d", "--job", "daily"];
    assert_eq!(stateful(&receiver, &state).args(once).sh("true").code, 0);
    let dry = stateful(&receiver, &state)
        .arg("--dry-run")
        .args(once)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(!marker.exists(), "the dry run ran a period that was done");

    // A state directory that does not exist yet is not created by a dry run.
    let fresh = dir.path().join("fresh");
    let dry = stateful(&receiver, &fresh)
        .args(["--dry-run", "--no-overlap"])
        .args(once)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        marker.exists(),
        "a dry run with nothing claimed must run the command"
    );
    assert!(!fresh.exists(), "the dry run wrote state");
}
