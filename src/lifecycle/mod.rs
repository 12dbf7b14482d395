//! One run's life, from start-up to its one ending: the signals recorded from the first
//! moment, the time before the command starts ([`admit`]), its attempts ([`attempts`]),
//! and the end ([`end`]), which every way out of a run goes through, the panic guard's
//! ([`guard`]) included.
//!
//! Monitoring never breaks the job: the command starts before any network work, and
//! nothing that happens to the report or to the state store after the command ran changes
//! the exit status.

pub(crate) mod admit;
pub(crate) mod attempts;
pub(crate) mod end;
pub(crate) mod guard;
pub(crate) mod verdict;

use std::io::{self, Write};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::watch;

use crate::config::Config;
use crate::fault;
use crate::log;
use crate::report::Reporter;
use crate::report::heartbeat::Heartbeat;
use crate::report::start::{self, SideTask};
use crate::run::descriptors;
use crate::run::hold::Hold;
use crate::run::job_env::PerRun;
use crate::run::memory;
use crate::run::outcome::OWN_ERROR;
use crate::run::reap;
use crate::run::signals::{Mark, SignalLog};
use crate::run::supervise::{ChildSpec, LeaseDeadline, Supervisor};
use crate::state::Held;
use admit::Start;
use end::{Effects, HistoryTarget, RunEnd};

/// Runs the command as `config` says and ends the run; returns the exit status.
pub fn run(config: Config) -> u8 {
    // Refused before anything is set up, as the end itself would need the memory that is
    // missing: one line, no report.
    let threads = u64::from(config.state.is_some()) + u64::from(config.hold_output.is_some());
    if let Err(err) = memory::ensure_room(memory::RUN + threads * memory::THREAD, "run the command")
    {
        log::report_error(&err);
        return OWN_ERROR;
    }
    // First, so that no signal takes its default action from here on.
    let signals = SignalLog::install();
    let mut seen = Mark::START;
    let effects = Arc::new(effects(&config, &signals));
    fault::arm(config.fault.clone());
    let theirs = Arc::clone(&effects);
    guard::install(
        Box::new(move |verdict, delivered| {
            end::finish(&theirs, verdict, end::Detail::PLAIN, delivered);
        }),
        config.ping.budget,
    );
    // Room for every descriptor the run will hold, before it takes any state: a shortage
    // found later would be blamed on the state directory or the spawn.
    let state_dir = (config.state.as_ref()).is_some_and(|p| p.remote.is_none() && p.dir.is_some());
    if let Err(err) = descriptors::ensure_room(descriptors::for_run(state_dir), "run the command") {
        return not_run(&effects, err, None);
    }
    fault::point("admission");
    let start = admit::before_start(
        config.jitter,
        config.state.as_ref(),
        config.dry_run,
        &effects.run_id,
        effects.started,
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
            return end::conclude(&effects, RunEnd::Skipped(reason));
        }
        Ok(Start::Stopped(sig)) => {
            tracing::info!("stopped by {} before the command started", sig.as_str());
            return end::conclude(&effects, RunEnd::StoppedBeforeStart(sig));
        }
        // An unusable store is crontap-run's own error, reported with a fail ping too.
        Err(err) => return not_run(&effects, err, None),
    };
    if let (Heartbeat::Missing(why), false) = (&config.heartbeat, config.dry_run) {
        tracing::warn!(
            "no heartbeat URL configured ({why}); the command runs but nothing is reported"
        );
    }
    tracing::debug!(run_id = %effects.run_id, "starting the command");
    let spec = child_spec(&config, &effects, held.as_ref());
    // The protocol's start request goes out beside the command, once it has been spawned.
    let command_started = || effects.reporter.command_started(&effects.run_id);
    let ran = Supervisor::new(signals.clone(), seen).and_then(|supervisor| {
        let limits = config.limits;
        attempts::run(&supervisor, &spec, limits, &config.retry, &command_started)
    });
    match ran {
        Ok(last) => {
            // Orphans that end while the run's end is written and sent are reaped too.
            reap::reap_orphans_meanwhile();
            end::conclude(&effects, RunEnd::Ran(Box::new(last), held))
        }
        Err(err) => not_run(&effects, err, held),
    }
}

/// Ends a run that crontap-run's own error kept from running: the error's one line, then
/// the end (which releases what `held` claimed).
fn not_run(effects: &Effects, err: anyhow::Error, held: Option<Held>) -> u8 {
    // Unless the panic guard took the run's end over meanwhile.
    guard::still_ours();
    log::report_error(&err);
    drop(held);
    end::conclude(effects, RunEnd::NotRun(err))
}

/// What the run's end writes to and sends to.
fn effects(config: &Config, signals: &SignalLog) -> Effects {
    let started = SystemTime::now();
    // A dry run writes no history and no metrics.
    let history = config
        .state
        .as_ref()
        .filter(|_| !config.dry_run)
        .and_then(|plan| {
            Some(HistoryTarget {
                state_dir: plan.dir.clone()?,
                job: plan.job.clone(),
                key: plan.key_at(started).map(|(key, _)| key),
            })
        });
    Effects {
        reporter: Reporter {
            url: match &config.heartbeat {
                Heartbeat::Configured(url) => Some(url.clone()),
                Heartbeat::Missing(_) => None,
            },
            protocol: config.protocol,
            headers: config.headers.clone(),
            secrets: config.secrets.clone(),
            msg_max: config.msg_max,
            body_max: config.body_max,
            policy: config.ping,
            dry_run: config.dry_run,
            signals: signals.clone(),
            start: Arc::new(start::Start::new(SideTask {
                mark: guard::side_task,
                fault_point: fault::point,
            })),
        },
        history,
        metrics: config.metrics.clone().filter(|_| !config.dry_run),
        push: config.push.clone().filter(|_| !config.dry_run),
        hold: config.hold_output.as_deref().map(Hold::new),
        run_id: crate::random::uuid_v4(),
        started,
        clock: Instant::now(),
        ended: std::sync::OnceLock::new(),
    }
}

/// The command and what it runs with.
fn child_spec<'a>(config: &'a Config, effects: &Effects, held: Option<&Held>) -> ChildSpec<'a> {
    let lease = held
        .and_then(Held::lease_deadline)
        .or_else(|| held.and_then(|_| fault_lease()))
        .filter(|_| config.stop_on_lease_lost);
    ChildSpec {
        program: &config.program,
        args: &config.args,
        inherited_env: &config.child_env,
        per_run: PerRun {
            run_id: effects.run_id.clone(),
            key: held.and_then(Held::key).map(str::to_owned),
            fencing_token: held.and_then(Held::fencing_token),
        },
        guarded: held.is_some(),
        hold: effects.hold.clone(),
        lease,
        both_tail: effects.reporter.output_tail_bytes(),
    }
}

/// `CRONTAP_FAULT=lease-renewal` (debug builds, for the tests): a run holding state whose
/// lease is never renewed, as if the store had gone away, and runs out 4 s after the
/// command starts, with at most 3 s for SIGTERM before that.
fn fault_lease() -> Option<watch::Receiver<LeaseDeadline>> {
    if !fault::at("lease-renewal") {
        return None;
    }
    let deadline = LeaseDeadline {
        gone_by: Instant::now() + Duration::from_secs(4),
        max_grace: Duration::from_secs(3),
    };
    // The value stays readable once the sender is gone: nothing ever renews it.
    let (_never_renewed, rx) = watch::channel(deadline);
    Some(rx)
}
