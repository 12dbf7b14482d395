//! `--retries`: the command runs again after a failure, with doubling waits, one ping per
//! invocation whatever the number of attempts; failures that another attempt cannot mend
//! (not found, not executable, a stop request, an exit status not listed) are not retried.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::harness::{Crontap, Receiver, SECRET, alive, default_signals, eventually};

/// A job prefix that appends the attempt number to `log`, then runs `rest`.
fn counted(log: &Path, rest: &str) -> String {
    format!("echo \"$CRONTAP_ATTEMPT\" >> '{}'; {rest}", log.display())
}

/// The attempt numbers the job appended to `log`.
fn attempts(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `msg` of the only request, which must be a failure ping.
fn fail_msg(receiver: &Receiver) -> String {
    let request = receiver.only();
    assert!(
        request
            .target
            .starts_with(&format!("/ping/{SECRET}/fail?msg=")),
        "{}",
        request.target
    );
    request.msg().unwrap()
}

#[test]
fn a_later_success_sends_one_success_ping() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let out = Crontap::with_url(&receiver.url())
        .args(["--retries", "3", "--retry-delay", "10ms"])
        .sh(&counted(
            &log,
            "echo failing >&2; [ \"$CRONTAP_ATTEMPT\" -ge 3 ]",
        ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(attempts(&log), ["1", "2", "3"]);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

/// `--timeout` bounds each attempt, not the run: two attempts of 2 s each both finish under
/// a 3 s timeout.
#[test]
fn each_attempt_gets_the_whole_timeout() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let out = Crontap::with_url(&receiver.url())
        .args(["--retries", "1", "--retry-delay", "10ms", "--timeout", "3s"])
        .sh(&counted(&log, "sleep 2; [ \"$CRONTAP_ATTEMPT\" -ge 2 ]"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(attempts(&log), ["1", "2"]);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

/// An attempt that timed out is retried like any failure.
#[test]
fn a_timed_out_attempt_is_retried() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let out = Crontap::with_url(&receiver.url())
        .args(["--retries", "1", "--retry-delay", "10ms", "--timeout", "1s"])
        .sh(&counted(
            &log,
            "[ \"$CRONTAP_ATTEMPT\" -ge 2 ] || exec sleep 60",
        ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(attempts(&log), ["1", "2"]);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

#[test]
fn when_every_attempt_fails_one_fail_ping_names_the_last_attempt() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let out = Crontap::with_url(&receiver.url())
        .args(["--retries", "2", "--retry-delay", "10ms"])
        .sh(&counted(&log, "echo boom >&2; exit 1"));
    assert_eq!(out.code, 1);
    assert_eq!(attempts(&log), ["1", "2", "3"]);
    let msg = fail_msg(&receiver);
    assert!(msg.starts_with("exit 1 after "), "{msg}");
    assert!(msg.ends_with("s (attempt 3 of 3): boom"), "{msg}");
}

#[test]
fn the_exit_status_and_summary_are_those_of_the_last_attempt() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--retries", "2", "--retry-delay", "10ms"])
        .sh("echo \"failure $CRONTAP_ATTEMPT\" >&2; exit $((CRONTAP_ATTEMPT + 1))");
    assert_eq!(out.code, 4);
    let msg = fail_msg(&receiver);
    assert!(msg.starts_with("exit 4 after "), "{msg}");
    assert!(msg.ends_with("s (attempt 3 of 3): failure 3"), "{msg}");
}

#[test]
fn every_attempt_gets_its_number_and_the_same_run_id() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let script = format!(
        "echo \"$CRONTAP_ATTEMPT $CRONTAP_RUN_ID\" >> '{}'; exit 1",
        log.display()
    );
    let run = || {
        Crontap::new()
            .args(["-q", "--retries", "2", "--retry-delay", "10ms"])
            .sh(&script)
    };
    assert_eq!(run().code, 1);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<(&str, &str)> = text
        .lines()
        .map(|l| l.split_once(' ').expect("attempt and run id"))
        .collect();
    let numbers: Vec<&str> = lines.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    let run_id = lines[0].1;
    assert_eq!(run_id.len(), 36, "{run_id}");
    assert!(lines.iter().all(|(_, id)| *id == run_id), "{text}");

    assert_eq!(run().code, 1);
    let again = std::fs::read_to_string(&log).unwrap();
    let next = again.lines().nth(3).unwrap().split_once(' ').unwrap().1;
    assert_ne!(next, run_id, "another invocation gets another run id");
}

#[test]
fn without_retries_the_summary_names_no_attempt() {
    for args in [&[][..], &["--retries", "0", "--retry-delay", "10ms"]] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("attempts");
        let out = Crontap::with_url(&receiver.url())
            .args(args)
            .sh(&counted(&log, "echo boom >&2; exit 1"));
        assert_eq!(out.code, 1, "{args:?}");
        assert_eq!(attempts(&log), ["1"], "{args:?}");
        let msg = fail_msg(&receiver);
        assert!(msg.starts_with("exit 1 after "), "{args:?}: {msg}");
        assert!(msg.ends_with("s: boom"), "{args:?}: {msg}");
        assert!(!msg.contains("attempt"), "{args:?}: {msg}");
    }
}

#[test]
fn waits_start_at_the_retry_delay_and_double() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("uptimes");
    // /proc/uptime counts in hundredths of a second.
    let script = format!("cut -d' ' -f1 /proc/uptime >> '{}'; exit 1", log.display());
    let out = Crontap::new()
        .args(["-q", "--retries", "2", "--retry-delay", "300ms"])
        .sh(&script);
    assert_eq!(out.code, 1);
    let times: Vec<f64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(times.len(), 3, "{times:?}");
    let (first, second) = (times[1] - times[0], times[2] - times[1]);
    assert!(first >= 0.28, "first wait {first}s, expected 300ms");
    assert!(second >= 0.58, "second wait {second}s, expected 600ms");
}

#[test]
fn verbose_logs_each_wait() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["-v", "--retries", "2", "--retry-delay", "10ms"])
        .sh("exit 1");
    assert_eq!(out.code, 1);
    let waits: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("retrying in"))
        .collect();
    assert_eq!(waits.len(), 2, "{}", out.stderr);
    assert!(
        waits.iter().all(|l| l.starts_with("crontap-run: debug: ")),
        "{}",
        out.stderr
    );
    receiver.only();
}

