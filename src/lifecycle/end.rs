//! The one ending of a run: every way a run can end is a [`RunEnd`] (decided in
//! [`verdict`](super::verdict)), and [`conclude`] does
//! what a run's end does, in one order: the state's record, the held output
//! (`--output on-failure`: printed unless the run succeeded), the end report, the history
//! line, the metrics file.
//!
//! What each end does to each (exit status, state, report, history, metrics) is the table
//! "The ends of a run" in ARCHITECTURE.md, which `tests/integration/ends.rs` checks row by
//! row; [`Verdict::of`] (in `verdict.rs`) is where it is decided.
//!
//! Each step is claimed from the panic guard ([`guard`]) as it begins, and the report as it
//! is handed over, so that after a panic the guard does with [`finish`] only the steps no
//! one has claimed, and a report is never sent twice.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::fault;
use crate::lifecycle::guard;
pub use crate::lifecycle::verdict::{Planned, RunEnd, Step, Verdict};
use crate::metrics::{self, Counted};
use crate::report::body::OutputTail;
use crate::report::{Delivered, PingResult, Reporter};
use crate::run::hold::Hold;
use crate::sanitize;
use crate::state::Held;
use crate::state::history::{self, Entry, RunResult};

/// Everything a run's end writes to and sends to, owned so that the panic guard can
/// finish an end too.
pub struct Effects {
    pub reporter: Reporter,
    /// Where the history line goes: runs with state and a state directory, not dry runs.
    pub history: Option<HistoryTarget>,
    /// `--metrics-dir`, not in a dry run.
    pub metrics: Option<metrics::Target>,
    /// `--metrics-push`, not in a dry run.
    pub push: Option<metrics::push::Push>,
    /// `--output on-failure`: the command's output, held for the end to print or drop.
    pub hold: Option<Arc<Hold>>,
    pub run_id: String,
    /// When the run started, by the wall clock (for timestamps) and the monotonic clock
    /// (for its duration).
    pub started: SystemTime,
    pub clock: Instant,
    /// When the run ended as its metrics say, by both clocks: taken once, by the push or
    /// the metrics file, whichever comes first, so that the two agree.
    pub ended: OnceLock<(SystemTime, Duration)>,
}

/// A stateful run's history file and what its lines say of the run.
pub struct HistoryTarget {
    pub state_dir: PathBuf,
    pub job: String,
    pub key: Option<String>,
}

/// What the full report and the state step need, which only the run's own flow has.
pub struct Detail<'a> {
    /// The command's output tails (empty when it did not run); `None`: send the plain
    /// summary.
    pub tails: Option<Tails<'a>>,
    /// What the run holds in the state store, when the command ran.
    pub held: Option<Held>,
}

impl Detail<'_> {
    /// Nothing of the run's own flow: the plain summary, nothing held (the panic guard's).
    pub const PLAIN: Detail<'static> = Detail {
        tails: None,
        held: None,
    };
}

/// The last bytes of the command's output: each stream's, for the summary, and both in the
/// order they came, for a body.
pub struct Tails<'a> {
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
    pub both: OutputTail<'a>,
}

/// Ends the run: the one place that does what every end does. Returns the exit status.
pub fn conclude(effects: &Effects, end: RunEnd) -> u8 {
    let verdict = Verdict::of(&end);
    guard::settled(&verdict);
    // A command that did not run has no output, and nothing held.
    let (last, held) = match end {
        RunEnd::Ran(last, held) => (Some(last), held),
        _ => (None, None),
    };
    let tails = match &last {
        Some(last) => Tails {
            stdout: &last.finished.stdout_tail,
            stderr: &last.finished.stderr_tail,
            both: OutputTail {
                bytes: &last.finished.output_tail.bytes,
                cut: last.finished.output_tail.cut,
            },
        },
        None => Tails {
            stdout: &[],
            stderr: &[],
            both: OutputTail {
                bytes: &[],
                cut: false,
            },
        },
    };
    let detail = Detail {
        tails: Some(tails),
        held,
    };
    finish(effects, &verdict, detail, Delivered::NONE)
}

/// Does the steps of the end that no one has claimed yet ([`guard::begin`]): all of them on
/// the run's own thread, what is left of them on the panic guard's. `delivered` is what the
/// report step did, when it is done already.
pub fn finish(
    effects: &Effects,
    verdict: &Verdict,
    mut detail: Detail<'_>,
    mut delivered: Delivered,
) -> u8 {
    for step in Step::ALL {
        let Some(_doing) = guard::begin(step) else {
            continue;
        };
        match step {
            Step::State => record_state(detail.held.take(), verdict),
            Step::Output => settle_output(effects.hold.as_ref(), verdict),
            Step::Report => {
                // The push goes out beside the report, within the same budget.
                let pushing = effects.start_push(verdict);
                delivered = report(effects, verdict, detail.tails.as_ref());
                guard::reported(&delivered);
                if let Some(pushing) = pushing {
                    pushing.wait();
                }
            }
            Step::History => effects.write_history(verdict, &delivered),
            Step::Metrics => effects.write_metrics(verdict, &delivered),
        }
    }
    verdict.exit
}

