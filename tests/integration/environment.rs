//! The environment the command sees.

use crate::harness::{Crontap, Receiver};

fn env_lines(stdout: &str) -> Vec<&str> {
    stdout.lines().collect()
}

#[test]
fn child_gets_run_id_and_attempt_and_no_url_variables() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("url");
    std::fs::write(&file, receiver.url()).unwrap();

    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_HEARTBEAT_URL_FILE", &file)
        .args(["--", "env"])
        .run();
    assert_eq!(out.code, 0);
    let lines = env_lines(&out.stdout);
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("CRONTAP_HEARTBEAT_URL=")),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("CRONTAP_HEARTBEAT_URL_FILE=")),
        "{lines:?}"
    );
    assert!(lines.contains(&"CRONTAP_ATTEMPT=1"), "{lines:?}");
    let run_id = lines
        .iter()
        .find_map(|l| l.strip_prefix("CRONTAP_RUN_ID="))
        .expect("CRONTAP_RUN_ID");
    assert_eq!(run_id.len(), 36, "{run_id}");

    let again = Crontap::with_url(&receiver.url()).args(["--", "env"]).run();
    let second = env_lines(&again.stdout)
        .into_iter()
        .find_map(|l| l.strip_prefix("CRONTAP_RUN_ID="))
        .unwrap();
    assert_ne!(run_id, second, "each run gets a fresh id");
}

#[test]
fn other_variables_are_inherited() {
    let out = Crontap::new()
        .arg("-q")
        .env("IMPORT_MODE", "full")
        .args(["--", "env"])
        .run();
    assert!(out.stdout.lines().any(|l| l == "IMPORT_MODE=full"));
}
