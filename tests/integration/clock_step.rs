//! A wall-clock step in the middle of a run (NTP setting the clock at boot, a VM resumed)
//! changes no duration: the history line, the metrics file, `history --stats` and the failure
//! summary all say how long the command really ran, and `--timeout` fires when it should.
//! Only the timestamps follow the wall clock (DESIGN.md, "Time").
//!
//! The real binary runs under libfaketime (Debian package `faketime`, which `.ci/run`
//! installs), preloaded with `LD_PRELOAD`, so the debug build must be dynamically linked. Its
//! wall clock reads an offset from a file the test rewrites while the command runs, from `+0`
//! to ten years ahead or back; `FAKETIME_DONT_FAKE_MONOTONIC` leaves the monotonic clock
//! alone, as a real step does. Each test also proves that the step took effect, both for
//! `date` (inside the job, or beside it on the same clock) and in crontap-run itself (the end
//! timestamps it writes), so it cannot pass because libfaketime did nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::harness::{Crontap, Output, Receiver, SECRET};
use crate::history::{history, records};
use crate::state::{Gate, stateful};

/// Ten years of 365 days, as libfaketime counts `3650d`.
const TEN_YEARS: Duration = Duration::from_secs(3650 * 86_400);

/// Slack for comparing timestamps taken in different processes.
const SLACK: Duration = Duration::from_secs(2);

/// How far the wall clock is stepped while the command runs.
#[derive(Clone, Copy, Debug)]
enum Step {
    Forward,
    Back,
}

impl Step {
    /// The offset in libfaketime's syntax.
    fn offset(self) -> &'static str {
        match self {
            Step::Forward => "+3650d",
            Step::Back => "-3650d",
        }
    }

    /// What the stepped clock reads when the real one reads `t`.
    fn apply(self, t: SystemTime) -> SystemTime {
        match self {
            Step::Forward => t + TEN_YEARS,
            Step::Back => t - TEN_YEARS,
        }
    }
}

/// The preloadable libfaketime of this machine's architecture, as Debian installs it.
fn libfaketime() -> PathBuf {
    let path = PathBuf::from(format!(
        "/usr/lib/{}-linux-gnu/faketime/libfaketime.so.1",
        std::env::consts::ARCH
    ));
    assert!(
        path.is_file(),
        "{} is missing: the clock-step tests need libfaketime, from the Debian package \
         faketime (apt-get install faketime; .ci/run installs it)",
        path.display()
    );
    path
}

/// A wall clock the test steps under a crontap-run: libfaketime's timestamp file, read
/// afresh at every clock reading.
struct FakeClock {
    file: PathBuf,
}

impl FakeClock {
    /// A clock that starts out right (`+0`).
    fn new(dir: &Path) -> FakeClock {
        let clock = FakeClock {
            file: dir.join("faketime"),
        };
        clock.set("+0");
        clock
    }

    /// Replaces the offset in one rename, so that no reading sees a half-written file.
    fn set(&self, offset: &str) {
        let tmp = self.file.with_extension("tmp");
        std::fs::write(&tmp, format!("{offset}\n")).unwrap();
        std::fs::rename(&tmp, &self.file).unwrap();
    }

    fn step(&self, step: Step) {
        self.set(step.offset());
    }

    /// Runs `command` (and anything it starts, which inherits the environment) on this
    /// clock.
    fn under<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        command
            .env("LD_PRELOAD", libfaketime())
            .env("FAKETIME_TIMESTAMP_FILE", &self.file)
            .env("FAKETIME_NO_CACHE", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            // It would take precedence over the file.
            .env_remove("FAKETIME")
    }

    /// What `date` reads on this clock now.
    fn date(&self) -> SystemTime {
        let out = self
            .under(&mut Command::new("date"))
            .arg("+%s")
            .output()
            .expect("run date");
        assert!(out.status.success(), "date: {out:?}");
        let secs = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        UNIX_EPOCH + Duration::from_secs(secs)
    }
}

/// The shell of a job that says `ready`, waits for `gate`, prints the time it then sees
/// (`stepped <unix seconds>`) and runs for a measured `then` before ending with `exit`.
/// The sleep is the duration under test, not a synchronisation.
fn job_script(gate: &Gate, then: &str, exit: u8) -> String {
    format!(
        "echo ready; {}; echo \"stepped $(date +%s)\"; sleep {then}; echo giving up >&2; exit {exit}",
        gate.wait_script()
    )
}

