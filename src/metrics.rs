//! `--metrics-dir`: the job's Prometheus metrics, for node_exporter's textfile collector.
//!
//! After every run, skipped ones and those stopped before the command started included,
//! `DIR/crontap-run-<job>.prom` is rewritten whole: written to a temporary file in the same
//! directory (whose name does not end in `.prom`, so the collector never reads it) and
//! renamed over the old one, so a reader sees the old file or the new one, never half of
//! one. Counters and the last success are carried over from the file being replaced, under
//! a lock on the directory, so runs that end together each add their count. A
//! file that cannot be read is started afresh; one that cannot be written is one error line
//! and never changes the exit status. Nothing here runs, and nothing touches the disk,
//! unless `--metrics-dir` is given.
//!
//! [`push`] sends the same gauges of the last run (no counters) to a Pushgateway
//! (`--metrics-push`). Both carry the job's expected period and grace when they are known
//! (`--expect-every`, `--expect-grace`), for the alert rules under `packaging/prometheus/`.

pub mod push;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::files::{Check, Dir, READABLE, layout};

/// Where a job's metrics go.
#[derive(Debug, Clone)]
pub struct Target {
    pub dir: PathBuf,
    /// The job name (`--job`, or derived from the command as state derives it).
    pub job: String,
    pub expect: Option<Expect>,
}

/// How often the job is expected to succeed, and the grace after that before it is late:
/// `--expect-every` and `--expect-grace` (its heartbeat's period and grace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    pub period: Duration,
    pub grace: Duration,
}

/// How a run counts: `crontap_run_runs_total{result=…}`. A run that was stopped counts as
/// failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    Succeeded,
    Failed,
    Skipped,
}

impl Counted {
    const ALL: [Counted; 3] = [Counted::Succeeded, Counted::Failed, Counted::Skipped];

    fn label(self) -> &'static str {
        match self {
            Counted::Succeeded => "succeeded",
            Counted::Failed => "failed",
            Counted::Skipped => "skipped",
        }
    }
}

/// One run, as the metrics record it.
#[derive(Debug, Clone)]
pub struct Run {
    pub result: Counted,
    pub started: SystemTime,
    pub ended: SystemTime,
    /// How long it took, by the monotonic clock (a clock step mid-run changes nothing).
    pub duration: Duration,
    /// crontap-run's exit status for the run.
    pub exit: u8,
    /// The ping was attempted and failed.
    pub ping_failed: bool,
}

/// The values a file holds.
#[derive(Debug, Clone, Default, PartialEq)]
struct Values {
    /// Start, end, duration and exit of the last run that was not skipped.
    last: Option<Last>,
    last_success: Option<f64>,
    runs: [u64; 3],
    ping_failures: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Last {
    start: f64,
    end: f64,
    duration: f64,
    exit: f64,
    /// Whether it succeeded; unknown in a file written before this was recorded.
    succeeded: Option<bool>,
}

/// Where the text goes: the textfile has the job label on every sample and the counters;
/// a push has neither (the gateway adds the job from the group's path, and keeps one run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Textfile,
    Push,
}

const PREFIX: &str = "crontap_run_";
/// Longest wait for another run's rewrite, which takes moments.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Rewrites the job's metrics file with `run` counted in. An error is logged, never
/// returned: metrics never change how a run ends. After a run that printed its own error
/// (one line, such as the open-files limit that stopped it, which a metrics file cannot be
/// opened under either), the error is logged at debug level: that run says one line.
pub fn record(target: &Target, run: &Run, own_error_printed: bool) {
    match write(target, run) {
        Err(err) if own_error_printed => tracing::debug!("cannot write the metrics file: {err:#}"),
        Err(err) => tracing::error!("cannot write the metrics file: {err:#}"),
        Ok(()) => {}
    }
}

