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

    /// Whether attempt `attempt` (1-based), which ended with `outcome`, is followed by another.
    pub fn should_retry(&self, attempt: u32, outcome: &Outcome, told_to_stop: bool) -> bool {
        if outcome.is_success() || attempt >= self.attempts() || told_to_stop {
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
        assert!(p.should_retry(1, &Outcome::Exited(1), false));
        assert!(p.should_retry(2, &Outcome::Signaled(9), false));
        assert!(
            !p.should_retry(3, &Outcome::Exited(1), false),
            "last attempt"
        );
        assert!(!p.should_retry(1, &Outcome::Exited(0), false), "success");
        assert!(
            !p.should_retry(1, &Outcome::Exited(1), true),
            "told to stop"
        );
        let not_found = Outcome::NotStarted {
            program: "x".into(),
            errno: 2,
            not_found: true,
        };
        assert!(!p.should_retry(1, &not_found, false));
        assert!(
            !p.should_retry(1, &Outcome::Exited(127), false),
            "a shell's 127"
        );
        assert!(!p.should_retry(1, &Outcome::Exited(126), false));
        assert!(
            !p.should_retry(1, &Outcome::Signaled(libc::SIGINT), false),
            "Ctrl-C"
        );
        assert!(p.should_retry(1, &Outcome::Signaled(libc::SIGTERM), false));
        assert!(!policy(0, &[]).should_retry(1, &Outcome::Exited(1), false));

        let only = policy(3, &[1, 75]);
        assert!(only.should_retry(1, &Outcome::Exited(75), false));
        assert!(!only.should_retry(1, &Outcome::Exited(2), false));
        let timed_out = Outcome::TimedOut {
            limit: Duration::from_secs(1),
            kill_after: None,
        };
        assert!(policy(1, &[124]).should_retry(1, &timed_out, false));
        assert!(!only.should_retry(1, &timed_out, false));
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
