//! Runs the command as a child process and supervises it until it ends.
//!
//! The command is executed directly, never through a shell (a file without `#!` runs with
//! `/bin/sh`, as `execvp` and `env` run it: see [`exec`]), as the leader of its own process
//! group, with the signal state crontap-run inherited ([`Inherited`]). stdin is inherited;
//! stdout and stderr go through pipes to [`Tee`]s that pass them on unchanged (or into the
//! run's [`Hold`], with `--output on-failure`) and keep a tail of each for the summary.
//!
//! While it runs, crontap-run forwards signals to the group
//! ([`FORWARDED`](super::signals::FORWARDED)), enforces `--timeout` and the lease, and
//! reaps every child that ends: as PID 1 of a container every orphan in it is re-parented
//! to crontap-run, and elsewhere crontap-run makes itself the child subreaper so the job's
//! orphans come to it rather than to init. Nothing is sent to the group once its leader
//! has been reaped, so a reused process id is never signalled. This file sets the attempt
//! up and runs the event loop; what each event does, and the command's states (running,
//! stopping with a SIGKILL time, killed), are in [`watch`]. When the attempt has ended,
//! its output is drained ([`Copies::finish`], in [`output`](super::output)).

use std::cell::Cell;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::sync::watch;

use crate::run::descriptors;
use crate::run::exec;
pub use crate::run::finished::{Finished, Hooks};
use crate::run::group::Group;
use crate::run::hold::Hold;
use crate::run::job_env::{self, PerRun};
use crate::run::lifeline::Lifeline;
use crate::run::memory;
use crate::run::outcome::Outcome;
use crate::run::output::{Copies, Output};
use crate::run::reap;
use crate::run::signals::{Inherited, Mark, SignalLog, Wake};
use crate::run::terminal::{self, Terminal};
use crate::run::watch::{Action, Ending, Event, Probe, Watch};
pub use crate::run::watch::{LeaseDeadline, Limits};

/// How often the group of an exited leader is looked at during a stop (see `group`).
const GROUP_CHECK: Duration = Duration::from_millis(100);

/// What to run, with which environment.
pub struct ChildSpec<'a> {
    pub program: &'a OsString,
    pub args: &'a [OsString],
    /// crontap-run's environment less what the job must not see, in its order.
    pub inherited_env: &'a job_env::Inherited,
    /// This run's variables (`CRONTAP_RUN_ID` …), added for each attempt.
    pub per_run: PerRun,
    /// The run holds a lock or key: kill the job's whole group if crontap-run dies, so a
    /// killed crontap-run never leaves a job running that the next run would overlap
    /// ([`Lifeline`]).
    pub guarded: bool,
    /// `--output on-failure`: the run's hold, which every attempt's output goes into
    /// instead of crontap-run's stdout and stderr.
    pub hold: Option<Arc<Hold>>,
    /// `--on-lease-lost stop`: by when the command must be gone for the run's lease to be
    /// sure not to run out while it runs, moved forward by each renewal. If it comes near,
    /// the command is stopped ([`Outcome::LeaseLost`]).
    pub lease: Option<watch::Receiver<LeaseDeadline>>,
    /// How many of the last bytes of both streams together to keep, for a request body
    /// (0: none).
    pub both_tail: usize,
}

