//! Runs the command as a child process and supervises it until it ends.
//!
//! The command is executed directly, never through a shell (a file without `#!` runs with
//! `/bin/sh`, as `execvp` and `env` run it: see [`exec`]), as the leader of its own process
//! group, with the signal state crontap-run inherited ([`signals::Inherited`]). stdin is
//! inherited; stdout and stderr go through pipes to [`Tee`]s that pass them on unchanged
//! and keep a tail of each for the summary.
//!
//! While it runs, crontap-run forwards signals to the group ([`signals::FORWARDED`]),
//! enforces `--timeout`, and reaps every child that ends: as PID 1 of a container every
//! orphan in it is re-parented to crontap-run, and elsewhere crontap-run makes itself the
//! child subreaper so the job's orphans come to it rather than to init. Nothing is sent to
//! the group once its leader has been reaped, so a reused process id is never signalled.
//! When the leader exits during a stop while others of its group run on, it is left
//! unreaped until they are gone or have had SIGKILL at `--kill-after` ([`group`]).

use std::cell::Cell;
use std::ffi::OsString;
use std::io::{self, PipeWriter};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use crate::run::exec;
use crate::run::group;
use crate::run::lifeline::Lifeline;
use crate::run::outcome::{HumanDuration, Outcome, SuccessCodes};
use crate::run::signals::{self, Inherited, Mark, SignalLog};
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
    /// `--on-lease-lost stop`: by when the command must be gone for the run's lease to be
    /// sure not to run out while it runs, moved forward by each renewal. If it comes near,
    /// the command is stopped ([`Outcome::LeaseLost`]).
    pub lease: Option<watch::Receiver<LeaseDeadline>>,
}

/// By when a command whose run holds a lease must be gone (SIGKILL then), and the most
/// time SIGTERM may be given before that: less than `--kill-after` when the lease is too
/// short for it, so that a renewal that comes in time always cancels the stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseDeadline {
    pub gone_by: Instant,
    pub max_grace: Duration,
}

impl LeaseDeadline {
    /// When SIGTERM goes out, given `--kill-after`.
    fn stop_at(&self, kill_after: Duration) -> tokio::time::Instant {
        let grace = kill_after.min(self.max_grace);
        let at = self.gone_by.checked_sub(grace).unwrap_or(self.gone_by);
        tokio::time::Instant::from_std(at)
    }
}

/// `--timeout` and `--kill-after`, and the statuses that count as success
/// (`--success-exit`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    pub success: SuccessCodes,
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
    /// The first stop request crontap-run received and passed on while the command ran:
    /// whatever the command then did, the run was stopped, not completed.
    pub stopped: Option<Signal>,
    /// The exit statuses that count as success (0 and `--success-exit`).
    pub success: SuccessCodes,
}

impl Finished {
    /// Whether the run counts as a success: the command exited 0 (or with a status
    /// `--success-exit` lists) and was not told to stop. A job that cleans up and exits 0
    /// on SIGTERM did not finish its work. The ping, the state, history and metrics all go
    /// by this.
    pub fn succeeded(&self) -> bool {
        self.outcome.is_success_with(&self.success) && self.stopped.is_none()
    }

    /// The head of the failure summary: `stopped by SIGTERM after 41s (exit 0)` for a
    /// command that exited after a stop request, else how the command ended.
    pub fn describe(&self) -> String {
        match (self.stopped, &self.outcome) {
            (Some(sig), Outcome::Exited(code)) => format!(
                "stopped by {} after {} (exit {code})",
                sig.as_str(),
                HumanDuration(self.elapsed)
            ),
            (_, outcome) => outcome.describe(self.elapsed),
        }
    }
}

/// Runs commands one after another (the attempts of a run) and waits between them.
pub struct Supervisor {
    runtime: tokio::runtime::Runtime,
    inherited: Inherited,
    signals: SignalLog,
    /// The signals acted on so far: forwarded to an attempt, or taken by a pause.
    seen: Cell<Mark>,
}

