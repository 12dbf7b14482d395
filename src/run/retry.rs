//! `--retries`: whether a failed attempt is run again, and how long to wait first.
//!
//! A retry repeats the command's side effects, so it is only for failures that another try
//! can fix. Never retried: a command that could not be started (126, 127, whether
//! crontap-run or a shell in the job reports it: the next try fails the same way); a run
//! ended by a signal that means "stop" (crontap-run was told to stop, or the job got a
//! termination signal through crontap-run, or was killed by Ctrl-C, Ctrl-\ or a hangup):
//! the sender wants it gone; and, when `--retry-on-exit` lists statuses, any status not
//! listed.

use std::time::Duration;

use crate::run::finished::Finished;
use crate::run::outcome::Outcome;

/// Longest single wait between attempts, and the most `--retry-delay` may be.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);
/// `--retry-delay` when not given.
pub const DEFAULT_DELAY: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct Policy {
    /// Attempts after the first (0 to 5).
    pub retries: u32,
    /// Wait before the second attempt; each later wait doubles, up to [`MAX_WAIT`].
    pub delay: Duration,
    /// Exit statuses worth retrying; empty means any failure.
    pub on_exit: Vec<u8>,
}

impl Policy {
    /// The most attempts a run can take.
    pub fn attempts(&self) -> u32 {
        self.retries + 1
    }

    /// Whether attempt `attempt` (1-based), which ended as `finished`, is followed by
    /// another. A success (by `--success-exit` too) never is, nor an attempt that a signal
    /// meant to end the job reached.
    pub fn should_retry(&self, attempt: u32, finished: &Finished) -> bool {
        let told_to_end = finished.stopped.is_some() || finished.termination_forwarded;
        !finished.succeeded() && !told_to_end && self.worth_another(attempt, &finished.outcome)
    }

    /// Whether a failed attempt `attempt` that ended with `outcome` is worth another.
    fn worth_another(&self, attempt: u32, outcome: &Outcome) -> bool {
        if attempt >= self.attempts() {
            return false;
        }
        // Without its lease the run holds nothing: another host may be running the job.
        if matches!(outcome, Outcome::LeaseLost { .. }) {
            return false;
        }
        // 126 and 127 say the command cannot be run at all, whether crontap-run or a shell
        // in the job found that out; the next attempt would fail the same way.
        if matches!(outcome.exit_code(), 126 | 127) {
            return false;
        }
        // Killed by an interrupt, quit or hangup: a person pressed Ctrl-C or Ctrl-\ (which
        // reach the job directly when it has the terminal) or the terminal went away.
        if let Outcome::Signaled(sig) = outcome
            && [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP].contains(sig)
        {
            return false;
        }
        self.on_exit.is_empty() || self.on_exit.contains(&outcome.exit_code())
    }

    /// The wait after failed attempt `attempt` (1-based): delay, 2×delay, 4×delay, … capped.
    pub fn wait_after(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.delay.saturating_mul(factor).min(MAX_WAIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(retries: u32, on_exit: &[u8]) -> Policy {
        Policy {
            retries,
            delay: Duration::from_secs(30),
            on_exit: on_exit.to_vec(),
        }
    }

    #[test]
    fn which_failures_are_retried() {
        let p = policy(2, &[]);
        assert!(p.worth_another(1, &Outcome::Exited(1)));
        assert!(p.worth_another(2, &Outcome::Signaled(9)));
        assert!(!p.worth_another(3, &Outcome::Exited(1)), "last attempt");
        let not_found = Outcome::NotStarted {
            program: "x".into(),
            errno: 2,
            not_found: true,
        };
        assert!(!p.worth_another(1, &not_found));
        assert!(!p.worth_another(1, &Outcome::Exited(127)), "a shell's 127");
        assert!(!p.worth_another(1, &Outcome::Exited(126)));
        assert!(
            !p.worth_another(1, &Outcome::Signaled(libc::SIGINT)),
            "Ctrl-C"
        );
        assert!(p.worth_another(1, &Outcome::Signaled(libc::SIGTERM)));
        assert!(!policy(0, &[]).worth_another(1, &Outcome::Exited(1)));

        let only = policy(3, &[1, 75]);
        assert!(only.worth_another(1, &Outcome::Exited(75)));
        assert!(!only.worth_another(1, &Outcome::Exited(2)));
        let timed_out = Outcome::TimedOut {
            limit: Duration::from_secs(1),
            kill_after: None,
        };
        assert!(policy(1, &[124]).worth_another(1, &timed_out));
        assert!(!only.worth_another(1, &timed_out));
    }

    #[test]
    fn waits_double_up_to_the_cap() {
        let p = policy(5, &[]);
        let secs: Vec<u64> = (1..=5).map(|a| p.wait_after(a).as_secs()).collect();
        assert_eq!(secs, [30, 60, 120, 240, 480]);
        let long = Policy {
            delay: Duration::from_secs(1800),
            ..p
        };
        assert_eq!(long.wait_after(1), Duration::from_secs(1800));
        assert_eq!(long.wait_after(2), MAX_WAIT);
        assert_eq!(long.wait_after(5), MAX_WAIT);
    }
}
