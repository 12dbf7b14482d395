//! `crontap-run plan --schedule`: the period from the schedule's longest real gap, the grace
//! from the job's recorded runs, as text and JSON; bad schedules and zones are usage errors.
//! Expected values are worked out by hand from the calendar and the zone's rules, never
//! from the code's own walk. `plan --crontab` is in `plan_crontab.rs`.

use jiff::Timestamp;
use jiff::civil::Weekday;
use serde_json::Value;

use crate::harness::{Crontap, Output, Receiver};
use crate::state::stateful;

/// `crontap-run plan <args>`.
pub(crate) fn plan(args: &[&str]) -> Output {
    Crontap::new().arg("plan").args(args).run()
}

/// `plan --json <args>`, which must succeed, as JSON.
fn plan_json(args: &[&str]) -> Value {
    let out = plan(&[&["--json"][..], args].concat());
    assert_eq!(out.code, 0, "plan {args:?}: {}", out.stderr);
    assert_eq!(out.stderr, "", "plan {args:?}");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

/// A `longestGap` end: its weekday, local time and UTC offset.
fn end(value: &Value) -> (Weekday, String, String) {
    let text = value.as_str().unwrap();
    let date: jiff::civil::Date = text[..10].parse().unwrap();
    (
        date.weekday(),
        text[11..16].to_owned(),
        text[19..].to_owned(),
    )
}

/// Minutes from one `longestGap` end to the other, read from the text.
fn minutes_between(from: &Value, to: &Value) -> i64 {
    let at = |v: &Value| v.as_str().unwrap().parse::<Timestamp>().unwrap();
    (at(to).as_second() - at(from).as_second()) / 60
}

#[test]
fn weekday_job_in_berlin_covers_the_weekend_the_clocks_go_back() {
    let p = plan_json(&[
        "--schedule",
        "0 9 * * 1-5",
        "--tz",
        "Europe/Berlin",
        "--job",
        "weekday-report",
    ]);
    // Friday 09:00 CEST to Monday 09:00 CET, the weekend of the last Sunday in October:
    // 3 days and the hour the clocks go back.
    assert_eq!(p["name"], "weekday-report");
    assert_eq!(p["periodMinutes"], 3 * 1440 + 60);
    assert_eq!(p["graceMinutes"], 1);
    assert_eq!(p["schedule"], "0 9 * * 1-5");
    assert_eq!(p["tz"], "Europe/Berlin");
    assert_eq!(p["shortestGapMinutes"], 1440);
    assert_eq!(p["runsRecorded"], 0);
    let gap = &p["longestGap"];
    assert_eq!(gap["minutes"], 3 * 1440 + 60);
    let (from, to) = (end(&gap["from"]), end(&gap["to"]));
    assert_eq!(from, (Weekday::Friday, "09:00".into(), "+02:00".into()));
    assert_eq!(to, (Weekday::Monday, "09:00".into(), "+01:00".into()));
    assert_eq!(minutes_between(&gap["from"], &gap["to"]), 3 * 1440 + 60);
    let mut gap_fields: Vec<&str> = gap
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    gap_fields.sort();
    assert_eq!(gap_fields, ["from", "minutes", "to"]);
    let fields: Vec<&String> = p.as_object().unwrap().keys().collect();
    let mut expected = [
        "name",
        "periodMinutes",
        "graceMinutes",
        "schedule",
        "tz",
        "longestGap",
        "shortestGapMinutes",
        "runsRecorded",
    ];
    expected.sort();
    let mut fields: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
    fields.sort();
    assert_eq!(fields, expected);
}

#[test]
fn the_human_output_names_the_longest_gap_and_why() {
    let out = plan(&["--schedule", "0 9 * * mon-fri", "--tz", "Europe/Berlin"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = &out.stdout;
    assert!(
        text.contains("period 4380 minutes (3 days 1 hour)"),
        "{text}"
    );
    assert!(
        text.contains("from Fri ") && text.contains("09:00 CEST to Mon "),
        "{text}"
    );
    assert!(text.contains("(Sat, Sun)"), "{text}");
    assert!(text.contains("the clocks go back 1 hour"), "{text}");
    assert!(text.contains("a shorter period would alert"), "{text}");
    assert!(text.contains("grace 1 minute"), "{text}");
}

#[test]
fn periods_follow_the_calendar() {
    // (schedule, zone, period, shortest gap), in minutes, worked out by hand.
    let cases: &[(&str, &str, u64, u64)] = &[
        // 31-day months, February's 28 days.
        ("0 0 1 * *", "UTC", 31 * 1440, 28 * 1440),
        ("@monthly", "UTC", 31 * 1440, 28 * 1440),
        // The 15th to the 1st after a 31-day month; the 1st to the 15th, or February 15th
        // to March 1st in a common year.
        ("0 0 1,15 * *", "UTC", 17 * 1440, 14 * 1440),
        // Leap years: four years of 365 days and a leap day.
        ("0 0 29 2 *", "UTC", 1461 * 1440, 1461 * 1440),
        // Day of month OR day of week: every Monday and every 1st.
        ("0 0 1 * 1", "UTC", 7 * 1440, 1440),
        // AND when one of them starts with `*`: Mondays that are odd days.
        ("0 0 */2 * mon", "UTC", 3 * 7 * 1440, 7 * 1440),
        ("@daily", "UTC", 1440, 1440),
        ("@weekly", "UTC", 7 * 1440, 7 * 1440),
        ("@hourly", "UTC", 60, 60),
        // A daily job in Berlin: 25 hours the night the clocks go back, 23 when forward.
        ("0 0 * * *", "Europe/Berlin", 25 * 60, 23 * 60),
        // 02:30 does not exist the night the clocks go forward: two days less an hour.
        ("30 2 * * *", "Europe/Berlin", 47 * 60, 24 * 60),
        // Every 15 minutes, hourly: cron runs a job whose minute or hour field starts with
        // `*` again in the hour the clocks repeat, so they stay 15 minutes and an hour apart.
        ("*/15 * * * *", "Europe/Berlin", 15, 15),
        ("0 * * * *", "Europe/Berlin", 60, 60),
        ("0 * * * *", "America/New_York", 60, 60),
        // At a fixed time in the repeated hour (01:00 to 02:00 on the first Sunday of
        // November in New York), once, at the first pass: Sunday 01:30 EDT to Monday
        // 01:30 EST is 25 hours.
        ("30 1 * * *", "America/New_York", 25 * 60, 23 * 60),
        // The southern hemisphere: Sydney's clocks go back in April, forward in October.
        ("0 0 * * *", "Australia/Sydney", 25 * 60, 23 * 60),
        // Leading zeros, as cron reads them: the 7th of each month.
        ("00 00 007 * *", "UTC", 31 * 1440, 28 * 1440),
        // Names in any case, a range with a step: the 1st, 4th, 7th and 10th of every month;
        // the 10th to the 1st after a 31-day month is 22 days.
        ("0 0 1-10/3 JAN-dec *", "UTC", 22 * 1440, 3 * 1440),
        // From the 10th of March to the 1st of January: 22 + 30 + 31 + 30 + 31 + 31 + 30 +
        // 31 + 30 + 31 days.
        ("0 0 1-10/3 Jan-MAR *", "UTC", 297 * 1440, 3 * 1440),
        // Lord Howe Island changes its clocks by half an hour.
        ("0 0 * * *", "Australia/Lord_Howe", 1470, 1410),
        // Yearly: 365 or 366 days.
        ("@yearly", "UTC", 366 * 1440, 365 * 1440),
    ];
    for &(schedule, zone, period, shortest) in cases {
        let p = plan_json(&["--schedule", schedule, "--tz", zone]);
        assert_eq!(p["periodMinutes"], period, "{schedule} in {zone}: {p}");
        assert_eq!(
            p["shortestGapMinutes"], shortest,
            "{schedule} in {zone}: {p}"
        );
        assert_eq!(p["name"], schedule, "without --job");
    }
}

#[test]
fn grace_is_the_longest_recorded_run_and_the_jitter() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state_arg = state.to_str().unwrap();
    let args = |job: &str, jitter: &str| {
        plan_json(&[
            "--schedule",
            "@daily",
            "--job",
            job,
            "--jitter",
            jitter,
            "--state-dir",
            state_arg,
        ])
    };
    // No runs: the jitter and the floor of a minute.
    assert_eq!(args("slow", "59s")["graceMinutes"], 1);
    assert_eq!(args("slow", "61s")["graceMinutes"], 2);
    // A failed run of just over a second counts (its ping comes at its end too); a skipped
    // run does not, nor another job's run.
    let run = |job: &str, script: &str| {
        stateful(&receiver, &state)
            .args(["--job", job, "--no-overlap", "--", "sh", "-c", script])
            .run()
    };
    assert_eq!(run("slow", "sleep 1.2; exit 3").code, 3);
    assert_eq!(run("other", "sleep 2").code, 0);
    let p = args("slow", "59s");
    assert_eq!(p["runsRecorded"], 1);
    assert_eq!(
        p["graceMinutes"], 2,
        "59 s of jitter and a run of 1.2 s: 2 minutes"
    );
    let out = plan(&[
        "--schedule",
        "@daily",
        "--job",
        "slow",
        "--state-dir",
        state_arg,
    ]);
    assert!(
        out.stdout
            .contains("the longest of 1 recorded run of slow took "),
        "{}",
        out.stdout
    );
}

#[test]
fn bad_input_is_a_usage_error_naming_the_option() {
    let cases: &[(&[&str], &str)] = &[
        (&["--schedule", "0 0 31 2 *"], "--schedule"),
        (&["--schedule", "0 0 30 2 *"], "--schedule"),
        (&["--schedule", "@reboot"], "--schedule"),
        (&["--schedule", "@sometimes"], "--schedule"),
        (&["--schedule", "60 * * * *"], "--schedule"),
        (&["--schedule", "* * * *"], "--schedule"),
        (&["--schedule", "0 9 * * mon-fri/0"], "--schedule"),
        (&["--schedule", "@daily", "--tz", "Mars/Olympus"], "--tz"),
        (
            &["--schedule", "@daily", "--tz", "../../etc/passwd"],
            "--tz",
        ),
        (&["--schedule", "@daily", "--jitter", "2h"], "--jitter"),
        (&["--schedule", "@daily", "--jitter", "soon"], "--jitter"),
        (&["--schedule", "@daily", "--job", "a/b"], "--job"),
        (&["--schedule", "@daily", "--state-dir", ""], "--state-dir"),
        (&["--schedule", "@daily", "--crontab", "-"], "--crontab"),
        (&["--crontab", "-", "--tz", "Nowhere/Zone"], "--tz"),
        (&["--crontab", "-", "--jitter", "1m"], "--jitter"),
        (&["--crontab", "-", "--job", "one"], "--job"),
        (&["--schedule", "@daily", "--system"], "--system"),
        (&["--crontab", ""], "--crontab"),
        (&["--crontab", "-", "--url-dir", ""], "--url-dir"),
        (&["--crontab", "-", "--url-dir", "keys"], "--url-dir"),
        (
            &["--crontab", "-", "--url-dir", "/etc/x\n* * * * * evil"],
            "--url-dir",
        ),
        (&["--crontab", "-", "--url-dir", "/etc/\r"], "--url-dir"),
        (&["--schedule", "0 0 * * 8"], "--schedule"),
        (&["--schedule", "@DAILY"], "--schedule"),
        (&["--schedule", "0 0 1-5/2/2 * *"], "--schedule"),
        (&["--schedule", "0 0 * * *", "--tz", ""], "--tz"),
        (&[], "--schedule"),
    ];
    for (args, option) in cases {
        let out = plan(args);
        assert_eq!(out.code, 125, "{args:?}: {out:?}");
        assert_eq!(out.stdout, "", "{args:?}");
        let line = out.stderr.trim_end();
        assert!(!line.contains('\n'), "{args:?}: one line: {line}");
        assert!(line.contains(option), "{args:?} names {option}: {line}");
    }
}
