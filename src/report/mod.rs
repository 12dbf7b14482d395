//! Telling the heartbeat service how a run went: the success ping, or the failure ping with
//! its summary; printed instead of sent in a dry run.
//!
//! [`heartbeat`] reads and validates the URL and builds the URLs sent; [`summary`] writes the
//! failure message; [`ping`] sends one GET with retries inside a time budget, over the TLS
//! set up by [`tls`]. [`Reporter`] ties them together for one run.
//!
//! The invariant this wing keeps: nothing in it can change crontap-run's exit status or hold
//! up the command. It is reached only after the command ended (or could not start), every
//! failure here ends as a [`PingResult`] and a log line, and the URL never appears in
//! anything it prints.

pub mod check;
pub mod heartbeat;
pub(crate) mod ping;
pub mod summary;
pub(crate) mod tls;

use std::io::{self, Write};

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

use crate::run::signals::{self, SignalLog};
use crate::run::supervise::Finished;
use crate::scrub::{Scrubber, sanitize};
use heartbeat::HeartbeatUrl;

/// What became of a run's ping, as history records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PingResult {
    #[serde(rename = "sent")]
    Sent,
    #[serde(rename = "failed")]
    Failed,
    #[serde(rename = "not configured")]
    NotConfigured,
    #[serde(rename = "not sent")]
    NotSent,
}

impl PingResult {
    pub fn as_str(self) -> &'static str {
        match self {
            PingResult::Sent => "sent",
            PingResult::Failed => "failed",
            PingResult::NotConfigured => "not configured",
            PingResult::NotSent => "not sent",
        }
    }
}

/// How a run's report went: what became of the ping, and the summary sent on failure.
pub struct Delivered {
    pub ping: PingResult,
    pub message: Option<String>,
}

/// Reports the runs of one invocation: where to, within which limits, and what to scrub.
pub struct Reporter<'a> {
    /// `None` when no URL is configured: nothing is sent.
    pub url: Option<&'a HeartbeatUrl>,
    /// Secrets crontap-run holds besides the URL's own parts (the state store's
    /// credentials, values of secret-looking variables in its environment).
    pub secrets: &'a [String],
    pub msg_max: usize,
    pub policy: ping::Policy,
    pub dry_run: bool,
    /// Consulted while sending: a stop request cuts the delivery down to the shutdown budget.
    pub stop: &'a SignalLog,
}

impl Reporter<'_> {
    /// Reports the attempt that ended a run. `attempt` is `(k, n)` when retries were
    /// allowed; `stop` is the stop request crontap-run received, as the supervisor reported
    /// it: the report then gets only the shutdown budget.
    pub fn finished(
        &self,
        finished: &Finished,
        attempt: Option<(u32, u32)>,
        stop: Option<Signal>,
    ) -> Delivered {
        let report = match finished.succeeded() {
            true => Report::Success,
            false => {
                crate::guard::fault_point("summary");
                let mut head = finished.describe();
                if let Some((k, n)) = attempt {
                    head = format!("{head} (attempt {k} of {n})");
                }
                Report::Failure(summary::failure_message_with(
                    head,
                    &finished.stdout_tail,
                    &finished.stderr_tail,
                    &self.scrubber(),
                    self.msg_max,
                ))
            }
        };
        let ping = self.deliver(&report, self.policy_for(stop));
        Delivered {
            ping,
            message: report.into_message(),
        }
    }

    /// Reports a run that did not start: crontap-run's own error (an unusable state store), or
    /// a signal before the command started. The job did not run, and the operator looks at
    /// the monitor.
    /// `stop` is the signal that stopped it, if one did: the report then gets only the
    /// shutdown budget.
    pub fn not_run(&self, err: &anyhow::Error, stop: Option<Signal>) -> PingResult {
        let text = self.scrubber().scrub(&format!("not run: {err:#}"));
        let report = Report::Failure(summary::truncate(&sanitize::one_line(&text), self.msg_max));
        self.deliver(&report, self.policy_for(stop))
    }

    /// The ping policy, cut down to the shutdown budget once crontap-run was told to stop.
    fn policy_for(&self, stop: Option<Signal>) -> ping::Policy {
        match stop {
            Some(signal) => {
                tracing::debug!(
                    signal = signal.as_str(),
                    "stop requested; using the shutdown ping budget"
                );
                self.policy.within(signals::SHUTDOWN_BUDGET)
            }
            None => self.policy,
        }
    }

    /// Scrubs the heartbeat URL's own parts and the other secrets crontap-run knows.
    fn scrubber(&self) -> Scrubber {
        let mut exact = self.url.map(HeartbeatUrl::secrets).unwrap_or_default();
        exact.extend_from_slice(self.secrets);
        Scrubber::new(exact, [])
    }

    /// Sends `report`, or prints it in a dry run.
    fn deliver(&self, report: &Report, policy: ping::Policy) -> PingResult {
        match self.url {
            _ if self.dry_run => {
                report.print_dry_run(self.url);
                PingResult::NotSent
            }
            Some(url) => report.send(url, policy, self.stop),
            None => PingResult::NotConfigured,
        }
    }
}

/// What is sent for a run: nothing extra on success, the summary on failure.
enum Report {
    Success,
    Failure(String),
}

impl Report {
    fn into_message(self) -> Option<String> {
        match self {
            Report::Success => None,
            Report::Failure(msg) => Some(msg),
        }
    }

    fn send(&self, url: &HeartbeatUrl, policy: ping::Policy, stop: &SignalLog) -> PingResult {
        let target = match self {
            Report::Success => url.success(),
            Report::Failure(msg) => url.failure(msg),
        };
        let host = url.host();
        match ping::send(target, policy, stop) {
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
