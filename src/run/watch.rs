//! One attempt's command as explicit states, and the events that move it between them.
//!
//! The supervisor's loop ([`supervise`](super::supervise)) turns what happens into an
//! [`Event`] (signals arrived, a child changed state, a deadline came) and hands it to
//! [`Watch::on`], which acts on it and moves the command's [`Life`] on:
//!
//! ```text
//!   Running ──SIGTERM / --timeout / lease lost──▶ Stopping { kill_at }
//!   Stopping ──another cause──▶ Stopping { earliest kill_at }      (never later)
//!   Stopping ──kill_at reached──▶ Killed { at }
//!   any ──leader reaped──▶ the loop ends with its Outcome
//! ```
//!
//! Three causes ask the command to end in bounded time: a SIGTERM to crontap-run (a service
//! manager stopping it), `--timeout`, and a lease that could not be renewed. Each sends
//! SIGTERM to the group and names a time by which the group must be gone; SIGKILL goes out
//! at the earliest of those times ([`Life::must_end_by`]), so no cause can postpone what
//! another scheduled. The first cause is the one the report names. SIGINT and SIGQUIT are
//! stop requests too, passed on for the job to act on, with no SIGKILL of crontap-run's.
//!
//! Whether the run was told to stop is decided here, once, from the signal log, as each
//! stop request is passed on: it counts if the command had not exited when it was sent.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::sync::watch;

use crate::run::group::Group;
use crate::run::outcome::Outcome;
use crate::run::reap::{self, send};
use crate::run::signals::{self, Mark, SignalLog};
use crate::run::supervise::{LeaseDeadline, Limits};
use crate::run::terminal::Terminal;

/// How long after SIGKILL the group may take to be gone before the leader is reaped anyway:
/// a process in uninterruptible sleep (a hung NFS mount) dies only when it wakes.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// What the supervisor's loop saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Signals arrived at crontap-run (they are read from the log).
    Signals,
    /// A child changed state (SIGCHLD).
    ChildChanged,
    /// Time to look at the group of a leader that exited during a stop.
    GroupCheck,
    /// `--timeout` expired.
    TimeoutDue,
    /// The lease deadline may have come (renewals move it).
    LeaseDue,
    /// The SIGKILL time has come.
    KillDue,
}

/// Where the command is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Nobody has asked for it to be gone in bounded time.
    Running,
    /// SIGTERM went to the group; SIGKILL follows at `kill_at` unless the group is gone
    /// first (`None`: a time too far away to represent).
    Stopping { kill_at: Option<Instant> },
    /// SIGKILL went to the group at `at`, `after` the first cause asked for it (the time
    /// the causes set, not the moment it was sent).
    Killed { at: Instant, after: Duration },
}

impl Life {
    /// The life once another cause asks for the command to be gone by `kill_at`: the
    /// earliest time of every cause stands, and once SIGKILL is sent nothing changes.
    pub fn must_end_by(self, kill_at: Option<Instant>) -> Life {
        match self {
            Life::Running => Life::Stopping { kill_at },
            Life::Stopping { kill_at: before } => Life::Stopping {
                kill_at: earliest(before, kill_at),
            },
            killed @ Life::Killed { .. } => killed,
        }
    }

    /// When SIGKILL is due, while it has not been sent.
    pub fn kill_at(self) -> Option<Instant> {
        match self {
            Life::Stopping { kill_at } => kill_at,
            _ => None,
        }
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Why crontap-run asked the command to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// crontap-run got SIGTERM.
    StopRequest,
    Timeout,
    LeaseLost,
}

/// A stop request crontap-run passed on while the command could still act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    pub signal: Signal,
    /// How long the command had run when it came.
    pub after: Duration,
}

/// How the attempt ended, as the watch saw it.
pub struct Ending {
    pub outcome: Outcome,
    pub stopped: Option<Stop>,
    /// crontap-run sent SIGKILL, this long after the first cause asked the command to end
    /// (as the causes set it).
    pub killed_after: Option<Duration>,
    /// A signal that can end the job ([`signals::TERMINATION`]) was passed on to it.
    pub termination_forwarded: bool,
}

impl Ending {
    /// The ending of an attempt that never ran, or ran with no signal and no cause of
    /// crontap-run's.
    pub fn of(outcome: Outcome) -> Ending {
        Ending {
            outcome,
            stopped: None,
            killed_after: None,
            termination_forwarded: false,
        }
    }
}