fn unix(t: SystemTime) -> Duration {
    t.duration_since(UNIX_EPOCH).expect("a time after 1970")
}

/// Asserts that `t` lies within `[from, to]`, give or take [`SLACK`].
fn assert_between(t: SystemTime, (from, to): (SystemTime, SystemTime), what: &str) {
    assert!(
        unix(t) + SLACK >= unix(from) && unix(t) <= unix(to) + SLACK,
        "{what} is {}, not between {} and {}",
        humantime::format_rfc3339_millis(t),
        humantime::format_rfc3339_millis(from),
        humantime::format_rfc3339_millis(to),
    );
}

/// The wall time the job printed after the step: libfaketime must have taken effect in it.
fn assert_job_saw_the_step(out: &Output, step: Step, real: (SystemTime, SystemTime)) {
    let seen = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("stepped "))
        .unwrap_or_else(|| {
            panic!(
                "the job never got past the gate: stdout {:?}, stderr {:?}",
                out.stdout, out.stderr
            )
        });
    let seen = UNIX_EPOCH + Duration::from_secs(seen.trim().parse().unwrap());
    assert_between(
        seen,
        (step.apply(real.0), step.apply(real.1)),
        "the job's `date` after the step (libfaketime has not taken effect)",
    );
}

/// Parses an RFC 3339 timestamp from a history record.
fn timestamp(record: &Value, name: &str) -> SystemTime {
    let text = record[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {record}"));
    humantime::parse_rfc3339(text).unwrap_or_else(|e| panic!("{name} {text:?}: {e}"))
}

/// The one history record of `job`.
fn record_of(state: &Path, job: &str) -> Value {
    let records = records(state, &["--job", job]);
    assert_eq!(records.len(), 1, "{records:#?}");
    records.into_iter().next().unwrap()
}

/// The value of `name{job="<job>"}` in the job's metrics file.
fn metric(metrics: &Path, job: &str, name: &str) -> f64 {
    let file = metrics.join(format!("crontap-run-{job}.prom"));
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    let series = format!("{name}{{job=\"{job}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no {series:?} in {text}"))
        .parse()
        .unwrap()
}

fn at_seconds(secs: f64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs_f64(secs)
}

/// What a run that was stepped mid-run must have recorded in history and metrics: a
/// duration within `took`, a start by the wall clock before the step (`real`) and an end by
/// the one after it.
fn assert_recorded(
    (state, metrics): (&Path, &Path),
    job: &str,
    step: Step,
    real: (SystemTime, SystemTime),
    took: (Duration, Duration),
) {
    let record = record_of(state, job);
    let ms = record["duration_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("duration_ms in {record}"));
    let ms = Duration::from_millis(ms);
    assert!(
        ms >= took.0 && ms < took.1,
        "history says the run took {ms:?}, not between {:?} and {:?}, after a step {step:?}: \
         {record}",
        took.0,
        took.1,
    );
    assert_between(timestamp(&record, "started"), real, "the history's start");
    assert_between(
        timestamp(&record, "ended"),
        (step.apply(real.0), step.apply(real.1)),
        "the history's end (crontap-run's wall clock did not follow the step: is libfaketime \
         preloaded into a dynamically linked binary?)",
    );

    let seconds = metric(metrics, job, "crontap_run_last_duration_seconds");
    assert!(
        seconds >= took.0.as_secs_f64() && seconds < took.1.as_secs_f64(),
        "crontap_run_last_duration_seconds is {seconds}, not between {:?} and {:?}, after a \
         step {step:?}",
        took.0,
        took.1,
    );
    assert_between(
        at_seconds(metric(
            metrics,
            job,
            "crontap_run_last_start_timestamp_seconds",
        )),
        real,
        "crontap_run_last_start_timestamp_seconds",
    );
    assert_between(
        at_seconds(metric(
            metrics,
            job,
            "crontap_run_last_end_timestamp_seconds",
        )),
        (step.apply(real.0), step.apply(real.1)),
        "crontap_run_last_end_timestamp_seconds",
    );
}

/// The `msg` of the only request `receiver` got, which must be a fail ping.
fn fail_msg(receiver: &Receiver) -> String {
    let ping = receiver.only();
    assert!(
        ping.target.starts_with(&format!("/ping/{SECRET}/fail?")),
        "not a fail ping: {:?}",
        ping.target.replace(SECRET, "<SECRET>")
    );
    ping.msg().expect("a fail ping has a msg")
}

/// The state, metrics and gate directories of one test.
struct Dirs {
    _tmp: tempfile::TempDir,
    state: PathBuf,
    metrics: PathBuf,
    root: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let metrics = root.join("metrics");
        std::fs::create_dir(&metrics).unwrap();
        Dirs {
            state: root.join("state"),
            metrics,
            root,
            _tmp: tmp,
        }
    }

    /// A gate and a clock of their own for the run of `job`.
    fn gate_and_clock(&self, job: &str) -> (Gate, FakeClock) {
        let dir = self.root.join(format!("run-{job}"));
        std::fs::create_dir(&dir).unwrap();
        (Gate::new(&dir), FakeClock::new(&dir))
    }

    /// crontap-run reporting to `receiver` on `clock`, with history and metrics for `job`.
    fn run(&self, receiver: &Receiver, clock: &FakeClock, job: &str) -> Crontap {
        let mut crontap = stateful(receiver, &self.state);
        clock.under(crontap.command());
        crontap
            .args(["--no-overlap", "--job", job, "--metrics-dir"])
            .arg(&self.metrics);
        crontap
    }
}

