//! `crontap-run history`: one record per stateful invocation (skipped ones too), listed
//! oldest first as a table or JSON lines, never holding the heartbeat URL.

use std::path::Path;

use serde_json::Value;

use crate::harness::{Crontap, Output, Receiver, assert_no_secret, refused_url};
use crate::state::{Gate, entries_under, stateful};

/// `crontap-run history --state-dir <state> <args>`.
pub(crate) fn history(state: &Path, args: &[&str]) -> Output {
    let out = Crontap::new()
        .arg("history")
        .arg("--state-dir")
        .arg(state)
        .args(args)
        .run();
    assert_eq!(out.code, 0, "history {args:?}: {}", out.stderr);
    out
}

/// The records `history --json <args>` prints.
pub(crate) fn records(state: &Path, args: &[&str]) -> Vec<Value> {
    history(state, &[&["--json"][..], args].concat())
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn field<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().map(|r| &r[name]).collect()
}

fn strings<'a>(records: &'a [Value], name: &str) -> Vec<&'a str> {
    records
        .iter()
        .map(|r| r[name].as_str().unwrap_or_else(|| panic!("{name} in {r}")))
        .collect()
}

/// Absent or null.
fn none(record: &Value, name: &str) -> bool {
    record.get(name).is_none_or(Value::is_null)
}

/// RFC 3339 UTC with milliseconds: `2026-11-29T00:00:00.123Z`.
fn is_utc_millis(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 24
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..23)
        && b[23] == b'Z'
}

/// The secret is in no file of the store.
fn assert_store_has_no_secret(state: &Path, url: &str) {
    for path in entries_under(state) {
        if path.is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            assert_no_secret(&text, &path.display().to_string());
            assert!(!text.contains(url), "the URL is in {}", path.display());
        }
    }
}

#[test]
fn history_lists_a_failure_a_success_and_a_skip_oldest_first() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let fixed = dir.path().join("fixed");
    let script = format!(
        "echo \"$CRONTAP_RUN_ID\"; [ -e '{}' ] || {{ echo 'row 17 has no customer id' >&2; exit 3; }}",
        fixed.display()
    );
    let run = || {
        stateful(&receiver, &state)
            .args(["--job", "nightly", "--idempotency-key", "import-42"])
            .args(["--", "sh", "-c", &script])
            .run()
    };
    let failed = run();
    assert_eq!(failed.code, 3);
    std::fs::write(&fixed, "").unwrap();
    let succeeded = run();
    assert_eq!(succeeded.code, 0);
    let skipped = run();
    assert_eq!(skipped.code, 0);
    assert_eq!(skipped.stdout, "", "a skipped run does not run the command");
    assert_eq!(receiver.received().len(), 2);

    let all = records(&state, &[]);
    assert_eq!(all.len(), 3, "{all:#?}");
    assert_eq!(strings(&all, "result"), ["failed", "succeeded", "skipped"]);
    assert_eq!(strings(&all, "job"), ["nightly"; 3]);
    assert_eq!(strings(&all, "key"), ["import-42"; 3]);
    assert_eq!(
        field(&all, "exit"),
        [&Value::from(3), &Value::from(0), &Value::Null]
    );
    assert_eq!(
        field(&all, "attempts"),
        [&Value::from(1), &Value::from(1), &Value::from(0)]
    );
    assert_eq!(strings(&all, "ping"), ["sent", "sent", "not sent"]);

    let run_ids = strings(&all, "run_id");
    assert_eq!(
        run_ids[0],
        failed.stdout.trim(),
        "the child's CRONTAP_RUN_ID"
    );
    assert_eq!(
        run_ids[1],
        succeeded.stdout.trim(),
        "the child's CRONTAP_RUN_ID"
    );
    assert_ne!(run_ids[2], run_ids[1]);

    let started = strings(&all, "started");
    let ended = strings(&all, "ended");
    for (s, e) in started.iter().zip(&ended) {
        assert!(is_utc_millis(s) && is_utc_millis(e), "{s} {e}");
        assert!(s <= e, "started {s} after ended {e}");
    }
    assert!(started.windows(2).all(|w| w[0] <= w[1]), "{started:?}");
    assert!(all.iter().all(|r| r["duration_ms"].is_u64()), "{all:#?}");

    let msg = all[0]["msg"].as_str().unwrap();
    assert!(msg.starts_with("exit 3 after "), "{msg}");
    assert!(msg.ends_with(": row 17 has no customer id"), "{msg}");
    assert!(none(&all[1], "msg"), "{}", all[1]);
    let reason = all[2]["msg"].as_str().unwrap();
    assert!(reason.contains("already succeeded"), "{reason}");

    // The table: a header and one row per run, in the same order.
    let table = history(&state, &[]).stdout;
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    for column in [
        "STARTED", "JOB", "RESULT", "EXIT", "ATTEMPTS", "DURATION", "PING",
    ] {
        assert!(lines[0].contains(column), "{column} in {table}");
    }
    for (row, result) in lines[1..].iter().zip(["failed", "succeeded", "skipped"]) {
        assert!(row.contains(result) && row.contains("nightly"), "{table}");
    }

    let last_two = records(&state, &["--limit", "2"]);
    assert_eq!(strings(&last_two, "result"), ["succeeded", "skipped"]);
    assert_eq!(records(&state, &["--job", "nightly"]).len(), 3);
    assert_eq!(history(&state, &["--job", "other"]).stdout, "");
    assert_eq!(history(&state, &["--job", "other", "--json"]).stdout, "");

    let from_env = Crontap::new()
        .env("CRONTAP_STATE_DIR", &state)
        .args(["history", "--json"])
        .run();
    assert_eq!(from_env.code, 0, "{}", from_env.stderr);
    assert_eq!(from_env.stdout, history(&state, &["--json"]).stdout);

    assert_store_has_no_secret(&state, &receiver.url());
}

