//! Job names and the state store: `--no-overlap` locks, `--once-per` and `--idempotency-key`
//! records, what a SIGKILLed holder leaves behind, the store's layout and modes, and that a
//! run asking for none of it touches no disk. Concurrent starts are held by a gate file the
//! test creates, never by sleeps.

use std::io::{BufRead, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime};

use crate::harness::{Crontap, Receiver, SECRET, alive, assert_no_secret, eventually};

/// crontap-run reporting to `receiver`, with its state in `state`.
pub(crate) fn stateful(receiver: &Receiver, state: &Path) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap.arg("--state-dir").arg(state);
    crontap
}

/// A file whose creation lets blocked jobs finish. It is created when dropped too, so a
/// failing test never leaves jobs waiting (each blocked run also has `--timeout 60s`).
pub(crate) struct Gate(PathBuf);

impl Gate {
    pub(crate) fn new(dir: &Path) -> Gate {
        Gate(dir.join("go"))
    }

    /// Shell that waits until the gate is open.
    pub(crate) fn wait_script(&self) -> String {
        format!("while [ ! -e '{}' ]; do sleep 0.05; done", self.0.display())
    }

    pub(crate) fn open(&self) {
        std::fs::write(&self.0, "").unwrap();
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, "");
    }
}

/// Every file and directory under `dir`, recursively (not `dir` itself).
pub(crate) fn entries_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.symlink_metadata().unwrap().is_dir() {
                pending.push(path.clone());
            }
            found.push(path);
        }
    }
    found
}

/// The number of lines in a file, 0 if it does not exist.
pub(crate) fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The exit status and stderr of a spawned crontap-run that has ended.
pub(crate) fn ended(child: &mut Child) -> (i32, String) {
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).unwrap();
    }
    assert_no_secret(&stderr, "stderr");
    (status.code().expect("crontap-run exited normally"), stderr)
}

/// Starts `count` copies of `crontap` at once (see [`together`]).
fn start_together(crontap: &mut Crontap, count: usize, gate: &Gate) -> Vec<(i32, String)> {
    let children = (0..count)
        .map(|_| crontap.spawn(Stdio::null(), Stdio::piped()))
        .collect();
    together(children, gate)
}

/// Takes crontap-runs just started whose job blocks on `gate`; waits until all but one
/// have ended (they are the skipped ones), opens the gate, and returns every exit status
/// and stderr. Panics, after letting the blocked job go, if fewer than all but one ended
/// while the job was held.
pub(crate) fn together(mut children: Vec<Child>, gate: &Gate) -> Vec<(i32, String)> {
    let count = children.len();
    let mut results: Vec<Option<(i32, String)>> = vec![None; count];
    let all_but_one = eventually(Duration::from_secs(60), || {
        for (child, result) in children.iter_mut().zip(results.iter_mut()) {
            if result.is_none() && child.try_wait().unwrap().is_some() {
                *result = Some(ended(child));
            }
        }
        results.iter().flatten().count() >= count - 1
    });
    let early = results.iter().flatten().count();
    gate.open();
    for (child, result) in children.iter_mut().zip(results.iter_mut()) {
        if result.is_none() {
            *result = Some(ended(child));
        }
    }
    assert!(
        all_but_one,
        "only {early} of {count} ended while the job was held: {results:#?}"
    );
    results.into_iter().flatten().collect()
}

/// Starts crontap-run with a job that writes its pid to `pid_file`, says `ready` and sleeps;
/// returns once the job is ready. Its stderr goes to `stderr`.
fn start_sleeper(crontap: &mut Crontap, pid_file: &Path, stderr: &Path) -> Child {
    let script = format!(
        "echo $$ > '{}'; echo ready; exec sleep 600",
        pid_file.display()
    );
    let mut child = crontap
        .args(["--", "sh", "-c", &script])
        .spawn(Stdio::piped(), std::fs::File::create(stderr).unwrap());
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    child
}

/// Kills, when dropped, the `sleep` whose pid is in the file, should it have outlived its
/// crontap-run: a failing test leaves no process behind.
struct KillSleeper(PathBuf);