/// One run stepped by `step` while its command waits at a gate; after the gate it runs for
/// a measured 0.3 s and exits with `exit`. Returns the real wall-clock times before it
/// started and after it ended.
fn stepped_run(
    dirs: &Dirs,
    receiver: &Receiver,
    step: Step,
    job: &str,
    exit: u8,
) -> (SystemTime, SystemTime) {
    let (gate, clock) = dirs.gate_and_clock(job);
    let before = SystemTime::now();
    let mut running = dirs
        .run(receiver, &clock, job)
        // Bounds a run whose gate never opens.
        .args(["--timeout", "60s", "--", "sh", "-c"])
        .arg(job_script(&gate, "0.3", exit))
        .start();
    running.wait_for("ready");
    clock.step(step);
    gate.open();
    let out = running.finish();
    let real = (before, SystemTime::now());
    assert_eq!(
        out.code,
        i32::from(exit),
        "the exit status after a step {step:?}: {}",
        out.stderr
    );
    assert_job_saw_the_step(&out, step, real);
    real
}

/// History, metrics, `--stats` and the failure summary of runs stepped by `step`.
fn durations_ignore(step: Step) {
    // Fail early, with the package to install, if libfaketime is missing.
    libfaketime();
    let dirs = Dirs::new();
    let store = (dirs.state.as_path(), dirs.metrics.as_path());
    // What the job itself does after the gate takes 0.3 s; all of the run, well under a
    // minute even on a loaded machine.
    let took = (Duration::from_millis(250), Duration::from_secs(60));

    let receiver = Receiver::start();
    let succeeded = stepped_run(&dirs, &receiver, step, "succeeds", 0);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    assert_recorded(store, "succeeds", step, succeeded, took);

    let receiver = Receiver::start();
    let real = stepped_run(&dirs, &receiver, step, "fails", 3);
    assert_recorded(store, "fails", step, real, took);
    // `exit 3 after 312ms: giving up`
    let msg = fail_msg(&receiver);
    let after = msg
        .strip_prefix("exit 3 after ")
        .and_then(|rest| rest.split_once(": giving up"))
        .map(|(after, _)| after)
        .unwrap_or_else(|| panic!("summary {msg:?}"));
    let after = humantime::parse_duration(after).unwrap_or_else(|e| panic!("summary {msg:?}: {e}"));
    assert!(
        after >= took.0 && after < took.1,
        "the summary says the command ran {after:?}, after a step {step:?}: {msg:?}"
    );

    let stats = records(&dirs.state, &["--stats"]);
    let of = |job: &str| {
        stats
            .iter()
            .find(|s| s["job"] == job)
            .unwrap_or_else(|| panic!("no stats for {job}: {stats:#?}"))
    };
    let succeeds = of("succeeds");
    for field in ["p50_ms", "p95_ms", "max_ms"] {
        let ms = Duration::from_millis(succeeds[field].as_u64().unwrap_or_else(|| {
            panic!("{field} in {succeeds}");
        }));
        assert!(
            ms >= took.0 && ms < took.1,
            "--stats {field} is {ms:?} after a step {step:?}: {succeeds}"
        );
    }
    let grace = succeeds["suggested_grace_s"]
        .as_u64()
        .unwrap_or_else(|| panic!("suggested_grace_s in {succeeds}"));
    assert!(
        (60..3600).contains(&grace),
        "--stats suggests a grace of {grace} s after a step {step:?}: {succeeds}"
    );
    assert!(of("fails")["max_ms"].is_null(), "{stats:#?}");
    // The last success is a timestamp: it follows the wall clock.
    assert_between(
        timestamp(succeeds, "last_success"),
        (step.apply(succeeded.0), step.apply(succeeded.1)),
        "--stats last_success",
    );

    // The tables say the same in words.
    for table in [
        history(&dirs.state, &[]).stdout,
        history(&dirs.state, &["--stats"]).stdout,
    ] {
        assert!(!table.contains("year") && !table.contains("day"), "{table}");
    }
}

