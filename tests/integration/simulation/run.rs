//! Runs one case: the endpoint (a receiver the test starts, behind the [`Front`] relay), the
//! real binary with the case's options and its own `$TMPDIR`, the outside stop at its
//! moment (after the job's readiness marker), then every check; a broken promise is a
//! line in the list returned, so that a long simulation counts how many cases held.

use std::io::Read;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::case::{Case, End, Endpoint, PING_BUDGET, PING_TIMEOUT, Protocol, Stop};
use super::check;
use super::front::{Act, Front};
use crate::harness::{Crontap, MARKER_WAIT, Receiver, Reply, SECRET, alive, eventually};
use crate::healthchecks::server::{Class, Healthchecks};
use crate::healthchecks::{SLUG, server};

/// The receiver a case reports to.
pub enum Endpoints {
    Crontap(Receiver),
    Healthchecks(Healthchecks),
}

/// What a finished case left behind, for the checks.
pub struct Ran {
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

pub fn run(case: &Case) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let (tmp, state, job) = (
        dir.path().join("tmp"),
        dir.path().join("state"),
        dir.path().join("job"),
    );
    for d in [&tmp, &job] {
        std::fs::create_dir(d).unwrap();
    }
    let (out, err) = case.output();
    std::fs::write(job.join("out"), &out).unwrap();
    std::fs::write(job.join("err"), &err).unwrap();

    let (endpoints, front) = endpoint(case);
    let url = match &endpoints {
        Endpoints::Crontap(_) => format!("http://127.0.0.1:{}/ping/{SECRET}", front.port),
        Endpoints::Healthchecks(_) => format!("http://127.0.0.1:{}/{SECRET}/{SLUG}", front.port),
    };
    let mut crontap = command(case, &url, &tmp, &state);
    crontap.args(["--", "sh", "-c", &case.script(&job)]);
    crontap.command().current_dir(&job);
    as_cron_starts_it(&mut crontap);

    let mut violations = Vec::new();
    let started = Instant::now();
    let mut child = crontap.spawn(Stdio::piped(), Stdio::piped());
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    if let Err(why) = stop(case, &mut child, &job) {
        violations.push(why);
    }
    let status = wait_within(&mut child, started + case.bound());
    if status.is_none() {
        violations.push(format!(
            "crontap-run still ran after its bound of {:?}",
            case.bound()
        ));
    }
    violations.extend(orphans(case, &job, status.is_some()));
    if !front.settle(MARKER_WAIT) {
        violations.push("a held request never reached the receiver".to_owned());
    }
    let ran = Ran {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    violations.extend(check::all(case, &ran, &endpoints, (&out, &err), &job));
    violations.extend(check::leftovers(case, &tmp, &state));
    violations
}

/// Starts crontap-run as cron does: every signal at its default and none blocked. Started
/// by a Rust program through glibc's `posix_spawn`, it would have glibc's own signals (32,
/// 33) ignored, and would rightly hand that on to the job.
fn as_cron_starts_it(crontap: &mut Crontap) {
    use std::os::unix::process::CommandExt;
    let last = libc::SIGRTMAX();
    let action = [libc::SIG_DFL, 0, 0, 0];
    let empty = 0u64;
    // SAFETY: between fork and exec, only system calls (async-signal-safe), on data the
    // closure owns; SIG_DFL needs no restorer. Failures (SIGKILL, SIGSTOP) are harmless.
    unsafe {
        crontap.command().pre_exec(move || {
            for sig in 1..=last {
                libc::syscall(libc::SYS_rt_sigaction, sig, &action, 0usize, 8usize);
            }
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                &empty,
                0usize,
                8usize,
            );
            Ok(())
        });
    }
}

/// The receiver and the relay in front of it, scripted as the case's endpoint behaves.
fn endpoint(case: &Case) -> (Endpoints, Front) {
    let errors = match case.endpoint {
        Endpoint::Errors(code, n) => vec![code; n],
        _ => Vec::new(),
    };
    let acts = match case.endpoint {
        Endpoint::Slow(ms) => vec![Act::Hold(Duration::from_millis(ms))],
        Endpoint::Resets(n) => vec![Act::Reset; n],
        _ => Vec::new(),
    };
    let endpoints = match case.protocol {
        Protocol::Crontap => {
            let script: Vec<Reply> = errors
                .iter()
                .map(|&code| match code {
                    503 => Reply::RetryAfter(503, 0),
                    code => Reply::Status(code),
                })
                .collect();
            Endpoints::Crontap(Receiver::scripted(&script))
        }
        Protocol::Healthchecks => {
            let (hc, _) = server();
            hc.script(Class::End, &errors);
            hc.retry_after(0);
            Endpoints::Healthchecks(hc)
        }
    };
    let port = match &endpoints {
        Endpoints::Crontap(r) => r.port(),
        Endpoints::Healthchecks(hc) => hc.port(),
    };
    (endpoints, Front::start(port, acts))
}