impl Drop for KillSleeper {
    fn drop(&mut self) {
        let Ok(pid) = std::fs::read_to_string(&self.0) else {
            return;
        };
        let pid = pid.trim();
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if let (true, Ok(pid)) = (comm.trim() == "sleep", pid.parse()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// SIGKILLs crontap-run and reaps it.
fn sigkill(child: &mut Child) {
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
}

/// Seconds since the epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `secs` since the epoch as RFC 3339 UTC to the second, e.g. `2026-11-29T00:00:00Z`.
fn rfc3339(secs: u64) -> String {
    // Days to a civil date: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms".
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let rem = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

const NOTICE_RUNNING: &str =
    "crontap-run: notice: skipped: job nightly is already running (--no-overlap)\n";

#[test]
fn twenty_concurrent_no_overlap_starts_run_the_command_once() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let results = start_together(
        stateful(&receiver, &state)
            .args(["--no-overlap", "--job", "nightly", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]),
        20,
        &gate,
    );
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let skipped = results
        .iter()
        .filter(|(_, stderr)| stderr == NOTICE_RUNNING)
        .count();
    let silent = results
        .iter()
        .filter(|(_, stderr)| stderr.is_empty())
        .count();
    assert_eq!((skipped, silent), (19, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command ran more than once");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    assert_eq!(line_count(&state.join("history/nightly.jsonl")), 20);
}

#[test]
fn a_skipped_run_says_so_in_one_line_unless_quiet() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let marker = dir.path().join("ran");
    let gate = Gate::new(dir.path());
    let script = format!("echo ready; {}", gate.wait_script());
    let mut holder = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "nightly", "--timeout", "60s"])
        .args(["--", "sh", "-c", &script])
        .start();
    holder.wait_for("ready");
    assert!(state.join("locks/nightly.lock").is_file());

    let skipped = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "nightly", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(skipped.code, 0);
    assert_eq!(skipped.stderr, NOTICE_RUNNING);
    let quiet = stateful(&receiver, &state)
        .args(["-q", "--no-overlap", "--job", "nightly", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(quiet.code, 0);
    assert_eq!(quiet.stderr, "");
    assert!(!marker.exists(), "a skipped run ran the command");
    assert!(
        receiver.received().is_empty(),
        "a skipped run sends nothing"
    );

    // Another job is not held back.
    let other = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "other", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(other.code, 0, "{}", other.stderr);
    assert!(marker.exists());

    gate.open();
    assert_eq!(holder.finish().code, 0);
    let pings = receiver.received();
    assert_eq!(pings.len(), 2, "{pings:#?}");
    assert!(pings.iter().all(|p| p.target == format!("/ping/{SECRET}")));
}

/// Starts a holder with the state options `args` whose job sleeps, SIGKILLs its crontap-run,
/// checks that the job died with it, then runs the same options again: that run must run its
/// command and send the only ping. Returns the state directory.
fn next_run_after_a_sigkilled_holder(receiver: &Receiver, dir: &Path, args: &[&str]) -> PathBuf {
    let state = dir.join("state");
    let pid_file = dir.join("pid");
    let _cleanup = KillSleeper(pid_file.clone());
    let stderr = dir.join("stderr");
    let marker = dir.join("ran");
    let mut holder = start_sleeper(stateful(receiver, &state).args(args), &pid_file, &stderr);
    sigkill(&mut holder);
    // The job held the lock too; it is killed with its crontap-run.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(
        eventually(Duration::from_secs(20), || !alive(pid.trim())),
        "the job of the SIGKILLed crontap-run survived"
    );

    let next = stateful(receiver, &state)
        .args(args)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(next.code, 0, "{}", next.stderr);
    assert_eq!(next.stderr, "");
    assert!(marker.exists(), "the next run did not run the command");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    assert_no_secret(&std::fs::read_to_string(&stderr).unwrap(), "stderr");
    state
}

#[test]
fn a_sigkilled_no_overlap_holder_never_blocks_the_next_run() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    next_run_after_a_sigkilled_holder(&receiver, dir.path(), &["--no-overlap", "--job", "nightly"]);
}

#[test]
fn once_per_runs_the_command_once_per_period() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let count = dir.path().join("count");
    let script = format!("echo run >> '{}'", count.display());
    let run = || {
        stateful(&receiver, &state)
            .args(["--once-per", "1d", "--job", "nightly", "--", "sh", "-c"])
            .arg(&script)
            .run()
    };
    let first = run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(first.stderr, "");
    let second = run();
    assert_eq!(second.code, 0);
    assert_eq!(second.stderr.lines().count(), 1, "{}", second.stderr);
    assert!(
        second
            .stderr
            .starts_with("crontap-run: notice: skipped: nightly:"),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains(" already succeeded at "),
        "{}",
        second.stderr
    );
    assert_eq!(line_count(&count), 1, "the command ran twice");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

#[test]
fn a_failed_key_runs_again_and_a_succeeded_one_is_skipped() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let count = dir.path().join("count");
    let fixed = dir.path().join("fixed");
    let script = format!(
        "echo run >> '{}'; [ -e '{}' ] || {{ echo 'upstream not ready' >&2; exit 3; }}",
        count.display(),
        fixed.display()
    );
    let run = || {
        stateful(&receiver, &state)
            .args(["--idempotency-key", "import-2026-11-29", "--"])
            .args(["sh", "-c", &script])
            .run()
    };
    assert_eq!(run().code, 3);
    assert_eq!(receiver.received().len(), 1);
    assert!(
        receiver.received()[0]
            .target
            .starts_with(&format!("/ping/{SECRET}/fail?msg=")),
        "{:?}",
        receiver.received()
    );
    std::fs::write(&fixed, "").unwrap();
    let second = run();
    assert_eq!(second.code, 0, "a failed key must let the next run go");
    assert_eq!(second.stderr, "");
    let third = run();
    assert_eq!(third.code, 0);
    assert!(
        third
            .stderr
            .starts_with("crontap-run: notice: skipped: import-2026-11-29 already succeeded at "),
        "{}",
        third.stderr
    );
    assert_eq!(line_count(&count), 2);
    let pings = receiver.received();
    assert_eq!(pings.len(), 2, "{pings:#?}");
    assert_eq!(pings[1].target, format!("/ping/{SECRET}"));

    // Another key is another run.
    let other = stateful(&receiver, &state)
        .args(["--idempotency-key", "import-2026-11-30", "--"])
        .args(["sh", "-c", &script])
        .run();
    assert_eq!(other.code, 0);
    assert_eq!(line_count(&count), 3);
}

#[test]
fn ten_concurrent_starts_with_one_key_run_the_command_once() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let results = start_together(
        stateful(&receiver, &state)
            .args(["--idempotency-key", "batch-7", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]),
        10,
        &gate,
    );
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let notice = "crontap-run: notice: skipped: batch-7 is being run by another instance\n";
    let skipped = results.iter().filter(|(_, e)| e == notice).count();
    let silent = results.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!((skipped, silent), (9, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command ran more than once");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

#[test]
fn the_child_gets_the_idempotency_key() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let key_seen = |args: &[&str]| {
        let out = Crontap::new()
            .arg("-q")
            .arg("--state-dir")
            .arg(&state)
            .args(args)
            .args(["--", "env"])
            .run();
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix("CRONTAP_IDEMPOTENCY_KEY="))
            .map(str::to_owned)
    };
    assert_eq!(rfc3339(1_795_910_400), "2026-11-29T00:00:00Z");
    assert_eq!(rfc3339(1_709_214_307), "2024-02-29T13:45:07Z");
    // One job per period, so that no two keys can coincide.
    for (job, period, secs) in [
        ("daily", "1d", 86_400),
        ("hourly", "1h", 3_600),
        ("quarterly", "15m", 900),
        ("weekly", "7d", 7 * 86_400),
    ] {
        let before = now();
        let key = key_seen(&["--job", job, "--once-per", period]).expect("a key");
        let after = now();
        // A period may begin between the two readings of the clock.
        let expected = [before, after].map(|t| format!("{job}:{}", rfc3339(t - t % secs)));
        assert!(expected.contains(&key), "{key} is not one of {expected:?}");
    }
    assert_eq!(
        key_seen(&["--idempotency-key", "run-42"]).as_deref(),
        Some("run-42")
    );
    assert_eq!(key_seen(&["--no-overlap", "--job", "plain"]), None);
    assert_eq!(key_seen(&[]), None);
}

#[test]
fn a_key_left_running_by_a_sigkilled_holder_is_taken_over() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state =
        next_run_after_a_sigkilled_holder(&receiver, dir.path(), &["--idempotency-key", "batch-8"]);

