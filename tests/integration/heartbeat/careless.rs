//! `plan --crontab FILE --create` given what a careless operator gives it: many lines with
//! cronie's `~` fields (planned in moments, and made on Healthchecks, whose cron parser
//! does not read `~`, with their measured period), a file saved with Windows line endings
//! (one warning), the same line twice (two heartbeats, each made once), a NUL byte, a file
//! that cannot be read, and nothing on standard input.

use std::path::Path;

use super::stand_in::healthchecks;
use super::{Keys, assert_clean, assert_one_line_error};
use crate::harness::{Crontap, Output};

/// `plan --crontab FILE --create` on Healthchecks at `api`, URL files in `dir/urls`.
fn plan(keys: &Keys, api: &str, dir: &Path, crontab: &[u8]) -> Output {
    let file = dir.join("crontab");
    std::fs::write(&file, crontab).unwrap();
    let mut c = Crontap::new();
    c.env("HEALTHCHECKS_API_KEY", &keys.healthchecks)
        .args(["plan", "--crontab"])
        .arg(&file)
        .args(["--create", "--service", "healthchecks", "--api-url", api])
        .args([
            "--tz",
            "UTC",
            "--bin",
            "/usr/local/bin/crontap-run",
            "--url-dir",
        ])
        .arg(dir.join("urls"))
        .arg("--state-dir")
        .arg(dir.join("state"));
    let out = c.run();
    assert_clean(&out, keys, &[]);
    out
}

#[test]
fn many_lines_with_random_fields_are_made_with_their_period() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    // Each `~ 3 * * *` stands for 60 schedules, each walked over the planning horizon; the
    // plan measures the text once for all the lines (a second or more a line otherwise, in a
    // debug build: its cost is bench/plan.py's to measure, not this test's).
    let crontab: String = (0..100)
        .map(|i| format!("~ 3 * * * /usr/bin/job{i}\n"))
        .collect();
    let out = plan(&keys, &api.url(), tmp.path(), crontab.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let calls = api.api_calls();
    assert_eq!(calls.len(), 100);
    for call in &calls {
        let body = call.json();
        assert!(body.get("schedule").is_none(), "{body}");
        assert_eq!(body["timeout"], 86_400, "{body}");
    }
    assert_eq!(
        std::fs::read_dir(tmp.path().join("urls")).unwrap().count(),
        100
    );
}

#[test]
fn windows_line_endings_are_one_warning() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let crontab = "# made on Windows\r\n0 3 * * * /usr/bin/a\r\n5 3 * * * /usr/bin/b --x\r\n";
    let out = plan(&keys, &api.url(), tmp.path(), crontab.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("carriage return"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(warnings[0].contains("3 line(s)"), "{}", warnings[0]);
    assert!(warnings[0].contains("first line 1"), "{}", warnings[0]);
    assert!(warnings[0].contains("dos2unix"), "{}", warnings[0]);
}

#[test]
fn the_same_line_twice_is_two_heartbeats_each_made_once() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let crontab = b"0 3 * * * /usr/bin/backup --full\n0 3 * * * /usr/bin/backup --full\n";
    for _ in 0..2 {
        let out = plan(&keys, &api.url(), tmp.path(), crontab);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let names: Vec<String> = api
        .api_calls()
        .iter()
        .map(|c| c.json()["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert_ne!(names[0], names[1]);
    assert_eq!(names[..2], names[2..]);
    assert_eq!(api.with_state(|s| s.checks.len()), 2);
}

#[test]
fn a_crontab_that_cannot_be_read_whole_sends_nothing() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    // A NUL byte on the second job line: nothing made, not even for the first.
    let out = plan(
        &keys,
        &api.url(),
        tmp.path(),
        b"0 3 * * * /usr/bin/a\n0 4 * * * /usr/bin/b\0c\n",
    );
    assert_one_line_error(&out);
    assert!(out.stderr.contains("line 2"), "{}", out.stderr);
    // A directory where the file should be.
    let mut c = Crontap::new();
    c.env("HEALTHCHECKS_API_KEY", &keys.healthchecks)
        .args(["plan", "--create", "--service", "healthchecks", "--api-url"])
        .arg(api.url())
        .arg("--crontab")
        .arg(tmp.path());
    let out = c.run();
    assert_one_line_error(&out);
    assert!(out.stderr.contains("--crontab"), "{}", out.stderr);
    assert!(api.seen().is_empty());
    assert!(!tmp.path().join("urls").exists());
    // Nothing on standard input: nothing to make, and an empty crontab printed.
    let mut c = Crontap::new();
    c.env("HEALTHCHECKS_API_KEY", &keys.healthchecks)
        .args([
            "plan",
            "--crontab",
            "-",
            "--create",
            "--service",
            "healthchecks",
        ])
        .args(["--api-url", &api.url(), "--url-dir"])
        .arg(tmp.path().join("urls"))
        .stdin(b"");
    let out = c.run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr.contains("0 heartbeats created"),
        "{}",
        out.stderr
    );
    assert!(api.seen().is_empty());
}
