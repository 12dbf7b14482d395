//! One attempt's command as explicit states, and the events that move it between them.
//!
//! The supervisor's loop ([`supervise`](super::supervise)) turns what happens into an
//! [`Event`] (a signal to pass on, a child changed state, a deadline came) and hands it to
//! [`Watch::on`], which moves the command's [`Life`] on and returns the [`Action`]s that
//! follow: signals for the command's group, and when to reap its leader. The watch does
//! nothing itself; what it needs to know of the child (has the leader exited, is anyone
//! left in its group) it asks a [`Probe`]. The supervisor performs the actions on the real
//! child; the tests give it a fake one and check every ordering of exit, stop request,
//! timeout and lease loss.
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
use tokio::sync::watch;

use crate::run::outcome::{Outcome, SuccessCodes};
use crate::run::signals;

/// How long after SIGKILL the group may take to be gone before the leader is reaped anyway:
/// a process in uninterruptible sleep (a hung NFS mount) dies only when it wakes.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// `--timeout` and `--kill-after`, and the statuses that count as success
/// (`--success-exit`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    pub success: SuccessCodes,
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
    pub fn stop_at(&self, kill_after: Duration) -> Instant {
        let grace = kill_after.min(self.max_grace);
        self.gone_by.checked_sub(grace).unwrap_or(self.gone_by)
    }
}

/// What the supervisor's loop saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A signal arrived at crontap-run (one event for each arrival, in the order the
    /// signal log gives them).
    Signal(Signal),
    /// A child changed state (SIGCHLD); the signals that came with it were handed over
    /// first.
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

/// What the supervisor does for the watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Send this signal to the command's process group.
    Send(Signal),
    /// Reap the leader; if it has ended, the attempt is over ([`Watch::ending`]).
    Reap,
}

/// What the watch asks about the child, as things stand now.
pub trait Probe {
    /// Whether the leader has exited (it may not be reaped yet).
    fn has_exited(&mut self) -> bool;
    /// Whether a process other than a zombie is left in the leader's group.
    fn group_has_live_members(&mut self) -> bool;
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
pub struct Watch {
    started: Instant,
    limits: Limits,
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
}

impl Watch {
    pub fn new(
        started: Instant,
        limits: Limits,
        lease: Option<watch::Receiver<LeaseDeadline>>,
    ) -> Watch {
        Watch {
            started,
            limits,
            life: Life::Running,
            cause: None,
            stopped: None,
            termination_forwarded: false,
            timeout_at: limits.timeout.and_then(|t| started.checked_add(t)),
            lease,
            lingering: false,
        }
    }

