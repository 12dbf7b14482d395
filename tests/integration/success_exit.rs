//! `--success-exit`: statuses that count as success for the ping, the state, history and
//! metrics, while crontap-run still exits with the command's own status.

use serde_json::Value;

use crate::harness::{Crontap, Receiver, SECRET};
use crate::state::stateful;

/// rsync's 24 ("some files vanished") listed as success: a success ping, a succeeded key
/// (the next run of the period is skipped), a succeeded history line and metrics, and the
/// exit status 24.
#[test]
fn a_listed_status_is_a_success_everywhere_but_the_exit_status() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    let run = || {
        stateful(&receiver, &state)
            .arg("--metrics-dir")
            .arg(&metrics)
            .args([
                "--success-exit",
                "0,24",
                "--once-per",
                "1d",
                "--job",
                "sync",
            ])
            .sh("exit 24")
    };
    let out = run();
    assert_eq!(out.code, 24, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));

    let again = run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains("already succeeded"),
        "{}",
        again.stderr
    );
    assert_eq!(receiver.received().len(), 1, "a skipped run sends nothing");

    let history = Crontap::new()
        .arg("history")
        .arg("--state-dir")
        .arg(&state)
        .arg("--json")
        .run();
    let first: Value = serde_json::from_str(history.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["result"], "succeeded");
    assert_eq!(first["exit"], 24);

    let text = std::fs::read_to_string(metrics.join("crontap-run-sync.prom")).unwrap();
    assert!(
        text.contains("crontap_run_runs_total{job=\"sync\",result=\"succeeded\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("crontap_run_last_exit_code{job=\"sync\"} 24\n"),
        "{text}"
    );
}

/// A status that is not listed is still a failure; 0 is always a success.
#[test]
fn other_statuses_still_fail_and_zero_still_succeeds() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--success-exit", "24"])
        .sh("exit 23");
    assert_eq!(out.code, 23);
    assert!(receiver.only().msg().unwrap().starts_with("exit 23 after "));

    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--success-exit", "24"])
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

/// A status listed as success is not retried, though --retries would retry any failure.
#[test]
fn a_listed_status_is_not_retried() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args([
            "--success-exit",
            "24",
            "--retries",
            "3",
            "--retry-delay",
            "1s",
        ])
        .sh("echo \"attempt $CRONTAP_ATTEMPT\"; exit 24");
    assert_eq!(out.code, 24, "{}", out.stderr);
    assert_eq!(out.stdout, "attempt 1\n");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

/// Validation as for --retry-on-exit: statuses 0 to 255, never 126 or 127, and never a
/// status --retry-on-exit lists too.
#[test]
fn bad_lists_are_refused() {
    for (args, expect) in [
        (&["--success-exit", "256"][..], "--success-exit"),
        (&["--success-exit", "0,x"][..], "--success-exit"),
        (
            &["--success-exit", "127"][..],
            "--success-exit cannot list 126 or 127",
        ),
        (
            &[
                "--success-exit",
                "24",
                "--retries",
                "1",
                "--retry-on-exit",
                "1,24",
            ][..],
            "--success-exit and --retry-on-exit both list 24",
        ),
    ] {
        let out = Crontap::new().args(args).args(["--", "true"]).run();
        assert_eq!(out.code, 125, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(expect), "{args:?}: {}", out.stderr);
    }
}
