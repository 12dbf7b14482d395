//! The report of a run: the success ping, or the failure ping with its summary; printed
//! instead of sent in a dry run.

pub mod heartbeat;
pub mod ping;
pub mod summary;
pub mod tls;

use std::io::{self, Write};

use crate::report::heartbeat::HeartbeatUrl;
use crate::run::supervise::Finished;
use crate::scrub::Scrubber;
use crate::scrub::sanitize;
use crate::state::history::PingResult;

/// What is sent for a finished run: nothing extra on success, the summary on failure.
pub enum Report {
    Success,
    Failure(String),
}

impl Report {
    /// The report of a finished run; `attempt` is `(k, n)` when retries were allowed.
    pub fn new(
        finished: &Finished,
        attempt: Option<(u32, u32)>,
        url: Option<&HeartbeatUrl>,
        secrets: &[String],
        msg_max: usize,
    ) -> Report {
        if finished.outcome.is_success() {
            return Report::Success;
        }
        let mut head = finished.outcome.describe(finished.elapsed);
        if let Some((k, n)) = attempt {
            head = format!("{head} (attempt {k} of {n})");
        }
        Report::Failure(summary::failure_message_with(
            head,
            &finished.stdout_tail,
            &finished.stderr_tail,
            &scrubber(url, secrets),
            msg_max,
        ))
    }

    /// The report of a run that did not start because of crontap-run's own error.
    pub fn not_run(
        err: &anyhow::Error,
        url: Option<&HeartbeatUrl>,
        secrets: &[String],
        msg_max: usize,
    ) -> Report {
        let text = scrubber(url, secrets).scrub(&format!("not run: {err:#}"));
        Report::Failure(summary::truncate(&sanitize::one_line(&text), msg_max))
    }

    /// The summary sent, for a failure.
    pub fn message(&self) -> Option<&str> {
        match self {
            Report::Success => None,
            Report::Failure(msg) => Some(msg),
        }
    }

    /// Sends the report, or prints it in a dry run.
    pub fn deliver(
        &self,
        url: Option<&HeartbeatUrl>,
        policy: ping::Policy,
        dry_run: bool,
    ) -> PingResult {
        match url {
            _ if dry_run => {
                self.print_dry_run(url);
                PingResult::NotSent
            }
            Some(url) => self.send(url, policy),
            None => PingResult::NotConfigured,
        }
    }

    fn send(&self, url: &HeartbeatUrl, policy: ping::Policy) -> PingResult {
        let target = match self {
            Report::Success => url.success(),
            Report::Failure(msg) => url.failure(msg),
        };
        let host = url.host();
        match ping::send(target, policy) {
            Ok(attempts) => {
                tracing::debug!(%host, attempts, "heartbeat sent");
                PingResult::Sent
            }
            Err(err) => {
                // The reason comes from the HTTP stack; scrub it in case it ever quotes the URL.
                let reason = Scrubber::new(url.secrets(), []).scrub(&err.to_string());
                tracing::error!("ping to {host} failed: {reason}");
                PingResult::Failed
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

/// Scrubs the heartbeat URL's own parts, the other `secrets` crontap-run knows (the state
/// store's credentials) and the values of secret-looking variables.
fn scrubber(url: Option<&HeartbeatUrl>, secrets: &[String]) -> Scrubber {
    let mut exact = url.map(HeartbeatUrl::secrets).unwrap_or_default();
    exact.extend_from_slice(secrets);
    Scrubber::new(exact, std::env::vars_os())
}
