//! An attempt as its caller sees it: the hooks told the moment it is spawned and ends, and
//! the finished attempt, with its outcome, its output's tails and whether it was stopped.
//! The supervisor ([`supervise`](super::supervise)) makes them; the copies of the output
//! ([`output`](super::output)) fill the tails in; the run's end reads them.

use std::time::Duration;

use crate::run::outcome::{HumanDuration, Outcome, SuccessCodes};
use crate::run::tail::Kept;
use crate::run::watch::Stop;

/// What the caller is told of an attempt as it goes, the moment each happens.
pub struct Hooks<'a> {
    /// The command is about to be spawned.
    pub starting: &'a dyn Fn(),
    /// It has been spawned.
    pub started: &'a dyn Fn(),
    /// It has ended (or could not start): how, without its output, which is yet to be
    /// drained.
    pub ended: &'a dyn Fn(&Finished),
}

/// A finished attempt.
pub struct Finished {
    pub outcome: Outcome,
    pub elapsed: Duration,
    pub stdout_tail: Vec<u8>,
    pub stderr_tail: Vec<u8>,
    /// The last bytes of both streams in the order they came, when the run keeps them
    /// ([`ChildSpec::both_tail`](super::supervise::ChildSpec)).
    pub output_tail: Kept,
    /// The first stop request (SIGTERM, SIGINT, SIGQUIT) crontap-run passed on while the
    /// command could still act on it: whatever the command then did, the run was stopped,
    /// not completed. Decided once, by the supervisor, from the signal log.
    pub stopped: Option<Stop>,
    /// crontap-run had to send SIGKILL, this long after it first asked the command to end.
    pub killed_after: Option<Duration>,
    /// A signal that can end the job ([`TERMINATION`](super::signals::TERMINATION)) was forwarded to it.
    pub termination_forwarded: bool,
    /// The exit statuses that count as success (0 and `--success-exit`).
    pub success: SuccessCodes,
}

impl Finished {
    /// Whether the run counts as a success: the command exited 0 (or with a status
    /// `--success-exit` lists) and was not told to stop. A job that cleans up and exits 0
    /// on SIGTERM did not finish its work. The ping, the state, history, metrics and the
    /// retries all go by this.
    pub fn succeeded(&self) -> bool {
        self.outcome.is_success_with(&self.success) && self.stopped.is_none()
    }

    /// The head of the failure summary: `stopped by SIGTERM after 41s (exit 0)` or
    /// `stopped by SIGTERM after 41s (then SIGKILL after 10s)` for a command that was told
    /// to stop, else how the command ended.
    pub fn describe(&self) -> String {
        let stopped = |stop: Stop, how: String| {
            let after = HumanDuration(stop.after);
            format!("stopped by {} after {after} ({how})", stop.signal.as_str())
        };
        match (self.stopped, &self.outcome, self.killed_after) {
            (Some(stop), Outcome::Exited(code), _) => stopped(stop, format!("exit {code}")),
            (Some(stop), Outcome::Signaled(sig), Some(grace)) if *sig == libc::SIGKILL => {
                stopped(stop, format!("then SIGKILL after {}", HumanDuration(grace)))
            }
            (_, outcome, _) => outcome.describe(self.elapsed),
        }
    }
}
