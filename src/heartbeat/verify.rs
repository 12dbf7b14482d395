//! `heartbeat verify`: the last step of Crontap's workflow from the host. One success ping
//! through `check` (its lines, step by step), then, where the API can read it back
//! (Healthchecks: `GET /api/v3/checks/<uuid>`), that the service recorded it: its count of
//! pings grew past what it was before the ping. Exit 0 only when the ping was answered 2xx
//! and, where it can be read back, recorded.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::cli::Service;
use crate::heartbeat::VerifyConfig;
use crate::heartbeat::healthchecks::{self, Check};
use crate::report::check;
use crate::report::heartbeat::Heartbeat;
use crate::sanitize;

/// How long the service may take to show a ping it answered (hosted Healthchecks records
/// pings from a queue).
const RECORD_WAIT: Duration = Duration::from_secs(10);

/// Runs `heartbeat verify`.
pub fn run(config: &VerifyConfig) -> Result<ExitCode> {
    let Heartbeat::Configured(url) = &config.ping.heartbeat else {
        anyhow::bail!("--url-file holds no URL");
    };
    let api = &config.api;
    // Read before the ping, so that a ping is known to be this one by the count.
    let before = match api.service {
        Service::Healthchecks => {
            let uuid = healthchecks::uuid_of(url)?;
            let check = healthchecks::get(api, &uuid, url)?;
            Some((uuid, check.n_pings.unwrap_or(0)))
        }
        Service::Crontap => None,
    };
    let mut out = io::stdout().lock();
    let answered = check::report(&config.ping, &mut out);
    let recorded = match (&before, answered) {
        (_, false) => false,
        (None, true) => {
            line(
                &mut out,
                "not read back: Crontap's REST API documents no way to read a heartbeat's pings",
            );
            true
        }
        (Some((uuid, count)), true) => {
            let started = Instant::now();
            let mut wait = Duration::from_millis(200);
            loop {
                let check = healthchecks::get(api, uuid, url)?;
                if check.n_pings.unwrap_or(0) > *count {
                    line(&mut out, &format!("yes: {}", describe(&check)));
                    break true;
                }
                if started.elapsed() + wait > RECORD_WAIT {
                    line(
                        &mut out,
                        &format!(
                            "FAILED: the service shows no new ping after {}s ({}); the ping went \
                             to another check, or the service drops it",
                            RECORD_WAIT.as_secs(),
                            describe(&check)
                        ),
                    );
                    break false;
                }
                std::thread::sleep(wait);
                wait *= 2;
            }
        }
    };
    let _ = out.flush();
    Ok(match recorded {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}

/// `status up, last ping …, N pings`.
fn describe(check: &Check) -> String {
    format!(
        "status {}, last ping {}, {} pings",
        check.status.as_deref().unwrap_or("unknown"),
        check.last_ping.as_deref().unwrap_or("never"),
        check.n_pings.unwrap_or(0)
    )
}

fn line(out: &mut impl Write, text: &str) {
    let _ = writeln!(out, "recorded: {}", sanitize::one_line(text));
}