fn write(target: &Target, run: &Run) -> Result<()> {
    // The collector's directory, usually another account's: used as it is, but nothing
    // in it is followed or overwritten in place (see `files`).
    let dir = Dir::open(&target.dir, Check::Shared, false)?.with_context(|| {
        format!(
            "the metrics directory {} does not exist",
            crate::sanitize::path(&target.dir)
        )
    })?;
    let name = layout::metrics(&target.job);
    // Runs of the same job that end together take turns, so that none loses another's
    // count. On a lock file of the job's own, which only root (or the user) can open, not
    // on the directory, which anyone who can read it could lock for ever.
    let _turn = dir.lock_file_within(&layout::metrics_lock(&target.job), LOCK_WAIT)?;
    let previous = match dir.read(&name) {
        Ok(Some(bytes)) => parse(&String::from_utf8_lossy(&bytes)),
        Ok(None) => Values::default(),
        Err(err) => {
            tracing::warn!("{err:#}; its counters start again from zero");
            Values::default()
        }
    };
    let text = render(
        &target.job,
        &updated(previous, run),
        target.expect,
        Shape::Textfile,
    );
    dir.replace(&name, text.as_bytes(), READABLE, false)
}

/// The values of the job's metrics file as it is now, read without waiting for a writer
/// (the push wants the last success and the last run it records); nothing if there is no
/// file or it cannot be read.
fn previous(target: &Target) -> Values {
    let read = || -> Result<Option<Values>> {
        let Some(dir) = Dir::open(&target.dir, Check::Shared, false)? else {
            return Ok(None);
        };
        let bytes = dir.read(&layout::metrics(&target.job))?;
        Ok(bytes.map(|b| parse(&String::from_utf8_lossy(&b))))
    };
    match read() {
        Ok(values) => values.unwrap_or_default(),
        Err(err) => {
            tracing::debug!("cannot read the metrics file for the push: {err:#}");
            Values::default()
        }
    }
}

fn seconds(t: SystemTime) -> f64 {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    // Milliseconds are precision enough, and keep the numbers short.
    (d.as_millis() as f64) / 1000.0
}

fn updated(mut values: Values, run: &Run) -> Values {
    let index = Counted::ALL
        .iter()
        .position(|c| *c == run.result)
        .unwrap_or(1);
    values.runs[index] = values.runs[index].saturating_add(1);
    if run.ping_failed {
        values.ping_failures = values.ping_failures.saturating_add(1);
    }
    if run.result != Counted::Skipped {
        values.last = Some(Last {
            start: seconds(run.started),
            end: seconds(run.ended),
            duration: run.duration.as_millis() as f64 / 1000.0,
            exit: f64::from(run.exit),
            succeeded: Some(run.result == Counted::Succeeded),
        });
    }
    if run.result == Counted::Succeeded {
        values.last_success = Some(seconds(run.ended));
    }
    values
}

/// The values of a previous file; what cannot be read is left at its default.
fn parse(text: &str) -> Values {
    let mut values = Values::default();
    let mut last = Last {
        start: f64::NAN,
        end: f64::NAN,
        duration: f64::NAN,
        exit: f64::NAN,
        succeeded: None,
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        if !value.is_finite() || value < 0.0 {
            continue;
        }
        let (name, labels) = series.split_once('{').unwrap_or((series, ""));
        let Some(name) = name.strip_prefix(PREFIX) else {
            continue;
        };
        match name {
            "last_start_timestamp_seconds" => last.start = value,
            "last_end_timestamp_seconds" => last.end = value,
            "last_duration_seconds" => last.duration = value,
            "last_exit_code" => last.exit = value,
            "last_success_timestamp_seconds" if value > 0.0 => values.last_success = Some(value),
            "ping_failures_total" => values.ping_failures = value as u64,
            "last_result" if value == 1.0 => {
                if labels.contains("result=\"succeeded\"") {
                    last.succeeded = Some(true);
                } else if labels.contains("result=\"failed\"") {
                    last.succeeded = Some(false);
                }
            }
            "runs_total" => {
                for (i, counted) in Counted::ALL.iter().enumerate() {
                    if labels.contains(&format!("result=\"{}\"", counted.label())) {
                        values.runs[i] = value as u64;
                    }
                }
            }
            _ => {}
        }
    }
    if [last.start, last.end, last.duration, last.exit]
        .iter()
        .all(|v| !v.is_nan())
    {
        values.last = Some(last);
    }
    values
}

