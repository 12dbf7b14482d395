//! Reaping: the command's own ending, and every orphan that crontap-run inherits as PID 1 of
//! a container or as the child subreaper.
//!
//! Wait statuses are read raw from `waitpid(2)` and `waitid(2)` and decoded by
//! [`Outcome::from_wait`]: a status must never fail to decode, or a job killed by a signal
//! that an enum of named signals lacks (the real-time ones, 34 to 64) would never be seen to
//! end, and crontap-run would wait for it for ever.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::run::outcome::Outcome;
use crate::run::terminal::Terminal;

/// How often orphans are reaped while the report is sent.
const REAP_EVERY: Duration = Duration::from_millis(50);

/// What one `waitpid` call found.
enum Waited {
    /// No child has changed state.
    Nothing,
    /// crontap-run has no children left at all.
    NoChildren,
    /// A child changed state: its pid and raw status.
    Child(libc::pid_t, libc::c_int),
}

/// One non-blocking `waitpid(-1)`, `WUNTRACED` too when `stops` (a job on a terminal).
fn wait_any(stops: bool) -> Waited {
    let mut flags = libc::WNOHANG;
    if stops {
        flags |= libc::WUNTRACED;
    }
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes only into `status`, a live c_int. (Raw, not nix's waitpid,
        // which reaps the child and then refuses a status with a real-time signal in it.)
        let pid = unsafe { libc::waitpid(-1, &mut status, flags) };
        match pid {
            0 => return Waited::Nothing,
            -1 => match Errno::last() {
                Errno::EINTR => continue,
                Errno::ECHILD => return Waited::NoChildren,
                err => {
                    tracing::debug!(%err, "waitpid failed");
                    return Waited::Nothing;
                }
            },
            pid => return Waited::Child(pid, status),
        }
    }
}

/// Reaps every child that has ended: the command and any orphans. Returns the command's
/// outcome once it has ended. With a terminal on stdin, a stopped command is noticed too
/// (see [`stop_with_the_command`]).
pub fn reap(child: Pid, terminal: Option<Terminal>) -> Option<Outcome> {
    let mut ended = None;
    while let Waited::Child(pid, status) = wait_any(terminal.is_some()) {
        if pid != child.as_raw() {
            log_orphan(pid, status);
        } else if libc::WIFSTOPPED(status) {
            if let Some(t) = terminal {
                stop_with_the_command(child, t);
            }
        } else if let Some(outcome) = Outcome::from_wait(status) {
            // At once, before anything here could allocate: a run with no memory left
            // exits with this status, and can no longer wait for the reaped command.
            record_reaped(pid, outcome.exit_code());
            ended = Some(outcome);
        }
    }
    ended
}

/// The command reaped last: its pid in the high half, crontap-run's status for it in the
/// low byte; 0 before any. One word, so that it is read whole without a lock.
static REAPED: AtomicU64 = AtomicU64::new(0);

fn record_reaped(pid: libc::pid_t, status: u8) {
    let pid = u64::from(pid.unsigned_abs());
    REAPED.store(pid << 32 | u64::from(status), SeqCst);
}

/// crontap-run's status for the command `pid`, if [`reap`] has reaped it (and no later
/// command since). Allocates nothing: `run::memory` asks it when no memory is left and
/// the command can no longer be waited for.
pub fn status_of_reaped(pid: libc::pid_t) -> Option<u8> {
    let reaped = REAPED.load(SeqCst);
    (pid > 0 && reaped >> 32 == u64::from(pid.unsigned_abs())).then_some(reaped as u8)
}

/// Whether the command has exited, seen without reaping it (so its group id stays its own).
pub fn has_exited(child: Pid) -> bool {
    matches!(peek_at_exit(child.as_raw(), false), Ok(Some(_)))
}

/// Waits until the command `pid` has ended, without reaping it (the supervisor may be
/// waiting for it too), and returns crontap-run's status for that ending: its exit status,
/// or 128+S. `None` if it cannot be waited for (it has been reaped already). Allocates
/// nothing: `run::memory` calls it when no memory is left.
pub fn wait_for_end(pid: libc::pid_t) -> Option<u8> {
    let (code, status) = peek_at_exit(pid, true).ok()??;
    Some(match code {
        libc::CLD_EXITED => (status & 0xff) as u8,
        _ => crate::run::outcome::signal_status(status),
    })
}