    /// Takes in `event`, seen at `now`, asking `child` what it needs to know; returns what
    /// the supervisor must do, in order.
    pub fn on(&mut self, event: Event, now: Instant, child: &mut impl Probe) -> Vec<Action> {
        match event {
            Event::Signal(sig) => self.pass_on(sig, now, child),
            Event::ChildChanged | Event::GroupCheck => self.reap_unless_lingering(now, child),
            Event::TimeoutDue => self.timeout_due(now, child),
            Event::LeaseDue => self.lease_due(now, child),
            Event::KillDue => self.kill(now),
        }
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

    /// Passes one signal on to the group.
    fn pass_on(&mut self, sig: Signal, now: Instant, child: &mut impl Probe) -> Vec<Action> {
        tracing::debug!(signal = sig.as_str(), "forwarding signal to the command");
        // Looked at before the signal goes out: once sent, the job may act on it and exit
        // at once, and must not then seem to have exited before it came. A stop request
        // that came after the exit, before the reaping, did not stop it.
        let could_act = !child.has_exited();
        let mut actions = vec![Action::Send(sig)];
        if signals::is_stop_request(sig) && could_act && self.stopped.is_none() {
            self.stopped = Some(Stop {
                signal: sig,
                after: now.saturating_duration_since(self.started),
            });
        }
        if signals::is_termination(sig) {
            self.termination_forwarded = true;
            // Stopped members of the group could not act on it otherwise.
            actions.push(Action::Send(Signal::SIGCONT));
        }
        // A service manager's or orchestrator's stop must end the job in bounded time.
        if sig == Signal::SIGTERM {
            self.must_end(Cause::StopRequest, now, self.limits.kill_after);
        }
        actions
    }

    fn timeout_due(&mut self, now: Instant, child: &mut impl Probe) -> Vec<Action> {
        self.timeout_at = None;
        // A command that exited just before, its SIGCHLD not yet handled, ended by itself.
        if child.has_exited() {
            return Vec::new();
        }
        tracing::debug!("timeout reached, sending SIGTERM to the command");
        self.ask_to_end(Cause::Timeout, now, self.limits.kill_after)
    }

    fn lease_due(&mut self, now: Instant, child: &mut impl Probe) -> Vec<Action> {
        let Some(lease) = &self.lease else {
            return Vec::new();
        };
        let deadline = *lease.borrow();
        // Renewals move the deadline; only one that stayed put is due.
        if now < deadline.stop_at(self.limits.kill_after) {
            return Vec::new();
        }
        self.lease = None;
        if child.has_exited() {
            return Vec::new();
        }
        tracing::error!(
            "the run's lease on the state store could not be renewed in time; stopping the \
             command before another host may start the job"
        );
        let grace = deadline.gone_by.saturating_duration_since(now);
        self.ask_to_end(Cause::LeaseLost, now, grace)
    }

    fn kill(&mut self, now: Instant) -> Vec<Action> {
        tracing::debug!("the command outlived its deadline, sending SIGKILL");
        let due = self.life.kill_at().unwrap_or(now);
        let asked = self.cause.map_or(now, |(_, at)| at);
        self.life = Life::Killed {
            at: now,
            after: due.saturating_duration_since(asked),
        };
        vec![Action::Send(Signal::SIGKILL)]
    }

    /// SIGTERM to the group, which must be gone `grace` after `now`.
    fn ask_to_end(&mut self, cause: Cause, now: Instant, grace: Duration) -> Vec<Action> {
        self.must_end(cause, now, grace);
        vec![Action::Send(Signal::SIGTERM), Action::Send(Signal::SIGCONT)]
    }

    /// `cause`, at `now`, wants the group gone `grace` later (a time too far away to
    /// represent is none).
    fn must_end(&mut self, cause: Cause, now: Instant, grace: Duration) {
        self.cause.get_or_insert((cause, now));
        self.life = self.life.must_end_by(now.checked_add(grace));
    }

    /// Reaps the command unless its leader exited during a stop while others of its group
    /// run on.
    fn reap_unless_lingering(&mut self, now: Instant, child: &mut impl Probe) -> Vec<Action> {
        let within_grace = match self.life {
            // A stop request with no SIGKILL of crontap-run's (SIGINT, SIGQUIT): the group is
            // waited for as long as it takes, as the job itself would have been.
            Life::Running => self.stopped.is_some(),
            Life::Stopping { .. } => true,
            Life::Killed { at, .. } => now.saturating_duration_since(at) < KILL_GRACE,
        };
        if within_grace && child.has_exited() && child.group_has_live_members() {
            if !self.lingering {
                tracing::debug!(
                    "the command's leader exited during a stop, other processes of its group \
                     did not; waiting for them"
                );
            }
            self.lingering = true;
            return Vec::new();
        }
        vec![Action::Reap]
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

    /// A child the tests control: whether its leader has exited, and whether anyone is
    /// left in its group.
    #[derive(Default)]
    struct Fake {
        exited: bool,
        live_members: bool,
    }

    impl Probe for Fake {
        fn has_exited(&mut self) -> bool {
            self.exited
        }
        fn group_has_live_members(&mut self) -> bool {
            self.live_members
        }
    }

    const KILL_AFTER: Duration = Duration::from_secs(10);
    const TIMEOUT: Duration = Duration::from_secs(2);
    const TERM: [Action; 2] = [Action::Send(Signal::SIGTERM), Action::Send(Signal::SIGCONT)];

    fn limits() -> Limits {
        Limits {
            timeout: Some(TIMEOUT),
            kill_after: KILL_AFTER,
            success: SuccessCodes::default(),
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Happening {
        /// The leader exits (its SIGCHLD is handled only at the end).
        Exit,
        /// crontap-run gets SIGTERM.
        StopRequest,
        /// `--timeout` expires.
        Timeout,
        /// The lease's stop time comes without a renewal.
        LeaseLost,
    }

    fn orderings(items: &[Happening]) -> Vec<Vec<Happening>> {
        if items.len() <= 1 {
            return vec![items.to_vec()];
        }
        let mut all = Vec::new();
        for (i, &first) in items.iter().enumerate() {
            let mut rest = items.to_vec();
            rest.remove(i);
            for mut tail in orderings(&rest) {
                tail.insert(0, first);
                all.push(tail);
            }
        }
        all
    }

    /// Every ordering of exit, stop request, timeout and lease loss, one second apart,
    /// then the exit's SIGCHLD: the first cause of crontap-run's that came while the
    /// command ran names the ending, each of them sent SIGTERM to the group, none after the
    /// exit did, a stop request is passed on whenever it comes but stopped the command only
    /// if it ran, SIGKILL is due at the earliest time a cause set, and the leader is reaped.
    #[test]
    fn every_ordering_of_exit_stop_timeout_and_lease_loss() {
        use Happening::*;
        let all = orderings(&[Exit, StopRequest, Timeout, LeaseLost]);
        assert_eq!(all.len(), 24);
        for order in all {
            let start = Instant::now();
            let at = |i: usize| start + Duration::from_secs(i as u64 + 1);
            let lease_slot = order.iter().position(|h| *h == LeaseLost).unwrap();
            // The lease must be gone 3 s after its stop time (less than --kill-after).
            let deadline = LeaseDeadline {
                gone_by: at(lease_slot) + Duration::from_secs(3),
                max_grace: Duration::from_secs(3),
            };
            let (_renewals, lease) = watch::channel(deadline);
            let mut watch = Watch::new(start, limits(), Some(lease));
            assert_eq!(watch.lease_stop_at(), Some(at(lease_slot)), "{order:?}");
            let mut child = Fake::default();
            let mut sigterms = 0;
            let mut kill_at: Option<Instant> = None;
            for (i, happening) in order.iter().enumerate() {
                let now = at(i);
                let ran = !child.exited;
                let actions = match happening {
                    Exit => {
                        child.exited = true;
                        Vec::new()
                    }
                    StopRequest => watch.on(Event::Signal(Signal::SIGTERM), now, &mut child),
                    Timeout => watch.on(Event::TimeoutDue, now, &mut child),
                    LeaseLost => watch.on(Event::LeaseDue, now, &mut child),
                };
                let sends_term = *happening == StopRequest || (ran && *happening != Exit);
                match sends_term {
                    true => assert_eq!(actions, TERM, "{order:?} at {happening:?}"),
                    false => assert_eq!(actions, [], "{order:?} at {happening:?}"),
                }
                sigterms += usize::from(sends_term);
                if ran && *happening != Exit {
                    let grace = match happening {
                        LeaseLost => Duration::from_secs(3),
                        _ => KILL_AFTER,
                    };
                    kill_at = Some(kill_at.map_or(now + grace, |k| k.min(now + grace)));
                }
            }
            assert!(sigterms >= 1, "{order:?}");
            // A stop request after the exit still counts as a cause (SIGKILL would follow),
            // but that changes nothing: the leader is reaped now.
            let exit_slot = order.iter().position(|h| *h == Exit).unwrap();
            if kill_at.is_some() {
                assert_eq!(watch.kill_at(), kill_at, "{order:?}");
            }
            let reaped = watch.on(Event::ChildChanged, at(4), &mut child);
            assert_eq!(reaped, [Action::Reap], "{order:?}");
            let ending = watch.ending(Outcome::Signaled(15));
            let first_cause = order[..exit_slot].first().copied();
            let expected = match first_cause {
                Some(Timeout) => Outcome::TimedOut {
                    limit: TIMEOUT,
                    kill_after: None,
                },
                Some(LeaseLost) => Outcome::LeaseLost { killed: false },
                _ => Outcome::Signaled(15),
            };
            assert_eq!(ending.outcome, expected, "{order:?}");
            let stop_slot = order.iter().position(|h| *h == StopRequest).unwrap();
            match stop_slot < exit_slot {
                true => {
                    let stop = ending.stopped.expect("stopped");
                    assert_eq!(stop.signal, Signal::SIGTERM, "{order:?}");
                    assert_eq!(stop.after, Duration::from_secs(stop_slot as u64 + 1));
                }
                false => assert!(ending.stopped.is_none(), "{order:?}"),
            }
            assert!(ending.termination_forwarded, "{order:?}");
            assert_eq!(ending.killed_after, None, "{order:?}");
        }
    }

    /// SIGKILL goes out when it is due, is reported as the time the causes set, and a
    /// leader that exited while its group ran on is reaped only once the group is empty, or
    /// a moment after SIGKILL whatever is left (a process stuck in the kernel).
    #[test]
    fn sigkill_and_a_group_that_outlives_its_leader() {
        let start = Instant::now();
        let s = |n: u64| start + Duration::from_secs(n);
        let mut watch = Watch::new(start, limits(), None);
        let mut child = Fake::default();
        assert_eq!(watch.on(Event::TimeoutDue, s(2), &mut child), TERM);
        assert_eq!(watch.kill_at(), Some(s(12)));
        // The leader dies of SIGTERM; something of its group ignores it.
        child.exited = true;
        child.live_members = true;
        assert_eq!(watch.on(Event::ChildChanged, s(3), &mut child), []);
        assert!(watch.lingering());
        assert_eq!(watch.on(Event::GroupCheck, s(4), &mut child), []);
        // SIGKILL, late because the loop was busy: reported as the 10 s the causes set.
        let kill = watch.on(Event::KillDue, s(13), &mut child);
        assert_eq!(kill, [Action::Send(Signal::SIGKILL)]);
        assert_eq!(watch.kill_at(), None);
        // Within the grace after SIGKILL the group is waited for; after it, not.
        assert_eq!(watch.on(Event::GroupCheck, s(14), &mut child), []);
        let later = s(13) + KILL_GRACE;
        assert_eq!(
            watch.on(Event::GroupCheck, later, &mut child),
            [Action::Reap]
        );
        let ending = watch.ending(Outcome::Signaled(15));
        assert_eq!(ending.killed_after, Some(KILL_AFTER));
        assert_eq!(
            ending.outcome,
            Outcome::TimedOut {
                limit: TIMEOUT,
                kill_after: Some(KILL_AFTER)
            }
        );
    }

    /// SIGINT and SIGQUIT are stop requests with no SIGKILL of crontap-run's: passed on (with
    /// SIGCONT), the group waited for as long as it takes; other signals are only passed on.
    #[test]
    fn stop_requests_without_a_kill_and_plain_forwarding() {
        for sig in [Signal::SIGINT, Signal::SIGQUIT] {
            let start = Instant::now();
            let mut watch = Watch::new(start, limits(), None);
            let mut child = Fake::default();
            let usr1 = watch.on(Event::Signal(Signal::SIGUSR1), start, &mut child);
            assert_eq!(usr1, [Action::Send(Signal::SIGUSR1)]);
            let stop = watch.on(Event::Signal(sig), start, &mut child);
            assert_eq!(stop, [Action::Send(sig), Action::Send(Signal::SIGCONT)]);
            assert_eq!(watch.kill_at(), None, "{sig:?} schedules no SIGKILL");
            child.exited = true;
            child.live_members = true;
            let hour = start + Duration::from_secs(3600);
            assert_eq!(watch.on(Event::GroupCheck, hour, &mut child), []);
            child.live_members = false;
            assert_eq!(
                watch.on(Event::GroupCheck, hour, &mut child),
                [Action::Reap]
            );
            let ending = watch.ending(Outcome::Exited(130));
            assert_eq!(ending.outcome, Outcome::Exited(130));
            assert_eq!(ending.stopped.map(|s| s.signal), Some(sig));
        }
    }

    /// A renewal moves the lease's stop time: the old time is no longer due.
    #[test]
    fn a_renewed_lease_is_not_due() {
        let start = Instant::now();
        let deadline = LeaseDeadline {
            gone_by: start + Duration::from_secs(20),
            max_grace: KILL_AFTER,
        };
        let (renew, lease) = watch::channel(deadline);
        let mut watch = Watch::new(start, limits(), Some(lease));
        let due = watch.lease_stop_at().unwrap();
        renew.send_replace(LeaseDeadline {
            gone_by: start + Duration::from_secs(80),
            max_grace: KILL_AFTER,
        });
        let mut child = Fake::default();
        assert_eq!(watch.on(Event::LeaseDue, due, &mut child), []);
        assert_eq!(watch.lease_stop_at(), Some(start + Duration::from_secs(70)));
        // Without a child that exits or a cause, nothing is reaped until SIGCHLD.
        assert_eq!(
            watch.on(Event::ChildChanged, due, &mut child),
            [Action::Reap]
        );
        assert_eq!(watch.ending(Outcome::Exited(0)).outcome, Outcome::Exited(0));
    }
}