    // The takeover succeeded, so the key is now done.
    let after = stateful(&receiver, &state)
        .args(["--idempotency-key", "batch-8", "--", "true"])
        .run();
    assert_eq!(after.code, 0);
    assert!(
        after.stderr.contains("already succeeded"),
        "{}",
        after.stderr
    );
    assert_eq!(receiver.received().len(), 1);
}

#[test]
fn job_names_are_checked_and_derived_from_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let run = |job: Option<&str>, command: &[&str]| {
        let mut crontap = Crontap::new();
        crontap.arg("-q").arg("--state-dir").arg(&state);
        if let Some(job) = job {
            crontap.args(["--job", job]);
        }
        crontap.arg("--no-overlap").arg("--").args(command).run()
    };
    let long = "x".repeat(128);
    for job in ["a", "Nightly.import_2-b", &long] {
        let out = run(Some(job), &["true"]);
        assert_eq!(out.code, 0, "{job}: {}", out.stderr);
        let history = state.join(format!("history/{job}.jsonl"));
        assert_eq!(line_count(&history), 1, "{job}");
    }
    let too_long = "x".repeat(129);
    for job in ["", "a b", "a/b", "a:b", &too_long] {
        let marker = dir.path().join("ran");
        let out = Crontap::new()
            .arg("--state-dir")
            .arg(&state)
            .args(["--no-overlap", "--job", job, "--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(out.code, 125, "{job:?}: {}", out.stderr);
        assert!(out.stderr.contains("--job"), "{job:?}: {}", out.stderr);
        assert!(!marker.exists(), "{job:?}: the command ran");
    }

    let from_env = Crontap::new()
        .args(["-q", "--state-dir"])
        .arg(&state)
        .env("CRONTAP_JOB", "from-env")
        .args(["--no-overlap", "--", "true"])
        .run();
    assert_eq!(from_env.code, 0, "{}", from_env.stderr);
    assert_eq!(line_count(&state.join("history/from-env.jsonl")), 1);

    // Derived: `<program>-<8 hex digits>`, the same for the same command line.
    let derived = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(state.join("history"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("echo-"))
            .collect();
        names.sort();
        names
    };
    for args in [["echo", "a"], ["echo", "a"], ["echo", "b"]] {
        assert_eq!(run(None, &args).code, 0);
    }
    let names = derived();
    assert_eq!(names.len(), 2, "{names:?}");
    for name in &names {
        let hash = name
            .strip_prefix("echo-")
            .and_then(|n| n.strip_suffix(".jsonl"))
            .unwrap();
        assert!(
            hash.len() == 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}"
        );
    }
    let mut lines: Vec<usize> = names
        .iter()
        .map(|n| line_count(&state.join("history").join(n)))
        .collect();
    lines.sort();
    assert_eq!(lines, [1, 2], "{names:?}");
}