#[test]
fn exit_126_and_127_are_not_retried() {
    for code in [126, 127] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("attempts");
        let out = Crontap::with_url(&receiver.url())
            .args(["--retries", "3", "--retry-delay", "10ms"])
            .sh(&counted(&log, &format!("exit {code}")));
        assert_eq!(out.code, code);
        assert_eq!(attempts(&log), ["1"], "exit {code}");
        let msg = fail_msg(&receiver);
        assert!(msg.starts_with(&format!("exit {code} after ")), "{msg}");
        assert!(msg.contains("s (attempt 1 of 4)"), "{msg}");
    }
}

#[test]
fn a_command_that_cannot_start_is_tried_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-command");
    // No execute bit at all: even root cannot run it.
    let not_executable = dir.path().join("script");
    std::fs::write(&not_executable, "#!/bin/sh\nexit 0\n").unwrap();
    for (command, code) in [(&missing, 127), (&not_executable, 126)] {
        let receiver = Receiver::start();
        let out = Crontap::with_url(&receiver.url())
            .args(["-v", "--retries", "3", "--retry-delay", "10ms", "--"])
            .arg(command)
            .run();
        assert_eq!(out.code, code, "{}", out.stderr);
        assert!(!out.stderr.contains("retrying in"), "{}", out.stderr);
        let msg = fail_msg(&receiver);
        assert!(msg.starts_with("could not start "), "{msg}");
    }
}

#[test]
fn only_listed_exit_statuses_are_retried() {
    for (codes, exit, tries) in [("75", 1, 1), ("75", 75, 3), ("1,75", 2, 1), ("1,75", 1, 3)] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("attempts");
        let out = Crontap::with_url(&receiver.url())
            .args(["--retries", "2", "--retry-delay", "10ms"])
            .args(["--retry-on-exit", codes])
            .sh(&counted(&log, &format!("exit {exit}")));
        assert_eq!(out.code, exit, "--retry-on-exit {codes}, exit {exit}");
        assert_eq!(
            attempts(&log).len(),
            tries,
            "--retry-on-exit {codes}, exit {exit}"
        );
        let msg = fail_msg(&receiver);
        let part = format!("s (attempt {tries} of 3)");
        assert!(msg.contains(&part), "{msg}");
    }
}

#[test]
fn a_job_killed_by_a_signal_of_its_own_is_retried() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let out = Crontap::with_url(&receiver.url())
        .args(["--retries", "1", "--retry-delay", "10ms"])
        .sh(&counted(
            &log,
            "[ \"$CRONTAP_ATTEMPT\" -ge 2 ] || kill -TERM $$",
        ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(attempts(&log), ["1", "2"]);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

#[test]
fn a_stop_request_during_an_attempt_is_not_retried() {
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("attempts");
        let mut crontap = Crontap::with_url(&receiver.url());
        crontap.args(["--retries", "3", "--retry-delay", "10ms", "--", "sh", "-c"]);
        crontap.arg(counted(&log, "echo ready; exec sleep 60"));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            crontap.command().pre_exec(default_signals);
        }
        let mut run = crontap.start();
        run.wait_for("ready");
        run.signal(signal);
        let out = run.finish();
        assert_eq!(out.code, 128 + signal as i32, "{signal}: {}", out.stderr);
        assert_eq!(attempts(&log), ["1"], "{signal}");
        let msg = fail_msg(&receiver);
        assert!(
            msg.starts_with(&format!("killed by {} after ", signal.as_str())),
            "{msg}"
        );
        assert!(msg.contains("s (attempt 1 of 4)"), "{msg}");
    }
}