/// Recorded before the ping, so that a slow ping never holds up the next run.
fn record_state(held: Option<Held>, verdict: &Verdict) {
    if let Some(held) = held
        && let Err(err) = held.finish(verdict.result == RunResult::Succeeded)
    {
        tracing::error!("cannot record the run's result in the state store: {err:#}");
    }
}

/// What becomes of held output: the same verdict as the ping's, so `--success-exit` and a
/// stop count here as they do there. A run that did not succeed prints all of it.
fn settle_output(hold: Option<&Arc<Hold>>, verdict: &Verdict) {
    let Some(hold) = hold else { return };
    fault::point("output");
    match verdict.report {
        Planned::Success { .. } | Planned::Nothing(_) => hold.drop_all(),
        Planned::Failure { .. } => hold.release(),
    }
}

/// The end report, sent (or printed in a dry run).
fn report(effects: &Effects, verdict: &Verdict, tails: Option<&Tails<'_>>) -> Delivered {
    let reporter = &effects.reporter;
    let summary = match (&verdict.report, tails) {
        (Planned::Nothing(_), _) => return Delivered::NONE,
        (Planned::Success { head }, _) => sanitize::one_line(head),
        (Planned::Failure { head, .. }, Some(tails)) => {
            fault::point("summary");
            reporter.summary(head, tails.stdout, tails.stderr)
        }
        (Planned::Failure { plain, .. }, None) => plain.clone(),
    };
    let report = reporter.report(verdict.status(), summary, tails.map(|t| &t.both));
    Delivered {
        ping: reporter.deliver(&effects.run_id, &report, guard::handing_over),
        message: report.message(),
    }
}

impl Effects {
    /// How long the run has taken, by the monotonic clock.
    fn elapsed(&self) -> Duration {
        self.clock.elapsed()
    }

    fn write_history(&self, verdict: &Verdict, delivered: &Delivered) {
        fault::point("history");
        let Some(target) = &self.history else { return };
        let duration = self.elapsed();
        let ended = SystemTime::now();
        let msg = match &verdict.report {
            Planned::Nothing(reason) => Some(reason.clone()),
            _ => delivered.message.clone(),
        };
        let entry = Entry {
            run_id: self.run_id.clone(),
            job: target.job.clone(),
            key: target.key.clone(),
            started: humantime::format_rfc3339_millis(self.started).to_string(),
            ended: humantime::format_rfc3339_millis(ended).to_string(),
            duration_ms: duration.as_millis().try_into().unwrap_or(u64::MAX),
            result: verdict.result,
            exit: (verdict.result != RunResult::Skipped).then_some(verdict.exit),
            attempts: verdict.attempts,
            ping: delivered.ping,
            msg,
        };
        match history::append(&target.state_dir, &entry) {
            Err(err) if verdict.own_error_printed => {
                tracing::debug!("cannot record the run in its history: {err:#}")
            }
            Err(err) => tracing::error!("cannot record the run in its history: {err:#}"),
            Ok(()) => {}
        }
    }

    fn write_metrics(&self, verdict: &Verdict, delivered: &Delivered) {
        fault::point("metrics");
        let Some(target) = &self.metrics else { return };
        let run = self.metrics_run(verdict, delivered);
        metrics::record(target, &run, verdict.own_error_printed);
    }

    /// `--metrics-push`: the run's gauges, on their way beside the end report.
    fn start_push(&self, verdict: &Verdict) -> Option<metrics::push::Pushing> {
        let push = self.push.as_ref()?;
        let run = self.metrics_run(verdict, &Delivered::NONE);
        let reporter = &self.reporter;
        let (policy, signals) = (reporter.policy_now(), &reporter.signals);
        Some(push.beside(&run, policy, signals, guard::side_task))
    }

    /// The run as the metrics record it, ending now.
    fn metrics_run(&self, verdict: &Verdict, delivered: &Delivered) -> metrics::Run {
        let result = match verdict.result {
            RunResult::Succeeded => Counted::Succeeded,
            RunResult::Skipped => Counted::Skipped,
            RunResult::Failed | RunResult::Stopped => Counted::Failed,
        };
        let (ended, duration) = *self
            .ended
            .get_or_init(|| (SystemTime::now(), self.elapsed()));
        metrics::Run {
            result,
            started: self.started,
            ended,
            duration,
            exit: verdict.exit,
            ping_failed: delivered.ping == PingResult::Failed,
        }
    }
}
