//! Runs the command as a child process and supervises it until it ends.
//!
//! The command is executed directly, never through a shell, as the leader of its own process
//! group, with the signal state crontap-run inherited ([`signals::Inherited`]). stdin is
//! inherited; stdout and stderr go through pipes to [`Tee`]s that pass them on unchanged
//! and keep a tail of each for the summary.
//!
//! While it runs, crontap-run forwards signals to the group ([`signals::FORWARDED`]),
//! enforces `--timeout`, and reaps every child that ends: as PID 1 of a container every
//! orphan in it is re-parented to crontap-run, and elsewhere crontap-run makes itself the
//! child subreaper so the job's orphans come to it rather than to init. Nothing is sent to
//! the group once its leader has been reaped, so a reused process id is never signalled.

use std::ffi::OsString;
use std::io::{self, PipeWriter};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, killpg, pthread_sigmask};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::run::exec;
use crate::run::lifeline::Lifeline;
use crate::run::outcome::Outcome;
use crate::run::signals::{self, Inherited, StopRequests};
use crate::run::tee::{self, Stream, Tee};
use crate::run::terminal::{self, Terminal};

/// How long to keep reading output after the command exited: a background process it left
/// behind may hold the pipes open indefinitely.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// What to run and with which environment changes.
pub struct ChildSpec<'a> {
    pub program: &'a OsString,
    pub args: &'a [OsString],
    pub env_remove: &'a [String],
    pub env_set: Vec<(&'static str, String)>,
    /// The run holds a lock or key: kill the job's whole group if crontap-run dies, so a
    /// killed crontap-run never leaves a job running that the next run would overlap
    /// ([`Lifeline`]).
    pub guarded: bool,
}

/// `--timeout` and `--kill-after`.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
}

/// A finished run.
pub struct Finished {
    pub outcome: Outcome,
    pub elapsed: Duration,
    pub stdout_tail: Vec<u8>,
    pub stderr_tail: Vec<u8>,
    /// The stop signal crontap-run itself received, if any, by the time the output was
    /// passed on: the report must then go out within the shutdown budget. This is what
    /// callers go by; nothing else reads the stop record.
    pub stop_signal: Option<Signal>,
    /// A signal that can end the job ([`signals::TERMINATION`]) was forwarded to it.
    pub termination_forwarded: bool,
}

/// Runs commands one after another (the attempts of a run) and waits between them.
pub struct Supervisor {
    runtime: tokio::runtime::Runtime,
    inherited: Inherited,
    stop: StopRequests,
}

impl Supervisor {
    /// A supervisor that goes by `stop` for whether crontap-run was told to stop.
    pub fn new(stop: StopRequests) -> Result<Supervisor> {
        let inherited = Inherited::get();
        // Before any thread starts, so that the output threads inherit it too.
        terminal::block_ttou();
        become_subreaper();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the supervision runtime")?;
        Ok(Supervisor {
            runtime,
            inherited,
            stop,
        })
    }

    /// Runs the command until it ends.
    pub fn run(&self, spec: &ChildSpec<'_>, limits: Limits) -> Result<Finished> {
        self.runtime
            .block_on(supervise(spec, limits, self.inherited, &self.stop))
    }

    /// Waits `delay`, unless a signal that ends jobs ([`signals::TERMINATION`]) arrives
    /// first, or had arrived as a stop request: then returns it.
    pub fn pause(&self, delay: Duration) -> Option<Signal> {
        self.runtime.block_on(async {
            tokio::select! {
                sig = self.stop.first_of(&signals::TERMINATION) => Some(sig),
                _ = tokio::time::sleep(delay) => self.stop.received(),
            }
        })
    }
}

/// Makes orphans of the job come to crontap-run instead of init, so they are reaped here.
/// PID 1 gets them anyway.
fn become_subreaper() {
    if std::process::id() == 1 {
        return;
    }
    if let Err(err) = nix::sys::prctl::set_child_subreaper(true) {
        tracing::debug!(%err, "cannot become the child subreaper");
    }
}

