//! Job control for runs started by hand in a terminal.
//!
//! The job runs in its own process group. When crontap-run owns the terminal's foreground,
//! it hands the foreground to the job's group, so that a job reading the terminal is not
//! stopped with SIGTTIN and Ctrl-C reaches the job exactly once (the terminal sends it to
//! the foreground group only). crontap-run takes the foreground back when the job ends or
//! stops. crontap-run keeps SIGTTOU blocked, which makes these hand-overs possible from the
//! background and lets the job's output through even when the terminal has `tostop` set.

use std::os::fd::BorrowedFd;

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::unistd::{Pid, getpgrp, isatty, tcgetpgrp, tcsetpgrp};

/// The controlling terminal on stdin, when crontap-run's group is in its foreground.
#[derive(Clone, Copy)]
pub struct Foreground {
    own_group: Pid,
}

fn stdin() -> BorrowedFd<'static> {
    // SAFETY: fd 0 stays open for the life of the process; crontap-run never closes it.
    unsafe { BorrowedFd::borrow_raw(0) }
}

impl Foreground {
    pub fn detect() -> Option<Foreground> {
        let own_group = getpgrp();
        let owns =
            isatty(stdin()).unwrap_or(false) && tcgetpgrp(stdin()).is_ok_and(|g| g == own_group);
        owns.then_some(Foreground { own_group })
    }

    /// Hands the terminal to the job's group. Called by crontap-run after the spawn; the job
    /// does the same before exec (whichever runs first wins the race harmlessly).
    pub fn give_to(&self, group: Pid) {
        if let Err(err) = tcsetpgrp(stdin(), group) {
            tracing::debug!(%err, "could not hand the terminal to the command");
        }
    }

    pub fn take_back(&self) {
        if let Err(err) = tcsetpgrp(stdin(), self.own_group) {
            tracing::debug!(%err, "could not take the terminal back");
        }
    }

    /// In the child between fork and exec: take the foreground for the child's new group.
    /// SIGTTOU is blocked here (inherited from crontap-run) until the inherited mask is
    /// restored after this call.
    pub fn claim_in_child() {
        // SAFETY: getpgrp and tcsetpgrp are async-signal-safe.
        unsafe {
            libc::tcsetpgrp(0, libc::getpgrp());
        }
    }
}

/// Blocks SIGTTOU for the calling thread and the threads it starts afterwards.
pub fn block_ttou() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGTTOU);
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
}
