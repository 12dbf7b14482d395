//! Every file descriptor crontap-run holds, counted in one place, and the check that the
//! open-files limit (`ulimit -n`, `RLIMIT_NOFILE`) leaves room for them.
//!
//! What a run holds, beside the descriptors it inherited (0 to 2, and whatever its caller
//! left open), all close-on-exec, so none reaches the job:
//!
//! | what | how many | from | until |
//! |---|---|---|---|
//! | the supervision runtime's epoll, its duplicate, its wake-up eventfd | 3 | `Supervisor::new` | the end of the run |
//! | the signal log's wake-up pipe | 2 | `Supervisor::new` | the end of the run |
//! | the command's stdout and stderr pipes | 4 | each attempt | write ends: the spawn; read ends: the output drained |
//! | the standard library's socket pair that reports an `exec` failure | 2 | the spawn | the spawn |
//! | a lifeline's pipe, its write end (a run that holds state) | 1 | each attempt | the attempt's end |
//! | the pings' runtime | 3 | the first ping | the run's end (each ping's end where the limit leaves less room than an attempt needs) |
//! | a ping's connection | 1 | each request | the request's end |
//!
//! crontap-run's own stdout and stderr are written through descriptors 1 and 2, never
//! duplicates. With `--output on-failure`, the hold adds duplicates of 1 and 2 and a spill
//! file per stream; a state directory adds its directories and lock files and the lifeline
//! (5 in all); a state server its connection. So a run with only 0 to 2 open runs from an
//! open-files limit of 15, and with a state directory and held output from 22 (a start ping
//! beside the command needs 3 more, and is not sent where they are missing). A run checks
//! for all of that room before it takes any state ([`for_run`]).
//!
//! Where the limit leaves too little room, that is crontap-run's own error (125, one line
//! naming the limit), never the command's (126, 127) and never a panic: the room is checked
//! before the supervision runtime is built.

use anyhow::{Result, bail};
use nix::sys::resource::{Resource, getrlimit};

/// Descriptors a run needs at the moment of the first spawn, beyond those already open:
/// the runtime (3), the signal log's wake-up pipe (2), the output pipes (4), the spawn's
/// socket pair (2), and one to spare (since the wake-up replaced tokio's signal pipe, which
/// took one more; the floors the documentation states are kept).
pub const BEFORE_SPAWN: usize = 12;

/// Descriptors a run that holds state in a directory keeps beside those at the spawn: the
/// state directory's and its lock's (4), and the lifeline's pipe (1).
pub const STATE_DIR: usize = 5;

/// Descriptors one ping needs: its runtime (3) and its connection (1), and 3 more, so that
/// a start ping sent beside the command leaves a later attempt room for its pipes (tests
/// `under_every_open_files_limit_the_later_attempts_run_as_the_first`; these 3 were once
/// tokio's signal pipe and its duplicate, which no ping needs now).
pub const PING: usize = 7;

/// What a run needs free before it takes any state: what the spawn needs, and what its
/// state directory keeps. (Held output's duplicates are open by then, and counted; a spill
/// file that cannot be opened makes the hold pass output through, with a warning.)
pub fn for_run(state_dir: bool) -> usize {
    BEFORE_SPAWN + usize::from(state_dir) * STATE_DIR
}

/// Limits at or above this leave room for any run that has not inherited a table full of
/// descriptors; below it, the open ones are counted (one system call each).
const COUNT_BELOW: u64 = 64;

/// Fails, naming the open-files limit, if fewer than `needed` descriptors can be opened
/// now. Cheap where the limit is high (one `getrlimit`).
pub fn ensure_room(needed: usize, for_what: &str) -> Result<()> {
    let Some((limit, open)) = counted() else {
        return Ok(());
    };
    let free = (limit as usize).saturating_sub(open);
    if free < needed {
        bail!(
            "too few file descriptors left to {for_what}: the open-files limit (ulimit -n) \
             is {limit}, {open} are open, and {needed} more are needed"
        );
    }
    Ok(())
}

/// Whether `needed` descriptors can be opened now (see [`ensure_room`]).
pub fn have_room(needed: usize) -> bool {
    counted().is_none_or(|(limit, open)| (limit as usize).saturating_sub(open) >= needed)
}

/// The soft open-files limit and how many descriptors below it are open; `None` where the
/// limit is high enough not to count.
fn counted() -> Option<(u64, usize)> {
    let soft = soft_limit()?;
    if soft >= COUNT_BELOW {
        return None;
    }
    // Descriptor numbers at or above the limit may be open (inherited) but take no room.
    let open = (0..soft as i32)
        // SAFETY: F_GETFD reads a descriptor's flags and touches no memory; for a number that
        // is not open it fails with EBADF. Raw, because a `BorrowedFd` (nix's `fcntl` takes
        // one) may only be made of a descriptor that is open, which is what is asked.
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1)
        .count();
    Some((soft, open))
}

/// Whether `err` says the process or the system ran out of descriptors.
pub fn exhausted(err: &std::io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// The error for a spawn that failed for want of descriptors: crontap-run's own.
pub fn spawn_error(err: &std::io::Error) -> anyhow::Error {
    let limit = soft_limit().map_or_else(|| "unknown".to_owned(), |soft| soft.to_string());
    anyhow::anyhow!(
        "too few file descriptors left to run the command ({err}): the open-files limit \
         (ulimit -n) is {limit}"
    )
}

/// The soft `RLIMIT_NOFILE`.
fn soft_limit() -> Option<u64> {
    getrlimit(Resource::RLIMIT_NOFILE)
        .ok()
        .map(|(soft, _)| soft)
}
