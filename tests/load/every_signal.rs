//! A job killed by any signal, 1 to SIGRTMAX with the real-time signals included, is
//! reported as killed by that signal: crontap-run exits 128+S, sends one fail ping that
//! names the signal, releases its lock, and never hangs. A signal whose default action is
//! to ignore or to continue does not end the job, and the run is an ordinary success.
//!
//! The expected name and default action of each signal are written here by hand from
//! signal(7), never taken from crontap-run's code. Every crontap-run started here has a
//! watchdog, so a wrapper that hangs fails the test instead of hanging it; and every process
//! a run leaves behind (crontap-run, its lifeline, the job) must be gone when it has ended.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use crate::harness::{Crontap, Receiver, SECRET, alive, default_signals, eventually};
use crate::workers::on_workers;

/// How long one crontap-run may take before it counts as hung. The job ends at once, so a
/// working crontap-run takes a fraction of a second, even on a loaded machine.
const WATCHDOG: Duration = Duration::from_secs(20);

/// How many cases run at once. Each run is short; running several at once keeps the test
/// quick, and bounds how long a crontap-run that hangs on every real-time signal keeps the
/// test (each hang costs the whole [`WATCHDOG`]).
const WORKERS: usize = 8;

/// A signal's default action, as signal(7) names it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    Term,
    Core,
    Ign,
    Cont,
    Stop,
}

use Action::{Cont, Core, Ign, Stop, Term};

/// The standard signals on Linux (x86, ARM and most others), with their `kill -l` names and
/// default actions, copied from signal(7).
const STANDARD: [(i32, &str, Action); 31] = [
    (1, "SIGHUP", Term),
    (2, "SIGINT", Term),
    (3, "SIGQUIT", Core),
    (4, "SIGILL", Core),
    (5, "SIGTRAP", Core),
    (6, "SIGABRT", Core),
    (7, "SIGBUS", Core),
    (8, "SIGFPE", Core),
    (9, "SIGKILL", Term),
    (10, "SIGUSR1", Term),
    (11, "SIGSEGV", Core),
    (12, "SIGUSR2", Term),
    (13, "SIGPIPE", Term),
    (14, "SIGALRM", Term),
    (15, "SIGTERM", Term),
    (16, "SIGSTKFLT", Term),
    (17, "SIGCHLD", Ign),
    (18, "SIGCONT", Cont),
    (19, "SIGSTOP", Stop),
    (20, "SIGTSTP", Stop),
    (21, "SIGTTIN", Stop),
    (22, "SIGTTOU", Stop),
    (23, "SIGURG", Ign),
    (24, "SIGXCPU", Core),
    (25, "SIGXFSZ", Core),
    (26, "SIGVTALRM", Term),
    (27, "SIGPROF", Term),
    (28, "SIGWINCH", Ign),
    (29, "SIGIO", Term),
    (30, "SIGPWR", Term),
    (31, "SIGSYS", Core),
];

/// The name the report must give signal `n`, whatever C library crontap-run was built with:
/// - 1 to 31: their usual names (`SIGHUP` …);
/// - 32 and 33: no name, since glibc keeps them for itself: `signal 32`, `signal 33`;
/// - 34 to 64: `SIGRTMIN`, `SIGRTMIN+1` … `SIGRTMIN+29`, then `SIGRTMAX` for 64: glibc's
///   numbering, the one Debian's `kill -l` prints and dash's `kill -s RTMIN+3` takes.
fn report_name(n: i32) -> String {
    match n {
        1..=31 => STANDARD[n as usize - 1].1.to_owned(),
        32 | 33 => format!("signal {n}"),
        34 => "SIGRTMIN".to_owned(),
        35..=63 => format!("SIGRTMIN+{}", n - 34),
        64 => "SIGRTMAX".to_owned(),
        _ => panic!("Linux has no signal {n}"),
    }
}

/// What a job that sends itself a signal must come to.
#[derive(Clone, Debug)]
enum Expect {
    /// Killed: the report names the signal so.
    Killed { name: String },
    /// Not killed (the default is to ignore it, or to continue): the job runs on.
    Survives,
}

/// One signal, and what it must do to a job.
#[derive(Clone, Debug)]
struct Case {
    signal: i32,
    expect: Expect,
}

/// Every signal from 1 to the test process's SIGRTMAX, but the stop signals.
fn every_signal() -> Vec<Case> {
    let rtmax = libc::SIGRTMAX();
    assert!(rtmax >= 34, "SIGRTMAX is {rtmax}: no real-time signals?");
    (1..=rtmax)
        .filter_map(|signal| {
            // Real-time signals have no default action in the table: it is Term.
            let action = match signal {
                1..=31 => STANDARD[signal as usize - 1].2,
                _ => Term,
            };
            let expect = match action {
                Term | Core => Expect::Killed {
                    name: report_name(signal),
                },
                Ign | Cont => Expect::Survives,
                // SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU stop the job, and a stopped job is
                // not a dead one: it waits for SIGCONT, which is not what these tests are
                // about.
                Stop => return None,
            };
            Some(Case { signal, expect })
        })
        .collect()
}