impl Supervisor {
    /// A supervisor that takes its signals from `signals`, those after `seen` being for the
    /// command.
    pub fn new(signals: SignalLog, seen: Mark) -> Result<Supervisor> {
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
            signals,
            seen: Cell::new(seen),
        })
    }

    /// Runs the command until it ends.
    pub fn run(&self, spec: &ChildSpec<'_>, limits: Limits) -> Result<Finished> {
        let mut seen = self.seen.get();
        let finished = self.runtime.block_on(supervise(
            spec,
            limits,
            self.inherited,
            &self.signals,
            &mut seen,
        ));
        self.seen.set(seen);
        finished.map(|finished| Finished {
            success: limits.success,
            ..finished
        })
    }

    /// Waits `delay` between two attempts, unless a signal that ends jobs
    /// ([`signals::TERMINATION`]) arrives, or arrived since the last attempt ended: then
    /// returns it, and no attempt follows. Signals meant for a running job (SIGUSR1,
    /// SIGUSR2, SIGWINCH) have none to go to and are dropped. Orphans that end meanwhile are
    /// reaped.
    pub fn pause(&self, delay: Duration) -> Option<Signal> {
        let mut seen = self.seen.get();
        let ending = self.runtime.block_on(async {
            let mut wake = signals::wake_on(&signals::forwarded());
            let mut child_exits = signal(SignalKind::child()).ok();
            let sleep = tokio::time::sleep(delay);
            tokio::pin!(sleep);
            loop {
                if let Some(sig) = self.signals.ending_since(&mut seen) {
                    return Some(sig);
                }
                tokio::select! {
                    _ = wake.recv() => {}
                    Some(()) = async { child_exits.as_mut()?.recv().await } => {
                        reap_orphans();
                    }
                    _ = &mut sleep => return None,
                }
            }
        });
        self.seen.set(seen);
        ending
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
    signals: &SignalLog,
    seen: &mut Mark,
) -> Result<Finished> {
    // Watched before the child exists, so no exit and no wake-up is missed. The signals
    // themselves are counted in `signals` from the start of the run.
    let mut child_exits = signal(SignalKind::child()).context("cannot watch for SIGCHLD")?;
    let mut wake = signals::wake_on(&signals::forwarded());

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
    // The lease ran short before this attempt could start (a retry after a failed renewal).
    if let Some(lease) = &spec.lease
        && tokio::time::Instant::now() >= lease.borrow().stop_at(limits.kill_after)
    {
        if let Some(lifeline) = lifeline {
            lifeline.release();
        }
        let outcome = Outcome::LeaseLost { killed: false };
        return Ok(copies.finish(outcome, started, started, signals));
    }
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
            return Ok(copies.finish(outcome, started, Instant::now(), signals));
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
    let mut killed_at: Option<Instant> = None;
    // The leader exited during a stop while others of its group ran on: it is left unreaped,
    // so the group's id stays the group's, and the group is watched until it is empty, or
    // until a moment after SIGKILL (see `group`).
    let mut outlived = false;
    let mut check_group = tokio::time::interval(GROUP_CHECK);
    let mut group = group::Group::new(child);
    let mut leader_outlived = |kill_at: Option<tokio::time::Instant>,
                               killed_at: Option<Instant>| {
        kill_at.is_some()
            && killed_at.is_none_or(|at| at.elapsed() < KILL_GRACE)
            && has_exited(child)
            && group.has_live_members()
    };
    let mut termination_forwarded = false;
    let mut stopped = None;
    let lease = spec.lease.as_ref();
    let mut lease_lost = false;
    // Passes on, once each, the signals that arrived since the last look: those that came
    // while the attempt was being set up, then each as it comes.
    let mut forward_new = |kill_at: &mut Option<tokio::time::Instant>| {
        for sig in signals.take_since(seen) {
            tracing::debug!(signal = sig.as_str(), "forwarding signal to the command");
            send(child, sig);
            // A stop request counts only if the command could still act on it: one that
            // came after it exited, before it was reaped, did not stop it.
            if signals::is_stop_request(sig) && !has_exited(child) {
                stopped = stopped.or(Some(sig));
            }
            if signals::is_termination(sig) {
                termination_forwarded = true;
                // Stopped members of the group could not act on it otherwise.
                send(child, Signal::SIGCONT);
            }
            // A stop request (systemd, Kubernetes) must end the job in bounded time.
            if sig == Signal::SIGTERM && kill_at.is_none() {
                *kill_at = after(limits.kill_after);
            }
        }
    };
    forward_new(&mut kill_at);
    let outcome = loop {
        tokio::select! {
            // Signals first: one that arrived with the exit is still passed on.
            biased;
            Some(_) = wake.recv() => forward_new(&mut kill_at),
            _ = child_exits.recv() => {
                // The leader is not reaped yet, so its group id is still its own.
                forward_new(&mut kill_at);
                if leader_outlived(kill_at, killed_at) {
                    if !outlived {
                        tracing::debug!(
                            "the command's leader exited during a stop, other processes of \
                             its group did not; waiting for them until --kill-after"
                        );
                    }
                    outlived = true;
                    continue;
                }
                if let Some(outcome) = reap(child, terminal) {
                    break outcome;
                }
            }
            _ = check_group.tick(), if outlived => {
                if !leader_outlived(kill_at, killed_at)
                    && let Some(outcome) = reap(child, terminal)
                {
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
            _ = sleep_until(lease.map(|l| l.borrow().stop_at(limits.kill_after))),
                if !lease_lost =>
            {
                // Renewals move the deadline; only one that stayed put is due.
                let deadline = *lease.expect("a lease deadline").borrow();
                if tokio::time::Instant::now() >= deadline.stop_at(limits.kill_after) {
                    tracing::error!(
                        "the run's lease on the state store could not be renewed in time; \
                         stopping the command before another host may start the job"
                    );
                    lease_lost = true;
                    send(child, Signal::SIGTERM);
                    send(child, Signal::SIGCONT);
                    let gone_by = tokio::time::Instant::from_std(deadline.gone_by);
                    kill_at = Some(kill_at.map_or(gone_by, |k| k.min(gone_by)));
                }
            }
            _ = sleep_until(kill_at), if killed_at.is_none() => {
                tracing::debug!("the command outlived --kill-after, sending SIGKILL");
                killed_at = Some(Instant::now());
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
            kill_after: killed_at.and(Some(limits.kill_after)),
        },
        _ if lease_lost => Outcome::LeaseLost {
            killed: killed_at.is_some(),
        },
        _ => outcome,
    };
    let mut finished = copies.finish(outcome, started, exited, signals);
    finished.termination_forwarded = termination_forwarded;
    finished.stopped = stopped;
    // Orphans that ended while the output drained.
    reap(child, None);
    Ok(finished)
}

/// How often the group of an exited leader is looked at during a stop (see `group`).
const GROUP_CHECK: Duration = Duration::from_millis(100);
/// How long after SIGKILL the group may take to be gone before the leader is reaped anyway:
/// a process in uninterruptible sleep (a hung NFS mount) dies only when it wakes.
const KILL_GRACE: Duration = Duration::from_secs(2);

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
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
            Ok(status) => log_orphan(status),
        }
    }
}

