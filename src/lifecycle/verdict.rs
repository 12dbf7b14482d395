//! How a run ended, decided once: every way a run can end is a [`RunEnd`], and
//! [`Verdict::of`] decides from it what the end does (exit status, history's result, the
//! report), as the table "The ends of a run" in ARCHITECTURE.md lays out. The attempts
//! ([`attempts`](super::attempts)), the end ([`end`](super::end)) and the panic guard
//! ([`guard`](super::guard)) all go by it.

use nix::sys::signal::Signal;

use crate::report::Status;
use crate::run::outcome::{self, OWN_ERROR};
use crate::run::supervise::Finished;
use crate::sanitize;
use crate::state::Held;
use crate::state::history::RunResult;

/// The steps of a run's end, in their order; each is done once ([`guard`](super::guard)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// The state store records the result and lets go of the lock and key.
    State,
    /// Held output (`--output on-failure`) is printed, or dropped for a success. After the
    /// state, so a slow reader of it never holds up the next run; before the report, so
    /// crontap-run's own lines about the ping come after the command's.
    Output,
    Report,
    History,
    Metrics,
}

impl Step {
    pub const ALL: [Step; 5] = [
        Step::State,
        Step::Output,
        Step::Report,
        Step::History,
        Step::Metrics,
    ];
}

/// The attempt that ended a run.
pub struct Last {
    pub finished: Finished,
    /// Its number, from 1.
    pub attempt: u32,
    /// The most attempts the run could take.
    pub of: u32,
}

/// The head of the failure summary of attempt `k` of `n`: how it ended, and
/// `(attempt k of n)` when retries were allowed.
pub fn head(finished: &Finished, k: u32, n: u32) -> String {
    let described = finished.describe();
    match n > 1 {
        true => format!("{described} ({})", attempt_of(k, n)),
        false => described,
    }
}

/// `attempt 2 of 3`.
pub fn attempt_of(k: u32, n: u32) -> String {
    format!("attempt {k} of {n}")
}

/// How a run ended.
pub enum RunEnd {
    /// Not due (the lock is held, the key is done): the reason.
    Skipped(String),
    /// A signal that ends jobs arrived before the command started.
    StoppedBeforeStart(Signal),
    /// crontap-run's own error before the command ran: an unusable state store, a first
    /// attempt that could not be set up.
    NotRun(anyhow::Error),
    /// The command ran, or could not be started: how its last attempt ended, and what the
    /// run holds in the state store.
    Ran(Box<Last>, Option<Held>),
    /// crontap-run failed with a bug; `command_started` says whether the command had.
    Panicked { command_started: bool },
}

/// What a run's end decided, built once from the [`RunEnd`]; everything the end writes and
/// sends goes by it.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub exit: u8,
    pub result: RunResult,
    /// Attempts made (0 when the command did not run).
    pub attempts: u32,
    /// The exit status is the command's own.
    pub command_status: bool,
    /// crontap-run's own error ended the run and was printed: a history line or a metrics
    /// file that cannot be written then (the state directory, or the open-files limit, is
    /// what is wrong) adds no second error line.
    pub own_error_printed: bool,
    pub report: Planned,
}

/// The end report a verdict calls for.
#[derive(Debug, Clone)]
pub enum Planned {
    /// None (a skipped run): the reason, for history.
    Nothing(String),
    /// A success: its summary line (`exit 0 after 2s`), for a protocol that sends one.
    Success { head: String },
    /// A failure: the summary's head, and the plain summary sent when the full one cannot
    /// be built (a panic while building it).
    Failure { head: String, plain: String },
}

impl Verdict {
    pub fn of(end: &RunEnd) -> Verdict {
        let failure = |result, exit, head: String, plain: String| Verdict {
            exit,
            result,
            attempts: 0,
            command_status: false,
            own_error_printed: matches!(end, RunEnd::NotRun(_)),
            report: Planned::Failure { head, plain },
        };
        match end {
            RunEnd::Skipped(reason) => Verdict {
                exit: 0,
                result: RunResult::Skipped,
                attempts: 0,
                command_status: false,
                own_error_printed: false,
                report: Planned::Nothing(reason.clone()),
            },
            RunEnd::StoppedBeforeStart(sig) => {
                let head = format!("not run: stopped by {}", sig.as_str());
                let exit = outcome::signal_status(*sig as i32);
                failure(RunResult::Stopped, exit, head.clone(), head)
            }
            RunEnd::NotRun(err) => failure(
                RunResult::Failed,
                OWN_ERROR,
                format!("not run: {err:#}"),
                "not run: crontap-run failed".to_owned(),
            ),
            RunEnd::Panicked { command_started } => {
                let head = match command_started {
                    true => "crontap-run failed while the command ran (internal error)",
                    false => "not run: crontap-run failed (internal error)",
                };
                failure(RunResult::Failed, OWN_ERROR, head.into(), head.into())
            }
            RunEnd::Ran(last, _) => Verdict::of_attempt(&last.finished, last.attempt, last.of),
        }
    }

    /// How the end report classes the run: a success, a failure with the status the run
    /// exits with when that is the command's (or a timeout's, or a lost lease's), else a
    /// failure with no status.
    pub fn status(&self) -> Status {
        match self.report {
            Planned::Success { .. } => Status::Success,
            Planned::Failure { .. } | Planned::Nothing(_) if self.command_status => {
                Status::Failed(self.exit)
            }
            Planned::Failure { .. } | Planned::Nothing(_) => Status::Unknown,
        }
    }

    /// The verdict of a run whose last attempt, `k` of `n`, ended as `finished`.
    pub fn of_attempt(finished: &Finished, k: u32, n: u32) -> Verdict {
        let (result, report) = match (finished.succeeded(), finished.stopped) {
            (true, _) => {
                let head = head(finished, k, n);
                (RunResult::Succeeded, Planned::Success { head })
            }
            (false, stopped) => {
                let head = head(finished, k, n);
                let plain = sanitize::one_line(&head);
                let result = match stopped {
                    Some(_) => RunResult::Stopped,
                    None => RunResult::Failed,
                };
                (result, Planned::Failure { head, plain })
            }
        };
        Verdict {
            exit: finished.outcome.exit_code(),
            result,
            attempts: k,
            command_status: true,
            own_error_printed: false,
            report,
        }
    }
}
