//! `--metrics-dir`: the metrics file each job gets. Every file is checked in-process
//! against the Prometheus text format (with the `prometheus-parse` crate's line grammar and
//! the format's rules on HELP, TYPE and series); with the feature `external-tests`, also by
//! the real tools: `promtool check metrics` (Debian package `prometheus`) and a
//! `prometheus-node-exporter` the test starts on a loopback port with the textfile
//! collector, scraped over HTTP (`metrics/tools.rs`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::signal::Signal;
use prometheus_parse::{LineInfo, SampleType};

use crate::harness::{Crontap, Receiver, eventually, refused_url};
use crate::state::{Gate, stateful};

/// The metrics files in `dir`, by name.
fn prom_files(dir: &Path) -> Vec<String> {
    // Beside each job's file, the lock file its runs take turns on (hidden, not `*.prom`).
    let is_lock = |name: &str| name.starts_with(".crontap-run-") && name.ends_with(".prom.lock");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !is_lock(name))
        .collect();
    names.sort();
    names
}

/// The value of the sample `series` (name and labels exactly as written) in `text`.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// What is wrong with `text` as a file of the Prometheus text format, if anything: a line
/// that is neither a sample, a comment nor blank; a sample whose family has no HELP and
/// TYPE line before it, or whose value is no number; a counter not named `…_total`; the
/// same series twice; a file not ending in a newline.
fn format_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if !text.ends_with('\n') {
        problems.push("the last line has no newline".to_owned());
    }
    let mut helped = HashSet::new();
    let mut types = HashMap::new();
    let mut series = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let at = n + 1;
        match LineInfo::parse(line) {
            LineInfo::Doc { metric_name, .. } => {
                helped.insert(metric_name.to_owned());
            }
            LineInfo::Type {
                metric_name,
                sample_type,
                ..
            } => {
                if sample_type == SampleType::Counter && !metric_name.ends_with("_total") {
                    problems.push(format!("line {at}: counter {metric_name} is not _total"));
                }
                types.insert(metric_name, sample_type);
            }
            LineInfo::Sample {
                metric_name,
                labels,
                value,
                timestamp,
            } => {
                if !helped.contains(metric_name) || !types.contains_key(metric_name) {
                    problems.push(format!("line {at}: {metric_name} has no HELP and TYPE"));
                }
                if value.parse::<f64>().is_err() || timestamp.is_some() {
                    problems.push(format!("line {at}: {value:?} is not a plain value"));
                }
                if !series.insert((metric_name, labels.unwrap_or(""))) {
                    problems.push(format!("line {at}: {metric_name} {labels:?} again"));
                }
            }
            LineInfo::Empty => {}
            LineInfo::Ignored if line.starts_with('#') => {}
            LineInfo::Ignored => problems.push(format!("line {at}: {line:?} is not the format")),
        }
    }
    problems
}

/// Asserts that the metrics file `file` is in the Prometheus text format; its text.
fn well_formed(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let problems = format_problems(&text);
    assert!(
        problems.is_empty(),
        "{}: {problems:?}\n{text}",
        file.display()
    );
    text
}

#[test]
fn the_format_check_finds_what_is_wrong() {
    let good = "# HELP a_total A.\n# TYPE a_total counter\na_total{job=\"x\"} 1\n";
    assert_eq!(format_problems(good), Vec::<String>::new());
    for bad in [
        "# HELP a_total A.\n# TYPE a_total counter\na_total{job=\"x\"} 1",
        "a_total 1\n",
        "# HELP a A.\n# TYPE a counter\na 1\n",
        "# HELP a_total A.\n# TYPE a_total counter\na_total one\n",
        "# HELP a_total A.\n# TYPE a_total counter\na_total 1\na_total 2\n",
        "# HELP a_total A.\n# TYPE a_total counter\n{job=\"x\"} 1\n",
    ] {
        assert!(!format_problems(bad).is_empty(), "{bad:?}");
    }
}

/// What [`two_jobs`] leaves: the metrics directory (in a temporary one, removed on
/// drop), its files by name, the derived job's name, and when the runs began.
struct TwoJobs {
    _dir: tempfile::TempDir,
    metrics: PathBuf,
    files: Vec<String>,
    derived: String,
    before: f64,
}