/// The job for one case: no core files, then the signal sent to itself. A job that outlives
/// a signal that should have killed it says so and exits 99.
fn job(case: &Case) -> String {
    let n = case.signal;
    match case.expect {
        Expect::Killed { .. } => {
            format!("ulimit -c 0; kill -s {n} $$; echo survived signal {n} >&2; exit 99")
        }
        Expect::Survives => format!("ulimit -c 0; kill -s {n} $$ || exit 98"),
    }
}

/// The environment variable that marks every process a run starts: crontap-run passes its
/// environment on to the lifeline and the job, so processes left behind can be found.
const TAG: &str = "EVERY_SIGNAL_TEST_TAG";

/// Live processes whose environment holds `TAG=tag`.
fn tagged(tag: &str) -> Vec<String> {
    let wanted = format!("{TAG}={tag}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|&b| b == 0)
                    .any(|var| var == wanted.as_bytes())
            })
        })
        .filter(|pid| alive(pid))
        .collect()
}

/// Kills whatever still bears the tag when dropped, so a failing case leaves nothing
/// running.
struct Reaper(String);

impl Drop for Reaper {
    fn drop(&mut self) {
        for pid in tagged(&self.0) {
            if let Ok(pid) = pid.parse() {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// Between fork and exec of crontap-run: every signal back to its default disposition, so
/// that crontap-run, which rightly passes ignored signals on to its job, has none to pass.
/// [`default_signals`] does not reach far enough: glibc's `posix_spawn`, with which Rust
/// (the test runner, and cargo before it) starts programs, leaves signal 32 ignored in
/// every program it starts. glibc's own `sigaction` refuses to touch 32 and 33, so this asks
/// the kernel directly.
fn all_signals_default(rtmax: i32) -> std::io::Result<()> {
    /// The kernel's `struct sigaction` (x86-64, arm64); all zeros is `SIG_DFL`, no flags.
    #[repr(C)]
    struct KernelSigaction {
        handler: libc::sighandler_t,
        flags: libc::c_ulong,
        restorer: usize,
        mask: u64,
    }
    let action = KernelSigaction {
        handler: libc::SIG_DFL,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    for sig in (1..=rtmax).filter(|&s| s != libc::SIGKILL && s != libc::SIGSTOP) {
        // SAFETY: SIG_DFL installs no handler code; the kernel reads 8 bytes of mask.
        let done = unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                &action,
                std::ptr::null_mut::<KernelSigaction>(),
                8,
            )
        };
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// What a watched crontap-run left behind.
struct Ended {
    status: ExitStatus,
    stderr: String,
}

/// Runs `crontap` (in `dir`, its output in files there) to its end, or kills it and fails
/// the case if it has not ended within [`WATCHDOG`]. Checks that the secret was not printed.
fn run_watched(crontap: &mut Crontap, dir: &Path, what: &str, signal: i32) -> Ended {
    let stdout = dir.join(format!("{what}.stdout"));
    let stderr = dir.join(format!("{what}.stderr"));
    let rtmax = libc::SIGRTMAX();
    // SAFETY: only a system call between fork and exec.
    unsafe {
        crontap
            .command()
            .current_dir(dir)
            .pre_exec(move || all_signals_default(rtmax));
    }
    let mut child = crontap.spawn(
        File::create(&stdout).unwrap(),
        File::create(&stderr).unwrap(),
    );
    let mut status = None;
    let ended = eventually(WATCHDOG, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if !ended {
        let _ = child.kill();
        let _ = child.wait();
    }
    let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let (stdout, stderr) = (read(&stdout), read(&stderr));
    assert!(
        ended,
        "crontap-run hung after signal {signal} ({what} run); stderr so far: {stderr:?}"
    );
    for (text, name) in [(&stdout, "stdout"), (&stderr, "stderr")] {
        assert!(
            !text.contains(SECRET),
            "signal {signal}: the heartbeat URL's secret leaked into {name}"
        );
    }
    Ended {
        status: status.unwrap(),
        stderr,
    }
}

/// crontap-run reporting to `receiver`, with its state in `state`.
fn stateful(receiver: &Receiver, state: &Path) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap.arg("--state-dir").arg(state);
    crontap
}

/// One case: the job sends itself the signal under `--no-overlap`; the exit status and the
/// report must be what the signal's default action makes them; then a second run of the
/// same job runs, so the first released its lock; and nothing of either run is left.
fn check(case: &Case) {
    let n = case.signal;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let job_name = format!("sig-{n}");
    let tag = format!("{}-{n}", std::process::id());
    let _reaper = Reaper(tag.clone());

    let receiver = Receiver::start();
    let mut first = stateful(&receiver, &state);
    first
        .env(TAG, &tag)
        .args(["--no-overlap", "--job", &job_name, "--timeout", "10s"])
        .args(["--", "sh", "-c", &job(case)]);
    let out = run_watched(&mut first, dir.path(), "first", n);
    let code = out.status.code();
    let received = receiver.received();
    match &case.expect {
        Expect::Killed { name } => {
            assert_eq!(
                code,
                Some(128 + n),
                "signal {n}: exit status ({}); stderr {:?}",
                out.status,
                out.stderr
            );
            assert_eq!(received.len(), 1, "signal {n}: {received:#?}");
            let fail = format!("/ping/{SECRET}/fail?");
            assert!(
                received[0].target.starts_with(&fail),
                "signal {n}: {:?}",
                received[0].target.replace(SECRET, "<SECRET>")
            );
            let msg = received[0].msg().unwrap_or_default();
            let head = format!("killed by {name} after ");
            assert!(msg.starts_with(&head), "signal {n}: msg {msg:?}");
        }
        Expect::Survives => {
            assert_eq!(code, Some(0), "signal {n}: stderr {:?}", out.stderr);
            assert_eq!(received.len(), 1, "signal {n}: {received:#?}");
            assert_eq!(
                received[0].target,
                format!("/ping/{SECRET}"),
                "signal {n}: not a success ping"
            );
        }
    }

    // The lock was released: the next run of the job is not skipped.
    let marker = dir.path().join("ran");
    let mut second = stateful(&receiver, &state);
    second
        .env(TAG, &tag)
        .args(["--no-overlap", "--job", &job_name, "--", "touch"])
        .arg(&marker);
    let next = run_watched(&mut second, dir.path(), "second", n);
    assert_eq!(
        next.status.code(),
        Some(0),
        "signal {n}: second run: {:?}",
        next.stderr
    );
    assert!(
        marker.exists(),
        "signal {n}: the second run was skipped: the lock was not released"
    );

    // Nothing either run started is still there (the lifeline exits a moment after
    // crontap-run).
    let mut left = Vec::new();
    assert!(
        eventually(Duration::from_secs(5), || {
            left = tagged(&tag);
            left.is_empty()
        }),
        "signal {n}: processes left behind: {left:?}"
    );
}

/// Runs every case, and fails with the list of those that went wrong.
fn check_all(cases: &[Case]) {
    // The test runner may have been started with SIGINT, SIGQUIT and SIGHUP ignored; the
    // crontap-runs started here also reset every signal themselves (see
    // [`all_signals_default`]).
    default_signals().unwrap();
    let failures = on_workers(WORKERS, cases, |_, case| check(case));
    assert!(
        failures.is_empty(),
        "{} of {} signals went wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Each standard signal whose default action is to terminate (with or without a core
/// dump), SIGKILL included, is reported as `killed by SIGxxx after …` with 128+S.
#[test]
fn a_job_killed_by_a_standard_signal_is_reported_by_its_name() {
    let cases: Vec<Case> = every_signal()
        .into_iter()
        .filter(|c| c.signal <= 31 && matches!(c.expect, Expect::Killed { .. }))
        .collect();
    assert_eq!(cases.len(), 23, "{cases:#?}");
    check_all(&cases);
}

/// Each real-time signal, 32 to SIGRTMAX, terminates by default: crontap-run reports it
/// under its glibc name and exits 128+S, and does not hang.
#[test]
fn a_job_killed_by_a_real_time_signal_is_reported_by_its_name() {
    let cases: Vec<Case> = every_signal()
        .into_iter()
        .filter(|c| c.signal >= 32)
        .collect();
    assert!(cases.len() >= 33, "{cases:#?}");
    check_all(&cases);
}

/// SIGCHLD, SIGCONT, SIGURG and SIGWINCH do not end a job by default: one that sends itself
/// one and exits 0 is a success, with exit 0 and a success ping.
#[test]
fn a_signal_that_does_not_kill_leaves_a_successful_run() {
    let cases: Vec<Case> = every_signal()
        .into_iter()
        .filter(|c| matches!(c.expect, Expect::Survives))
        .collect();
    let numbers: Vec<i32> = cases.iter().map(|c| c.signal).collect();
    assert_eq!(numbers, [17, 18, 23, 28]);
    check_all(&cases);
}