#[test]
fn a_plain_run_writes_nothing() {
    let receiver = Receiver::start();
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("state");
    let plain: &[&[&str]] = &[
        &[],
        &["--job", "x"],
        &["--retries", "1", "--retry-delay", "10ms"],
    ];
    for where_state in [None, Some("env"), Some("option")] {
        for args in plain {
            for script in ["exit 0", "echo failed >&2; exit 1"] {
                let mut crontap = Crontap::with_url(&receiver.url());
                crontap
                    .env("HOME", root.path().join("home"))
                    .env("XDG_STATE_HOME", root.path().join("xdg-state"))
                    .command()
                    .current_dir(root.path());
                match where_state {
                    Some("env") => {
                        crontap.env("CRONTAP_STATE_DIR", &state);
                    }
                    Some(_) => {
                        crontap.arg("--state-dir").arg(&state);
                    }
                    None => {}
                }
                let out = crontap.args(*args).sh(script);
                assert!(out.code == 0 || out.code == 1, "{args:?}: {}", out.stderr);
                let left: Vec<_> = entries_under(root.path());
                assert!(
                    left.is_empty(),
                    "{where_state:?} {args:?} {script:?} left {left:?}"
                );
            }
        }
    }
}

#[test]
fn an_unusable_state_dir_is_refused_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "not a directory").unwrap();
    let marker = dir.path().join("ran");
    let features: &[&[&str]] = &[
        &["--no-overlap"],
        &["--once-per", "1d"],
        &["--idempotency-key", "k-1"],
    ];
    let places = [
        ("--state-dir", file.display().to_string()),
        ("--state-dir", file.join("sub").display().to_string()),
        ("--state-url", format!("file://{}", file.display())),
    ];
    for (option, place) in &places {
        for feature in features {
            let receiver = Receiver::start();
            let out = Crontap::with_url(&receiver.url())
                .arg(option)
                .arg(place)
                .args(["--job", "nightly"])
                .args(*feature)
                .arg("--")
                .arg("touch")
                .arg(&marker)
                .run();
            let what = format!("{option} {place} {feature:?}");
            assert_eq!(out.code, 125, "{what}: {}", out.stderr);
            assert_eq!(out.stderr.lines().count(), 1, "{what}: {}", out.stderr);
            assert!(
                out.stderr.starts_with("crontap-run: error: "),
                "{what}: {}",
                out.stderr
            );
            assert!(out.stderr.contains("state"), "{what}: {}", out.stderr);
            assert!(!marker.exists(), "{what}: the command ran");
            let request = receiver.only();
            assert!(
                request
                    .target
                    .starts_with(&format!("/ping/{SECRET}/fail?msg=")),
                "{what}: {}",
                request.target
            );
            let msg = request.msg().unwrap();
            assert!(msg.starts_with("not run: "), "{what}: {msg}");
            assert!(msg.contains("state"), "{what}: {msg}");
        }
    }
    // Without a state feature the state dir is never looked at.
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .arg("--state-dir")
        .arg(&file)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(marker.exists());
}