/// The text: each metric with its `# HELP` and `# TYPE` lines, shaped for the textfile or
/// for a push.
fn render(job: &str, values: &Values, expect: Option<Expect>, shape: Shape) -> String {
    let mut text = Text {
        base: match shape {
            Shape::Textfile => format!("job=\"{}\"", escape(job)),
            Shape::Push => String::new(),
        },
        out: String::new(),
    };
    if let Some(last) = values.last {
        text.last_run(&last);
    }
    // The textfile says 0 for "never succeeded"; a push knows it only from this run or a
    // textfile beside it, and says nothing when it does not know.
    if shape == Shape::Textfile || values.last_success.is_some() {
        text.gauge(
            "last_success_timestamp_seconds",
            "When the last successful run ended; 0 if none has succeeded yet.",
            values.last_success.unwrap_or(0.0),
        );
    }
    if let Some(expect) = expect {
        text.gauge(
            "expected_period_seconds",
            "How often the job is expected to succeed (--expect-every).",
            expect.period.as_secs_f64(),
        );
        text.gauge(
            "expected_grace_seconds",
            "How long after its period a job counts as late (--expect-grace).",
            expect.grace.as_secs_f64(),
        );
    }
    if shape == Shape::Textfile {
        text.counters(values);
    }
    text.out
}

/// The text being written, and the labels every sample carries (the job's in a textfile;
/// none in a push, whose URL names the job).
struct Text {
    base: String,
    out: String,
}

impl Text {
    /// The labels of a sample: the base ones and `extra`, in braces, or nothing at all.
    fn labels(&self, extra: &str) -> String {
        let inner = [self.base.as_str(), extra]
            .into_iter()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(",");
        match inner.is_empty() {
            true => inner,
            false => format!("{{{inner}}}"),
        }
    }

    /// One metric: its `# HELP` and `# TYPE` lines, then its samples.
    fn metric(&mut self, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
        let _ = writeln!(self.out, "# HELP {PREFIX}{name} {help}");
        let _ = writeln!(self.out, "# TYPE {PREFIX}{name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(self.out, "{PREFIX}{name}{labels} {value}");
        }
    }

    /// A gauge with one sample and only the base labels.
    fn gauge(&mut self, name: &str, help: &str, value: f64) {
        let labels = self.labels("");
        self.metric(name, "gauge", help, &[(labels, value)]);
    }

    /// The last run that was not skipped: its gauges and, when known, its result.
    fn last_run(&mut self, last: &Last) {
        for (name, help, value) in last_gauges(last) {
            self.gauge(name, help, value);
        }
        if let Some(succeeded) = last.succeeded {
            let samples = [("succeeded", succeeded), ("failed", !succeeded)].map(|(result, is)| {
                (
                    self.labels(&format!("result=\"{result}\"")),
                    f64::from(u8::from(is)),
                )
            });
            self.metric(
                "last_result",
                "gauge",
                "1 for the result of the last run that was not skipped (a stopped run failed).",
                &samples,
            );
        }
    }

    /// The textfile's counters, which a push leaves out (the Pushgateway would keep only the
    /// pushing run's view of them).
    fn counters(&mut self, values: &Values) {
        let runs: Vec<(String, f64)> = Counted::ALL
            .iter()
            .zip(values.runs)
            .map(|(c, n)| (self.labels(&format!("result=\"{}\"", c.label())), n as f64))
            .collect();
        self.metric(
            "runs_total",
            "counter",
            "Runs of the job by result (a stopped run counts as failed).",
            &runs,
        );
        let labels = self.labels("");
        self.metric(
            "ping_failures_total",
            "counter",
            "Runs whose heartbeat ping could not be delivered.",
            &[(labels, values.ping_failures as f64)],
        );
    }
}

/// The gauges of the last run that was not skipped.
fn last_gauges(last: &Last) -> [(&'static str, &'static str, f64); 4] {
    [
        (
            "last_start_timestamp_seconds",
            "When the last run that was not skipped started.",
            last.start,
        ),
        (
            "last_end_timestamp_seconds",
            "When the last run that was not skipped ended.",
            last.end,
        ),
        (
            "last_duration_seconds",
            "How long the last run that was not skipped took, attempts and waits included.",
            last.duration,
        ),
        (
            "last_exit_code",
            "crontap-run's exit status for the last run that was not skipped.",
            last.exit,
        ),
    ]
}

