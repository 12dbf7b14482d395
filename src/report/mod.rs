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

use serde::{Deserialize, Serialize};

use crate::run::signals::{self, SignalLog};
use crontap_scrub::Scrubber;
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub ping: PingResult,
    pub message: Option<String>,
}

impl Delivered {
    /// No report delivered (yet): none is due, the end has not come to it, or the panic
    /// guard does not know how one handed over went.
    pub const NONE: Delivered = Delivered {
        ping: PingResult::NotSent,
        message: None,
    };
}

/// Reports the runs of one invocation: where to, within which limits, and what to scrub.
/// It owns what it needs, so that the panic guard can send a report too.
pub struct Reporter {
    /// `None` when no URL is configured: nothing is sent.
    pub url: Option<HeartbeatUrl>,
    /// Secrets crontap-run holds besides the URL's own parts (the state store's
    /// credentials, values of secret-looking variables in its environment).
    pub secrets: Vec<String>,
    pub msg_max: usize,
    pub policy: ping::Policy,
    pub dry_run: bool,
    /// Consulted when sending: once crontap-run was told to stop, the delivery gets only
    /// the shutdown budget.
    pub signals: SignalLog,
}

impl Reporter {
    /// The failure summary: `head` (`exit 3 after 2s (attempt 2 of 3)`, `not run: …`) and
    /// the last meaningful line of the command's output, scrubbed, on one line, bounded by
    /// `--msg-max`.
    pub fn summary(&self, head: &str, stdout_tail: &[u8], stderr_tail: &[u8]) -> String {
        summary::failure_message_with(
            head.to_owned(),
            stdout_tail,
            stderr_tail,
            &self.scrubber(),
            self.msg_max,
        )
    }

    /// Sends `report`, or prints it in a dry run. `handing_over` is asked the moment before
    /// the request goes out (or is printed), after which it may have been sent: `false`
    /// means it must not be, and nothing is.
    pub fn deliver(&self, report: &Report, handing_over: impl FnOnce() -> bool) -> PingResult {
        match &self.url {
            _ if self.dry_run => {
                if handing_over() {
                    report.print_dry_run(self.url.as_ref());
                }
                PingResult::NotSent
            }
            Some(url) => report.send(url, self.policy_now(), &self.signals, handing_over),
            None => PingResult::NotConfigured,
        }
    }

    /// The ping policy, cut down to the shutdown budget once crontap-run was told to stop.
    fn policy_now(&self) -> ping::Policy {
        match self.signals.stop_requested() {
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
        let mut exact = self
            .url
            .as_ref()
            .map(HeartbeatUrl::secrets)
            .unwrap_or_default();
        exact.extend_from_slice(&self.secrets);
        Scrubber::new(exact, [])
    }
}

/// What is sent for a run: nothing extra on success, the summary on failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    Success,
    Failure(String),
}

impl Report {
    /// The summary sent, as history records it.
    pub fn message(&self) -> Option<String> {
        match self {
            Report::Success => None,
            Report::Failure(msg) => Some(msg.clone()),
        }
    }

    fn send(
        &self,
        url: &HeartbeatUrl,
        policy: ping::Policy,
        stop: &SignalLog,
        handing_over: impl FnOnce() -> bool,
    ) -> PingResult {
        let target = match self {
            Report::Success => url.success(),
            Report::Failure(msg) => url.failure(msg),
        };
        let host = url.host();
        if !handing_over() {
            return PingResult::NotSent;
        }
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
