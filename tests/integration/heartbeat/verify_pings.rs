//! `heartbeat verify` (a ping through `check`, then Healthchecks read back) and
//! `heartbeat pings` (the service's record, oldest first).

use std::path::Path;

use super::stand_in::{CrontapAnswer, Healthchecks, crontap, healthchecks};
use super::{Keys, assert_clean, assert_one_line_error, run, url_in};

/// A check made on `api` through `heartbeat create`; its URL file.
fn made(keys: &Keys, api: &Healthchecks, dir: &Path) -> std::path::PathBuf {
    let file = dir.join("job.url");
    let out = run(
        keys,
        &[
            "heartbeat",
            "create",
            "--service",
            "healthchecks",
            "--api-url",
            &api.url(),
            "--name",
            "job",
            "--period",
            "1h",
            "--url-file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    file
}

fn hc(
    keys: &Keys,
    api: &Healthchecks,
    action: &str,
    file: &Path,
    extra: &[&str],
) -> crate::harness::Output {
    let base = api.url();
    let mut args = vec![
        "heartbeat",
        action,
        "--service",
        "healthchecks",
        "--api-url",
        &base,
        "--url-file",
        file.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(keys, &args)
}

#[test]
fn verify_pings_and_reads_back_that_healthchecks_recorded_it() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = made(&keys, &api, tmp.path());
    let out = hc(&keys, &api, "verify", &file, &[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let uuid = api.with_state(|s| s.checks[0].uuid.clone());
    let pings: Vec<_> = api
        .seen()
        .into_iter()
        .filter(|s| s.path.starts_with("/ping/"))
        .collect();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    assert!(pings[0].path.starts_with(&format!("/ping/{uuid}")));
    // Read before the ping and after it.
    let reads: Vec<_> = api
        .api_calls()
        .into_iter()
        .filter(|c| c.method == "GET" && c.path == format!("/api/v3/checks/{uuid}"))
        .collect();
    assert_eq!(reads.len(), 2, "{reads:#?}");
    assert!(
        reads
            .iter()
            .all(|r| r.header("X-Api-Key") == Some(keys.healthchecks.as_str()))
    );
    assert!(out.stdout.contains("HTTP:    200 OK"), "{}", out.stdout);
    assert!(
        out.stdout.contains("recorded: yes: status up"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("1 pings"), "{}", out.stdout);
    assert_eq!(api.with_state(|s| s.checks[0].fields["n_pings"].clone()), 1);
    assert_clean(&out, &keys, &[url_in(&file), uuid]);
}

#[test]
fn verify_fails_when_the_ping_was_answered_but_not_recorded() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = made(&keys, &api, tmp.path());
    api.with_state(|s| s.drop_pings = true);
    let out = hc(&keys, &api, "verify", &file, &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("recorded: FAILED"), "{}", out.stdout);
    assert_clean(&out, &keys, &[url_in(&file)]);
}

#[test]
fn verify_on_crontap_pings_and_says_it_cannot_read_back() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::PingUrl);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("c.url");
    let create = run(
        &keys,
        &[
            "heartbeat",
            "create",
            "--api-url",
            &api.url(),
            "--name",
            "c",
            "--period",
            "1h",
            "--url-file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(create.code, 0, "{}", create.stderr);
    // No key needed to ping.
    let out = crate::harness::Crontap::new()
        .args(["heartbeat", "verify", "--url-file", file.to_str().unwrap()])
        .run();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(api.with_state(|s| s.made[0].1), 1, "one ping received");
    assert!(
        out.stdout.contains("Crontap's REST API documents no way"),
        "{}",
        out.stdout
    );
    assert_clean(&out, &keys, &[url_in(&file)]);
    let pings = run(
        &keys,
        &["heartbeat", "pings", "--url-file", file.to_str().unwrap()],
    );
    assert_one_line_error(&pings);
    assert!(
        pings.stderr.contains("documents no way to read"),
        "{}",
        pings.stderr
    );
}

#[test]
fn pings_lists_what_healthchecks_recorded_oldest_first() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = made(&keys, &api, tmp.path());
    let url = url_in(&file);
    // A start, a success and a failure with exit status 3, as a run of each would send.
    for endpoint in ["start", "0", "3"] {
        let out = crate::harness::Crontap::new()
            .args([
                "check",
                "--protocol",
                "healthchecks",
                "--url-file",
                file.to_str().unwrap(),
            ])
            .run();
        assert_eq!(out.code, 0);
        api.with_state(|s| {
            let last = s.checks[0].pings.last_mut().unwrap();
            *last = match endpoint {
                "start" => ("start".into(), None),
                "0" => ("success".into(), Some(0)),
                _ => ("fail".into(), Some(3)),
            };
        });
    }
    let out = hc(&keys, &api, "pings", &file, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: Vec<&str> = out.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{}", out.stdout);
    assert!(
        rows[0].contains("start") && rows[0].contains("10:00"),
        "{}",
        out.stdout
    );
    assert!(
        rows[1].contains("success") && rows[1].contains(" 0 "),
        "{}",
        out.stdout
    );
    assert!(
        rows[2].contains("fail") && rows[2].contains(" 3 "),
        "{}",
        out.stdout
    );
    assert!(
        rows.iter()
            .all(|r| r.contains("1.500s") && r.contains("127.0.0.1"))
    );
    let json = hc(&keys, &api, "pings", &file, &["--json"]);
    let list: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(list[0]["kind"], "start");
    assert_eq!(list[2]["exitStatus"], 3);
    assert_eq!(list[2]["sender"], "127.0.0.1");
    assert_eq!(list[1]["durationMs"], 1500);
    let other_day = hc(
        &keys,
        &api,
        "pings",
        &file,
        &["--day", "2026-12-08", "--json"],
    );
    assert_eq!(other_day.stdout.trim(), "[]");
    let uuid = api.with_state(|s| s.checks[0].uuid.clone());
    for output in [&out, &json, &other_day] {
        assert_clean(output, &keys, &[url.clone(), uuid.clone()]);
    }
}
