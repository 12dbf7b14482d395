//! Job control for runs started by hand in a terminal.
//!
//! The job runs in its own process group. When crontap-run owns the terminal's foreground,
//! it hands the foreground to the job's group, so that a job reading the terminal is not
//! stopped with SIGTTIN and Ctrl-C reaches the job exactly once (the terminal sends it to
//! the foreground group only). crontap-run takes the foreground back when the job ends or
//! stops, and when the job stops crontap-run stops too, so that the shell's job control
//! (`fg`, `bg`, a job started with `&` and brought to the foreground) works as usual. crontap-run keeps SIGTTOU blocked, which makes these hand-overs possible from the
//! background and lets the job's output through even when the terminal has `tostop` set.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::unistd::{Pid, getpgrp, isatty, tcgetpgrp, tcsetpgrp};

use crate::run::process::stdin;

/// The controlling terminal on stdin.
#[derive(Clone, Copy)]
pub struct Terminal {
    own_group: Pid,
}

impl Terminal {
    /// The terminal on stdin, if it is the controlling terminal of crontap-run's session.
    pub fn detect() -> Option<Terminal> {
        let controlling = isatty(stdin()).unwrap_or(false) && tcgetpgrp(stdin()).is_ok();
        controlling.then(|| Terminal {
            own_group: getpgrp(),
        })
    }

    /// Whether crontap-run's group has the terminal's foreground.
    pub fn in_foreground(&self) -> bool {
        tcgetpgrp(stdin()).is_ok_and(|g| g == self.own_group)
    }

    /// Hands the terminal to the job's group. Called by crontap-run after the spawn; the job
    /// does the same before exec (whichever runs first wins the race harmlessly).
    pub fn give_to(&self, group: Pid) {
        if let Err(err) = tcsetpgrp(stdin(), group) {
            tracing::debug!(%err, "could not hand the terminal to the command");
        }
    }

    /// Takes the terminal back from the job's group, if that group has it (and only then:
    /// a crontap-run in the background must not take the terminal from the shell).
    pub fn take_back_from(&self, group: Pid) {
        if !tcgetpgrp(stdin()).is_ok_and(|g| g == group) {
            return;
        }
        if let Err(err) = tcsetpgrp(stdin(), self.own_group) {
            tracing::debug!(%err, "could not take the terminal back");
        }
    }

    /// In the child between fork and exec: take the foreground for the child's new group.
    /// SIGTTOU is blocked here (inherited from crontap-run) until the inherited mask is
    /// restored after this call. Async-signal-safe: two system calls, nothing allocated.
    pub fn claim_in_child() {
        let _ = tcsetpgrp(stdin(), getpgrp());
    }
}

/// Blocks SIGTTOU for the calling thread and the threads it starts afterwards.
pub fn block_ttou() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGTTOU);
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
}