#[test]
fn ten_years_forward_mid_run_changes_no_duration() {
    durations_ignore(Step::Forward);
}

#[test]
fn ten_years_back_mid_run_changes_no_duration() {
    durations_ignore(Step::Back);
}

/// A `--timeout 1s` run whose command would run for 30 s: the wall clock is stepped by
/// `step` while the timeout is pending, and it still fires about a second after the start,
/// and the fail ping's summary and the history say so.
fn timeout_ignores(step: Step) {
    libfaketime();
    let dirs = Dirs::new();
    let receiver = Receiver::start();
    let clock = FakeClock::new(&dirs.root);
    let before = SystemTime::now();
    let started = Instant::now();
    let mut running = dirs
        .run(&receiver, &clock, "times-out")
        .args([
            "--timeout",
            "1s",
            "--",
            "sh",
            "-c",
            "echo ready; exec sleep 30",
        ])
        .start();
    running.wait_for("ready");
    clock.step(step);
    let stepped = started.elapsed();
    let now = SystemTime::now();
    assert_between(
        clock.date(),
        (step.apply(before), step.apply(now)),
        "`date` on the stepped clock (libfaketime has not taken effect)",
    );
    let out = running.finish();
    let real = (before, SystemTime::now());
    assert!(
        stepped < Duration::from_secs(1),
        "the clock was stepped {stepped:?} after crontap-run started, too late to test its \
         1s timeout (the machine is very busy)"
    );
    assert_eq!(
        out.code, 124,
        "the 1s timeout did not end the command after a step {step:?}: {}",
        out.stderr
    );

    let fired = receiver.only().at - started;
    assert!(
        fired >= Duration::from_secs(1) && fired < Duration::from_secs(6),
        "the timeout's fail ping came {fired:?} after the start, after a step {step:?}"
    );
    let msg = fail_msg(&receiver);
    assert_eq!(msg, "timed out after 1s (sent SIGTERM): ready", "{step:?}");
    assert_recorded(
        (&dirs.state, &dirs.metrics),
        "times-out",
        step,
        real,
        (Duration::from_secs(1), Duration::from_secs(6)),
    );
}

#[test]
fn ten_years_forward_mid_run_moves_no_timeout() {
    timeout_ignores(Step::Forward);
}

#[test]
fn ten_years_back_mid_run_moves_no_timeout() {
    timeout_ignores(Step::Back);
}

/// A run whose clock is 40 days ahead (a wrong clock at boot) finds every other job's files
/// "not seen for 30 days": it must remove none of them, nor the key records of today, so
/// that back on the right clock a `--once-per` job that succeeded today is still skipped.
#[test]
fn a_run_with_its_clock_far_ahead_removes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let receiver = Receiver::start();
    let run = |job: &str, clock: Option<&FakeClock>| {
        let mut crontap = Crontap::with_url(&receiver.url());
        crontap.arg("--state-dir").arg(&state).args([
            "--job",
            job,
            "--no-overlap",
            "--once-per",
            "1d",
            "--",
            "true",
        ]);
        if let Some(clock) = clock {
            clock.under(crontap.command());
        }
        crontap.run()
    };
    for job in ["backup", "import"] {
        assert_eq!(run(job, None).code, 0);
    }
    let listing = |dir: &str| {
        let mut names: Vec<String> = std::fs::read_dir(state.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before: Vec<_> = ["locks", "keys", "history"].map(listing).into();
    let clock = FakeClock::new(tmp.path());
    clock.set("+40d");
    assert_eq!(run("wrong-clock", Some(&clock)).code, 0);
    for (dir, was) in ["locks", "keys", "history"].iter().zip(&before) {
        let now = listing(dir);
        for name in was {
            assert!(now.contains(name), "{dir}/{name} was removed: {now:?}");
        }
    }
    let out = run("backup", None);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("already succeeded"),
        "backup ran again: {out:?}"
    );
}