async fn supervise(
    spec: &ChildSpec<'_>,
    limits: Limits,
    inherited: Inherited,
    stop: &StopRequests,
) -> Result<Finished> {
    // Handlers go in before the child exists, so no signal and no exit is missed.
    let mut child_exits = signal(SignalKind::child()).context("cannot watch for SIGCHLD")?;
    let mut forwarded = watch_forwarded_signals()?;

    // The copies start before the child so that nothing can fail between spawning it and
    // reading its output.
    let Output {
        stdout_w,
        stderr_w,
        copies,
    } = Output::start().context("cannot set up the command's output")?;
    let terminal = Terminal::detect();
    let claim_terminal = terminal.is_some_and(|t| t.in_foreground());

    let mut command = Command::new(spec.program);
    command
        .args(spec.args)
        .stdout(stdout_w)
        .stderr(stderr_w)
        .process_group(0);
    for name in spec.env_remove {
        command.env_remove(name);
    }
    command.envs(spec.env_set.iter().map(|(k, v)| (k, v)));
    let lifeline = spec.guarded.then(Lifeline::start).flatten();
    let announce = lifeline.as_ref().map(Lifeline::announcer);
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls.
    unsafe {
        command.pre_exec(move || {
            // First, so the lifeline knows the group before anything can fail.
            if let Some(announce) = &announce {
                announce();
            }
            if claim_terminal {
                Terminal::claim_in_child();
            }
            inherited.restore_in_child()
        });
    }

    let started = Instant::now();
    let spawned = exec::spawn(&mut command);
    // Dropping the command closes crontap-run's copies of the pipes' write ends, so the
    // readers see end-of-file when the child (and anything it left behind) closes theirs.
    drop(command);
    let child = match spawned {
        Ok(child) => Pid::from_raw(child.id() as i32),
        Err(err) => {
            tracing::debug!(error = %err, "command could not be started");
            if let Some(lifeline) = lifeline {
                lifeline.release();
            }
            let outcome = Outcome::from_spawn_error(spec.program, &err);
            return Ok(copies.finish(outcome, started, Instant::now(), stop));
        }
    };
    tracing::debug!(pid = child.as_raw(), "command started");
    if let (Some(t), true) = (terminal, claim_terminal) {
        t.give_to(child);
    }

    // Deadlines too far away to represent are no deadlines.
    let after = |d: Duration| tokio::time::Instant::now().checked_add(d);
    let timeout_at = limits
        .timeout
        .and_then(|t| tokio::time::Instant::from_std(started).checked_add(t));
    let mut timed_out = false;
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut killed = false;
    let mut termination_forwarded = false;
    // A stop request that arrived while the attempt was being set up has no handler to
    // forward it yet: pass it on now.
    if let Some(sig) = stop.received() {
        send(child, sig);
        termination_forwarded = true;
        if sig == Signal::SIGTERM {
            kill_at = after(limits.kill_after);
        }
    }
    let outcome = loop {
        tokio::select! {
            // Signals first: one that arrived with the exit is still passed on.
            biased;
            Some(sig) = forwarded.recv() => {
                tracing::debug!(signal = sig.as_str(), "forwarding signal to the command");
                send(child, sig);
                termination_forwarded |= signals::is_termination(sig);
                if signals::is_termination(sig) {
                    // Stopped members of the group could not act on it otherwise.
                    send(child, Signal::SIGCONT);
                }
                // A stop request (systemd, Kubernetes) must end the job in bounded time.
                if sig == Signal::SIGTERM && kill_at.is_none() {
                    kill_at = after(limits.kill_after);
                }
            }
            _ = child_exits.recv() => {
                if let Some(outcome) = reap(child, terminal) {
                    break outcome;
                }
            }
            _ = sleep_until(timeout_at), if !timed_out => {
                tracing::debug!("timeout reached, sending SIGTERM to the command");
                timed_out = true;
                send(child, Signal::SIGTERM);
                send(child, Signal::SIGCONT);
                kill_at = after(limits.kill_after);
            }
            _ = sleep_until(kill_at), if !killed => {
                tracing::debug!("the command outlived --kill-after, sending SIGKILL");
                killed = true;
                send(child, Signal::SIGKILL);
            }
        }
    };
    let exited = Instant::now();
    if let Some(lifeline) = lifeline {
        lifeline.release();
    }
    if let Some(t) = terminal {
        t.take_back_from(child);
    }
    let outcome = match (timed_out, limits.timeout) {
        (true, Some(limit)) => Outcome::TimedOut {
            limit,
            kill_after: killed.then_some(limits.kill_after),
        },
        _ => outcome,
    };
    let mut finished = copies.finish(outcome, started, exited, stop);
    finished.termination_forwarded = termination_forwarded;
    // Orphans that ended while the output drained.
    reap(child, None);
    Ok(finished)
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Starts watching every forwarded signal that was not ignored when crontap-run started,
/// and unblocks them in case the caller had blocked them.
fn watch_forwarded_signals() -> Result<mpsc::UnboundedReceiver<Signal>> {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut unblock = SigSet::empty();
    unblock.add(Signal::SIGCHLD);
    for &(sig, _why) in signals::FORWARDED {
        if signals::inherited_ignored(sig) {
            tracing::debug!(
                signal = sig.as_str(),
                "ignored when crontap-run started; not forwarded"
            );
            continue;
        }
        let mut stream = signal(SignalKind::from_raw(sig as i32))
            .with_context(|| format!("cannot watch for {}", sig.as_str()))?;
        unblock.add(sig);
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if tx.send(sig).is_err() {
                    break;
                }
            }
        });
    }
    let _ = pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&unblock), None);
    Ok(rx)
}

