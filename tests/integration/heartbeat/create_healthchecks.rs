//! `heartbeat create --service healthchecks`: the Management API v3 request as documented,
//! the URL file, and a second create that changes nothing.

use super::stand_in::healthchecks;
use super::{Keys, assert_clean, mode, run, url_in};

#[test]
fn creates_the_check_with_schedule_zone_and_grace_and_keeps_its_url_in_a_0600_file() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("made/here");
    let file = dir.join("backup.url");
    let out = run(
        &keys,
        &[
            "heartbeat",
            "create",
            "--service",
            "healthchecks",
            "--api-url",
            &api.url(),
            "--name",
            "backup",
            "--schedule",
            "0 3 * * *",
            "--tz",
            "Europe/Berlin",
            "--jitter",
            "90s",
            "--state-dir",
            tmp.path().to_str().unwrap(),
            "--url-file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let calls = api.api_calls();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    let call = &calls[0];
    assert_eq!(
        (call.method.as_str(), call.path.as_str()),
        ("POST", "/api/v3/checks/")
    );
    assert_eq!(call.header("X-Api-Key"), Some(keys.healthchecks.as_str()));
    assert_eq!(call.header("Content-Type"), Some("application/json"));
    let body = call.json();
    assert_eq!(body["name"], "backup");
    assert_eq!(body["schedule"], "0 3 * * *");
    assert_eq!(body["tz"], "Europe/Berlin");
    // No runs recorded: the jitter (90 s), rounded up to whole minutes, in seconds.
    assert_eq!(body["grace"], 120);
    assert_eq!(body["unique"], serde_json::json!(["name"]));
    assert!(body.get("timeout").is_none(), "{body}");

    let url = api.with_state(|s| s.checks[0].fields["ping_url"].as_str().unwrap().to_owned());
    assert_eq!(url_in(&file), url);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&tmp.path().join("made")), 0o700);
    assert!(
        out.stderr
            .contains("created heartbeat backup on Healthchecks"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    let uuid = api.with_state(|s| s.checks[0].uuid.clone());
    assert_clean(&out, &keys, &[url, uuid]);
    // Nothing but the file in its directory: the temporary file was renamed.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn a_second_create_finds_the_check_by_name_and_changes_nothing() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sync.url");
    let args = [
        "heartbeat",
        "create",
        "--service",
        "healthchecks",
        "--api-url",
        &api.url(),
        "--name",
        "sync",
        "--period",
        "1h",
        "--grace",
        "5m",
        "--url-file",
        file.to_str().unwrap(),
    ];
    assert_eq!(run(&keys, &args).code, 0);
    let before = std::fs::symlink_metadata(&file).unwrap();
    let first = url_in(&file);
    let again = run(&keys, &args);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stderr.contains("nothing changed"), "{}", again.stderr);
    let after = std::fs::symlink_metadata(&file).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        (before.ino(), before.mtime_nsec()),
        (after.ino(), after.mtime_nsec())
    );
    assert_eq!(url_in(&file), first);
    assert_eq!(api.with_state(|s| s.checks.len()), 1);
    // --period: a timeout in seconds instead of a schedule; --grace in seconds.
    for call in api.api_calls() {
        let body = call.json();
        assert_eq!(
            (body["timeout"].as_u64(), body["grace"].as_u64()),
            (Some(3600), Some(300))
        );
        assert!(
            body.get("schedule").is_none() && body.get("tz").is_none(),
            "{body}"
        );
    }
}

#[test]
fn a_file_without_the_url_gets_the_url_of_the_check_that_exists() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one.url"), tmp.path().join("two.url"));
    for file in [&one, &two] {
        let out = run(
            &keys,
            &[
                "heartbeat",
                "create",
                "--service",
                "healthchecks",
                "--api-url",
                &api.url(),
                "--name",
                "same",
                "--period",
                "1d",
                "--url-file",
                file.to_str().unwrap(),
            ],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    assert_eq!(api.with_state(|s| s.checks.len()), 1);
    assert_eq!(url_in(&one), url_in(&two));
}

#[test]
fn the_key_may_come_from_a_file() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let key_file = tmp.path().join("key");
    std::fs::write(&key_file, format!("{}\n", keys.healthchecks)).unwrap();
    let file = tmp.path().join("f.url");
    let out = crate::harness::Crontap::new()
        .env("HEALTHCHECKS_API_KEY_FILE", &key_file)
        .env("HEALTHCHECKS_API_KEY", "not-the-key")
        .args([
            "heartbeat",
            "create",
            "--service",
            "healthchecks",
            "--api-url",
            &api.url(),
            "--name",
            "f",
            "--period",
            "1h",
            "--url-file",
            file.to_str().unwrap(),
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        api.api_calls()[0].header("X-Api-Key"),
        Some(keys.healthchecks.as_str())
    );
    assert_clean(&out, &keys, &[]);
}
