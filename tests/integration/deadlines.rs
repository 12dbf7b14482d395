//! When several deadlines would end the command (a stop request's `--kill-after`, a
//! `--timeout`), the earliest one wins and a later one never postpones SIGKILL. The report
//! is named by the first cause that asked the command to end, and a stop that needed
//! SIGKILL says so: `stopped by SIGTERM after 2s (then SIGKILL after 10s)`.
//!
//! The jobs here ignore SIGTERM, so only SIGKILL ends them. The time bounds are the
//! deadlines' own, with generous margins for a loaded machine.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::harness::{Crontap, Receiver, Running, SECRET};

/// A job that ignores SIGTERM and says `ready`. It gives up by itself (exit 3) after at
/// least 30 s, so a crontap-run that never sends SIGKILL fails the test instead of hanging
/// it.
const DEAF: &str = "trap '' TERM; echo ready; i=0; \
                    while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; \
                    echo gave up >&2; exit 3";

/// Starts crontap-run reporting to `receiver` with `options`, running [`DEAF`], and waits
/// until the job is ready.
fn start_deaf(receiver: &Receiver, options: &[&str]) -> Running {
    let mut running = Crontap::with_url(&receiver.url())
        .args(options)
        .args(["--", "sh", "-c", DEAF])
        .start();
    running.wait_for("ready");
    running
}

/// The `msg` of the only request `receiver` got, which must be a fail ping.
fn fail_msg(receiver: &Receiver) -> String {
    let ping = receiver.only();
    assert!(
        ping.target.starts_with(&format!("/ping/{SECRET}/fail?")),
        "not a fail ping: {:?}",
        ping.target.replace(SECRET, "<SECRET>")
    );
    ping.msg().unwrap()
}

/// A stop request at once, `--kill-after 4s`, and a `--timeout 3s` that comes later: the
/// stop request's SIGKILL, 4 s after it, is the earliest deadline, and the timeout passing
/// on the way does not push it back to 3 s + 4 s. The stop request came first, so it names
/// the report.
#[test]
fn a_timeout_after_a_stop_request_does_not_postpone_sigkill() {
    let receiver = Receiver::start();
    let running = start_deaf(&receiver, &["--kill-after", "4s", "--timeout", "3s"]);
    running.signal(Signal::SIGTERM);
    let signalled = Instant::now();
    let out = running.finish();
    let took = signalled.elapsed();
    assert!(
        took >= Duration::from_millis(3500) && took <= Duration::from_secs(6),
        "crontap-run ended {took:?} after the stop request, not about 4s: {}",
        out.stderr
    );
    assert_eq!(out.code, 137, "{}", out.stderr);
    let msg = fail_msg(&receiver);
    assert!(msg.starts_with("stopped by SIGTERM after "), "{msg}");
    assert!(msg.contains("(then SIGKILL after 4s)"), "{msg}");
}

/// A stop request that the job ignores ends with SIGKILL after `--kill-after`: the report
/// says it was a stop that needed SIGKILL, with the time from the start to the stop
/// request, not a job that happened to be killed by SIGKILL.
#[test]
fn a_stop_that_needed_sigkill_says_so() {
    let receiver = Receiver::start();
    let running = start_deaf(&receiver, &["--kill-after", "1s"]);
    running.signal(Signal::SIGTERM);
    let signalled = Instant::now();
    let out = running.finish();
    let took = signalled.elapsed();
    assert!(
        took <= Duration::from_millis(3500),
        "crontap-run ended {took:?} after the stop request, not about 1s: {}",
        out.stderr
    );
    assert_eq!(out.code, 137, "{}", out.stderr);
    let msg = fail_msg(&receiver);
    assert!(!msg.starts_with("killed by SIGKILL"), "{msg}");
    // The job's own output may follow as the detail (`: ready`).
    let shape =
        regex::Regex::new(r"^stopped by SIGTERM after [0-9]+m?s \(then SIGKILL after 1s\)(: .*)?$")
            .unwrap();
    assert!(shape.is_match(&msg), "{msg}");
}

/// The timeout comes first (SIGTERM at 1 s, SIGKILL due 3 s later), then a stop request:
/// the stop request's own `--kill-after` would come later, so SIGKILL still comes about
/// 4 s after the start, and the timeout names the report.
#[test]
fn a_stop_request_after_a_timeout_does_not_postpone_sigkill() {
    let receiver = Receiver::start();
    let running = start_deaf(&receiver, &["-v", "--timeout", "1s", "--kill-after", "3s"]);
    running.wait_for_log("timeout reached");
    running.signal(Signal::SIGTERM);
    let out = running.finish();
    assert!(
        out.elapsed >= Duration::from_millis(3500) && out.elapsed < Duration::from_millis(5500),
        "crontap-run ended {:?} after the start, not about 4s: {}",
        out.elapsed,
        out.stderr
    );
    assert_eq!(out.code, 137, "{}", out.stderr);
    let msg = fail_msg(&receiver);
    assert!(
        msg.starts_with("timed out after 1s (sent SIGTERM, then SIGKILL after 3s)"),
        "{msg}"
    );
}

/// A lease that cannot be renewed (`CRONTAP_FAULT=lease-renewal`: it runs out 4 s after
/// the command starts, SIGTERM going out 3 s before that) and a `--timeout 2s` that fires
/// on the way, with `--kill-after 10s`: SIGKILL comes when the lease must be gone, at 4 s,
/// not 10 s after the timeout, so no other host can start the job beside this one. The
/// lease went first, so it names the report and the status is crontap-run's own, 125.
#[test]
fn a_timeout_after_a_lost_lease_does_not_postpone_sigkill() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap
        .args(["--no-overlap", "--job", "leased", "--state-dir"])
        .arg(dir.path())
        .args(["--timeout", "2s", "--kill-after", "10s"])
        .env("CRONTAP_FAULT", "lease-renewal");
    let mut running = crontap.args(["--", "sh", "-c", DEAF]).start();
    running.wait_for("ready");
    let out = running.finish();
    let took = started.elapsed();
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(
        took >= Duration::from_millis(3500) && took < Duration::from_secs(7),
        "ended {took:?} after the start, not about 4 s: {}",
        out.stderr
    );
    let msg = fail_msg(&receiver);
    assert!(
        msg.starts_with("lease lost after ") && msg.contains("(sent SIGTERM, then SIGKILL)"),
        "{msg}"
    );
}