/// Sends `sig` to the command's process group. Only called while its leader has not been
/// reaped, so the group id cannot have been reused.
fn send(group: Pid, sig: Signal) {
    if let Err(err) = killpg(group, sig) {
        tracing::debug!(%err, signal = sig.as_str(), "could not signal the command's group");
    }
}

/// Reaps every child that has ended: the command and any orphans. Returns the command's
/// outcome once it has ended. With a terminal on stdin, a stopped command is noticed too
/// (see [`stop_with_the_command`]).
fn reap(child: Pid, terminal: Option<Terminal>) -> Option<Outcome> {
    let mut flags = WaitPidFlag::WNOHANG;
    if terminal.is_some() {
        flags |= WaitPidFlag::WUNTRACED;
    }
    let mut ended = None;
    loop {
        match waitpid(None, Some(flags)) {
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return ended,
            Err(Errno::EINTR) => continue,
            Err(err) => {
                tracing::debug!(%err, "waitpid failed");
                return ended;
            }
            Ok(WaitStatus::Stopped(pid, _)) if pid == child => {
                if let Some(t) = terminal {
                    stop_with_the_command(child, t);
                }
            }
            Ok(status) if status.pid() == Some(child) => ended = Outcome::from_wait(status),
            Ok(status) => tracing::trace!(?status, "reaped an orphan"),
        }
    }
}

/// The command stopped: Ctrl-Z in the foreground, or reading the terminal from the
/// background. crontap-run stops too, so the shell sees its job stopped; when the shell
/// continues it (`fg` or `bg`), the command gets the terminal if crontap-run now has it, and
/// is continued.
fn stop_with_the_command(child: Pid, terminal: Terminal) {
    terminal.take_back_from(child);
    let _ = nix::sys::signal::raise(Signal::SIGSTOP);
    if terminal.in_foreground() {
        terminal.give_to(child);
    }
    send(child, Signal::SIGCONT);
}

/// The pipes the child writes to and the copy that reads them.
struct Output {
    stdout_w: PipeWriter,
    stderr_w: PipeWriter,
    copies: Copies,
}

/// One copy per stream: blocking reads, no `poll`.
struct Copies {
    stdout: Tee,
    stderr: Tee,
}

impl Output {
    fn start() -> io::Result<Output> {
        let (stdout_r, stdout_w) = io::pipe()?;
        let (stderr_r, stderr_w) = io::pipe()?;
        let stdout = Tee::start(Stream {
            source: stdout_r.into(),
            sink: io::stdout().as_fd().try_clone_to_owned()?,
        })?;
        let stderr = Tee::start(Stream {
            source: stderr_r.into(),
            sink: io::stderr().as_fd().try_clone_to_owned()?,
        })?;
        Ok(Output {
            stdout_w,
            stderr_w,
            copies: Copies { stdout, stderr },
        })
    }
}

impl Copies {
    /// Waits for the output (less long if crontap-run is told to stop meanwhile) and
    /// reports the attempt, with the stop request `stop` holds by then.
    fn finish(
        self,
        outcome: Outcome,
        started: Instant,
        exited: Instant,
        stop: &StopRequests,
    ) -> Finished {
        let elapsed = exited - started;
        tracing::debug!(
            ?outcome,
            elapsed_ms = elapsed.as_millis() as u64,
            "command finished"
        );
        let tails = tee::finish_all(vec![self.stdout, self.stderr], OUTPUT_GRACE, stop);
        let mut tails = tails.into_iter();
        let stdout_tail = tails.next().unwrap_or_default();
        let stderr_tail = tails.next().unwrap_or_default();
        Finished {
            outcome,
            elapsed,
            stdout_tail,
            stderr_tail,
            stop_signal: stop.received(),
            termination_forwarded: false,
        }
    }
}