#[test]
fn the_state_dir_and_its_files_are_private() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let mut crontap = stateful(&receiver, &state);
    crontap.args([
        "--no-overlap",
        "--idempotency-key",
        "k-1",
        "--job",
        "nightly",
    ]);
    // Modes must not depend on the caller's umask.
    // SAFETY: umask is async-signal-safe.
    unsafe {
        crontap.command().pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    let out = crontap.args(["--", "true"]).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(mode(&state), 0o700, "state dir");
    let history = state.join("history/nightly.jsonl");
    assert_eq!(mode(&history), 0o600, "history file");
    let files: Vec<PathBuf> = entries_under(&state)
        .into_iter()
        .filter(|p| p.symlink_metadata().unwrap().is_file())
        .collect();
    assert!(files.contains(&history), "{files:?}");
    for file in files {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}

#[test]
fn a_file_state_url_and_the_environment_name_the_same_store() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let count = dir.path().join("count");
    let script = format!("echo run >> '{}'", count.display());
    let key = ["--idempotency-key", "k-1", "--job", "nightly"];
    let first = Crontap::with_url(&receiver.url())
        .arg("--state-url")
        .arg(format!("file://{}", state.display()))
        .args(key)
        .args(["--", "sh", "-c", &script])
        .run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(line_count(&state.join("history/nightly.jsonl")), 1);

    let by_option = stateful(&receiver, &state)
        .args(key)
        .args(["--", "sh", "-c", &script])
        .run();
    let by_dir_env = Crontap::with_url(&receiver.url())
        .env("CRONTAP_STATE_DIR", &state)
        .args(key)
        .args(["--", "sh", "-c", &script])
        .run();
    let by_url_env = Crontap::with_url(&receiver.url())
        .env("CRONTAP_STATE_URL", format!("file://{}", state.display()))
        .args(key)
        .args(["--", "sh", "-c", &script])
        .run();
    for out in [by_option, by_dir_env, by_url_env] {
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stderr.contains("already succeeded"), "{}", out.stderr);
    }
    assert_eq!(line_count(&count), 1);
    assert_eq!(line_count(&state.join("history/nightly.jsonl")), 4);
    receiver.only();
}

