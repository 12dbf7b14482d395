//! Every way a run can end does all that a run's end does: the end report (or none), the
//! history line and the metrics file agree with the exit status. One table, one row per
//! end (ARCHITECTURE.md has the same table), each run for real against the receiver, then
//! read back with `crontap-run history --json` and from the `.prom` file.
//!
//! Every row uses state (`--no-overlap` or `--once-per`), so every row leaves a history
//! line, and `--metrics-dir`, so every row counts in the metrics.

use std::path::Path;

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::harness::{Crontap, Output, Receiver, SECRET};

const JOB: &str = "ends";

/// What the receiver must have got from the row's run.
#[derive(Debug, Clone, Copy)]
enum Ping {
    None,
    Success,
    /// A failure whose summary starts with this.
    Failure(&'static str),
}

/// How the test acts on the run while it goes.
#[derive(Debug, Clone, Copy)]
enum Act {
    /// Nothing: the run ends by itself.
    Wait,
    /// SIGTERM to crontap-run once its stderr shows this (it runs with `-v`).
    TermAfterLog(&'static str),
    /// SIGTERM to crontap-run once the job prints `ready`.
    TermWhenReady,
}

struct Row {
    end: &'static str,
    /// Options before `--` (the state and metrics options are added).
    options: &'static [&'static str],
    /// `CRONTAP_FAULT`, for the ends only a fault can bring about.
    fault: Option<&'static str>,
    /// The command after `--`.
    command: &'static [&'static str],
    /// Done to the state directory first.
    prepare: fn(&Path),
    act: Act,
    exit: i32,
    ping: Ping,
    /// `result` and `exit` of the history line (`None`: null).
    history: (&'static str, Option<i64>),
    /// The `result` label of `crontap_run_runs_total` the run adds to.
    counted: &'static str,
}

const GRACEFUL: &str =
    "trap 'echo cleaning up >&2; exit 0' TERM; echo ready; while :; do sleep 0.05; done";

fn nothing(_: &Path) {}

/// A successful run of the same `--once-per` period first: the row's run is not due.
fn period_done(state: &Path) {
    let out = Crontap::new()
        .args(["--once-per", "1d", "--job", JOB, "--state-dir"])
        .arg(state)
        .args(["--", "true"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// The fencing counters' directory can be written by every user, so crontap-run does not
/// trust it: the store cannot claim anything, while the history directory beside it works.
fn store_unusable(state: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(state.join("fencing")).unwrap();
    std::fs::set_permissions(
        state.join("fencing"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
}

fn rows() -> Vec<Row> {
    let no_overlap: &[&str] = &["--no-overlap"];
    vec![
        Row {
            end: "skipped",
            options: &["--once-per", "1d"],
            fault: None,
            command: &["true"],
            prepare: period_done,
            act: Act::Wait,
            exit: 0,
            ping: Ping::None,
            history: ("skipped", None),
            counted: "skipped",
        },
        Row {
            end: "stopped before the command started",
            options: &["--no-overlap", "--jitter", "1h", "-v"],
            fault: None,
            command: &["true"],
            prepare: nothing,
            act: Act::TermAfterLog("--jitter: waiting"),
            exit: 143,
            ping: Ping::Failure("not run: stopped by SIGTERM"),
            history: ("stopped", Some(143)),
            counted: "failed",
        },
        Row {
            end: "the state store is unusable",
            options: no_overlap,
            fault: None,
            command: &["true"],
            prepare: store_unusable,
            act: Act::Wait,
            exit: 125,
            ping: Ping::Failure("not run: "),
            history: ("failed", Some(125)),
            counted: "failed",
        },
        Row {
            end: "the command could not start",
            options: no_overlap,
            fault: None,
            command: &["/nonexistent/job"],
            prepare: nothing,
            act: Act::Wait,
            exit: 127,
            ping: Ping::Failure("could not start /nonexistent/job: No such file"),
            history: ("failed", Some(127)),
            counted: "failed",
        },
        Row {
            end: "the first attempt cannot be set up",
            options: no_overlap,
            fault: Some("first-attempt-setup"),
            command: &["true"],
            prepare: nothing,
            act: Act::Wait,
            exit: 125,
            ping: Ping::Failure("not run: fault injected for a test"),
            history: ("failed", Some(125)),
            counted: "failed",
        },
        Row {
            end: "a later attempt cannot be set up",
            options: &["--no-overlap", "--retries", "1", "--retry-delay", "10ms"],
            fault: Some("attempt-setup"),
            command: &["sh", "-c", "exit 3"],
            prepare: nothing,
            act: Act::Wait,
            exit: 3,
            ping: Ping::Failure("exit 3 after "),
            history: ("failed", Some(3)),
            counted: "failed",
        },
        Row {
            end: "finished, succeeded",
            options: no_overlap,
            fault: None,
            command: &["true"],
            prepare: nothing,
            act: Act::Wait,
            exit: 0,
            ping: Ping::Success,
            history: ("succeeded", Some(0)),
            counted: "succeeded",
        },
        Row {
            end: "finished, failed",
            options: no_overlap,
            fault: None,
            command: &["sh", "-c", "echo broken >&2; exit 3"],
            prepare: nothing,
            act: Act::Wait,
            exit: 3,
            ping: Ping::Failure("exit 3 after "),
            history: ("failed", Some(3)),
            counted: "failed",
        },
        Row {
            end: "timed out",
            options: &["--no-overlap", "--timeout", "1s"],
            fault: None,
            command: &["sleep", "30"],
            prepare: nothing,
            act: Act::Wait,
            exit: 124,
            ping: Ping::Failure("timed out after 1s (sent SIGTERM)"),
            history: ("failed", Some(124)),
            counted: "failed",
        },
        Row {
            end: "stopped",
            options: no_overlap,
            fault: None,
            command: &["sh", "-c", GRACEFUL],
            prepare: nothing,
            act: Act::TermWhenReady,
            exit: 0,
            ping: Ping::Failure("stopped by SIGTERM after "),
            history: ("stopped", Some(0)),
            counted: "failed",
        },
        Row {
            end: "the lease was lost",
            options: no_overlap,
            fault: Some("lease-renewal"),
            command: &["sleep", "30"],
            prepare: nothing,
            act: Act::Wait,
            exit: 125,
            ping: Ping::Failure("lease lost after "),
            history: ("failed", Some(125)),
            counted: "failed",
        },
        Row {
            end: "a panic before the command started",
            options: no_overlap,
            fault: Some("admission"),
            command: &["true"],
            prepare: nothing,
            act: Act::Wait,
            exit: 125,
            ping: Ping::Failure("not run: crontap-run failed (internal error)"),
            history: ("failed", Some(125)),
            counted: "failed",
        },
        Row {
            end: "a panic while the command runs",
            options: no_overlap,
            fault: Some("command-running"),
            command: &["sleep", "30"],
            prepare: nothing,
            act: Act::Wait,
            exit: 125,
            ping: Ping::Failure("crontap-run failed while the command ran (internal error)"),
            history: ("failed", Some(125)),
            counted: "failed",
        },
        Row {
            end: "a panic while waiting to retry",
            options: &["--no-overlap", "--retries", "1", "--retry-delay", "10ms"],
            fault: Some("retry-wait"),
            command: &["sh", "-c", "exit 3"],
            prepare: nothing,
            act: Act::Wait,
            exit: 3,
            ping: Ping::Failure("exit 3 after "),
            history: ("failed", Some(3)),
            counted: "failed",
        },
        Row {
            end: "a panic while building the summary",
            options: no_overlap,
            fault: Some("summary"),
            command: &["sh", "-c", "exit 4"],
            prepare: nothing,
            act: Act::Wait,
            exit: 4,
            ping: Ping::Failure("exit 4 after "),
            history: ("failed", Some(4)),
            counted: "failed",
        },
    ]
}

/// Runs `row` with its state in `state` and its metrics in `metrics`.
fn run(row: &Row, receiver: &Receiver, state: &Path, metrics: &Path) -> Output {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap
        .args(row.options)
        .args(["--job", JOB, "--state-dir"])
        .arg(state)
        .arg("--metrics-dir")
        .arg(metrics)
        .arg("--")
        .args(row.command);
    if let Some(point) = row.fault {
        crontap.env("CRONTAP_FAULT", point);
    }
    match row.act {
        Act::Wait => crontap.run(),
        Act::TermAfterLog(line) => {
            let running = crontap.start();
            running.wait_for_log(line);
            running.signal(Signal::SIGTERM);
            running.finish()
        }
        Act::TermWhenReady => {
            let mut running = crontap.start();
            running.wait_for("ready");
            running.signal(Signal::SIGTERM);
            running.finish()
        }
    }
}

/// The last history line of the job.
fn last_history(state: &Path) -> Value {
    let out = Crontap::new()
        .args(["history", "--json", "--job", JOB, "--state-dir"])
        .arg(state)
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out.stdout.lines().last().expect("a history line");
    serde_json::from_str(line).unwrap()
}

/// `crontap_run_runs_total` for each result label.
fn counts(metrics: &Path) -> Vec<(String, f64)> {
    let file = metrics.join(format!("crontap-run-{JOB}.prom"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}: {file:?}"));
    let prefix = format!("crontap_run_runs_total{{job=\"{JOB}\",result=\"");
    text.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|rest| {
            let (label, value) = rest.split_once("\"} ").unwrap();
            (label.to_owned(), value.parse().unwrap())
        })
        .collect()
}

#[test]
fn every_end_reports_records_and_counts_once() {
    crate::harness::default_signals().unwrap();
    for row in rows() {
        let end = row.end;
        let dir = tempfile::tempdir().unwrap();
        let (state, metrics) = (dir.path().join("state"), dir.path().join("metrics"));
        std::fs::create_dir(&metrics).unwrap();
        (row.prepare)(&state);
        let receiver = Receiver::start();
        let out = run(&row, &receiver, &state, &metrics);

        assert_eq!(
            out.code, row.exit,
            "{end}: exit status; stderr: {}",
            out.stderr
        );
        let received = receiver.received();
        match row.ping {
            Ping::None => assert!(received.is_empty(), "{end}: {received:?}"),
            Ping::Success => {
                assert_eq!(received.len(), 1, "{end}: {received:?}");
                assert_eq!(received[0].target, format!("/ping/{SECRET}"), "{end}");
            }
            Ping::Failure(head) => {
                assert_eq!(received.len(), 1, "{end}: {received:?}");
                let fail = format!("/ping/{SECRET}/fail?");
                assert!(received[0].target.starts_with(&fail), "{end}: {received:?}");
                let msg = received[0].msg().unwrap();
                assert!(
                    msg.starts_with(head),
                    "{end}: {msg:?} should start {head:?}"
                );
            }
        }

        let line = last_history(&state);
        let (result, exit) = row.history;
        assert_eq!(line["result"], result, "{end}: {line}");
        assert_eq!(line["exit"].as_i64(), exit, "{end}: {line}");
        let sent = match row.ping {
            Ping::None => "not sent",
            _ => "sent",
        };
        assert_eq!(line["ping"], sent, "{end}: {line}");

        // The skipped row's first run had no --metrics-dir: only the row's run counts.
        let mut found = counts(&metrics);
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let expected: Vec<(String, f64)> = ["failed", "skipped", "succeeded"]
            .iter()
            .map(|label| {
                (
                    label.to_string(),
                    f64::from(u8::from(*label == row.counted)),
                )
            })
            .collect();
        assert_eq!(found, expected, "{end}: runs_total");
    }
}

/// A panic after the end report (while writing history or metrics) sends no second report:
/// exactly one ping per run, the command's status stands, and the steps after the one
/// that failed are still done.
#[test]
fn a_panic_after_the_report_sends_no_second_one() {
    for fault in ["history", "metrics"] {
        for (script, exit, success) in [("true", 0, true), ("exit 3", 3, false)] {
            let dir = tempfile::tempdir().unwrap();
            let (state, metrics) = (dir.path().join("state"), dir.path().join("metrics"));
            std::fs::create_dir(&metrics).unwrap();
            let receiver = Receiver::start();
            let out = Crontap::with_url(&receiver.url())
                .args(["--no-overlap", "--job", JOB, "--state-dir"])
                .arg(&state)
                .arg("--metrics-dir")
                .arg(&metrics)
                .env("CRONTAP_FAULT", fault)
                .sh(script);
            let case = format!("panic in {fault}, job `{script}`");
            assert_eq!(out.code, exit, "{case}: {}", out.stderr);
            assert!(
                out.stderr.contains("internal error") && out.stderr.contains("status stands"),
                "{case}: {}",
                out.stderr
            );
            let received = receiver.received();
            assert_eq!(received.len(), 1, "{case}: {received:#?}");
            assert_eq!(
                received[0].target == format!("/ping/{SECRET}"),
                success,
                "{case}: {received:?}"
            );
            let history_written = state.join("history").join(format!("{JOB}.jsonl")).exists();
            let metrics_written = metrics.join(format!("crontap-run-{JOB}.prom")).exists();
            // The step that panicked is not tried again; the one after it is still done.
            assert_eq!(history_written, fault != "history", "{case}");
            assert_eq!(metrics_written, fault != "metrics", "{case}");
        }
    }
}

/// A panic on a thread other than the run's own (here the state admission's, while the run
/// waits for it within `--state-timeout`) ends the run once: the panic guard's report is the
/// only one, though the run's thread goes on meanwhile and reaches an end of its own (the
/// store did not answer) while the guard's report is still on its way.
#[test]
fn a_panic_on_another_thread_ends_the_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The guard's report hangs for its whole --ping-timeout, longer than --state-timeout.
    let receiver = Receiver::scripted(&[crate::harness::Reply::Hang]);
    let out = Crontap::with_url(&receiver.url())
        .args(["--no-overlap", "--job", JOB, "--state-timeout", "1s"])
        .args(["--ping-timeout", "3s", "--ping-retries", "0", "--state-dir"])
        .arg(&state)
        .env("CRONTAP_FAULT", "admission-thread")
        .args(["--", "true"])
        .run();
    assert_eq!(out.code, 125, "{}", out.stderr);
    let received = receiver.received();
    assert_eq!(received.len(), 1, "{received:#?}");
    let msg = received[0].msg().unwrap();
    assert_eq!(msg, "not run: crontap-run failed (internal error)");
    assert!(
        !out.stderr.contains("did not answer"),
        "the run's thread went on to an end of its own: {}",
        out.stderr
    );
    let line = last_history(&state);
    assert_eq!(line["result"], "failed", "{line}");
    assert_eq!(line["exit"], 125, "{line}");
}
