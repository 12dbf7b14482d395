//! The API keys never reach a job: a run removes every variable that holds or names one
//! from the job's environment, as it does the heartbeat URL's.

use crate::harness::{Crontap, Receiver};

/// Every variable `heartbeat` reads a key from (DESIGN.md, "Creating heartbeats").
const KEY_VARIABLES: [&str; 6] = [
    "CRONTAP_CLIENT_ID",
    "CRONTAP_CLIENT_ID_FILE",
    "CRONTAP_API_KEY",
    "CRONTAP_API_KEY_FILE",
    "HEALTHCHECKS_API_KEY",
    "HEALTHCHECKS_API_KEY_FILE",
];

#[test]
fn a_job_never_sees_the_api_keys() {
    let receiver = Receiver::start();
    let mut run = Crontap::with_url(&receiver.url());
    for name in KEY_VARIABLES {
        run.env(name, format!("value-of-{name}"));
    }
    let out = run.args(["--", "env"]).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("PATH="), "{}", out.stdout);
    for name in KEY_VARIABLES {
        assert!(
            !out.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{name}="))),
            "{name} reached the job"
        );
    }
}

/// With every log line on (`CRONTAP_LOG=trace`), create, verify and pings print no key and
/// no ping URL.
#[test]
fn trace_logging_prints_no_key_and_no_url() {
    let keys = super::Keys::new();
    let api = super::stand_in::healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.url");
    let file = file.to_str().unwrap();
    let base = api.url();
    let common = [
        "--service",
        "healthchecks",
        "--api-url",
        &base,
        "--url-file",
        file,
    ];
    let actions: [&[&str]; 3] = [
        &["create", "--name", "t", "--period", "1h"],
        &["verify"],
        &["pings", "--json"],
    ];
    for action in actions {
        let out = Crontap::new()
            .env("CRONTAP_LOG", "trace")
            .env("HEALTHCHECKS_API_KEY", &keys.healthchecks)
            .arg("heartbeat")
            .args(&action[..1])
            .args(common)
            .args(&action[1..])
            .run();
        assert_eq!(out.code, 0, "{action:?}: {}", out.stderr);
        let url = super::url_in(std::path::Path::new(file));
        let uuid = api.with_state(|s| s.checks[0].uuid.clone());
        super::assert_clean(&out, &keys, &[url, uuid]);
    }
}