#[test]
fn dry_run_leaves_the_state_store_alone() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let count = dir.path().join("count");
    let script = format!("echo run >> '{}'", count.display());
    for _ in 0..2 {
        let out = stateful(&receiver, &state)
            .args(["--dry-run", "--no-overlap", "--once-per", "1d"])
            .args(["--job", "nightly", "--", "sh", "-c", &script])
            .run();
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    assert_eq!(line_count(&count), 2, "a dry run always runs the command");
    assert!(!state.exists(), "a dry run created {}", state.display());
    assert!(receiver.received().is_empty());
}

/// A job whose own child writes its pid to `pid_file` and works until `gate` opens; the
/// job says `ready` once the child is there, then sleeps (or exits, with `then_exit`).
fn job_with_a_child(pid_file: &Path, gate: &Gate, then_exit: bool) -> String {
    format!(
        "sh -c \"echo \\$\\$ > '{pid}'; {wait}\" & while [ ! -s '{pid}' ]; do sleep 0.01; done; \
         echo ready; {end}",
        pid = pid_file.display(),
        wait = gate.wait_script(),
        end = if then_exit {
            "exit 0"
        } else {
            "exec sleep 600"
        },
    )
}

#[test]
fn a_killed_crontap_run_takes_its_whole_job_down() {
    // crontap-run is SIGKILLed while its job's own child still works. That child must not
    // go on unsupervised while the lock is free, or the next run would overlap it.
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let gate = Gate::new(dir.path());
    let pid_file = dir.path().join("pid");
    let script = job_with_a_child(&pid_file, &gate, false);
    let mut holder = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "worker", "--", "sh", "-c", &script])
        .spawn(Stdio::piped(), Stdio::null());
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    let worker = std::fs::read_to_string(&pid_file).unwrap();
    sigkill(&mut holder);
    assert!(
        eventually(Duration::from_secs(20), || !alive(worker.trim())),
        "the job's child outlived its killed crontap-run"
    );

    let marker = dir.path().join("ran");
    let next = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "worker", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(next.code, 0, "{}", next.stderr);
    assert!(marker.exists(), "the next run did not run: {}", next.stderr);
}

/// The signals a lifeline must live through: those a terminal, a session's end or a
/// careless `kill` send (the lifeline module's list). Only SIGKILL may end it.
const LIFELINE_SURVIVES: [&str; 8] = [
    "INT", "TERM", "HUP", "QUIT", "PIPE", "USR1", "USR2", "WINCH",
];