/// Runs commands one after another (the attempts of a run) and waits between them.
pub struct Supervisor {
    /// Registered with `runtime`'s event loop, so dropped before it.
    wake: Wake,
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
        // Before the runtime and the wake-up take theirs.
        descriptors::ensure_room(descriptors::BEFORE_SPAWN, "run the command")?;
        // Before any thread starts, so that the output threads inherit it too.
        terminal::block_ttou();
        become_subreaper();
        // SIGCHLD is counted from here on, before any command is spawned: an exit cannot
        // come before its handler (see `SignalLog::watch_children`).
        let wake = signals
            .watch_children()
            .context("cannot watch for SIGCHLD")?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the supervision runtime")?;
        let wake = {
            let _entered = runtime.enter();
            Wake::new(wake).context("cannot watch for SIGCHLD")?
        };
        Ok(Supervisor {
            wake,
            runtime,
            inherited,
            signals,
            seen: Cell::new(seen),
        })
    }

    /// Runs attempt `attempt` (from 1) of the command until it ends, telling `hooks`.
    pub fn run(&self, attempt: Attempt<'_>, hooks: &Hooks<'_>) -> Result<Finished> {
        let mut seen = self.seen.get();
        let finished = self.runtime.block_on(supervise(
            attempt,
            hooks,
            self.inherited,
            (&self.signals, &self.wake),
            &mut seen,
        ));
        self.seen.set(seen);
        finished
    }

    /// Waits `delay` between two attempts, unless a signal that ends jobs
    /// ([`TERMINATION`](super::signals::TERMINATION)) arrives, or arrived since the last
    /// attempt ended: then returns it, and no attempt follows. Signals meant for a running
    /// job (SIGUSR1, SIGUSR2, SIGWINCH) have none to go to and are dropped. Orphans that end
    /// meanwhile are reaped.
    pub fn pause(&self, delay: Duration) -> Option<Signal> {
        let mut seen = self.seen.get();
        let ending = self.runtime.block_on(async {
            let sleep = tokio::time::sleep(delay);
            tokio::pin!(sleep);
            let mut polled = false;
            loop {
                if let Some(sig) = self.signals.ending_since(&mut seen) {
                    return Some(sig);
                }
                if self.signals.children_since(&mut seen) {
                    reap::reap_orphans();
                }
                tokio::select! {
                    woke = self.wake.recv(), if !polled => polled = woke.is_err(),
                    _ = tokio::time::sleep(GROUP_CHECK), if polled => {}
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

/// Which attempt to run, of what, within which limits.
#[derive(Clone, Copy)]
pub struct Attempt<'a> {
    pub spec: &'a ChildSpec<'a>,
    pub limits: Limits,
    /// Its number, from 1.
    pub number: u32,
}

/// One attempt: set up, started, watched until it ends, its output drained.
async fn supervise(
    attempt: Attempt<'_>,
    hooks: &Hooks<'_>,
    inherited: Inherited,
    (signals, wake): (&SignalLog, &Wake),
    seen: &mut Mark,
) -> Result<Finished> {
    let Attempt { spec, limits, .. } = attempt;
    // The signals and SIGCHLD are counted in `signals` since before the child exists, the
    // forwarded ones from the start of the run, and each arrival wakes `wake`: no exit and
    // no signal is missed, however early it comes.
    let mut events = Events {
        wake,
        group_check: tokio::time::interval(GROUP_CHECK),
    };
    let Prepared {
        command,
        copies,
        lifeline,
        terminal,
        claim_terminal,
    } = prepare(spec, inherited)?;

    let started = Instant::now();
    let child = match spawn(command, attempt, started, hooks) {
        Ok(child) => child,
        Err(Unstarted::Short(err)) => {
            if let Some(lifeline) = lifeline {
                lifeline.release();
            }
            return Err(err);
        }
        Err(Unstarted::Outcome(outcome)) => {
            if let Some(lifeline) = lifeline {
                lifeline.release();
            }
            let times = (started, Instant::now());
            let ending = Ending::of(outcome);
            return Ok(copies.finish(ending, times, limits.success, hooks, signals));
        }
    };
    memory::running(child.as_raw());
    tracing::debug!(pid = child.as_raw(), "command started");
    (hooks.started)();
    if let (Some(t), true) = (terminal, claim_terminal) {
        t.give_to(child);
    }

    let watch = Watch::new(started, limits, spec.lease.clone());
    let mut real = RealChild {
        pid: child,
        group: Group::new(child),
        terminal,
    };
    let ending = events.watch(watch, &mut real, signals, seen).await;
    let exited = Instant::now();
    if let Some(lifeline) = lifeline {
        lifeline.release();
    }
    if let Some(t) = terminal {
        t.take_back_from(child);
    }
    let finished = copies.finish(ending, (started, exited), limits.success, hooks, signals);
    // Orphans that ended while the output drained.
    reap::reap(child, None);
    Ok(finished)
}

/// Why an attempt's command was not started.
enum Unstarted {
    /// The command's own failure (not found, not executable), or a lease that ran short.
    Outcome(Outcome),
    /// crontap-run's: no descriptor left for the spawn (the open-files limit).
    Short(anyhow::Error),
}

/// Spawns the attempt's command; why an attempt could not start.
fn spawn(
    mut command: Command,
    attempt: Attempt<'_>,
    started: Instant,
    hooks: &Hooks<'_>,
) -> std::result::Result<Pid, Unstarted> {
    let Attempt { spec, limits, .. } = attempt;
    // The lease ran short before this attempt could start (a retry after a failed renewal).
    if let Some(lease) = &spec.lease
        && started >= lease.borrow().stop_at(limits.kill_after)
    {
        return Err(Unstarted::Outcome(Outcome::LeaseLost { killed: false }));
    }
    let env = spec.per_run.environment(spec.inherited_env, attempt.number);
    (hooks.starting)();
    let spawned = exec::spawn(&mut command, &env);
    // Dropping the command closes crontap-run's copies of the pipes' write ends, so the
    // readers see end-of-file when the child (and anything it left behind) closes theirs.
    drop(command);
    match spawned {
        Ok(child) => Ok(Pid::from_raw(child.id() as i32)),
        // Too few descriptors is crontap-run's shortage, not the command's fault.
        Err(err) if descriptors::exhausted(&err) => {
            Err(Unstarted::Short(descriptors::spawn_error(&err)))
        }
        Err(err) => {
            let outcome = Outcome::from_spawn_error(spec.program, &err);
            if let Some(line) = outcome.not_started_line() {
                tracing::error!("{line}");
            }
            Err(Unstarted::Outcome(outcome))
        }
    }
}

/// An attempt's command, ready to be spawned, and what goes with it.
struct Prepared {
    command: Command,
    copies: Copies,
    lifeline: Option<Lifeline>,
    terminal: Option<Terminal>,
    /// crontap-run is in the terminal's foreground: the command gets it.
    claim_terminal: bool,
}

/// Sets up the command of an attempt: its output pipes, process group, lifeline, and what
/// the child does between fork and exec.
fn prepare(spec: &ChildSpec<'_>, inherited: Inherited) -> Result<Prepared> {
    // The lifeline first, before the output pipes exist: forked later, it would hold their
    // ends, and crontap-run would see the end of the job's output only once the lifeline
    // had exited.
    let lifeline = spec.guarded.then(Lifeline::start).flatten();
    // The copies start before the child so that nothing can fail between spawning it and
    // reading its output.
    let Output {
        stdout_w,
        stderr_w,
        copies,
    } = Output::start(spec.hold.as_ref(), spec.both_tail)
        .context("cannot set up the command's output")?;
    let terminal = Terminal::detect();
    let claim_terminal = terminal.is_some_and(|t| t.in_foreground());
    let mut command = Command::new(spec.program);
    command
        .args(spec.args)
        .stdout(stdout_w)
        .stderr(stderr_w)
        .process_group(0);
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

    Ok(Prepared {
        command,
        copies,
        lifeline,
        terminal,
        claim_terminal,
    })
}

/// Where the supervisor's events come from.
struct Events<'a> {
    /// Every signal the log counts, SIGCHLD too.
    wake: &'a Wake,
    group_check: tokio::time::Interval,
}

impl Events<'_> {
    /// Hands every event to `watch` until the command has been reaped, and does what it
    /// says to `child`.
    async fn watch(
        &mut self,
        mut watch: Watch,
        child: &mut RealChild,
        signals: &SignalLog,
        seen: &mut Mark,
    ) -> Ending {
        // Those that arrived while the attempt was being set up.
        pass_on_signals(&mut watch, child, signals, seen);
        // Set if the wake-up cannot be waited on (never seen): the command is then looked
        // at every GROUP_CHECK.
        let mut polled = false;
        loop {
            let event = tokio::select! {
                biased;
                woke = self.wake.recv(), if !polled => {
                    if let Err(err) = woke {
                        tracing::warn!(%err, "cannot wait for signals; polling instead");
                        polled = true;
                    }
                    // Signals first: one that arrived with the exit is passed on before the
                    // exit is looked at, while the leader's group id is still its own.
                    pass_on_signals(&mut watch, child, signals, seen);
                    match signals.children_since(seen) || polled {
                        true => Event::ChildChanged,
                        false => continue,
                    }
                }
                _ = self.group_check.tick(), if watch.lingering() || polled => Event::GroupCheck,
                _ = sleep_until(watch.timeout_at()) => Event::TimeoutDue,
                _ = sleep_until(watch.lease_stop_at()) => Event::LeaseDue,
                _ = sleep_until(watch.kill_at()) => Event::KillDue,
            };
            if polled {
                pass_on_signals(&mut watch, child, signals, seen);
            }
            let actions = watch.on(event, Instant::now(), child);
            if let Some(outcome) = child.perform(&actions) {
                return watch.ending(outcome);
            }
        }
    }
}

/// Hands the watch, one by one, the signals that arrived since `seen`, each acted on before
/// the next is looked at.
fn pass_on_signals(watch: &mut Watch, child: &mut RealChild, signals: &SignalLog, seen: &mut Mark) {
    for sig in signals.take_since(seen) {
        let actions = watch.on(Event::Signal(sig), Instant::now(), child);
        child.perform(&actions);
    }
}

/// The attempt's real command, as the watch sees it and acts on it.
struct RealChild {
    pid: Pid,
    group: Group,
    terminal: Option<Terminal>,
}

impl Probe for RealChild {
    fn has_exited(&mut self) -> bool {
        reap::has_exited(self.pid)
    }

    fn group_has_live_members(&mut self) -> bool {
        self.group.has_live_members()
    }
}

impl RealChild {
    /// Does what the watch asked, in order; the leader's outcome once it has been reaped.
    fn perform(&mut self, actions: &[Action]) -> Option<Outcome> {
        let mut reaped = None;
        for action in actions {
            match *action {
                Action::Send(sig) => reap::send(self.pid, sig),
                Action::Reap => {
                    reaped = reap::reap(self.pid, self.terminal);
                    if let Some(outcome) = &reaped {
                        memory::settled(outcome.exit_code());
                    }
                }
            }
        }
        reaped
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}