/// crontap-run with the case's options.
fn command(case: &Case, url: &str, tmp: &Path, state: &Path) -> Crontap {
    let mut c = Crontap::with_url(url);
    let protocol = match case.protocol {
        Protocol::Crontap => "crontap",
        Protocol::Healthchecks => "healthchecks",
    };
    c.args(["--protocol", protocol, "--job", "sim", "--kill-after", "1s"])
        .args([
            "--ping-timeout",
            &secs(PING_TIMEOUT),
            "--ping-budget",
            &secs(PING_BUDGET),
        ])
        .env("TMPDIR", tmp);
    if let Some(timeout) = case.timeout {
        c.args(["--timeout", &secs(timeout)]);
    }
    if case.retries > 0 {
        c.args(["--retries", &case.retries.to_string()]);
        c.args([
            "--retry-delay",
            &format!("{}ms", case.retry_delay.as_millis()),
        ]);
    }
    if case.no_overlap {
        c.arg("--no-overlap");
    }
    if case.once_per {
        c.args(["--once-per", "1d"]);
    }
    if case.no_overlap || case.once_per {
        c.arg("--state-dir").arg(state);
    }
    if case.on_failure {
        c.args(["--output", "on-failure"]);
    }
    if let Some(code) = case.success_exit {
        c.args(["--success-exit", &code.to_string()]);
    }
    c
}

fn secs(d: Duration) -> String {
    format!("{}s", d.as_secs())
}

/// Reads a stream to its end on a thread of its own.
fn drain(mut stream: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        bytes
    })
}

/// Sends the outside stop at its moment: after the readiness marker of the attempt it is
/// for (and, between attempts, once that attempt's process is gone), then the case's delay.
fn stop(case: &Case, child: &mut Child, job: &Path) -> Result<(), String> {
    let (attempt, after_ms, ended) = match case.stop {
        Stop::None => return Ok(()),
        Stop::During { attempt, after_ms } => (attempt, after_ms, false),
        Stop::Between { attempt, after_ms } => (attempt, after_ms, true),
    };
    let ready = job.join(format!("ready.{attempt}"));
    let marked = eventually(MARKER_WAIT, || {
        ready.exists() || child.try_wait().ok().flatten().is_some()
    });
    if !marked || !ready.exists() {
        return Err(format!(
            "attempt {attempt} never said it was ready, so no stop was sent"
        ));
    }
    if ended {
        let pid = std::fs::read_to_string(job.join(format!("pid.{attempt}"))).unwrap();
        if !eventually(MARKER_WAIT, || !alive(pid.trim())) {
            return Err(format!("attempt {attempt} never ended"));
        }
    }
    // The random moment itself, not a wait for anything.
    std::thread::sleep(Duration::from_millis(after_ms));
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    Ok(())
}

/// Waits for crontap-run until `deadline`; past it, kills it and returns `None`.
fn wait_within(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    let left = deadline.saturating_duration_since(Instant::now());
    if eventually(left, || child.try_wait().ok().flatten().is_some()) {
        return child.try_wait().unwrap();
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The processes the job left running: those of an attempt that a stop or a timeout ended
/// must be gone with crontap-run (docs/signals.md, "Signals, timeouts and PID 1": the whole
/// group); the others are left alone by crontap-run and killed here.
fn orphans(case: &Case, job: &Path, exited: bool) -> Vec<String> {
    let mut violations = Vec::new();
    let Some(kind) = case.orphan else {
        return violations;
    };
    for attempt in 1..=case.retries + 1 {
        let Ok(pid) = std::fs::read_to_string(job.join(format!("orphan.{attempt}"))) else {
            continue;
        };
        let pid = pid.trim();
        let stopped = matches!(case.stop, Stop::During { attempt: k, .. } if k == attempt);
        let timed_out = case.end == End::Wait && !stopped;
        if exited && (stopped || timed_out) && alive(pid) {
            violations.push(format!(
                "a {kind:?} process of attempt {attempt}'s group outlived crontap-run after a {}",
                if stopped { "stop" } else { "timeout" }
            ));
        }
        if alive(pid)
            && let Ok(pid) = pid.parse()
        {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
    violations
}