/// Two jobs in a fresh metrics directory, as a fleet writes them: job "nightly" fails,
/// succeeds, then is skipped as already done today; a job named from its command, through
/// CRONTAP_METRICS_DIR, succeeds but its ping fails.
fn two_jobs() -> TwoJobs {
    let receiver = &Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let metrics = &dir.path().join("metrics");
    std::fs::create_dir(metrics).unwrap();
    let before = now_secs();
    let state = dir.path().join("state");
    for (script, code) in [("exit 3", 3), ("exit 0", 0), ("exit 0", 0)] {
        let out = stateful(receiver, &state)
            .arg("--metrics-dir")
            .arg(metrics)
            .args(["--job", "nightly", "--once-per", "1d"])
            .args(["--expect-every", "1d", "--expect-grace", "2h"])
            .sh(script);
        assert_eq!(out.code, code, "{}", out.stderr);
    }
    let out = Crontap::with_url(&refused_url())
        .env("CRONTAP_METRICS_DIR", metrics)
        .args(["--ping-retries", "0"])
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "one ping error: {}",
        out.stderr
    );

    let files = prom_files(metrics);
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0], "crontap-run-nightly.prom");
    let derived = files[1]
        .strip_prefix("crontap-run-")
        .and_then(|f| f.strip_suffix(".prom"))
        .unwrap()
        .to_owned();
    assert!(
        derived.starts_with("sh-") && derived.len() == 11,
        "{derived}"
    );
    TwoJobs {
        metrics: metrics.clone(),
        _dir: dir,
        files,
        derived,
        before,
    }
}

/// The values the runs of [`two_jobs`] leave, in `text` (the files, or a scrape of them).
fn assert_two_jobs_values(text: &str, jobs: &TwoJobs) {
    let (derived, before) = (jobs.derived.as_str(), jobs.before);
    let nightly = |name: &str| value(text, &format!("crontap_run_{name}{{job=\"nightly\"}}"));
    let runs = |job: &str, result: &str| {
        value(
            text,
            &format!("crontap_run_runs_total{{job=\"{job}\",result=\"{result}\"}}"),
        )
    };
    assert_eq!(runs("nightly", "failed"), Some(1.0), "{text}");
    assert_eq!(runs("nightly", "succeeded"), Some(1.0), "{text}");
    assert_eq!(runs("nightly", "skipped"), Some(1.0), "{text}");
    // The skipped run changed no "last" value: they are the successful run's.
    assert_eq!(nightly("last_exit_code"), Some(0.0), "{text}");
    assert_eq!(nightly("ping_failures_total"), Some(0.0), "{text}");
    let start = nightly("last_start_timestamp_seconds").unwrap();
    let end = nightly("last_end_timestamp_seconds").unwrap();
    let success = nightly("last_success_timestamp_seconds").unwrap();
    let after = now_secs();
    assert!(
        before - 1.0 <= start && start <= end && end <= after + 1.0,
        "{text}"
    );
    assert_eq!(success, end, "{text}");
    let result = |job: &str, result: &str| {
        let series = format!("crontap_run_last_result{{job=\"{job}\",result=\"{result}\"}}");
        value(text, &series)
    };
    assert_eq!(result("nightly", "succeeded"), Some(1.0), "{text}");
    assert_eq!(result("nightly", "failed"), Some(0.0), "{text}");
    assert_eq!(result(derived, "succeeded"), Some(1.0), "{text}");
    // The job's expected period and grace, only where it was given.
    assert_eq!(nightly("expected_period_seconds"), Some(86400.0), "{text}");
    assert_eq!(nightly("expected_grace_seconds"), Some(7200.0), "{text}");
    assert!(!text.contains(&format!("expected_period_seconds{{job=\"{derived}\"}}")));
    let duration = nightly("last_duration_seconds").unwrap();
    assert!((0.0..=(end - start) + 0.001).contains(&duration), "{text}");

    assert_eq!(runs(derived, "succeeded"), Some(1.0), "{text}");
    assert_eq!(runs(derived, "failed"), Some(0.0), "{text}");
    let ping_failures = format!("crontap_run_ping_failures_total{{job=\"{derived}\"}}");
    assert_eq!(value(text, &ping_failures), Some(1.0), "{text}");
}

/// Two jobs, one file each, counters carried over between runs, each file in the text
/// format with the values the runs produced.
#[test]
fn two_jobs_one_well_formed_file_each() {
    let jobs = two_jobs();
    let text: String = jobs
        .files
        .iter()
        .map(|f| well_formed(&jobs.metrics.join(f)))
        .collect();
    assert_two_jobs_values(&text, &jobs);
}