#[test]
fn a_stop_request_while_waiting_to_retry_ends_the_run() {
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("attempts");
        let pid_file = dir.path().join("pid");
        let mut crontap = Crontap::with_url(&receiver.url());
        crontap.args(["--retries", "3", "--retry-delay", "1h", "--", "sh", "-c"]);
        crontap.arg(counted(
            &log,
            &format!("echo $$ > '{}'; echo ready; exit 1", pid_file.display()),
        ));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            crontap.command().pre_exec(default_signals);
        }
        let mut run = crontap.start();
        run.wait_for("ready");
        // Once the first attempt has ended, crontap-run is in (or about to start) its wait.
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert!(
            eventually(Duration::from_secs(20), || !alive(pid.trim())),
            "the first attempt never ended"
        );
        run.signal(signal);
        // Should the stop request be ignored, end the hour-long wait rather than the test run.
        let (_cancel, cancelled) = std::sync::mpsc::channel::<()>();
        let pid = nix::unistd::Pid::from_raw(run.pid());
        std::thread::spawn(move || {
            let limit = cancelled.recv_timeout(Duration::from_secs(30));
            if limit == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
            }
        });
        let out = run.finish();
        assert!(
            out.code == 1 || out.code == 128 + signal as i32,
            "{signal}: exit {}: {}",
            out.code,
            out.stderr
        );
        assert!(
            out.elapsed < Duration::from_secs(20),
            "{signal}: took {:?}",
            out.elapsed
        );
        assert_eq!(attempts(&log), ["1"], "{signal}");
        let msg = fail_msg(&receiver);
        assert!(msg.contains("s (attempt 1 of 4)"), "{msg}");
    }
}

#[test]
fn every_attempt_reads_stdin_from_the_start() {
    // `crontap-run --retries 2 -- psql < nightly.sql`: a retry must not see end-of-file.
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.sql");
    std::fs::write(&input, "one\ntwo\nthree\n").unwrap();
    let log = dir.path().join("attempts");
    let out = Crontap::with_url(&receiver.url())
        .stdin_file(std::fs::File::open(&input).unwrap())
        .args(["--retries", "1", "--retry-delay", "10ms", "--", "sh", "-c"])
        .arg(counted(&log, "echo \"lines=$(wc -l)\" >&2; exit 1"))
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(attempts(&log), ["1", "2"]);
    assert_eq!(out.stderr.matches("lines=3").count(), 2, "{}", out.stderr);
    assert!(fail_msg(&receiver).ends_with("(attempt 2 of 2): lines=3"));
}

#[test]
fn a_job_ended_by_a_forwarded_hangup_is_not_retried() {
    for (signal, code) in [(Signal::SIGHUP, 129), (Signal::SIGQUIT, 131)] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("attempts");
        let mut crontap = Crontap::with_url(&receiver.url());
        crontap.args(["--retries", "2", "--retry-delay", "10ms", "--", "sh", "-c"]);
        crontap.arg(counted(&log, "echo ready; exec sleep 60"));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            crontap.command().pre_exec(default_signals);
        }
        let mut running = crontap.start();
        running.wait_for("ready");
        running.signal(signal);
        let out = running.finish();
        assert_eq!(out.code, code, "{signal}: {}", out.stderr);
        assert_eq!(attempts(&log), ["1"], "{signal}");
        assert_eq!(receiver.received().len(), 1, "{signal}");
    }
}

#[test]
fn a_hangup_while_waiting_to_retry_ends_the_run() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap.args([
        "--retries",
        "2",
        "--retry-delay",
        "1h",
        "-v",
        "--",
        "sh",
        "-c",
    ]);
    crontap.arg(counted(&log, "echo ready; exit 1"));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        crontap.command().pre_exec(default_signals);
    }
    let mut running = crontap.start();
    running.wait_for("ready");
    // The debug line says the wait has begun.
    assert!(eventually(Duration::from_secs(20), || running
        .stderr_so_far()
        .contains("retrying in")));
    running.signal(Signal::SIGHUP);
    let out = running.finish();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(attempts(&log), ["1"]);
    assert_eq!(receiver.received().len(), 1);
}