/// One attempt's command, watched from its start to its reaping.
pub struct Watch<'a> {
    child: Pid,
    started: Instant,
    limits: Limits,
    signals: &'a SignalLog,
    seen: &'a mut Mark,
    terminal: Option<Terminal>,
    life: Life,
    /// The first cause that asked the command to end, and when.
    cause: Option<(Cause, Instant)>,
    stopped: Option<Stop>,
    termination_forwarded: bool,
    /// When `--timeout` expires; `None` once it has (or without one).
    timeout_at: Option<Instant>,
    /// The lease the command must not outlive; `None` once lost (or without one).
    lease: Option<watch::Receiver<LeaseDeadline>>,
    /// The leader exited during a stop while others of its group ran on: it is left
    /// unreaped, so the group's id stays the group's, until the group is empty or a moment
    /// after SIGKILL (see `group`).
    lingering: bool,
    group: Group,
}

impl<'a> Watch<'a> {
    pub fn new(
        child: Pid,
        started: Instant,
        limits: Limits,
        signals: &'a SignalLog,
        seen: &'a mut Mark,
        terminal: Option<Terminal>,
        lease: Option<watch::Receiver<LeaseDeadline>>,
    ) -> Watch<'a> {
        Watch {
            child,
            started,
            limits,
            signals,
            seen,
            terminal,
            life: Life::Running,
            cause: None,
            stopped: None,
            termination_forwarded: false,
            timeout_at: limits.timeout.and_then(|t| started.checked_add(t)),
            lease,
            lingering: false,
            group: Group::new(child),
        }
    }

    /// Acts on `event`; the command's outcome once it has been reaped.
    pub fn on(&mut self, event: Event) -> Option<Outcome> {
        match event {
            Event::Signals => self.pass_on_signals(),
            Event::ChildChanged => {
                // Signals that came with the exit are still passed on (and counted), while
                // the leader's group id is still its own.
                self.pass_on_signals();
                return self.reap_unless_lingering();
            }
            Event::GroupCheck => return self.reap_unless_lingering(),
            Event::TimeoutDue => self.timeout_due(),
            Event::LeaseDue => self.lease_due(),
            Event::KillDue => self.kill(),
        }
        None
    }

    /// When `--timeout` expires, while it has not.
    pub fn timeout_at(&self) -> Option<Instant> {
        self.timeout_at
    }

    /// When SIGTERM must go out for the lease, while it is watched.
    pub fn lease_stop_at(&self) -> Option<Instant> {
        let lease = self.lease.as_ref()?;
        Some(lease.borrow().stop_at(self.limits.kill_after))
    }

    pub fn kill_at(&self) -> Option<Instant> {
        self.life.kill_at()
    }

    /// Whether the group of an exited leader is being watched.
    pub fn lingering(&self) -> bool {
        self.lingering
    }

    /// Passes on, once each, the signals that arrived since the last look.
    fn pass_on_signals(&mut self) {
        for sig in self.signals.take_since(self.seen) {
            tracing::debug!(signal = sig.as_str(), "forwarding signal to the command");
            // Looked at before the signal goes out: once sent, the job may act on it and
            // exit at once, and must not then seem to have exited before it came. A stop
            // request that came after the exit, before the reaping, did not stop it.
            let could_act = !reap::has_exited(self.child);
            send(self.child, sig);
            if signals::is_stop_request(sig) && could_act && self.stopped.is_none() {
                self.stopped = Some(Stop {
                    signal: sig,
                    after: self.started.elapsed(),
                });
            }
            if signals::is_termination(sig) {
                self.termination_forwarded = true;
                // Stopped members of the group could not act on it otherwise.
                send(self.child, Signal::SIGCONT);
            }
            // A service manager's or orchestrator's stop must end the job in bounded time.
            if sig == Signal::SIGTERM {
                self.must_end(Cause::StopRequest, Instant::now(), self.limits.kill_after);
            }
        }
    }

    fn timeout_due(&mut self) {
        self.timeout_at = None;
        // A command that exited just before, its SIGCHLD not yet handled, ended by itself.
        if reap::has_exited(self.child) {
            return;
        }
        tracing::debug!("timeout reached, sending SIGTERM to the command");
        self.ask_to_end(Cause::Timeout, Instant::now(), self.limits.kill_after);
    }

    fn lease_due(&mut self) {
        let Some(lease) = &self.lease else { return };
        let deadline = *lease.borrow();
        // Renewals move the deadline; only one that stayed put is due.
        if Instant::now() < deadline.stop_at(self.limits.kill_after) {
            return;
        }
        if reap::has_exited(self.child) {
            self.lease = None;
            return;
        }
        tracing::error!(
            "the run's lease on the state store could not be renewed in time; stopping the \
             command before another host may start the job"
        );
        self.lease = None;
        let now = Instant::now();
        let grace = deadline.gone_by.saturating_duration_since(now);
        self.ask_to_end(Cause::LeaseLost, now, grace);
    }

    fn kill(&mut self) {
        tracing::debug!("the command outlived its deadline, sending SIGKILL");
        send(self.child, Signal::SIGKILL);
        let now = Instant::now();
        let due = self.life.kill_at().unwrap_or(now);
        let asked = self.cause.map_or(now, |(_, at)| at);
        self.life = Life::Killed {
            at: now,
            after: due.saturating_duration_since(asked),
        };
    }

    /// SIGTERM to the group, which must be gone `grace` after `now`.
    fn ask_to_end(&mut self, cause: Cause, now: Instant, grace: Duration) {
        send(self.child, Signal::SIGTERM);
        send(self.child, Signal::SIGCONT);
        self.must_end(cause, now, grace);
    }

    /// `cause`, at `now`, wants the group gone `grace` later (a time too far away to
    /// represent is none).
    fn must_end(&mut self, cause: Cause, now: Instant, grace: Duration) {
        self.cause.get_or_insert((cause, now));
        self.life = self.life.must_end_by(now.checked_add(grace));
    }

    /// Reaps the command unless its leader exited during a stop while others of its group
    /// run on.
    fn reap_unless_lingering(&mut self) -> Option<Outcome> {
        let within_grace = match self.life {
            // A stop request with no SIGKILL of crontap-run's (SIGINT, SIGQUIT): the group is
            // waited for as long as it takes, as the job itself would have been.
            Life::Running => self.stopped.is_some(),
            Life::Stopping { .. } => true,
            Life::Killed { at, .. } => at.elapsed() < KILL_GRACE,
        };
        if within_grace && reap::has_exited(self.child) && self.group.has_live_members() {
            if !self.lingering {
                tracing::debug!(
                    "the command's leader exited during a stop, other processes of its group \
                     did not; waiting for them"
                );
            }
            self.lingering = true;
            return None;
        }
        reap::reap(self.child, self.terminal)
    }

    /// How the attempt ended, given how its leader did: a cause of crontap-run's own (the
    /// first one) replaces the command's status.
    pub fn ending(self, reaped: Outcome) -> Ending {
        let killed_after = match self.life {
            Life::Killed { after, .. } => Some(after),
            _ => None,
        };
        let outcome = match (self.cause, self.limits.timeout) {
            (Some((Cause::Timeout, _)), Some(limit)) => Outcome::TimedOut {
                limit,
                kill_after: killed_after,
            },
            (Some((Cause::LeaseLost, _)), _) => Outcome::LeaseLost {
                killed: killed_after.is_some(),
            },
            _ => reaped,
        };
        Ending {
            outcome,
            stopped: self.stopped,
            killed_after,
            termination_forwarded: self.termination_forwarded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_kill_time_stands() {
        let now = Instant::now();
        let at = |s: u64| Some(now + Duration::from_secs(s));
        // A stop request (SIGKILL at 4 s), then --timeout (at 3 + 10 s): 4 s stands.
        let life = Life::Running.must_end_by(at(4)).must_end_by(at(13));
        assert_eq!(life.kill_at(), at(4));
        // A later cause with an earlier time brings SIGKILL forward.
        assert_eq!(life.must_end_by(at(2)).kill_at(), at(2));
        // A time too far away to represent changes nothing.
        assert_eq!(life.must_end_by(None).kill_at(), at(4));
        assert_eq!(
            Life::Running.must_end_by(None).must_end_by(at(5)).kill_at(),
            at(5)
        );
    }

    #[test]
    fn nothing_changes_once_sigkill_was_sent() {
        let now = Instant::now();
        let killed = Life::Killed {
            at: now,
            after: Duration::from_secs(1),
        };
        assert_eq!(killed.must_end_by(Some(now)), killed);
        assert_eq!(killed.kill_at(), None);
        assert_eq!(Life::Running.kill_at(), None);
    }
}
