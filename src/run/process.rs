//! crontap-run's own process: the standard descriptors it was started with, borrowed for
//! its whole life, and ending it at once. Every module that needs either comes here, so
//! the two `unsafe` calls they take are written, and argued, once.

use std::os::fd::BorrowedFd;

/// Descriptor 0, crontap-run's standard input (the terminal, for job control).
pub fn stdin() -> BorrowedFd<'static> {
    standard(libc::STDIN_FILENO)
}

/// Descriptor 1, crontap-run's standard output.
pub fn stdout() -> BorrowedFd<'static> {
    standard(libc::STDOUT_FILENO)
}

/// Descriptor 2, crontap-run's standard error.
pub fn stderr() -> BorrowedFd<'static> {
    standard(libc::STDERR_FILENO)
}

/// One of the standard descriptors, without `std::io::stdin()` and its kin: those set up a
/// buffer (an allocation) the first time, which must not happen between fork and exec.
fn standard(fd: libc::c_int) -> BorrowedFd<'static> {
    // SAFETY: `borrow_raw` needs `fd` open for as long as the borrow lives ('static here).
    // Descriptors 0 to 2 are: the Rust runtime opens /dev/null on any of them that was
    // closed before `main` (nothing calls these before `main`), and crontap-run never
    // closes them (it makes no `OwnedFd` or `File` of them; the job's pipes are put on 1
    // and 2 only in the job's own process). In the job's process between fork and exec
    // they are the job's, open until it executes.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// Ends the process at once with `status`: `_exit(2)`, with no exit handlers, no flush of
/// buffered output and no destructors. Async-signal-safe, so it is how a forked child that
/// never executes anything ends, and how a run with no memory left ends.
pub fn exit_now(status: u8) -> ! {
    // SAFETY: `_exit` has no precondition: it never returns, touches no memory of the
    // process, and skipping destructors is sound (Rust never relies on them running).
    unsafe { libc::_exit(i32::from(status)) }
}
