//! Runs the command as a child process and waits for it.
//!
//! The command is executed directly, never through a shell. stdin is inherited; stdout and
//! stderr go through pipes to [`Tee`]s that pass them on unchanged and keep a tail for the
//! summary. When crontap-run's stdout and stderr are the same file (a terminal, cron's mail
//! pipe, `2>&1`), the command gets one pipe for both, so its lines arrive in the order it
//! wrote them; the summary then reads the combined output. The child's environment is
//! crontap-run's own minus the heartbeat URL variables, plus `CRONTAP_RUN_ID` and
//! `CRONTAP_ATTEMPT`.

use std::ffi::OsString;
use std::io::{self, PipeReader, PipeWriter};
use std::os::fd::AsFd;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::outcome::Outcome;
use crate::tee::Tee;

/// How long to keep reading output after the command exited: a background process it left
/// behind may hold the pipes open indefinitely.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// What to run and with which environment changes.
pub struct ChildSpec<'a> {
    pub program: &'a OsString,
    pub args: &'a [OsString],
    pub env_remove: &'a [String],
    pub env_set: Vec<(&'static str, String)>,
}

/// A finished run.
pub struct Finished {
    pub outcome: Outcome,
    pub elapsed: Duration,
    pub stdout_tail: Vec<u8>,
    pub stderr_tail: Vec<u8>,
}

pub fn run(spec: &ChildSpec<'_>) -> Result<Finished> {
    // The copies start before the child so that nothing can fail between spawning it and
    // reading its output.
    let output = Output::start().context("cannot set up the command's output")?;

    let mut command = Command::new(spec.program);
    command
        .args(spec.args)
        .stdout(output.stdout_w)
        .stderr(output.stderr_w);
    for name in spec.env_remove {
        command.env_remove(name);
    }
    command.envs(spec.env_set.iter().map(|(k, v)| (k, v)));

    let started = Instant::now();
    let spawned = command.spawn();
    // Dropping the command closes crontap-run's copies of the pipes' write ends, so the
    // readers see end-of-file when the child (and anything it left behind) closes theirs.
    drop(command);
    let (outcome, exited) = match spawned {
        Ok(mut child) => {
            tracing::debug!(pid = child.id(), "command started");
            let status = child.wait().context("cannot wait for the command")?;
            (Outcome::from_status(status), Instant::now())
        }
        Err(err) => {
            tracing::debug!(error = %err, "command could not be started");
            (
                Outcome::from_spawn_error(spec.program, &err),
                Instant::now(),
            )
        }
    };
    let elapsed = exited - started;
    tracing::debug!(
        ?outcome,
        elapsed_ms = elapsed.as_millis() as u64,
        "command finished"
    );

    let stdout_tail = output.stdout.finish(exited, OUTPUT_GRACE);
    let stderr_tail = output
        .stderr
        .map(|tee| tee.finish(exited, OUTPUT_GRACE))
        .unwrap_or_default();
    Ok(Finished {
        outcome,
        elapsed,
        stdout_tail,
        stderr_tail,
    })
}

/// The pipes the child writes to and the copies that read them.
struct Output {
    stdout_w: PipeWriter,
    stderr_w: PipeWriter,
    /// Copies to crontap-run's stdout; everything, when the two are one file.
    stdout: Tee,
    /// Copies to crontap-run's stderr; `None` when the child shares one pipe for both.
    stderr: Option<Tee>,
}

impl Output {
    fn start() -> io::Result<Output> {
        let (stdout_r, stdout_w) = io::pipe()?;
        let stdout = Tee::start("stdout-tee", stdout_r, io::stdout())?;
        if same_file(io::stdout().as_fd(), io::stderr().as_fd()) {
            let stderr_w = stdout_w.try_clone()?;
            return Ok(Output {
                stdout_w,
                stderr_w,
                stdout,
                stderr: None,
            });
        }
        let (stderr_r, stderr_w): (PipeReader, PipeWriter) = io::pipe()?;
        let stderr = Some(Tee::start("stderr-tee", stderr_r, io::stderr())?);
        Ok(Output {
            stdout_w,
            stderr_w,
            stdout,
            stderr,
        })
    }
}

/// Whether two descriptors refer to the same file (same device and inode).
fn same_file(a: std::os::fd::BorrowedFd<'_>, b: std::os::fd::BorrowedFd<'_>) -> bool {
    use nix::sys::stat::fstat;
    match (fstat(a), fstat(b)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}