#[test]
fn the_lifeline_lives_through_every_signal_but_sigkill_and_still_takes_the_job_down() {
    // The job sends each signal to the lifeline (crontap-run's other child) before it
    // starts its own child. Had any of them ended the lifeline, nothing would kill the job
    // when crontap-run is SIGKILLed. (The handlers crontap-run installs before the fork
    // would also catch most of them, but the lifeline must not depend on when those are
    // installed: with the default dispositions instead of its own mask this test fails.)
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let gate = Gate::new(dir.path());
    let pid_file = dir.path().join("pid");
    let script = format!(
        "for c in $(cat /proc/$PPID/task/*/children); do [ \"$c\" = $$ ] || lifeline=$c; done; \
         for s in {signals}; do kill -s $s \"$lifeline\" || exit 9; done; \
         echo \"lifeline $lifeline\"; {job}",
        signals = LIFELINE_SURVIVES.join(" "),
        job = job_with_a_child(&pid_file, &gate, false),
    );
    let mut holder = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "worker", "--", "sh", "-c", &script])
        .spawn(Stdio::piped(), Stdio::null());
    let mut out = std::io::BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let lifeline = line
        .strip_prefix("lifeline ")
        .unwrap_or("")
        .trim()
        .to_owned();
    // The job exits first, saying nothing, if a signal ended the lifeline before the next.
    assert!(
        !lifeline.is_empty(),
        "no lifeline, or one of {LIFELINE_SURVIVES:?} ended it: {line:?}"
    );
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    assert!(
        alive(&lifeline),
        "the lifeline died of one of {LIFELINE_SURVIVES:?}"
    );
    let worker = std::fs::read_to_string(&pid_file).unwrap();
    sigkill(&mut holder);
    assert!(
        eventually(Duration::from_secs(20), || !alive(worker.trim())),
        "the job's child outlived its killed crontap-run after its lifeline was signalled"
    );
    assert!(
        eventually(Duration::from_secs(20), || !alive(&lifeline)),
        "the lifeline stayed after taking the job down"
    );
}

#[test]
fn a_process_the_job_leaves_behind_is_left_alone() {
    // After a normal end the run is over: its lock is free, and a process the job started
    // in the background is neither killed nor counted as the job.
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let gate = Gate::new(dir.path());
    let pid_file = dir.path().join("pid");
    let script = job_with_a_child(&pid_file, &gate, true);
    let first = stateful(&receiver, &state)
        .args([
            "-q",
            "--no-overlap",
            "--job",
            "daemon",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(first.success());
    let worker = std::fs::read_to_string(&pid_file).unwrap();
    assert!(alive(worker.trim()), "the background process was killed");

    let marker = dir.path().join("ran");
    let next = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "daemon", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(next.code, 0, "{}", next.stderr);
    assert!(marker.exists(), "the next run was skipped: {}", next.stderr);
    assert!(alive(worker.trim()));
    gate.open();
    assert!(eventually(Duration::from_secs(20), || !alive(
        worker.trim()
    )));
}

#[test]
fn the_state_url_is_not_passed_to_the_job() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().join("state").display());
    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_STATE_URL", &url)
        .args(["--no-overlap", "--", "sh", "-c"])
        .arg("echo \"url=${CRONTAP_STATE_URL-unset}\"")
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "url=unset\n");
    let history = Crontap::new()
        .env("CRONTAP_STATE_URL", &url)
        .args(["history", "--json"])
        .run();
    assert_eq!(history.code, 0, "{}", history.stderr);
    assert_eq!(history.stdout.lines().count(), 1, "{}", history.stdout);
}

#[test]
fn the_state_store_password_is_never_sent() {
    // The job prints the state store's password: the summary must not carry it, nor the
    // user name, whatever the URL looks like.
    let receiver = Receiver::start();
    for (url, password) in [
        (
            "postgres://crontap-app:Sekret-PW-91@db.example/jobs",
            "Sekret-PW-91",
        ),
        ("redis://:Sekret%2FPW-92@cache.example/0", "Sekret/PW-92"),
        (
            "postgres://crontap-app:4242/Sekret-PW-93@db.example/jobs",
            "4242/Sekret-PW-93",
        ),
    ] {
        let out = Crontap::with_url(&receiver.url())
            .env("CRONTAP_STATE_URL", url)
            .sh(&format!(
                "echo 'login as crontap-app failed, tried password {password}' >&2; exit 1"
            ));
        assert_eq!(out.code, 1, "{}", out.stderr);
        let sent = receiver.received().pop().unwrap().msg().unwrap();
        assert!(sent.contains("[REDACTED]"), "{sent}");
        assert!(!sent.contains(password), "{url}: {sent}");
        if url.contains("crontap-app:") {
            assert!(!sent.contains("crontap-app"), "{url}: {sent}");
        }
    }
}