/// A label value as the text format wants it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SystemTime {
        humantime::parse_rfc3339(s).unwrap()
    }

    fn run(result: Counted, exit: u8, ping_failed: bool) -> Run {
        Run {
            result,
            started: at("2026-11-29T00:00:00Z"),
            ended: at("2026-11-29T00:01:12.5Z"),
            duration: Duration::from_millis(72_500),
            exit,
            ping_failed,
        }
    }

    #[test]
    fn counters_carry_over_and_the_last_success_is_kept() {
        let first = updated(Values::default(), &run(Counted::Succeeded, 0, false));
        let text = render("nightly", &first, None, Shape::Textfile);
        assert!(text.contains("crontap_run_runs_total{job=\"nightly\",result=\"succeeded\"} 1\n"));
        assert!(text.contains("crontap_run_last_duration_seconds{job=\"nightly\"} 72.5\n"));
        assert!(text.contains(
            "crontap_run_last_success_timestamp_seconds{job=\"nightly\"} 1795910472.5\n"
        ));
        assert_eq!(parse(&text), first);

        let mut failed = run(Counted::Failed, 3, true);
        failed.ended = at("2026-11-30T00:00:03Z");
        let second = updated(parse(&text), &failed);
        let skipped = updated(second.clone(), &run(Counted::Skipped, 0, false));
        assert_eq!(skipped.runs, [1, 1, 1]);
        assert_eq!(skipped.ping_failures, 1);
        // A skipped run changes no "last" value: the command did not run.
        assert_eq!(skipped.last, second.last);
        assert_eq!(skipped.last.unwrap().exit, 3.0);
        assert_eq!(skipped.last_success, first.last_success);
    }

    #[test]
    fn every_metric_has_help_and_type() {
        let text = render(
            "a",
            &updated(Values::default(), &run(Counted::Skipped, 0, false)),
            None,
            Shape::Textfile,
        );
        // Nothing ran yet: no "last" gauges, but a last success of 0 and all counters.
        assert!(!text.contains("last_exit_code"));
        assert!(text.contains("crontap_run_last_success_timestamp_seconds{job=\"a\"} 0\n"));
        for result in ["succeeded", "failed", "skipped"] {
            assert!(text.contains(&format!("result=\"{result}\"")), "{text}");
        }
        let names: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split('{').next().unwrap())
            .collect();
        for name in names {
            assert!(text.contains(&format!("# HELP {name} ")), "{name}");
            assert!(text.contains(&format!("# TYPE {name} ")), "{name}");
        }
        assert_eq!(
            parse("garbage\n{{{ 1\ncrontap_run_runs_total NaN\n"),
            Values::default()
        );
    }

    /// The push's shape: no job label, no counters, no last success unless known, and the
    /// expected period and grace in both shapes; the result is read back from a file.
    #[test]
    fn the_push_shape_and_the_expected_period() {
        let expect = Some(Expect {
            period: Duration::from_secs(3600),
            grace: Duration::from_secs(90),
        });
        let failed = updated(Values::default(), &run(Counted::Failed, 2, false));
        let push = render("nightly", &failed, expect, Shape::Push);
        assert!(push.contains("\ncrontap_run_last_exit_code 2\n"), "{push}");
        assert!(
            push.contains("crontap_run_last_result{result=\"failed\"} 1\n"),
            "{push}"
        );
        assert!(
            push.contains("crontap_run_expected_period_seconds 3600\n"),
            "{push}"
        );
        assert!(
            push.contains("crontap_run_expected_grace_seconds 90\n"),
            "{push}"
        );
        assert!(!push.contains("job=") && !push.contains("_total"), "{push}");
        assert!(!push.contains("last_success"), "{push}");
        let text = render("nightly", &failed, expect, Shape::Textfile);
        assert!(text.contains("crontap_run_expected_grace_seconds{job=\"nightly\"} 90\n"));
        assert_eq!(parse(&text), failed);
        assert_eq!(parse(&text).last.unwrap().succeeded, Some(false));
    }

    #[test]
    fn unwritable_directory_is_an_error() {
        let target = Target {
            dir: PathBuf::from("/nonexistent/metrics"),
            job: "j".into(),
            expect: None,
        };
        assert!(write(&target, &run(Counted::Succeeded, 0, false)).is_err());
        let tmp = tempfile::tempdir().unwrap();
        let target = Target {
            dir: tmp.path().to_owned(),
            job: "j".into(),
            expect: None,
        };
        write(&target, &run(Counted::Succeeded, 0, false)).unwrap();
        write(&target, &run(Counted::Succeeded, 0, false)).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [".crontap-run-j.prom.lock", "crontap-run-j.prom"],
            "no temporary file is left"
        );
        let text = std::fs::read_to_string(tmp.path().join(layout::metrics("j"))).unwrap();
        assert!(text.contains("result=\"succeeded\"} 2\n"), "{text}");
    }
}
