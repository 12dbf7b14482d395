//! The attempts of a run: the command runs until an attempt succeeds, the retry policy
//! (`--retries`) says no more, or a signal that ends jobs arrives between two.

use std::io;

use anyhow::Result;
use nix::unistd::Whence;

use crate::fault;
use crate::lifecycle::guard;
use crate::lifecycle::verdict::{Last, Verdict, attempt_of};
use crate::run::outcome::HumanDuration;
use crate::run::retry;
use crate::run::supervise::{Attempt, ChildSpec, Hooks, Limits, Supervisor};

/// Tells the run's held output (`--output on-failure`) that attempt `k` of `n` begins, so
/// that a replay introduces its output with `crontap-run: attempt k of n` on stderr when
/// retries were allowed.
fn introduce(spec: &ChildSpec<'_>, k: u32, n: u32) {
    if let Some(hold) = &spec.hold {
        hold.begin_attempt((n > 1).then(|| format!("crontap-run: {}", attempt_of(k, n))));
    }
}

/// Whether the tests asked for attempt `attempt` to fail to be set up (debug builds):
/// `first-attempt-setup` for the first, `attempt-setup` for every later one.
fn setup_fault(attempt: u32) -> bool {
    match attempt {
        1 => fault::at("first-attempt-setup"),
        _ => fault::at("attempt-setup"),
    }
}

/// Runs the command until an attempt succeeds or the retry policy says stop, calling
/// `command_started` each time an attempt's command has been spawned. The panic
/// guard is told as each attempt goes: the end must not race the command's start
/// ([`guard::still_ours`]), a bug while the command runs is crontap-run's (125), and once
/// the attempt has ended its status stands, from before its output is drained. An error is
/// one of crontap-run's that kept the first attempt from starting; one that keeps a later
/// attempt from starting leaves the last attempt's result standing.
pub fn run(
    supervisor: &Supervisor,
    spec: &ChildSpec<'_>,
    limits: Limits,
    policy: &retry::Policy,
    command_started: &dyn Fn(),
) -> Result<Last> {
    // Each attempt reads stdin from where the first one started, when stdin can seek (a
    // file); a pipe is read once, so a later attempt sees only what is left.
    let stdin_start = nix::unistd::lseek(io::stdin(), 0, Whence::SeekCur).ok();
    let of = policy.attempts();
    let mut attempt = 1;
    let mut previous: Option<Last> = None;
    loop {
        introduce(spec, attempt, of);
        let run = match setup_fault(attempt) {
            true => Err(anyhow::anyhow!("fault injected for a test")),
            false => supervisor.run(
                Attempt {
                    spec,
                    limits,
                    number: attempt,
                },
                &Hooks {
                    starting: &|| {
                        guard::still_ours();
                        crate::run::memory::spawning();
                    },
                    started: &|| {
                        guard::command_running();
                        fault::point("command-running");
                        command_started();
                    },
                    ended: &|finished| guard::settled(&Verdict::of_attempt(finished, attempt, of)),
                },
            ),
        };
        let finished = match (run, previous.take()) {
            (Ok(finished), _) => finished,
            (Err(err), None) => return Err(err),
            // The command ran before: its last result stands, not crontap-run's error.
            (Err(err), Some(last)) => {
                tracing::error!("cannot start attempt {attempt}: {err:#}; no more attempts");
                return Ok(last);
            }
        };
        let last = Last {
            finished,
            attempt,
            of,
        };
        if !policy.should_retry(attempt, &last.finished) {
            return Ok(last);
        }
        fault::point("retry-wait");
        let wait = policy.wait_after(attempt);
        tracing::debug!(
            "{} failed ({}); retrying in {}",
            attempt_of(attempt, of),
            last.finished.describe(),
            HumanDuration(wait)
        );
        if let Some(signal) = supervisor.pause(wait) {
            tracing::debug!(signal = signal.as_str(), "told to stop; no more attempts");
            return Ok(last);
        }
        if let Some(start) = stdin_start
            && let Err(err) = nix::unistd::lseek(io::stdin(), start, Whence::SeekSet)
        {
            tracing::debug!(%err, "cannot rewind stdin for the next attempt");
        }
        previous = Some(last);
        attempt += 1;
    }
}
