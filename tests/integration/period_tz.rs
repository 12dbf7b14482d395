//! `--period-tz`: `--once-per` periods that start at midnight in an IANA zone, read from the
//! system's tzdata; the key still names the period start in UTC. The DST cases with a fixed
//! clock are unit tests of the period function (`src/state/job.rs`); here the real binary's
//! key is checked against GNU date's idea of the zone's midnight.

use std::process::Command;

use crate::harness::Crontap;

/// The UTC key suffix of today's local midnight in `zone`, by GNU date and the system tzdata.
fn midnight_by_date(zone: &str) -> String {
    let run = |args: &[&str]| {
        let out = Command::new("date")
            .env("TZ", zone)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let today = run(&["+%F"]);
    let epoch = run(&["-d", &format!("{today} 00:00"), "+%s"]);
    let out = Command::new("date")
        .args(["-u", "-d", &format!("@{epoch}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn key_seen(args: &[&str], env: &[(&str, &str)]) -> (i32, Option<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut crontap = Crontap::new();
    crontap.arg("-q").arg("--state-dir").arg(dir.path());
    for (name, value) in env {
        crontap.env(name, value);
    }
    let out = crontap.args(args).args(["--", "env"]).run();
    let key = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("CRONTAP_IDEMPOTENCY_KEY="))
        .map(str::to_owned);
    (out.code, key, out.stderr)
}

#[test]
fn a_day_starts_at_the_zones_midnight() {
    for zone in ["Europe/Berlin", "America/New_York", "Asia/Kolkata"] {
        let before = midnight_by_date(zone);
        let (code, key, stderr) = key_seen(
            &["--job", "d", "--once-per", "1d", "--period-tz", zone],
            &[],
        );
        let after = midnight_by_date(zone);
        assert_eq!(code, 0, "{zone}: {stderr}");
        let key = key.expect("a key");
        // Midnight may pass between the readings.
        assert!(
            [format!("d:{before}"), format!("d:{after}")].contains(&key),
            "{zone}: {key}, expected d:{before}"
        );
    }
    // The environment variable does the same.
    let (_, key, _) = key_seen(
        &["--job", "d", "--once-per", "1d"],
        &[("CRONTAP_PERIOD_TZ", "Asia/Kolkata")],
    );
    assert!(key.unwrap().ends_with("T18:30:00Z"));
    // UTC, the default, is midnight UTC.
    let (_, key, _) = key_seen(&["--job", "d", "--once-per", "1d"], &[]);
    assert!(key.unwrap().ends_with("T00:00:00Z"));
}

#[test]
fn bad_zones_and_periods_are_refused_only_when_used() {
    let (code, _, stderr) = key_seen(&["--once-per", "1d", "--period-tz", "Mars/Olympus"], &[]);
    assert_eq!(code, 125, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--period-tz (CRONTAP_PERIOD_TZ): no time zone \"Mars/Olympus\""),
        "{stderr}"
    );
    let (code, _, stderr) = key_seen(&["--once-per", "7h", "--period-tz", "Europe/Berlin"], &[]);
    assert_eq!(code, 125, "{stderr}");
    assert!(stderr.contains("must divide a day"), "{stderr}");
    // A crontab-wide CRONTAP_PERIOD_TZ does not stop lines that use no period.
    let (code, key, stderr) = key_seen(&["--no-overlap"], &[("CRONTAP_PERIOD_TZ", "Mars/Olympus")]);
    assert_eq!((code, key), (0, None), "{stderr}");
}
