//! `--metrics-dir`: the metrics file each job gets, checked with the real tools: `promtool
//! check metrics` (Debian package `prometheus`) and a `prometheus-node-exporter` the test
//! starts on a loopback port with the textfile collector, scraped over HTTP.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::signal::Signal;

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

/// `promtool check metrics` on `file`: its exit status and what it said.
fn promtool(file: &Path) -> (bool, String) {
    let out = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(file).unwrap())
        .output()
        .expect("promtool (Debian package prometheus) is installed");
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), said)
}

/// A node_exporter serving only the textfile collector for `dir`, killed on drop.
struct NodeExporter {
    child: Child,
    port: u16,
}

impl NodeExporter {
    fn start(dir: &Path) -> NodeExporter {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let program = ["prometheus-node-exporter", "node_exporter"]
            .into_iter()
            .find(|p| {
                Command::new(p)
                    .arg("--version")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok()
            })
            .expect("node_exporter (Debian package prometheus-node-exporter) is installed");
        let child = Command::new(program)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let exporter = NodeExporter { child, port };
        assert!(
            eventually(Duration::from_secs(30), || exporter.scrape().is_some()),
            "node_exporter did not come up on port {port}"
        );
        exporter
    }

    /// GET /metrics, the body.
    fn scrape(&self) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (head, body) = response.split_once("\r\n\r\n")?;
        head.starts_with("HTTP/1.0 200")
            .then(|| body.to_owned())
            .or_else(|| head.starts_with("HTTP/1.1 200").then(|| body.to_owned()))
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two jobs, one file each, counters carried over between runs, checked by promtool and
/// served by node_exporter with the values the runs produced.
#[test]
fn two_jobs_through_promtool_and_node_exporter() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    let before = now_secs();

    // Job "nightly": a failure, a success, then a run skipped as already done today.
    for (script, code) in [("exit 3", 3), ("exit 0", 0), ("exit 0", 0)] {
        let out = stateful(&receiver, &state)
            .arg("--metrics-dir")
            .arg(&metrics)
            .args(["--job", "nightly", "--once-per", "1d"])
            .sh(script);
        assert_eq!(out.code, code, "{}", out.stderr);
    }
    // A job named from its command, through CRONTAP_METRICS_DIR, whose ping fails.
    let out = Crontap::with_url(&refused_url())
        .env("CRONTAP_METRICS_DIR", &metrics)
        .args(["--ping-retries", "0"])
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "one ping error: {}",
        out.stderr
    );

    let files = prom_files(&metrics);
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

    for file in &files {
        let (ok, said) = promtool(&metrics.join(file));
        assert!(ok, "promtool check metrics {file}: {said}");
    }

    let exporter = NodeExporter::start(&metrics);
    let scraped = exporter.scrape().unwrap();
    let nightly = |name: &str| value(&scraped, &format!("crontap_run_{name}{{job=\"nightly\"}}"));
    let runs = |job: &str, result: &str| {
        value(
            &scraped,
            &format!("crontap_run_runs_total{{job=\"{job}\",result=\"{result}\"}}"),
        )
    };
    assert_eq!(runs("nightly", "failed"), Some(1.0), "{scraped}");
    assert_eq!(runs("nightly", "succeeded"), Some(1.0), "{scraped}");
    assert_eq!(runs("nightly", "skipped"), Some(1.0), "{scraped}");
    // The skipped run changed no "last" value: they are the successful run's.
    assert_eq!(nightly("last_exit_code"), Some(0.0), "{scraped}");
    assert_eq!(nightly("ping_failures_total"), Some(0.0), "{scraped}");
    let start = nightly("last_start_timestamp_seconds").unwrap();
    let end = nightly("last_end_timestamp_seconds").unwrap();
    let success = nightly("last_success_timestamp_seconds").unwrap();
    let after = now_secs();
    assert!(
        before - 1.0 <= start && start <= end && end <= after + 1.0,
        "{scraped}"
    );
    assert_eq!(success, end, "{scraped}");
    let duration = nightly("last_duration_seconds").unwrap();
    assert!(
        (0.0..=(end - start) + 0.001).contains(&duration),
        "{scraped}"
    );

    assert_eq!(runs(&derived, "succeeded"), Some(1.0), "{scraped}");
    assert_eq!(runs(&derived, "failed"), Some(0.0), "{scraped}");
    let ping_failures = format!("crontap_run_ping_failures_total{{job=\"{derived}\"}}");
    assert_eq!(value(&scraped, &ping_failures), Some(1.0), "{scraped}");
    // node_exporter read both files without complaint.
    assert_eq!(
        value(&scraped, "node_textfile_scrape_error"),
        Some(0.0),
        "{scraped}"
    );
}

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
    let (ok, said) = promtool(&file);
    assert!(ok, "promtool check metrics: {said}");
}
