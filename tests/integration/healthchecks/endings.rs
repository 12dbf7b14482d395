//! Every way a run can end, in the healthchecks protocol: which end endpoint it gets
//! (`/<status>` when the command's own status is known, `/fail` otherwise), and whether a
//! start went out (only for a command that was spawned). The same ends as
//! tests/integration/ends.rs, some brought about with `CRONTAP_FAULT`.

use std::path::Path;

use nix::sys::signal::Signal;

use super::server::Healthchecks;
use super::{SLUG, assert_end};
use crate::harness::{Output, SECRET};

const JOB: &str = "hc-ends";

#[derive(Clone, Copy)]
enum Act {
    Wait,
    /// SIGTERM to crontap-run once its stderr shows this (it runs with `-v`).
    TermAfterLog(&'static str),
}

struct Row {
    end: &'static str,
    options: &'static [&'static str],
    fault: Option<&'static str>,
    command: &'static [&'static str],
    prepare: fn(&Path),
    act: Act,
    exit: i32,
    /// The end endpoint: `fail` or the status.
    endpoint: &'static str,
    /// Whether a start must (`Some(true)`) or must not (`Some(false)`) have been sent.
    start: Option<bool>,
    /// How the body's first line starts.
    summary: &'static str,
}

fn nothing(_: &Path) {}

/// The fencing counters' directory can be written by every user: crontap-run's own error
/// before the command runs.
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
    let plain = Row {
        end: "",
        options: &[],
        fault: None,
        command: &["true"],
        prepare: nothing,
        act: Act::Wait,
        exit: 0,
        endpoint: "0",
        start: Some(true),
        summary: "exit 0 after ",
    };
    vec![
        Row {
            end: "stopped before the command started",
            options: &["--jitter", "1h", "-v"],
            act: Act::TermAfterLog("--jitter: waiting"),
            exit: 143,
            endpoint: "fail",
            start: Some(false),
            summary: "not run: stopped by SIGTERM",
            ..plain
        },
        Row {
            end: "the state store is unusable",
            prepare: store_unusable,
            exit: 125,
            endpoint: "fail",
            start: Some(false),
            summary: "not run: ",
            ..plain
        },
        Row {
            end: "the first attempt cannot be set up",
            fault: Some("first-attempt-setup"),
            exit: 125,
            endpoint: "fail",
            start: Some(false),
            summary: "not run: fault injected for a test",
            ..plain
        },
        Row {
            end: "a panic before the command started",
            fault: Some("admission"),
            exit: 125,
            endpoint: "fail",
            start: Some(false),
            summary: "not run: crontap-run failed (internal error)",
            ..plain
        },
        Row {
            end: "a later attempt cannot be set up",
            options: &["--retries", "1", "--retry-delay", "10ms"],
            fault: Some("attempt-setup"),
            command: &["sh", "-c", "exit 3"],
            exit: 3,
            endpoint: "3",
            summary: "exit 3 after ",
            ..plain
        },
        Row {
            end: "finished, succeeded",
            ..plain
        },
        Row {
            end: "timed out",
            options: &["--timeout", "1s"],
            command: &["sleep", "30"],
            exit: 124,
            endpoint: "124",
            summary: "timed out after 1s",
            ..plain
        },
        Row {
            end: "the lease was lost",
            fault: Some("lease-renewal"),
            command: &["sleep", "30"],
            exit: 125,
            endpoint: "125",
            summary: "lease lost after ",
            ..plain
        },
        Row {
            end: "a panic while the command runs",
            fault: Some("command-running"),
            command: &["sleep", "30"],
            exit: 125,
            endpoint: "fail",
            start: None,
            summary: "crontap-run failed while the command ran (internal error)",
            ..plain
        },
        Row {
            end: "a panic while waiting to retry",
            options: &["--retries", "1", "--retry-delay", "10ms"],
            fault: Some("retry-wait"),
            command: &["sh", "-c", "exit 3"],
            exit: 3,
            endpoint: "3",
            summary: "exit 3 after ",
            ..plain
        },
        Row {
            end: "a panic while building the summary",
            fault: Some("summary"),
            command: &["sh", "-c", "exit 4"],
            exit: 4,
            endpoint: "4",
            summary: "exit 4 after ",
            ..plain
        },
    ]
}

fn run(row: &Row, url: &str, state: &Path) -> Output {
    let mut crontap = super::healthchecks(url);
    crontap
        .args(row.options)
        .args(["--no-overlap", "--job", JOB, "--state-dir"])
        .arg(state)
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
    }
}

#[test]
fn every_end_gets_its_endpoint_and_a_start_only_if_the_command_ran() {
    crate::harness::default_signals().unwrap();
    let mut wrong = Vec::new();
    for row in rows() {
        let end = row.end;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        (row.prepare)(&state);
        let hc = Healthchecks::start();
        let url = hc.slug_url(SECRET, SLUG);
        let out = run(&row, &url, &state);
        let pings = hc.pings();
        let check = || -> Result<(), String> {
            if out.code != row.exit {
                return Err(format!("exit {} (stderr {:?})", out.code, out.stderr));
            }
            let ends = hc.ends();
            let [ping] = ends.as_slice() else {
                return Err(format!("{} end pings", ends.len()));
            };
            if ping.path != super::path(row.endpoint) {
                return Err(format!("end {} {}", ping.method, ping.path));
            }
            assert_end(ping, row.endpoint);
            let starts = hc.starts().len();
            match row.start {
                Some(true) if starts != 1 => return Err(format!("{starts} starts, not 1")),
                Some(false) if starts != 0 => return Err(format!("{starts} starts, not 0")),
                _ if starts > 1 => return Err(format!("{starts} starts")),
                _ => {}
            }
            let summary = ping.summary();
            if !summary.starts_with(row.summary) {
                return Err(format!("summary {summary:?}, not {:?}…", row.summary));
            }
            if let Some(start) = hc.starts().first()
                && start.rid != ping.rid
            {
                return Err("the start's rid is not the end's".into());
            }
            Ok(())
        };
        if let Err(why) = check() {
            wrong.push(format!("{end}: {why}; pings {pings:#?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
