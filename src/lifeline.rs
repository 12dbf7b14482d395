//! A lifeline between crontap-run and the job it runs while holding a lock or key: if
//! crontap-run dies (SIGKILL, the OOM killer), the job's whole process group is killed too.
//!
//! Without it, a killed crontap-run leaves its job running unsupervised while the kernel
//! releases the lock, and the next run overlaps it. `PR_SET_PDEATHSIG` reaches only the
//! job's first process, so the lifeline is a small process of its own instead: forked from
//! crontap-run after the job starts, it waits on a pipe whose only writer is crontap-run.
//! A byte on the pipe means the attempt ended normally: the lifeline exits and the job's
//! group, with anything it left in the background, is left alone. End-of-file without that
//! byte means crontap-run died: the lifeline sends SIGKILL to the group, then exits.
//!
//! The lifeline shares crontap-run's open files, locks included, so a lock is released only
//! when the lifeline exits, after the group was killed.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};

use nix::sys::signal::{SigHandler, Signal, killpg, signal};
use nix::unistd::{ForkResult, Pid, fork};

/// The write end of the lifeline, held by crontap-run; [`Lifeline::release`] tells the
/// lifeline to exit quietly.
pub struct Lifeline {
    pipe: std::fs::File,
}

impl Lifeline {
    /// Starts the lifeline for the job whose process group is `group`. `None` if it cannot
    /// be started; the run goes on without it.
    pub fn start(group: Pid) -> Option<Lifeline> {
        match start(group) {
            Ok(lifeline) => Some(lifeline),
            Err(err) => {
                tracing::warn!(%err, "cannot start the lifeline that stops the job if crontap-run is killed");
                None
            }
        }
    }

    /// The attempt ended: the lifeline exits without touching the group.
    pub fn release(mut self) {
        let _ = self.pipe.write_all(b"x");
    }
}

fn start(group: Pid) -> io::Result<Lifeline> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    // SAFETY: the child only makes async-signal-safe calls (signal, close, read, killpg,
    // _exit) before it exits; it never returns into Rust code.
    match unsafe { fork() }? {
        ForkResult::Child => {
            drop(write);
            watch(read, group)
        }
        ForkResult::Parent { .. } => Ok(Lifeline {
            pipe: std::fs::File::from(write),
        }),
    }
}

/// The lifeline process: waits for the release byte or end-of-file.
fn watch(read: OwnedFd, group: Pid) -> ! {
    // Only SIGKILL ends the lifeline: a Ctrl-C or a SIGTERM meant for crontap-run's process
    // group must not cut it while crontap-run still runs.
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGPIPE,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
        Signal::SIGWINCH,
    ] {
        // SAFETY: installing SIG_IGN runs no code.
        let _ = unsafe { signal(sig, SigHandler::SigIgn) };
    }
    let mut byte = [0u8; 1];
    let ended = loop {
        // SAFETY: read(2) into a stack buffer of the length given.
        let n = unsafe { libc::read(read.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
        match n {
            1 => break false,
            0 => break true,
            _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => continue,
            _ => break true,
        }
    };
    if ended {
        let _ = killpg(group, Signal::SIGKILL);
    }
    // SAFETY: _exit ends the process without running Rust or libc exit handlers.
    unsafe { libc::_exit(0) }
}