/// Whether the command has exited, seen without reaping it (so its group id stays its own).
fn has_exited(child: Pid) -> bool {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    matches!(
        nix::sys::wait::waitid(nix::sys::wait::Id::Pid(child), flags),
        Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..))
    )
}

/// Reaps every orphan that has ended, when no command is running (between attempts, and
/// while the report is sent): as PID 1 or the subreaper, crontap-run is their parent, and
/// an unreaped one stays a zombie.
pub fn reap_orphans() {
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return,
            Err(Errno::EINTR) => continue,
            Err(err) => {
                tracing::debug!(%err, "waitpid failed");
                return;
            }
            Ok(status) => log_orphan(status),
        }
    }
}

/// Reaps orphans on a thread of its own from now until crontap-run exits: after the last
/// attempt, while the report is sent, nothing else waits for children.
pub fn reap_orphans_meanwhile() {
    reap_orphans();
    let started = std::thread::Builder::new().name("reaper".into()).spawn(|| {
        loop {
            std::thread::sleep(REAP_EVERY);
            reap_orphans();
        }
    });
    if let Err(err) = started {
        tracing::debug!(%err, "cannot start the reaper thread");
    }
}

/// How often orphans are reaped while the report is sent.
const REAP_EVERY: Duration = Duration::from_millis(50);

fn log_orphan(status: WaitStatus) {
    match status {
        WaitStatus::Exited(..) | WaitStatus::Signaled(..) => {
            tracing::trace!(?status, "reaped an orphan")
        }
        _ => tracing::trace!(?status, "an orphan changed state"),
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
        signals: &SignalLog,
    ) -> Finished {
        let elapsed = exited - started;
        tracing::debug!(
            ?outcome,
            elapsed_ms = elapsed.as_millis() as u64,
            "command finished"
        );
        let tails = tee::finish_all(vec![self.stdout, self.stderr], OUTPUT_GRACE, signals);
        let mut tails = tails.into_iter();
        let stdout_tail = tails.next().unwrap_or_default();
        let stderr_tail = tails.next().unwrap_or_default();
        Finished {
            outcome,
            elapsed,
            stdout_tail,
            stderr_tail,
            stop_signal: signals.stop_requested(),
            termination_forwarded: false,
            stopped: None,
            success: SuccessCodes::default(),
        }
    }
}
