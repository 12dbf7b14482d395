//! Settings from the environment: a `CRONTAP_*` variable set to the empty string counts as
//! unset (Helm's `value: ""`, systemd's `Environment=NAME=`), on a run and in `check` and
//! `history`. The variables are listed from the command line's definition, so that one given
//! to an option later is covered without anyone adding it here.

use std::ffi::OsString;
use std::path::Path;

use crate::harness::{Crontap, Receiver, SECRET};

/// The variable the runs here read their URL from (`--url-env`), so that the URL's own
/// variables can be set empty like the others.
const URL_VAR: &str = "HEARTBEAT_FOR_TEST";

/// Variables options read, written out by hand: the list made from the definition must hold
/// at least these, so that it cannot lose one without a test failing.
const KNOWN: [&str; 12] = [
    "CRONTAP_HEARTBEAT_URL_FILE",
    "CRONTAP_TIMEOUT",
    "CRONTAP_JOB",
    "CRONTAP_STATE_DIR",
    "CRONTAP_STATE_URL",
    "CRONTAP_STATE_URL_FILE",
    "CRONTAP_STATE_LEASE",
    "CRONTAP_STATE_TIMEOUT",
    "CRONTAP_PERIOD_TZ",
    "CRONTAP_METRICS_DIR",
    "CRONTAP_METRICS_PUSH_URL",
    "CRONTAP_OUTPUT",
];

/// Variables crontap-run reads itself rather than through an option.
const READ_DIRECTLY: [&str; 3] = ["CRONTAP_HEARTBEAT_URL", "CRONTAP_LOG", "CRONTAP_FAULT"];

/// Variables never passed to the job, set or empty (DESIGN.md, "Child environment").
const KEPT_FROM_THE_JOB: [&str; 7] = [
    "CRONTAP_HEARTBEAT_URL",
    "CRONTAP_METRICS_PUSH_URL",
    "CRONTAP_HEARTBEAT_URL_FILE",
    "CRONTAP_STATE_URL",
    "CRONTAP_STATE_URL_FILE",
    "CRONTAP_JOB",
    URL_VAR,
];

/// Every variable that sets something: those of the options, then the others.
fn every_variable() -> Vec<String> {
    let options = crontap_run::cli::env_names();
    options
        .into_iter()
        .chain(READ_DIRECTLY.map(String::from))
        .collect()
}

/// The options that put the state in `dir`: `--state-dir`, or `--state-url file://` when
/// the variable under test is `CRONTAP_STATE_DIR`, which `--state-dir` would hide.
fn state_args(variable: &str, dir: &Path) -> Vec<OsString> {
    match variable {
        "CRONTAP_STATE_DIR" => {
            let mut url = OsString::from("file://");
            url.push(dir);
            vec!["--state-url".into(), url]
        }
        _ => vec!["--state-dir".into(), dir.into()],
    }
}

#[test]
fn the_list_of_variables_holds_every_known_one() {
    let names = crontap_run::cli::env_names();
    for known in KNOWN {
        assert!(
            names.iter().any(|n| n == known),
            "{known} missing from {names:?}"
        );
    }
    assert!(names.iter().all(|n| n.starts_with("CRONTAP_")), "{names:?}");
}

/// Each variable set empty, alone, on a run that fails with 7: it runs, exits 7, sends the
/// fail ping, and gets none of the variables that must not reach a job. Once without state
/// and once with a lock and a `--once-per` key, where the state variables are read.
#[test]
fn an_empty_variable_never_stops_a_run() {
    let receiver = Receiver::start();
    let mut failed = Vec::new();
    for variable in every_variable() {
        for stateful in [false, true] {
            if let Err(why) = run_with_empty(&receiver, &variable, stateful) {
                let with = if stateful { " (with state)" } else { "" };
                failed.push(format!("{variable}{with}: {why}"));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// One run with `variable` set to the empty string; what went wrong, if anything.
fn run_with_empty(receiver: &Receiver, variable: &str, stateful: bool) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("env");
    let before = receiver.received().len();
    let mut crontap = Crontap::new();
    crontap
        .args(["--url-env", URL_VAR])
        .env(URL_VAR, receiver.url())
        .env(variable, "");
    if stateful {
        crontap
            .args(state_args(variable, &dir.path().join("state")))
            .args(["--no-overlap", "--once-per", "1h"]);
    }
    let out = crontap.sh(&format!("env > '{}'; exit 7", env_file.display()));
    if out.code != 7 {
        return Err(format!("exit {}: {}", out.code, out.stderr.trim()));
    }
    let env = std::fs::read_to_string(&env_file).map_err(|_| "the command did not run")?;
    let passed = |name: &str| env.lines().any(|l| l.starts_with(&format!("{name}=")));
    if let Some(name) = KEPT_FROM_THE_JOB.into_iter().find(|name| passed(name)) {
        return Err(format!("{name} reached the job"));
    }
    match &receiver.received()[before..] {
        [ping] if ping.target.starts_with(&format!("/ping/{SECRET}/fail?")) => Ok(()),
        pings => Err(format!("expected one fail ping, got {pings:?}")),
    }
}

/// `check` reads the URL as a run does: an empty variable is no usage error there either.
#[test]
fn an_empty_variable_is_no_usage_error_for_check() {
    let receiver = Receiver::start();
    let mut failed = Vec::new();
    for variable in every_variable() {
        let before = receiver.received().len();
        let out = Crontap::new()
            .args(["check", "--url-env", URL_VAR])
            .env(URL_VAR, receiver.url())
            .env(&variable, "")
            .run();
        let pings = receiver.received().len() - before;
        if out.code != 0 || pings != 1 {
            let error = out.stderr.trim();
            failed.push(format!(
                "{variable}: exit {}, {pings} pings: {error}",
                out.code
            ));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// `history` reads the job and the state's place from the environment too.
#[test]
fn an_empty_variable_is_no_usage_error_for_history() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let recorded = Crontap::new()
        .arg("-q")
        .arg("--state-dir")
        .arg(&state)
        .args(["--job", "recorded", "--no-overlap"])
        .sh("exit 0");
    assert_eq!(recorded.code, 0, "{}", recorded.stderr);

    let mut failed = Vec::new();
    for variable in every_variable() {
        let out = Crontap::new()
            .arg("history")
            .args(state_args(&variable, &state))
            .arg("--json")
            .env(&variable, "")
            .run();
        if out.code != 0 || !out.stdout.contains("\"recorded\"") {
            let error = out.stderr.trim();
            failed.push(format!("{variable}: exit {}: {error}", out.code));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
