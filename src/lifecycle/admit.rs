//! Everything between start-up and the command's start: the `--jitter` wait, state
//! admission, and the signals that arrive meanwhile.
//!
//! A signal that ends a job (SIGTERM, SIGINT, SIGHUP, SIGQUIT) arriving before the command
//! started means the sender wants the run gone: the command is not started, whatever was
//! claimed is released, and the run ends with 128+S and a `not run: stopped by …` report
//! (the caller's part). It is noticed within a few milliseconds, also while a slow state
//! store is being asked: admission runs on a thread of its own, and is given a moment to
//! finish so that a claim it made can be released rather than left to run out. Signals meant
//! for a running job (SIGUSR1, SIGUSR2, SIGWINCH) have none to go to yet and are dropped.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use nix::sys::signal::Signal;

use crate::run::outcome::HumanDuration;
use crate::run::signals::{Mark, SignalLog};
use crate::state::{self, Admission, Held, Plan};

/// How long admission is given to finish once a stop signal arrived, so that a claim it
/// made is released: well inside the shutdown budget, which the report needs too.
const ADMISSION_GRACE: Duration = Duration::from_secs(2);
/// How often the wait for admission looks for signals.
const POLL: Duration = Duration::from_millis(10);

/// Whether and how the command starts.
pub enum Start {
    /// Start it, holding what the state options asked for.
    Run(Option<Held>),
    /// Not due (lock held, key done): the reason.
    Skip(String),
    /// A signal that ends jobs arrived first.
    Stopped(Signal),
}

/// Waits out `--jitter`, then takes the lock and key `plan` asks for (only looks at them in
/// a dry run), watching `signals` (from `seen` on) throughout. An error is an unusable
/// store.
pub fn before_start(
    jitter: Option<Duration>,
    plan: Option<&Plan>,
    dry_run: bool,
    owner: &str,
    now: SystemTime,
    signals: &SignalLog,
    seen: &mut Mark,
) -> Result<Start> {
    if let Some(max) = jitter {
        let wait = max.mul_f64(crate::random::fraction());
        tracing::debug!(wait_ms = wait.as_millis() as u64, "--jitter: waiting");
        if let Some(sig) = signals.wait_ending(seen, wait) {
            return Ok(Start::Stopped(sig));
        }
    }
    let held = match (plan, dry_run) {
        (None, _) => None,
        (Some(plan), true) => {
            let plan = plan.clone();
            let within = plan.timeout;
            match on_thread(move || state::look(&plan, now), within, signals, seen)? {
                Ok(None) => None,
                Ok(Some(reason)) => return Ok(Start::Skip(reason)),
                Err(sig) => return Ok(Start::Stopped(sig)),
            }
        }
        (Some(plan), false) => {
            let (plan, owner) = (plan.clone(), owner.to_owned());
            let within = plan.timeout;
            match on_thread(
                move || state::admit(&plan, &owner, now),
                within,
                signals,
                seen,
            )? {
                Ok(Admission::Run(held)) => Some(held),
                Ok(Admission::Skip(reason)) => return Ok(Start::Skip(reason)),
                Err(sig) => return Ok(Start::Stopped(sig)),
            }
        }
    };
    // The last look before the command starts; what arrives later is the command's.
    match signals.ending_since(seen) {
        // Dropping `held` releases the claims.
        Some(sig) => Ok(Start::Stopped(sig)),
        None => Ok(Start::Run(held)),
    }
}

/// Runs store work on a thread of its own, so that a stop signal is acted on while a store
/// is slow to answer, and the work is given up on after `within` (`--state-timeout`).
/// `Err(signal)`: stopped first.
fn on_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
    within: Duration,
    signals: &SignalLog,
    seen: &mut Mark,
) -> Result<std::result::Result<T, Signal>> {
    let deadline = Instant::now() + within;
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("admission".into())
        .spawn(move || {
            crate::fault::point("admission-thread");
            let _ = tx.send(work());
        })?;
    loop {
        match rx.recv_timeout(POLL) {
            Ok(done) => return done.map(Ok),
            Err(RecvTimeoutError::Disconnected) => anyhow::bail!("state admission failed"),
            // Whatever the work claims after this is released when the result it sends
            // finds no receiver and is dropped.
            Err(RecvTimeoutError::Timeout) if Instant::now() >= deadline => anyhow::bail!(
                "the state store did not answer within {} (--state-timeout)",
                HumanDuration(within)
            ),
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(sig) = signals.ending_since(seen) {
            tracing::debug!(signal = sig.as_str(), "stopped during state admission");
            // Whatever the work claimed is released when what it returns is dropped (a
            // `Held`); a store that does not answer in time keeps its claim until the lease
            // runs out.
            drop(rx.recv_timeout(ADMISSION_GRACE));
            return Ok(Err(sig));
        }
    }
}
