//! One invocation from start to finish: configure, take the state the run asks for, run the
//! command (again, with `--retries`), record and report, choose the exit status.
//!
//! Monitoring never breaks the job: the command starts before any network work, and
//! nothing that happens to the report or to the state store after the command ran changes
//! the exit status.

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use nix::sys::signal::Signal;
use nix::unistd::Whence;

use crate::admit::{self, Start};
use crate::cli::{Cli, Command};
use crate::config::{self, Config, Environment, HistoryConfig};
use crate::guard;
use crate::metrics::{self, Counted};
use crate::report::check;
use crate::report::heartbeat::Heartbeat;
use crate::report::{PingResult, Reporter};
use crate::run::outcome;
use crate::run::outcome::HumanDuration;
use crate::run::signals::{self, Mark, SignalLog};
use crate::run::supervise::{self, ChildSpec, Finished, Supervisor};
use crate::scrub::sanitize;
use crate::state::Plan;
use crate::state::history::{self, Entry, RunResult};
use crate::state::stats;

/// Runs crontap-run with these arguments; an error is crontap-run's own (exit 125).
pub fn main(args: impl IntoIterator<Item = OsString>) -> Result<ExitCode> {
    let Some(cli) = Cli::from_args(args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let env = Environment::current();
    config::log_settings(&cli, &env)?.init();
    match cli.subcommand {
        Some(Command::History(args)) => print_history(&HistoryConfig::new(args, &env)?),
        Some(Command::Check(args)) => check::run(&config::check_config(args, &env)?),
        None => run(Config::new(cli.run, cli.command, &env)?),
    }
}

fn run(config: Config) -> Result<ExitCode> {
    // First, so that no signal takes its default action from here on.
    let signals = SignalLog::install();
    let mut seen = Mark::START;
    let reporter = Reporter {
        url: match &config.heartbeat {
            Heartbeat::Configured(url) => Some(url),
            Heartbeat::Missing(_) => None,
        },
        secrets: &config.secrets,
        msg_max: config.msg_max,
        policy: config.ping,
        dry_run: config.dry_run,
        stop: &signals,
    };
    guard::install(reporter.url.cloned(), config.ping, signals.clone());
    guard::fault_point("admission");
    let run_id = uuid::Uuid::new_v4().to_string();
    let started = SystemTime::now();
    // A dry run writes no history.
    let record = config
        .state
        .as_ref()
        .filter(|_| !config.dry_run)
        .map(|plan| Record {
            plan,
            run_id: &run_id,
            started,
            key: plan.key_at(started).map(|(key, _)| key),
        });
    let start = admit::before_start(
        config.jitter,
        config.state.as_ref(),
        config.dry_run,
        &run_id,
        started,
        &signals,
        &mut seen,
    );
    let held = match start {
        Ok(Start::Run(held)) => held,
        Ok(Start::Skip(reason)) => {
            tracing::info!("skipped: {reason}");
            if config.dry_run {
                // A closed stderr is no reason to fail.
                let _ = writeln!(
                    io::stderr(),
                    "crontap-run: dry run, the command would be skipped: {reason}"
                );
            }
            if let Some(record) = &record {
                record.append(
                    RunResult::Skipped,
                    None,
                    0,
                    PingResult::NotSent,
                    Some(reason),
                );
            }
            count(&config, started, Counted::Skipped, 0, PingResult::NotSent);
            return Ok(ExitCode::SUCCESS);
        }
        Ok(Start::Stopped(sig)) => {
            tracing::info!("stopped by {} before the command started", sig.as_str());
            let why = anyhow::anyhow!("stopped by {}", sig.as_str());
            let ping = reporter.not_run(&why, Some(sig));
            let code = outcome::signal_status(sig as i32);
            if let Some(record) = &record {
                let msg = Some(format!("not run: {why}"));
                record.append(RunResult::Failed, Some(code), 0, ping, msg);
            }
            count(&config, started, Counted::Failed, code, ping);
            return Ok(ExitCode::from(code));
        }
        // An unusable store is crontap-run's own error, reported with a fail ping too.
        Err(err) => {
            let ping = reporter.not_run(&err, None);
            count(&config, started, Counted::Failed, OWN_ERROR, ping);
            return Err(err);
        }
    };
    if let (Heartbeat::Missing(why), false) = (&config.heartbeat, config.dry_run) {
        tracing::warn!(
            "no heartbeat URL configured ({why}); the command runs but nothing is reported"
        );
    }

    tracing::debug!(%run_id, "starting the command");
    let (program, args) = config.command.split_first().context("no command given")?;
    let mut env_set = vec![("CRONTAP_RUN_ID", run_id.clone())];
    if let Some(key) = held.as_ref().and_then(|h| h.key()) {
        env_set.push(("CRONTAP_IDEMPOTENCY_KEY", key.to_owned()));
    }
    if let Some(token) = held.as_ref().and_then(|h| h.fencing_token()) {
        env_set.push(("CRONTAP_FENCING_TOKEN", token.to_string()));
    }
    let spec = ChildSpec {
        program,
        args,
        env_remove: &config.env_remove,
        env_set,
        guarded: held.is_some(),
        lease: held
            .as_ref()
            .and_then(|h| h.lease_deadline())
            .filter(|_| config.stop_on_lease_lost),
    };
    guard::command_running();
    let last = match run_attempts(&config, spec, signals.clone(), seen) {
        Ok(last) => last,
        // The command never started.
        Err(err) => {
            let ping = reporter.not_run(&err, signals.stop_requested());
            count(&config, started, Counted::Failed, OWN_ERROR, ping);
            return Err(err);
        }
    };
    let status = last.finished.outcome.exit_code();
    guard::command_ended(status, last.plain_summary(&config));
    let succeeded = last.finished.succeeded();

    // Recorded before the ping, so that a slow ping never holds up the next run.
    if let Some(held) = held
        && let Err(err) = held.finish(succeeded)
    {
        tracing::error!("cannot record the run's result in the state store: {err:#}");
    }

    // Orphans that end while the report is sent are reaped too.
    supervise::reap_orphans_meanwhile();
    let delivered = reporter.finished(&last.finished, last.attempt_of(&config), last.stop);
    if let Some(record) = &record {
        let result = match (succeeded, last.finished.stopped) {
            (true, _) => RunResult::Succeeded,
            (false, Some(_)) => RunResult::Stopped,
            (false, None) => RunResult::Failed,
        };
        let exit = Some(last.finished.outcome.exit_code());
        record.append(
            result,
            exit,
            last.attempt,
            delivered.ping,
            delivered.message,
        );
    }
    let counted = match succeeded {
        true => Counted::Succeeded,
        false => Counted::Failed,
    };
    count(&config, started, counted, status, delivered.ping);
    Ok(ExitCode::from(status))
}

/// crontap-run's exit status for its own errors.
const OWN_ERROR: u8 = 125;

/// Writes the run's metrics, with `--metrics-dir` (not in a dry run, which writes nothing).
fn count(config: &Config, started: SystemTime, result: Counted, exit: u8, ping: PingResult) {
    let Some(target) = config.metrics.as_ref().filter(|_| !config.dry_run) else {
        return;
    };
    let run = metrics::Run {
        result,
        started,
        ended: SystemTime::now(),
        exit,
        ping_failed: ping == PingResult::Failed,
    };
    metrics::record(target, &run);
}

/// The attempt that ended a run.
struct Last {
    finished: Finished,
    /// Its number, from 1.
    attempt: u32,
    /// The stop signal crontap-run received, as the supervisor reported it.
    stop: Option<Signal>,
}

impl Last {
    /// `(k, n)` for the summary's `(attempt k of n)`, when retries were allowed.
    fn attempt_of(&self, config: &Config) -> Option<(u32, u32)> {
        let n = config.retry.attempts();
        (n > 1).then_some((self.attempt, n))
    }

    /// The summary without the command's output: sent if building the full one fails.
    /// `None` for a success.
    fn plain_summary(&self, config: &Config) -> Option<String> {
        if self.finished.succeeded() {
            return None;
        }
        let head = sanitize::one_line(&self.finished.describe());
        Some(match self.attempt_of(config) {
            Some((k, n)) => format!("{head} (attempt {k} of {n})"),
            None => head,
        })
    }
}

/// Runs the command until an attempt succeeds or the retry policy says stop.
fn run_attempts(
    config: &Config,
    spec: ChildSpec<'_>,
    signals: SignalLog,
    seen: Mark,
) -> Result<Last> {
    let supervisor = Supervisor::new(signals, seen)?;
    let policy = &config.retry;
    // Each attempt reads stdin from where the first one started, when stdin can seek (a
    // file); a pipe is read once, so a later attempt sees only what is left.
    let stdin_start = nix::unistd::lseek(io::stdin(), 0, Whence::SeekCur).ok();
    let mut attempt = 1;
    let mut previous: Option<Last> = None;
    loop {
        let mut spec_now = ChildSpec {
            env_set: spec.env_set.clone(),
            lease: spec.lease.clone(),
            ..spec
        };
        spec_now
            .env_set
            .push(("CRONTAP_ATTEMPT", attempt.to_string()));
        let run = match guard::fault("attempt-setup") && attempt > 1 {
            true => Err(anyhow::anyhow!("fault injected for a test")),
            false => supervisor.run(&spec_now, config.limits),
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
        let stop = finished.stop_signal;
        let ended_by_signal = stop.is_some() || finished.termination_forwarded;
        // A status --success-exit lists is a success, and successes are not retried.
        if finished.succeeded() || !policy.should_retry(attempt, &finished.outcome, ended_by_signal)
        {
            return Ok(Last {
                finished,
                attempt,
                stop,
            });
        }
        let wait = policy.wait_after(attempt);
        tracing::debug!(
            "attempt {attempt} of {} failed ({}); retrying in {}",
            policy.attempts(),
            finished.describe(),
            HumanDuration(wait)
        );
        if let Some(signal) = supervisor.pause(wait) {
            tracing::debug!(signal = signal.as_str(), "told to stop; no more attempts");
            // A hangup or quit ends the retries too, but only a stop request shortens the
            // report.
            let stop = Some(signal).filter(|s| signals::is_stop_request(*s));
            return Ok(Last {
                finished,
                attempt,
                stop,
            });
        }
        if let Some(start) = stdin_start
            && let Err(err) = nix::unistd::lseek(io::stdin(), start, Whence::SeekSet)
        {
            tracing::debug!(%err, "cannot rewind stdin for the next attempt");
        }
        previous = Some(Last {
            finished,
            attempt,
            stop: None,
        });
        attempt += 1;
    }
}

/// A history entry in the making, for runs that use state.
struct Record<'a> {
    plan: &'a Plan,
    run_id: &'a str,
    started: SystemTime,
    key: Option<String>,
}

impl Record<'_> {
    fn append(
        &self,
        result: RunResult,
        exit: Option<u8>,
        attempts: u32,
        ping: PingResult,
        msg: Option<String>,
    ) {
        let Some(dir) = &self.plan.dir else { return };
        let ended = SystemTime::now();
        let duration = ended.duration_since(self.started).unwrap_or(Duration::ZERO);
        let entry = Entry {
            run_id: self.run_id.to_owned(),
            job: self.plan.job.clone(),
            key: self.key.clone(),
            started: humantime::format_rfc3339_millis(self.started).to_string(),
            ended: humantime::format_rfc3339_millis(ended).to_string(),
            duration_ms: duration.as_millis().try_into().unwrap_or(u64::MAX),
            result,
            exit,
            attempts,
            ping,
            msg,
        };
        if let Err(err) = history::append(dir, &entry) {
            tracing::error!("cannot record the run in its history: {err:#}");
        }
    }
}

fn print_history(config: &HistoryConfig) -> Result<ExitCode> {
    let limit = match config.stats {
        true => usize::MAX,
        false => config.limit,
    };
    let entries = history::read(&config.dir, config.job.as_deref(), limit)?;
    let mut out = io::stdout().lock();
    let written = match (config.stats, config.json) {
        (true, json) => {
            let stats = stats::compute(&entries);
            match json {
                true => stats::write_json(&mut out, &stats),
                false => stats::write_table(&mut out, &stats),
            }
        }
        (false, true) => history::write_json(&mut out, &entries),
        (false, false) => history::write_table(&mut out, &entries),
    };
    match written.and_then(|()| out.flush()) {
        // `| head` closing the pipe is not an error.
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot print the history")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
