//! A lifeline between crontap-run and the job it runs while holding a lock or key: if
//! crontap-run dies (SIGKILL, the OOM killer), the job's whole process group is killed too.
//!
//! Without it, a killed crontap-run leaves its job running unsupervised while the kernel
//! releases the lock, and the next run overlaps it. `PR_SET_PDEATHSIG` reaches only the
//! job's first process, so the lifeline is a small process of its own instead. It is
//! forked before the job and before the job's output pipes exist (so it holds none of their
//! ends), and waits on a pipe whose writers are crontap-run and, until it
//! executes the command, the job's first process, which writes its own pid (the group's id)
//! there first thing: so the lifeline knows the group before the job's program runs. Then
//! a byte on the pipe means the attempt ended normally: the lifeline exits and the job's
//! group, with anything it left in the background, is left alone. End-of-file without that
//! byte means crontap-run died: the lifeline sends SIGKILL to the group, then exits.
//!
//! The lifeline shares crontap-run's open files, locks included, so a lock is released only
//! when the lifeline exits, after the group was killed.
//!
//! The lifeline leads a process group of its own. Killers often aim at crontap-run's whole
//! group rather than at crontap-run alone (`timeout -s KILL`, `kill -KILL -<pgid>`, a
//! supervisor stopping a process group): in crontap-run's group, the lifeline would die in
//! the same instant and the job, in its own group, would run on after the lock was released.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::sync::Arc;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, killpg, sigprocmask};
use nix::unistd::{ForkResult, Pid, fork};

/// The write end of the lifeline, held by crontap-run (and by the job's first process's
/// announcer until it is dropped, after the spawn); [`Lifeline::release`] tells the lifeline
/// to exit quietly.
pub struct Lifeline {
    pipe: Arc<File>,
}

impl Lifeline {
    /// Starts a lifeline for the next job. `None` if it cannot be started; the run goes on
    /// without it.
    pub fn start() -> Option<Lifeline> {
        match start() {
            Ok(lifeline) => Some(lifeline),
            Err(err) => {
                tracing::warn!(
                    %err,
                    "cannot start the lifeline that stops the job if crontap-run is killed"
                );
                None
            }
        }
    }

    /// What the job's first process calls between fork and exec: tells the lifeline its
    /// process group. Async-signal-safe: `getpid` and one `write` of 4 bytes from the stack
    /// (a pipe takes up to `PIPE_BUF` bytes whole), nothing allocated. The announcer holds
    /// its own reference to the pipe, so the descriptor it writes to is open for as long as
    /// it can be called.
    pub fn announcer(&self) -> impl Fn() + Send + Sync + 'static {
        let pipe = Arc::clone(&self.pipe);
        move || {
            let pid: i32 = nix::unistd::getpid().as_raw();
            let _ = nix::unistd::write(&*pipe, &pid.to_ne_bytes());
        }
    }

    /// The attempt ended (or the job never started): the lifeline exits without touching
    /// the group.
    pub fn release(self) {
        let _ = (&*self.pipe).write_all(b"x");
    }
}

fn start() -> io::Result<Lifeline> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    // SAFETY: crontap-run may have other threads (a start ping, an earlier attempt's output
    // copies), so the child may only make async-signal-safe calls: it closes the write end,
    // then calls setpgid, sigprocmask (with a set built by sigemptyset and sigaddset), read,
    // killpg and _exit, and nothing else. It allocates nothing and takes no lock (the
    // allocator's or any other may be held by a thread that does not exist in the child),
    // and it never returns into the caller's code.
    match unsafe { fork() }? {
        ForkResult::Child => {
            drop(write);
            watch(read)
        }
        ForkResult::Parent { child } => {
            // Set from both sides, so the lifeline is out of crontap-run's group before the
            // job starts, however the two processes are scheduled.
            let _ = nix::unistd::setpgid(child, child);
            Ok(Lifeline {
                pipe: Arc::new(File::from(write)),
            })
        }
    }
}

/// The lifeline process: learns the group, then waits for the release byte or end-of-file.
fn watch(read: OwnedFd) -> ! {
    // Out of crontap-run's process group, so a signal to that group cannot take the lifeline
    // with it (see the module notes).
    let _ = nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0));
    // Only SIGKILL ends the lifeline: a Ctrl-C or a SIGTERM meant for crontap-run's process
    // group must not cut it while crontap-run still runs. Blocked, they stay pending until
    // the lifeline exits: the same as ignored for a process that never executes anything,
    // and it also keeps crontap-run's own handlers, inherited through the fork, from running.
    let mut blocked = SigSet::empty();
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
        blocked.add(sig);
    }
    let _ = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None);
    let mut pid = [0u8; 4];
    if !read_exact(&read, &mut pid) {
        // Released, or crontap-run died, before the job started: nothing to stop.
        exit()
    }
    let group = Pid::from_raw(i32::from_ne_bytes(pid));
    let mut byte = [0u8; 1];
    if !read_exact(&read, &mut byte) && group.as_raw() > 1 {
        let _ = killpg(group, Signal::SIGKILL);
    }
    exit()
}

/// Fills `buf` from the pipe; false at end-of-file (or an error) first.
fn read_exact(fd: &OwnedFd, buf: &mut [u8]) -> bool {
    let mut filled = 0;
    while filled < buf.len() {
        match nix::unistd::read(fd, &mut buf[filled..]) {
            Ok(0) => return false,
            Ok(n) => filled += n,
            Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
    true
}

fn exit() -> ! {
    crate::run::process::exit_now(0)
}
