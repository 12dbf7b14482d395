//! Starting the command's process: a child that shares crontap-run's memory until it
//! executes the program, made as the C libraries' `posix_spawn` makes one
//! (`clone(CLONE_VM | CLONE_VFORK)`), with crontap-run's own set-up done in it.
//!
//! A `fork` copies crontap-run's page tables, and every page either process writes before
//! the child executes is copied again; with the output threads already running, it also
//! interrupts the other cores for each such page. The child made here copies nothing: it
//! runs on a stack of its own inside crontap-run's memory, and the spawning thread waits
//! until the child has executed the program or exited (CLONE_VFORK). `posix_spawn` itself
//! cannot do what the child must (the `execvp` rules of [`Exec`], the terminal, the
//! lifeline, every signal as crontap-run inherited it, the C library's own signals too).
//!
//! The child, with every signal blocked from before it exists, so that no handler of
//! crontap-run's can run in it:
//! 1. puts the output pipes on its stdout and stderr;
//! 2. leads a process group of its own;
//! 3. tells the lifeline its group, if the run has one ([`Lifeline`]);
//! 4. takes the terminal's foreground, if crontap-run had it ([`Terminal`]);
//! 5. gives every signal the disposition and mask crontap-run inherited ([`Inherited`]);
//! 6. executes the program ([`Exec`]).
//!
//! Everything it needs is built before; it makes only system calls, and writes nothing of
//! crontap-run's memory but its own stack, `/bin/sh`'s file slot in [`Exec`] and the error
//! number of a step that failed, before it exits 127.
//! crontap-run then reaps it and reports that error as the spawn's.
//!
//! [`Lifeline`]: super::lifeline::Lifeline

use std::ffi::c_void;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;

use nix::errno::Errno;
use nix::unistd::Pid;

use crate::run::exec::Exec;
use crate::run::signals::{self, Inherited};
use crate::run::terminal::Terminal;

/// What the child sets up before it executes the program.
pub struct Setup {
    /// The write ends of the output pipes, for its descriptors 1 and 2.
    pub stdout: RawFd,
    pub stderr: RawFd,
    /// Tells the lifeline the child's group (async-signal-safe).
    pub announce: Option<Box<dyn Fn()>>,
    /// crontap-run is in the terminal's foreground: the child's group takes it.
    pub claim_terminal: bool,
    pub inherited: Inherited,
}

/// The child's stack: the program search and the exec need little (musl's `posix_spawn`
/// gives its child about 5 KiB).
const STACK: usize = 32 * 1024;

#[repr(C, align(16))]
struct Stack([u8; STACK]);

/// What the child reads, and where it leaves the error it failed with.
struct Child<'a> {
    setup: &'a Setup,
    exec: &'a mut Exec,
    /// The error number of the step that failed; 0 while none has.
    error: i32,
}

/// Starts the child and returns its pid, which is also its process group's id; or the
/// error of the step that failed (the child has then been reaped).
pub fn spawn(setup: &Setup, exec: &mut Exec) -> io::Result<Pid> {
    // On this thread's stack, which the thread does not use until the child has executed
    // the program or exited.
    let mut stack = MaybeUninit::<Stack>::uninit();
    let top = stack
        .as_mut_ptr()
        .cast::<u8>()
        .wrapping_add(STACK)
        .cast::<c_void>();
    let mut child = Child {
        setup,
        exec,
        error: 0,
    };
    // The child starts with this thread's mask: nothing is delivered to it until it has
    // reset every handler.
    let mask = signals::block_all()?;
    // SAFETY: `run_child` runs on its own stack, reads `child` (alive until this call
    // returns, which CLONE_VFORK makes wait for the exec or exit) and makes only system
    // calls; every signal is blocked.
    let pid = unsafe {
        libc::clone(
            run_child,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut child).cast::<c_void>(),
        )
    };
    let clone_error = io::Error::last_os_error();
    signals::restore_mask(mask);
    if pid < 0 {
        return Err(clone_error);
    }
    // SAFETY: the child has written it, if at all, before this thread went on.
    let error = unsafe { std::ptr::read_volatile(&raw const child.error) };
    if error != 0 {
        reap(pid);
        return Err(io::Error::from_raw_os_error(error));
    }
    Ok(Pid::from_raw(pid))
}

/// The child: sets up, executes the program, or records why it could not and exits.
extern "C" fn run_child(arg: *mut c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Child` of `spawn`, whose thread waits for this process.
    let child = unsafe { &mut *arg.cast::<Child<'_>>() };
    let error = match set_up_and_exec(child.setup, child.exec) as i32 {
        0 => libc::EINVAL,
        error => error,
    };
    // SAFETY: as above; the spawning thread reads it once this process has exited.
    unsafe {
        std::ptr::write_volatile(&raw mut child.error, error);
        libc::_exit(127)
    }
}

/// The child's steps, in order (see the module's header); returns only if one failed.
fn set_up_and_exec(setup: &Setup, exec: &mut Exec) -> Errno {
    // SAFETY: dup2 and setpgid are system calls on descriptors and ids of this process.
    let set = unsafe {
        libc::dup2(setup.stdout, libc::STDOUT_FILENO) >= 0
            && libc::dup2(setup.stderr, libc::STDERR_FILENO) >= 0
            && libc::setpgid(0, 0) == 0
    };
    if !set {
        return Errno::last();
    }
    if let Some(announce) = &setup.announce {
        announce();
    }
    if setup.claim_terminal {
        Terminal::claim_in_child();
    }
    if let Err(err) = setup.inherited.restore_in_child() {
        return Errno::from_raw(err.raw_os_error().unwrap_or(libc::EINVAL));
    }
    exec.run()
}

/// Reaps a child that failed before its program ran (it has exited by now).
fn reap(pid: libc::pid_t) {
    loop {
        // SAFETY: waits for our own child; no status is kept.
        let rc = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        if rc >= 0 || Errno::last() != Errno::EINTR {
            return;
        }
    }
}