#[cfg(feature = "external-tests")]
mod tools;

/// A run stopped before its command started is counted as failed with its 128+S status.
#[test]
fn a_run_stopped_before_the_command_started_is_counted() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let mut crontap = Crontap::with_url(&receiver.url());
    let running = crontap
        .arg("--metrics-dir")
        .arg(dir.path())
        .args(["-v", "--jitter", "1h", "--job", "j", "--", "true"])
        .start();
    assert!(
        eventually(Duration::from_secs(30), || running
            .stderr_so_far()
            .contains("--jitter: waiting")),
        "{}",
        running.stderr_so_far()
    );
    running.signal(Signal::SIGTERM);
    let out = running.finish();
    assert_eq!(out.code, 143, "{}", out.stderr);
    let text = std::fs::read_to_string(dir.path().join("crontap-run-j.prom")).unwrap();
    assert_eq!(
        value(&text, "crontap_run_runs_total{job=\"j\",result=\"failed\"}"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        value(&text, "crontap_run_last_exit_code{job=\"j\"}"),
        Some(143.0)
    );
    assert_eq!(
        value(
            &text,
            "crontap_run_last_success_timestamp_seconds{job=\"j\"}"
        ),
        Some(0.0)
    );
}

/// A metrics directory that cannot be written is one error line; the exit status and the
/// ping are the command's as always.
#[test]
fn an_unwritable_metrics_dir_is_one_error_line() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let missing: PathBuf = dir.path().join("missing");
    let out = Crontap::with_url(&receiver.url())
        .arg("--metrics-dir")
        .arg(&missing)
        .sh("exit 3");
    assert_eq!(out.code, 3);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with("crontap-run: error: cannot write the metrics file"),
        "{}",
        out.stderr
    );
    assert!(receiver.only().msg().unwrap().starts_with("exit 3 after "));
}

/// Without --metrics-dir nothing is written, and a dry run writes no metrics either.
#[test]
fn a_dry_run_writes_no_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let out = Crontap::new()
        .arg("--metrics-dir")
        .arg(dir.path())
        .args(["--dry-run", "--job", "j"])
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(prom_files(dir.path()).is_empty());
}

/// Runs of one job that end at the same moment each add their count.
#[test]
fn runs_that_end_together_each_count() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let script = gate.wait_script();
    let runs: Vec<Child> = (0..8)
        .map(|_| {
            Crontap::new()
                .arg("--metrics-dir")
                .arg(dir.path())
                .args(["-q", "--timeout", "60s", "--job", "busy", "--", "sh", "-c"])
                .arg(&script)
                .spawn(Stdio::null(), Stdio::null())
        })
        .collect();
    gate.open();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(dir.path().join("crontap-run-busy.prom")).unwrap();
    assert_eq!(
        value(
            &text,
            "crontap_run_runs_total{job=\"busy\",result=\"succeeded\"}"
        ),
        Some(8.0),
        "{text}"
    );
}

/// A failure after a success moves the "last" values but keeps the last success's time:
/// that is what an alert on a job that stopped succeeding compares with.
#[test]
fn a_failure_keeps_the_last_success_time() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    let file = metrics.join("crontap-run-nightly.prom");
    let series = |text: &str, name: &str| {
        value(text, &format!("crontap_run_{name}{{job=\"nightly\"}}")).unwrap()
    };
    for (script, code) in [("exit 0", 0), ("sleep 1.1; exit 3", 3)] {
        let out = Crontap::with_url(&receiver.url())
            .arg("--metrics-dir")
            .arg(&metrics)
            .args(["--job", "nightly"])
            .sh(script);
        assert_eq!(out.code, code, "{}", out.stderr);
        if code == 0 {
            let text = std::fs::read_to_string(&file).unwrap();
            assert_eq!(
                series(&text, "last_success_timestamp_seconds"),
                series(&text, "last_end_timestamp_seconds"),
                "{text}"
            );
        }
    }
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(series(&text, "last_exit_code"), 3.0, "{text}");
    let success = series(&text, "last_success_timestamp_seconds");
    let end = series(&text, "last_end_timestamp_seconds");
    assert!(
        success + 1.0 <= end,
        "last success {success}, last end {end}: {text}"
    );
    well_formed(&file);
}
