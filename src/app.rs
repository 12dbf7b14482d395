//! One invocation from start to finish: configure, run the command, report, choose the exit
//! status.
//!
//! Monitoring never breaks the job: the command starts before any network work, and
//! nothing that happens to the report changes the exit status.

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::Cli;
use crate::config::{self, Config};
use crate::heartbeat::{Heartbeat, HeartbeatUrl};
use crate::ping;
use crate::scrub::Scrubber;
use crate::signals;
use crate::summary;
use crate::supervise::{self, ChildSpec, Finished};

/// Runs crontap-run with these arguments; an error is crontap-run's own (exit 125).
pub fn main(args: impl IntoIterator<Item = OsString>) -> Result<ExitCode> {
    let Some(cli) = Cli::from_args(args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let env = |name: &str| std::env::var_os(name);
    config::log_settings(&cli, env)?.init();
    let Config {
        command,
        heartbeat,
        env_remove,
        limits,
        ping,
        msg_max,
        dry_run,
    } = Config::new(cli, env)?;

    if let (Heartbeat::Missing(why), false) = (&heartbeat, dry_run) {
        tracing::warn!(
            "no heartbeat URL configured ({why}); the command runs but nothing is reported"
        );
    }

    let run_id = uuid::Uuid::new_v4().to_string();
    tracing::debug!(%run_id, "starting the command");
    let (program, args) = command.split_first().context("no command given")?;
    let finished = supervise::run(
        &ChildSpec {
            program,
            args,
            env_remove: &env_remove,
            env_set: vec![
                ("CRONTAP_RUN_ID", run_id),
                ("CRONTAP_ATTEMPT", "1".to_owned()),
            ],
        },
        limits,
    )?;

    // Told to stop (by systemd, Kubernetes, `kill`): report quickly, well inside the grace
    // period the sender allows before it kills crontap-run.
    let ping = match finished.stop_signal {
        Some(signal) => {
            tracing::debug!(
                signal = signal.as_str(),
                "stop requested; using the shutdown ping budget"
            );
            ping.within(signals::SHUTDOWN_BUDGET)
        }
        None => ping,
    };

    let url = match &heartbeat {
        Heartbeat::Configured(url) => Some(url),
        Heartbeat::Missing(_) => None,
    };
    let report = Report::new(&finished, url, msg_max);
    match url {
        _ if dry_run => report.print_dry_run(url),
        Some(url) => report.send(url, ping),
        None => {}
    }
    Ok(ExitCode::from(finished.outcome.exit_code()))
}

/// What is sent for a finished run: nothing extra on success, the summary on failure.
enum Report {
    Success,
    Failure(String),
}

impl Report {
    fn new(finished: &Finished, url: Option<&HeartbeatUrl>, msg_max: usize) -> Report {
        if finished.outcome.is_success() {
            return Report::Success;
        }
        let scrubber = Scrubber::new(
            url.map(HeartbeatUrl::secrets).unwrap_or_default(),
            std::env::vars_os(),
        );
        Report::Failure(summary::failure_message(
            &finished.outcome,
            finished.elapsed,
            &finished.stdout_tail,
            &finished.stderr_tail,
            &scrubber,
            msg_max,
        ))
    }

    fn send(&self, url: &HeartbeatUrl, policy: ping::Policy) {
        let target = match self {
            Report::Success => url.success(),
            Report::Failure(msg) => url.failure(msg),
        };
        let host = url.host();
        match ping::send(target, policy) {
            Ok(attempts) => tracing::debug!(%host, attempts, "heartbeat sent"),
            Err(err) => {
                // The reason comes from the HTTP stack; scrub it in case it ever quotes the URL.
                let reason = Scrubber::new(url.secrets(), []).scrub(&err.to_string());
                tracing::error!("ping to {host} failed: {reason}");
            }
        }
    }

    /// Prints the request that would have been sent, the URL shown as `scheme://host/…` and
    /// the message in clear.
    fn print_dry_run(&self, url: Option<&HeartbeatUrl>) {
        let (base, note) = match url {
            Some(url) => (url.redacted(), ""),
            None => (
                "<heartbeat URL>".to_owned(),
                " (no heartbeat URL configured)",
            ),
        };
        let request = match self {
            Report::Success => format!("GET {base}"),
            Report::Failure(msg) => format!("GET {base}/fail?msg={msg}"),
        };
        // A closed stderr is no reason to fail the run.
        let _ = writeln!(
            io::stderr(),
            "crontap-run: dry run{note}, nothing sent; would send: {request}"
        );
    }
}