#[test]
fn attempts_and_the_ping_outcome_are_recorded() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let retries = ["--retries", "2", "--retry-delay", "10ms", "--no-overlap"];

    let out = stateful(&receiver, &state)
        .args(retries)
        .args(["--job", "sent", "--", "sh", "-c", "exit 1"])
        .run();
    assert_eq!(out.code, 1);
    let out = Crontap::new()
        .args(["-q", "--state-dir"])
        .arg(&state)
        .args(retries)
        .args(["--job", "unconfigured", "--", "sh", "-c"])
        .arg("[ \"$CRONTAP_ATTEMPT\" -ge 2 ]")
        .run();
    assert_eq!(out.code, 0);
    let out = Crontap::with_url(&refused_url())
        .args(["--ping-retries", "0", "--state-dir"])
        .arg(&state)
        .args(["--no-overlap", "--job", "refused", "--", "true"])
        .run();
    assert_eq!(out.code, 0, "a failed ping never changes the exit status");

    let all = records(&state, &[]);
    assert_eq!(strings(&all, "job"), ["sent", "unconfigured", "refused"]);
    assert_eq!(
        strings(&all, "result"),
        ["failed", "succeeded", "succeeded"]
    );
    assert_eq!(
        field(&all, "attempts"),
        [&Value::from(3), &Value::from(2), &Value::from(1)]
    );
    assert_eq!(
        field(&all, "exit"),
        [&Value::from(1), &Value::from(0), &Value::from(0)]
    );
    assert_eq!(strings(&all, "ping"), ["sent", "not configured", "failed"]);
    let msg = all[0]["msg"].as_str().unwrap();
    assert!(msg.contains("s (attempt 3 of 3)"), "{msg}");
    assert!(all.iter().all(|r| none(r, "key")), "{all:#?}");
    assert_store_has_no_secret(&state, &receiver.url());
}

#[test]
fn a_run_skipped_by_no_overlap_is_recorded() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let gate = Gate::new(dir.path());
    let script = format!("echo ready; {}", gate.wait_script());
    let mut holder = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "nightly", "--timeout", "60s"])
        .args(["--", "sh", "-c", &script])
        .start();
    holder.wait_for("ready");
    let skipped = stateful(&receiver, &state)
        .args(["-q", "--no-overlap", "--job", "nightly", "--", "true"])
        .run();
    assert_eq!(skipped.code, 0);
    gate.open();
    assert_eq!(holder.finish().code, 0);

    let all = records(&state, &[]);
    assert_eq!(all.len(), 2, "{all:#?}");
    let skip = all
        .iter()
        .find(|r| r["result"] == "skipped")
        .unwrap_or_else(|| panic!("no skipped record: {all:#?}"));
    assert!(skip["exit"].is_null(), "{skip}");
    assert_eq!(skip["attempts"], 0, "{skip}");
    assert_eq!(skip["ping"], "not sent", "{skip}");
    assert!(none(skip, "key"), "{skip}");
    let reason = skip["msg"].as_str().unwrap_or_default();
    assert!(reason.contains("already running"), "{skip}");
    assert!(all.iter().any(|r| r["result"] == "succeeded"), "{all:#?}");
}

