//! Runs the command as a child process and waits for it.
//!
//! The command is executed directly, never through a shell. stdin is inherited; stdout and
//! stderr go through pipes to [`Tee`]s that pass them on unchanged and keep a tail for the
//! summary. The child's environment is crontap-run's own minus the heartbeat URL variables,
//! plus `CRONTAP_RUN_ID` and `CRONTAP_ATTEMPT`.

use std::ffi::OsString;
use std::io;
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
    let (stdout_r, stdout_w) =
        io::pipe().context("cannot create a pipe for the command's output")?;
    let (stderr_r, stderr_w) =
        io::pipe().context("cannot create a pipe for the command's output")?;

    // The copies start first so that nothing can fail between spawning the child and
    // reading its output.
    let stdout = Tee::start("stdout-tee", stdout_r, io::stdout())
        .context("cannot start an output thread")?;
    let stderr = Tee::start("stderr-tee", stderr_r, io::stderr())
        .context("cannot start an output thread")?;

    let mut command = Command::new(spec.program);
    command.args(spec.args).stdout(stdout_w).stderr(stderr_w);
    for name in spec.env_remove {
        command.env_remove(name);
    }
    command.envs(spec.env_set.iter().map(|(k, v)| (k, v)));

    let started = Instant::now();
    let spawned = command.spawn();
    // Dropping the command closes crontap-run's copies of the pipes' write ends, so the
    // readers see end-of-file when the child (and anything it left behind) closes theirs.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => {
            tracing::debug!(error = %err, "command could not be started");
            return Ok(Finished {
                outcome: Outcome::from_spawn_error(spec.program, &err),
                elapsed: started.elapsed(),
                stdout_tail: Vec::new(),
                stderr_tail: Vec::new(),
            });
        }
    };
    tracing::debug!(pid = child.id(), "command started");

    let status = child.wait().context("cannot wait for the command")?;
    let elapsed = started.elapsed();
    let outcome = Outcome::from_status(status);
    tracing::debug!(
        ?outcome,
        elapsed_ms = elapsed.as_millis() as u64,
        "command finished"
    );

    let deadline = Instant::now() + OUTPUT_GRACE;
    Ok(Finished {
        outcome,
        elapsed,
        stdout_tail: stdout.finish(deadline),
        stderr_tail: stderr.finish(deadline),
    })
}