/// How the child `pid` ended, as `waitid(2)` reports it without reaping it (`WNOWAIT`): its
/// `si_code` (`CLD_EXITED`, `CLD_KILLED`, `CLD_DUMPED`) and `si_status` (the exit status or
/// the signal's number). `None` if it has not ended yet and `wait` is false; with `wait`,
/// waits for it to end. Read raw, as nix's `waitid` would refuse a real-time signal (see the
/// module's header). Allocates nothing.
fn peek_at_exit(pid: libc::pid_t, wait: bool) -> nix::Result<Option<(i32, i32)>> {
    // Not a single process: 0 would mean "any child" to the kernel, a negative one nothing.
    let id = libc::id_t::try_from(pid)
        .ok()
        .filter(|&id| id > 0)
        .ok_or(Errno::ECHILD)?;
    let mut flags = libc::WEXITED | libc::WNOWAIT;
    if !wait {
        flags |= libc::WNOHANG;
    }
    // SAFETY: siginfo_t is a C struct of integers and a union of integers and pointers,
    // for which all zeroes is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waitid writes only into `info`, a valid siginfo_t that outlives the call.
        let found = unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) };
        match found {
            0 => break,
            _ => match Errno::last() {
                Errno::EINTR => continue,
                err => return Err(err),
            },
        }
    }
    // SAFETY: the union's fields for SIGCHLD are the ones waitid fills; with WNOHANG and
    // no child ended it leaves them as they were, zero (Linux zeroes them itself).
    let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
    Ok((pid != 0).then_some((info.si_code, status)))
}

/// Reaps every orphan that has ended, when no command is running (between attempts, and
/// while the report is sent): as PID 1 or the subreaper, crontap-run is their parent, and
/// an unreaped one stays a zombie.
/// Returns whether any child is left.
pub fn reap_orphans() -> bool {
    loop {
        match wait_any(false) {
            Waited::Child(pid, status) => log_orphan(pid, status),
            Waited::Nothing => return true,
            Waited::NoChildren => return false,
        }
    }
}

/// Reaps orphans on a thread of its own from now until crontap-run exits: after the last
/// attempt, while the report is sent, nothing else waits for children.
///
/// With no child left there is nothing to wait for, and no thread is started (the common
/// case, a job that leaves nothing behind): only a descendant of crontap-run can become its
/// child, and it has none. As PID 1 the thread starts anyway, since there any orphan of the
/// namespace comes to crontap-run, also one of a process entered from outside
/// (`kubectl exec`).
pub fn reap_orphans_meanwhile() {
    if !reap_orphans() && nix::unistd::getpid().as_raw() != 1 {
        return;
    }
    let started = std::thread::Builder::new().name("reaper".into()).spawn(|| {
        loop {
            std::thread::sleep(REAP_EVERY);
            reap_orphans();
        }
    });
    if let Err(err) = started {
        tracing::debug!(%err, "cannot start the reaper thread");
    }
}

fn log_orphan(pid: libc::pid_t, status: libc::c_int) {
    match Outcome::from_wait(status) {
        Some(outcome) => tracing::trace!(pid, ?outcome, "reaped an orphan"),
        None => tracing::trace!(pid, status, "an orphan changed state"),
    }
}

/// Sends `sig` to the command's process group. Only called while its leader has not been
/// reaped, so the group id cannot have been reused.
pub fn send(group: Pid, sig: Signal) {
    if let Err(err) = killpg(group, sig) {
        tracing::debug!(%err, signal = sig.as_str(), "could not signal the command's group");
    }
}

/// The command stopped: Ctrl-Z in the foreground, or reading the terminal from the
/// background. crontap-run stops too, so the shell sees its job stopped; when the shell
/// continues it (`fg` or `bg`), the command gets the terminal if crontap-run now has it, and
/// is continued.
fn stop_with_the_command(child: Pid, terminal: Terminal) {
    terminal.take_back_from(child);
    let _ = nix::sys::signal::raise(Signal::SIGSTOP);
    if terminal.in_foreground() {
        terminal.give_to(child);
    }
    send(child, Signal::SIGCONT);
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::wait::{WaitStatus, waitpid};
    use nix::unistd::{ForkResult, fork};

    use crate::run::process::exit_now;

    /// `reap` records the command's status the moment it reaps it, so that a run with no
    /// memory left, which can no longer wait for it, still exits with it. Done in a forked
    /// child, where the command is the only grandchild: `reap` waits for any child, and
    /// would take other tests' children in this process. The child allocates nothing.
    #[test]
    fn the_reaped_commands_status_is_recorded_at_once() {
        // SAFETY: the child only forks, waits, reaps (system calls on its stack) and exits;
        // the grandchild only exits.
        match unsafe { fork() }.unwrap() {
            ForkResult::Child => {
                // SAFETY: as above.
                let command = match unsafe { fork() } {
                    Ok(ForkResult::Child) => exit_now(3),
                    Ok(ForkResult::Parent { child }) => child,
                    Err(_) => exit_now(10),
                };
                while !has_exited(command) {
                    std::thread::yield_now();
                }
                let before = status_of_reaped(command.as_raw());
                let outcome = reap(command, None);
                let after = status_of_reaped(command.as_raw());
                exit_now(match (before, outcome, after) {
                    (None, Some(Outcome::Exited(3)), Some(3)) => 0,
                    (Some(_), _, _) => 11,
                    (_, _, None) => 12,
                    _ => 13,
                })
            }
            ForkResult::Parent { child } => {
                let ended = waitpid(child, None).unwrap();
                assert_eq!(
                    ended,
                    WaitStatus::Exited(child, 0),
                    "10: no fork; 11: recorded before the reap; 12: not recorded; 13: wrong"
                );
            }
        }
    }
}
