//! `plan --crontab FILE --create`: every job's heartbeat created once, its URL file
//! written, the wrapped crontab on stdout; a second run creates nothing new.

use std::path::Path;

use super::stand_in::{CrontapAnswer, crontap, healthchecks};
use super::{Keys, assert_clean, mode, run, url_in};

const CRONTAB: &str = "\
SHELL=/bin/sh
# nightly backup
0 3 * * * /usr/bin/backup --full
*/15 * * * * cd /srv/app && ./sync.sh > /dev/null
@reboot /usr/bin/warm-cache
";

fn plan(keys: &Keys, dir: &Path, service: &[&str]) -> crate::harness::Output {
    let crontab = dir.join("crontab");
    std::fs::write(&crontab, CRONTAB).unwrap();
    let url_dir = dir.join("urls");
    let mut args = vec![
        "plan",
        "--crontab",
        crontab.to_str().unwrap(),
        "--create",
        "--tz",
        "UTC",
        "--url-dir",
        url_dir.to_str().unwrap(),
        "--state-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(service);
    run(keys, &args)
}

/// The URL files the wrapped crontab names.
fn url_files(text: &str) -> Vec<String> {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[0] == "--url-file")
        .map(|w| w[1].trim_matches('\'').to_owned())
        .collect()
}

#[test]
fn healthchecks_run_twice_creates_each_check_once() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let service = ["--service", "healthchecks", "--api-url", &api.url()];
    let first = plan(&keys, tmp.path(), &service);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let files = url_files(&first.stdout);
    assert_eq!(files.len(), 2, "{}", first.stdout);
    assert_eq!(api.with_state(|s| s.checks.len()), 2);
    let schedules: Vec<String> = api
        .api_calls()
        .iter()
        .map(|c| format!("{} {}", c.json()["schedule"], c.json()["tz"]))
        .collect();
    assert_eq!(
        schedules,
        ["\"0 3 * * *\" \"UTC\"", "\"*/15 * * * *\" \"UTC\""]
    );
    for file in &files {
        let url = url_in(Path::new(file));
        assert!(url.starts_with(&api.url()), "{file}");
        assert_eq!(mode(Path::new(file)), 0o600);
    }
    assert_eq!(mode(&tmp.path().join("urls")), 0o700);
    assert!(first.stdout.contains("@reboot /usr/bin/warm-cache"));
    assert_eq!(
        first.stderr.matches("created heartbeat").count(),
        2,
        "{}",
        first.stderr
    );
    let urls: Vec<String> = files.iter().map(|f| url_in(Path::new(f))).collect();
    assert_clean(&first, &keys, &urls);

    let second = plan(&keys, tmp.path(), &service);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(second.stdout, first.stdout);
    assert_eq!(
        api.with_state(|s| s.checks.len()),
        2,
        "a check was created twice"
    );
    assert_eq!(
        second.stderr.matches("nothing changed").count(),
        2,
        "{}",
        second.stderr
    );
    let again: Vec<String> = files.iter().map(|f| url_in(Path::new(f))).collect();
    assert_eq!(again, urls);
}

#[test]
fn crontap_run_twice_sends_each_create_once() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::PingUrl);
    let tmp = tempfile::tempdir().unwrap();
    let service = ["--api-url", &api.url()];
    let first = plan(&keys, tmp.path(), &service);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let bodies: Vec<serde_json::Value> = api.api_calls().iter().map(|c| c.json()).collect();
    assert_eq!(bodies.len(), 2);
    // Daily at 3: 1440 minutes; every 15 minutes: 15; no runs recorded: grace 1.
    assert_eq!(bodies[0]["periodMinutes"], 1440);
    assert_eq!(bodies[1]["periodMinutes"], 15);
    assert!(bodies.iter().all(|b| b["graceMinutes"] == 1));
    let names: Vec<&str> = bodies.iter().map(|b| b["name"].as_str().unwrap()).collect();
    for (name, file) in names.iter().zip(url_files(&first.stdout)) {
        assert!(file.ends_with(&format!("/urls/{name}.url")), "{file}");
    }
    let second = plan(&keys, tmp.path(), &service);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(api.api_calls().len(), 2, "the second run sent a create");
    assert_eq!(second.stdout, first.stdout);
    let tokens: Vec<String> = api.with_state(|s| s.made.iter().map(|m| m.0.clone()).collect());
    assert_clean(&second, &keys, &tokens);
}