#[test]
fn history_shows_the_last_twenty_by_default_and_merges_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    for i in 1..=22 {
        let job = if i % 2 == 0 { "even" } else { "odd" };
        let out = Crontap::new()
            .args(["-q", "--state-dir"])
            .arg(&state)
            .args([
                "--job",
                job,
                "--idempotency-key",
                &format!("k-{i}"),
                "--",
                "true",
            ])
            .run();
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let keys = |args: &[&str]| -> Vec<String> {
        strings(&records(&state, args), "key")
            .into_iter()
            .map(str::to_owned)
            .collect()
    };
    let expected: Vec<String> = (3..=22).map(|i| format!("k-{i}")).collect();
    assert_eq!(keys(&[]), expected);
    let expected: Vec<String> = (18..=22).map(|i| format!("k-{i}")).collect();
    assert_eq!(keys(&["--limit", "5"]), expected);
    let expected: Vec<String> = (5..=21).step_by(2).map(|i| format!("k-{i}")).collect();
    assert_eq!(keys(&["--job", "odd", "--limit", "9"]), expected);
    let table = history(&state, &[]).stdout;
    assert_eq!(table.lines().count(), 21, "a header and 20 rows: {table}");
}

#[test]
fn no_history_prints_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&[][..], &["--json"]] {
        assert_eq!(history(dir.path(), args).stdout, "", "{args:?}");
        let never_created = dir.path().join("state");
        assert_eq!(history(&never_created, args).stdout, "", "{args:?}");
        assert!(!never_created.exists(), "history created the state dir");
    }
}

#[test]
fn history_refuses_an_invalid_job_name() {
    let dir = tempfile::tempdir().unwrap();
    for job in ["../etc", "a b", ""] {
        let out = Crontap::new()
            .arg("history")
            .arg("--state-dir")
            .arg(dir.path())
            .args(["--job", job])
            .run();
        assert_eq!(out.code, 125, "{job:?}: {}", out.stderr);
        assert!(
            out.stderr.starts_with("crontap-run: error: "),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("--job"), "{job:?}: {}", out.stderr);
    }
}

/// `history --stats`: per job, runs by result, durations of the successful runs, the last
/// success and the grace the heartbeat needs; as a table and as JSON.
#[test]
fn stats_per_job() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let run = |job: &str, script: &str| {
        stateful(&receiver, &state)
            .args(["--no-overlap", "--job", job])
            .sh(script)
    };
    run("nightly", "sleep 0.3");
    run("nightly", "exit 0");
    run("nightly", "exit 2");
    run("other", "exit 1");
    // Already done today: skipped.
    for _ in 0..2 {
        stateful(&receiver, &state)
            .args(["--once-per", "1d", "--job", "nightly"])
            .sh("exit 0");
    }

    let stats = records(&state, &["--stats"]);
    assert_eq!(strings(&stats, "job"), ["nightly", "other"]);
    let nightly = &stats[0];
    assert_eq!(nightly["runs"], 5);
    assert_eq!(nightly["succeeded"], 3);
    assert_eq!(nightly["failed"], 1);
    assert_eq!(nightly["stopped"], 0);
    assert_eq!(nightly["skipped"], 1);
    let max = nightly["max_ms"].as_u64().unwrap();
    assert!(max >= 300, "{nightly}");
    assert!(nightly["p50_ms"].as_u64().unwrap() <= max);
    assert!(is_utc_millis(nightly["last_success"].as_str().unwrap()));
    assert_eq!(nightly["suggested_grace_s"], 60);
    assert!(none(&stats[1], "max_ms") && none(&stats[1], "last_success"));

    let table = history(&state, &["--stats"]).stdout;
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("JOB      RUNS  SUCCEEDED  FAILED  STOPPED  SKIPPED  P50"),
        "{table}"
    );
    assert!(
        lines[1].starts_with("nightly  5     3          1       0        1 "),
        "{table}"
    );
    assert!(
        table.contains("nightly: the longest successful run took ")
            && table.contains("set the grace to at least 1m"),
        "{table}"
    );
    assert!(
        table.contains("other: no successful run recorded yet"),
        "{table}"
    );
    // --job picks one job.
    let one = records(&state, &["--stats", "--job", "other"]);
    assert_eq!(strings(&one, "job"), ["other"]);
    // --stats counts every run, so --limit does not go with it.
    let out = Crontap::new()
        .args(["history", "--stats", "--limit", "3", "--state-dir"])
        .arg(&state)
        .run();
    assert_eq!(out.code, 125, "{}", out.stderr);
}
