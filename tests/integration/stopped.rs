//! A run that crontap-run was told to stop is never reported as a success: a job that
//! traps SIGTERM, cleans up and exits 0 did not finish its work. The exit status stays the
//! job's own; the report, the state and the history say "stopped".

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::harness::{Crontap, Output, Receiver, SECRET, assert_no_secret, eventually};
use crate::state::stateful;

/// A job that says `ready`, and on `signal` writes `cleaning up` to stderr and exits 0.
fn graceful(signal: &str) -> String {
    format!(
        "trap 'echo cleaning up >&2; exit 0' {signal}; echo ready; while :; do sleep 0.05; done"
    )
}

/// Runs the [`graceful`] job for `name`, sends crontap-run `sig` once the job is ready, and
/// waits for the end.
fn signal_graceful_job(receiver: &Receiver, sig: Signal, name: &str) -> Output {
    let mut run = Crontap::with_url(&receiver.url())
        .args(["--", "sh", "-c", &graceful(name)])
        .start();
    run.wait_for("ready");
    run.signal(sig);
    run.finish()
}

#[test]
fn a_job_that_exits_0_on_a_stop_request_is_reported_as_stopped() {
    for (sig, name) in [
        (Signal::SIGTERM, "TERM"),
        (Signal::SIGINT, "INT"),
        (Signal::SIGQUIT, "QUIT"),
    ] {
        let receiver = Receiver::start();
        let out = signal_graceful_job(&receiver, sig, name);
        assert_eq!(out.code, 0, "{sig}: the job's own status: {}", out.stderr);
        let ping = receiver.only();
        assert!(ping.target.starts_with(&format!("/ping/{SECRET}/fail?")));
        let msg = ping.msg().unwrap();
        let head = format!("stopped by {} after ", sig.as_str());
        assert!(msg.starts_with(&head), "{sig}: {msg}");
        assert!(msg.ends_with("(exit 0): cleaning up"), "{sig}: {msg}");
    }
}

#[test]
fn signals_that_are_not_stop_requests_change_nothing() {
    for (sig, name) in [
        (Signal::SIGHUP, "HUP"),
        (Signal::SIGUSR1, "USR1"),
        (Signal::SIGUSR2, "USR2"),
        (Signal::SIGWINCH, "WINCH"),
    ] {
        let receiver = Receiver::start();
        let out = signal_graceful_job(&receiver, sig, name);
        assert_eq!(out.code, 0, "{sig}: {}", out.stderr);
        assert_eq!(receiver.only().target, format!("/ping/{SECRET}"), "{sig}");
    }
}

#[test]
fn a_timeout_keeps_its_own_report_when_the_job_exits_0_on_sigterm() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--timeout", "1s", "--"])
        .args(["sh", "-c", &graceful("TERM")])
        .run();
    assert_eq!(out.code, 124, "{}", out.stderr);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("timed out after 1s"), "{msg}");
}

/// The stopped run is not the period's success: the next run in the period runs, and
/// history shows the first as stopped.
#[test]
fn a_stopped_once_per_run_does_not_use_up_the_period() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let once = ["--once-per", "1d", "--job", "nightly"];
    let mut run = stateful(&receiver, &state)
        .args(once)
        .args(["--", "sh", "-c", &graceful("TERM")])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    assert_eq!(run.finish().code, 0);

    let marker = dir.path().join("ran");
    let next = stateful(&receiver, &state)
        .args(once)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(next.code, 0, "{}", next.stderr);
    assert!(marker.exists(), "the stopped run used up the period");

    let history = Crontap::new()
        .args(["history", "--json", "--state-dir"])
        .arg(&state)
        .run();
    let results: Vec<String> = history
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["result"].to_string())
        .collect();
    assert_eq!(
        results,
        ["\"stopped\"", "\"succeeded\""],
        "{}",
        history.stdout
    );
}

/// Kubernetes: crontap-run is the container's PID 1 when the pod is evicted.
#[test]
fn as_pid_1_a_stopped_run_is_reported_as_stopped() {
    let receiver = Receiver::start();
    let mut unshare = Command::new("unshare")
        // A user namespace of its own makes this work for any account, root or not.
        .args([
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
        ])
        .arg(env!("CARGO_BIN_EXE_crontap-run"))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "[ $PPID = 1 ] || echo not-pid-1; {}",
            graceful("TERM")
        ))
        .env("CRONTAP_HEARTBEAT_URL", receiver.url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux) runs");
    let mut stdout = std::io::BufReader::new(unshare.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    // crontap-run, PID 1 inside, is unshare's only child.
    let children = format!("/proc/{0}/task/{0}/children", unshare.id());
    let mut pid = String::new();
    assert!(eventually(Duration::from_secs(5), || {
        pid = std::fs::read_to_string(&children).unwrap_or_default();
        !pid.trim().is_empty()
    }));
    let pid: i32 = pid.split_whitespace().next().unwrap().parse().unwrap();
    kill(Pid::from_raw(pid), Signal::SIGTERM).unwrap();
    let out = unshare.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_no_secret(&stderr, "stderr");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("stopped by SIGTERM after "), "{msg}");
    assert!(msg.contains("(exit 0)"), "{msg}");
}
